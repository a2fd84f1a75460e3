"""The one Prometheus query NetworkTraffic makes per scheduling cycle, and how its answer is
read: received bytes per second over a time range, per Kubernetes node, all nodes at once.

The client is bounded, since it runs inside the scheduler: one deadline for the whole query
(connecting, the TLS handshake, sending, the answer's head and every read of its body: when it
passes, the connection is cut wherever it is), an answer of at most MAX_BODY bytes, no
redirects (the address the configuration names is the only one asked), and what an error
quotes from the answer cut to ERROR_EXCERPT characters on one line.

A sample outside [0, MAX_BYTES_PER_SECOND] is no traffic figure any interface can have (a
counter reset gone wrong, a hostile exporter): it is left out, so its node scores neutral,
and the scores of the others stay within the integer arithmetic of normalization."""

from __future__ import annotations

import contextlib
import http.client
import math
import socket
import threading
import time
import urllib.parse
from typing import Any, Final

import orjson

QUERY_PATH = "/api/v1/query"
# An instant vector for 10,000 nodes is about 1 MiB.
MAX_BODY: Final = 8 * 1024 * 1024
ERROR_EXCERPT: Final = 200
_CHUNK: Final = 64 * 1024
# 8 Pbit/s, far beyond any network interface, and small enough that (busiest - idlest) * 100
# stays within int64 when the scores are normalized.
MAX_BYTES_PER_SECOND: Final = 1e15


def check_address(value: str) -> str:
    """A Prometheus base URL: http or https, a host (and port), an optional path; no
    user info, query or fragment (a `#` or `?` would turn the query path into a fragment or
    a parameter, so the query would go wherever the rest of the address says)."""
    if any(char.isspace() or not char.isprintable() for char in value):
        raise ValueError("must not contain spaces or control characters")
    if "#" in value or "?" in value:
        raise ValueError(f"{value!r}: must have no query (?) or fragment (#)")
    parsed = urllib.parse.urlsplit(value)
    if parsed.scheme not in ("http", "https"):
        raise ValueError(f"{value!r} is not an http:// or https:// URL")
    if "@" in parsed.netloc:
        raise ValueError(f"{value!r}: must have no user info (user@)")
    try:
        _ = parsed.port  # a port that is not a number from 0 to 65535 raises
    except ValueError:
        raise ValueError(f"{value!r}: the port is not a number from 0 to 65535") from None
    if not parsed.hostname:
        raise ValueError(f"{value!r}: has no host")
    return value


def excerpt(text: str | bytes) -> str:
    """At most ERROR_EXCERPT characters of `text`, on one line, for a log or a message."""
    if isinstance(text, bytes):
        text = text[: ERROR_EXCERPT * 4].decode(errors="replace")
    flat = " ".join(text.split())
    return flat if len(flat) <= ERROR_EXCERPT else flat[:ERROR_EXCERPT] + "..."


class PrometheusError(Exception):
    """A query that gave no usable answer; `reason` is the failure metric's label."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


def traffic_query(network_interface: str, time_range_seconds: int) -> str:
    """Bytes received per second on the interface, per node: node-exporter's counter joined
    to the Kubernetes node name through node_uname_info of the same target."""
    device = network_interface.replace("\\", "\\\\").replace('"', '\\"')
    return (
        "sum by (nodename) ("
        f'rate(node_network_receive_bytes_total{{device="{device}"}}[{time_range_seconds}s])'
        " * on(instance, job) group_left(nodename) node_uname_info"
        ")"
    )


def parse_vector(body: bytes) -> dict[str, float]:
    """The answer of an instant query as {nodename: value}; values that are not finite or are
    out of range are left out."""
    try:
        document = orjson.loads(body)
    except orjson.JSONDecodeError as error:
        raise PrometheusError("bad_response", f"the answer is not JSON: {error}") from None
    if not isinstance(document, dict) or document.get("status") != "success":
        detail = document.get("error") if isinstance(document, dict) else None
        raise PrometheusError(
            "bad_response", f"the query failed: {excerpt(str(detail or repr(document)))}"
        )
    data = document.get("data")
    if not isinstance(data, dict) or data.get("resultType") != "vector":
        raise PrometheusError("bad_response", "the answer is not an instant vector")
    values: dict[str, float] = {}
    for sample in data.get("result") or ():
        node, value = _sample(sample)
        if node and math.isfinite(value) and 0 <= value <= MAX_BYTES_PER_SECOND:
            values[node] = value
    return values


def _sample(sample: Any) -> tuple[str, float]:
    try:
        node = str(sample["metric"].get("nodename", ""))
        return node, float(sample["value"][1])
    except (KeyError, IndexError, TypeError, ValueError, AttributeError):
        raise PrometheusError(
            "bad_response", f"a sample of the wrong shape: {excerpt(repr(sample))}"
        ) from None


def query(address: str, promql: str, timeout: float) -> dict[str, float]:
    """Runs an instant query against the Prometheus at `address`, all of it within
    `timeout` seconds."""
    return parse_vector(fetch(address, promql, timeout))


def fetch(address: str, promql: str, timeout: float) -> bytes:
    """The body of the query's answer: within one deadline, at most MAX_BODY bytes."""
    parsed = urllib.parse.urlsplit(check_address(address))
    path = f"{parsed.path.rstrip('/')}{QUERY_PATH}?{urllib.parse.urlencode({'query': promql})}"
    deadline = time.monotonic() + timeout
    connection_class = (
        http.client.HTTPSConnection if parsed.scheme == "https" else http.client.HTTPConnection
    )
    connection = connection_class(parsed.hostname or "", parsed.port, timeout=timeout)
    watchdog = threading.Timer(timeout, _cut, (connection,))
    watchdog.daemon = True
    watchdog.start()
    try:
        connection.request("GET", path, headers={"Accept": "application/json"})
        _within(connection, deadline, address, timeout)
        answer = connection.getresponse()
        body = _read(answer, connection, deadline, address, timeout)
    except (OSError, http.client.HTTPException) as error:
        if isinstance(error, TimeoutError) or time.monotonic() >= deadline:
            raise PrometheusError(
                "timeout", f"no answer from {address} within {timeout:g}s"
            ) from None
        raise PrometheusError("unreachable", f"{address}: {excerpt(str(error))}") from None
    finally:
        watchdog.cancel()
        connection.close()
    if answer.status != 200:
        detail = excerpt(body)
        raise PrometheusError(
            "http_error", f"HTTP {answer.status} from {address}" + (f": {detail}" if detail else "")
        )
    return body


def _cut(connection: http.client.HTTPConnection) -> None:
    """At the deadline: ends whatever the connection waits for (a server that drips its
    answer's head a byte at a time never lets one read time out)."""
    sock = connection.sock
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


def _within(
    connection: http.client.HTTPConnection, deadline: float, address: str, timeout: float
) -> None:
    """Gives the socket what is left of the deadline for its next operation."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise PrometheusError("timeout", f"no answer from {address} within {timeout:g}s")
    if connection.sock is not None:
        connection.sock.settimeout(left)


def _read(
    answer: http.client.HTTPResponse,
    connection: http.client.HTTPConnection,
    deadline: float,
    address: str,
    timeout: float,
) -> bytes:
    declared = answer.getheader("Content-Length")
    if declared is not None and declared.isdigit() and int(declared) > MAX_BODY:
        raise PrometheusError(
            "bad_response", f"the answer from {address} is larger than {MAX_BODY} bytes"
        )
    chunks: list[bytes] = []
    size = 0
    while True:
        _within(connection, deadline, address, timeout)
        try:
            chunk = answer.read1(_CHUNK)
        except TimeoutError:
            raise TimeoutError from None
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > MAX_BODY:
            raise PrometheusError(
                "bad_response", f"the answer from {address} is larger than {MAX_BODY} bytes"
            )
        chunks.append(chunk)
