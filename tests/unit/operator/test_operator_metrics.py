"""The operator's /metrics: reconciliations counted by outcome and timed, served over HTTP."""

from __future__ import annotations

import socket
import threading
import urllib.error
import urllib.request
from typing import Any

import pytest
from scheduler_operator import metrics, status
from scheduler_operator.cli import parser

from benchmarks.processes import free_port


def reconciles(result: str) -> float:
    value = metrics.REGISTRY.get_sample_value(
        "scheduler_operator_reconciles_total", {"result": result}
    )
    assert value is not None
    return value


def observations() -> float:
    value = metrics.REGISTRY.get_sample_value("scheduler_operator_reconcile_duration_seconds_count")
    assert value is not None
    return value


def reported(valid: bool, ready_reason: str) -> dict[str, Any]:
    return {
        "conditions": [
            status.condition(status.CONFIG_VALID, valid, "X", "", 1),
            status.condition(status.READY, False, ready_reason, "", 1),
        ]
    }


@pytest.mark.parametrize(
    ("valid", "ready_reason", "result"),
    [
        (True, "SchedulerReady", metrics.APPLIED),
        (True, "RollingOut", metrics.APPLIED),
        (False, "InvalidSpec", metrics.REFUSED),
        (True, "ApplyFailed", metrics.APPLY_FAILED),
    ],
)
def test_a_reconciliation_is_counted_by_its_outcome_and_timed(
    valid: bool, ready_reason: str, result: str
) -> None:
    before, timed = reconciles(result), observations()
    with metrics.reconciling() as measured:
        measured.report(reported(valid, ready_reason))
    assert reconciles(result) == before + 1
    assert observations() == timed + 1


def test_a_reconciliation_that_raises_counts_as_an_error() -> None:
    before = reconciles(metrics.ERROR)
    with pytest.raises(RuntimeError), metrics.reconciling():
        raise RuntimeError("boom")
    assert reconciles(metrics.ERROR) == before + 1


def test_every_result_is_exported_from_the_start() -> None:
    for result in metrics.RESULTS:
        assert reconciles(result) >= 0


@pytest.mark.parametrize(
    ("given", "address"),
    [
        ("0", None),
        ("", None),
        (":8081", ("0.0.0.0", 8081)),
        ("127.0.0.1:9000", ("127.0.0.1", 9000)),
        ("[::]:8081", ("::", 8081)),
    ],
)
def test_the_bind_address(given: str, address: tuple[str, int] | None) -> None:
    assert metrics.bind_address(given) == address


@pytest.mark.parametrize("given", ["8081", "host:", "host:port", ":70000"])
def test_a_wrong_bind_address_is_refused_by_the_command_line(
    given: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        parser().parse_args(["run", f"--metrics-bind-address={given}"])
    assert "--metrics-bind-address: expected HOST:PORT" in capsys.readouterr().err


def test_metrics_are_off_unless_asked_for() -> None:
    assert parser().parse_args(["run"]).metrics_bind_address is None


def test_the_metrics_are_served_over_http() -> None:
    port = free_port()
    server = metrics.serve(("127.0.0.1", port))
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as answer:
            text = answer.read().decode()
    finally:
        server.stop()
    assert 'scheduler_operator_reconciles_total{result="applied"}' in text
    assert "scheduler_operator_reconcile_duration_seconds_bucket" in text
    assert "process_resident_memory_bytes" in text


def test_only_metrics_are_served_and_idle_connections_hold_no_threads() -> None:
    """The port answered on any path and held a thread per connection, with no read timeout:
    300 idle connections held 300 threads."""
    port = free_port()
    server = metrics.serve(("127.0.0.1", port))
    idle: list[socket.socket] = []
    try:
        with pytest.raises(urllib.error.HTTPError) as other:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/other", timeout=5)
        assert other.value.code == 404
        threads = threading.active_count()
        idle = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(300)]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as answer:
            assert answer.status == 200
        assert threading.active_count() - threads <= 1
        assert len(server.connections) <= metrics.LIMITS.max_connections
    finally:
        for sock in idle:
            sock.close()
        server.stop()


def test_a_connection_that_sends_nothing_is_closed_after_the_read_timeout() -> None:
    port = free_port()
    server = metrics.serve(("127.0.0.1", port))
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
            sock.sendall(b"GET /metrics HTTP/1.1\r\n")  # and never the rest
            answer = sock.recv(4096)
        assert answer.startswith(b"HTTP/1.1 408 ")
    finally:
        server.stop()
