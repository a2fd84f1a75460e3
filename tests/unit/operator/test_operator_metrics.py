"""The operator's /metrics: reconciliations counted by outcome and timed, served over HTTP."""

from __future__ import annotations

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
        server.shutdown()
        server.server_close()
    assert 'scheduler_operator_reconciles_total{result="applied"}' in text
    assert "scheduler_operator_reconcile_duration_seconds_bucket" in text
    assert "process_resident_memory_bytes" in text
