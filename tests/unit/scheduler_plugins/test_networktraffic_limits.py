"""NetworkTraffic's Prometheus client within bounds: one deadline for the whole query, a
capped answer, short one-line error text, and only addresses whose query path cannot be
turned into a fragment, a parameter or another user's."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import orjson
import pytest

from scheduler_plugins.networktraffic.prometheus import (
    ERROR_EXCERPT,
    MAX_BODY,
    PrometheusError,
    query,
)
from scheduler_runtime.config import ConfigError, load_configuration

Answer = Callable[[socket.socket], None]


@pytest.fixture
def raw_server() -> Iterator[Callable[[Answer], str]]:
    """A local server that answers each connection with `answer(connection)` after reading
    the request's head."""
    sockets: list[socket.socket] = []

    def start(answer: Answer) -> str:
        listener = socket.create_server(("127.0.0.1", 0))
        sockets.append(listener)

        def serve() -> None:
            while True:
                try:
                    connection, _ = listener.accept()
                except OSError:
                    return
                with connection:
                    connection.recv(65536)
                    with contextlib.suppress(OSError):
                        answer(connection)

        threading.Thread(target=serve, daemon=True).start()
        return f"http://127.0.0.1:{listener.getsockname()[1]}"

    yield start
    for listener in sockets:
        listener.close()


def head(status: str = "200 OK", length: int | None = None) -> bytes:
    lines = [f"HTTP/1.1 {status}", "Content-Type: application/json"]
    if length is not None:
        lines.append(f"Content-Length: {length}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def test_one_deadline_for_the_whole_answer(raw_server: Callable[[Answer], str]) -> None:
    """A server that trickles a byte every 50 ms never lets one read time out; the query
    still ends at its deadline."""

    def trickle(connection: socket.socket) -> None:
        connection.sendall(head())
        for _ in range(200):
            connection.sendall(b" ")
            time.sleep(0.05)

    address = raw_server(trickle)
    started = time.monotonic()
    with pytest.raises(PrometheusError) as caught:
        query(address, "up", 0.5)
    assert caught.value.reason == "timeout"
    assert time.monotonic() - started < 2


def test_the_deadline_covers_an_answers_head_dripped_a_byte_at_a_time(
    raw_server: Callable[[Answer], str],
) -> None:
    """The head of the answer (status line and headers) is read within the same deadline:
    a server that sends it a byte every 50 ms held a 0.5 s query for as long as it liked."""

    def drip(connection: socket.socket) -> None:
        for byte in head() + b"x-padding: " + b"a" * 400:
            connection.sendall(bytes([byte]))
            time.sleep(0.05)

    address = raw_server(drip)
    started = time.monotonic()
    with pytest.raises(PrometheusError) as caught:
        query(address, "up", 0.5)
    assert caught.value.reason == "timeout"
    assert time.monotonic() - started < 2


@pytest.mark.parametrize("declared", [True, False])
def test_an_answer_larger_than_the_cap_is_refused_without_reading_it_all(
    raw_server: Callable[[Answer], str], declared: bool
) -> None:
    sent: list[int] = []

    def flood(connection: socket.socket) -> None:
        connection.sendall(head(length=4 * MAX_BODY if declared else None))
        block = b" " * 65536
        for _ in range(4 * MAX_BODY // len(block)):
            connection.sendall(block)
            sent.append(len(block))

    address = raw_server(flood)
    with pytest.raises(PrometheusError, match=f"larger than {MAX_BODY} bytes") as caught:
        query(address, "up", 10)
    assert caught.value.reason == "bad_response"
    assert sum(sent) < 2 * MAX_BODY


def test_error_text_is_short_and_on_one_line(raw_server: Callable[[Answer], str]) -> None:
    body = b"line\n" * 100_000

    def fail(connection: socket.socket) -> None:
        connection.sendall(head("500 Internal Server Error", len(body)) + body)

    with pytest.raises(PrometheusError) as caught:
        query(raw_server(fail), "up", 5)
    message = str(caught.value)
    assert caught.value.reason == "http_error"
    assert "\n" not in message
    assert len(message) < ERROR_EXCERPT + 100

    document = orjson.dumps({"status": "error", "error": "x" * 1_000_000})

    def refuse(connection: socket.socket) -> None:
        connection.sendall(head(length=len(document)) + document)

    with pytest.raises(PrometheusError) as caught:
        query(raw_server(refuse), "up", 5)
    assert len(str(caught.value)) < ERROR_EXCERPT + 100


def test_redirects_are_not_followed(raw_server: Callable[[Answer], str]) -> None:
    def redirect(connection: socket.socket) -> None:
        connection.sendall(
            b"HTTP/1.1 302 Found\r\nLocation: http://example.invalid/\r\nContent-Length: 0\r\n\r\n"
        )

    with pytest.raises(PrometheusError, match="HTTP 302") as caught:
        query(raw_server(redirect), "up", 5)
    assert caught.value.reason == "http_error"


def configuration(address: str) -> Any:
    return load_configuration(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [
                {
                    "schedulerName": "traffic",
                    "plugins": {"multiPoint": {"enabled": [{"name": "NetworkTraffic"}]}},
                    "pluginConfig": [
                        {"name": "NetworkTraffic", "args": {"prometheusAddress": address}}
                    ],
                }
            ],
        }
    )


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("http://prometheus:9090/#", "must have no query (?) or fragment (#)"),
        ("http://evil.example/metrics#", "must have no query (?) or fragment (#)"),
        ("http://prometheus:9090/?x=", "must have no query (?) or fragment (#)"),
        ("http://user:secret@prometheus:9090", "must have no user info"),
        ("ftp://prometheus:9090", "is not an http:// or https:// URL"),
        ("http://:9090", "has no host"),
        ("http://prometheus:99999", "the port is not a number"),
        ("http://prometheus:9090/ path", "must not contain spaces"),
    ],
)
def test_a_bad_address_is_a_configuration_error_naming_the_field(address: str, reason: str) -> None:
    with pytest.raises(ConfigError) as caught:
        configuration(address)
    assert caught.value.path == "profiles[0].pluginConfig[0].args.prometheusAddress"
    assert reason in caught.value.reason


@pytest.mark.parametrize(
    "address",
    ["http://prometheus.monitoring:9090", "https://prom.example/prometheus/", "http://[::1]:9090"],
)
def test_good_addresses_pass(address: str) -> None:
    configuration(address)
