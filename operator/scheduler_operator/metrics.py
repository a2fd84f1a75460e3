"""The operator's own Prometheus metrics: how often SchedulerProfiles are reconciled, with what
outcome, and how long it takes. Served on `scheduler-operator run --metrics-bind-address`, plain
HTTP on the transport of the schedulers' own ports (scheduler_runtime.httpserver): a connection
cap where a new connection is never refused, a timeout for each wait, no thread per
connection; /metrics alone, anything else 404."""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Final

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.process_collector import ProcessCollector

from scheduler_runtime.httpserver import Endpoint, Limits, Request, Response, Server, plain

from . import status

# The outcomes of one reconciliation (the `result` label).
APPLIED: Final = "applied"  # valid, and every child applied
REFUSED: Final = "refused"  # ConfigValid=False: invalid spec, namespace not allowed, name taken
APPLY_FAILED: Final = "apply_failed"  # the API server refused a child; retried
ERROR: Final = "error"  # the reconciliation raised
RESULTS: Final = (APPLIED, REFUSED, APPLY_FAILED, ERROR)

REGISTRY: Final = CollectorRegistry()
ProcessCollector(registry=REGISTRY)
RECONCILES: Final = Counter(
    "scheduler_operator_reconciles",
    "SchedulerProfile reconciliations, by result: applied, refused (ConfigValid=False), "
    "apply_failed (the API server refused a child; retried) or error.",
    ["result"],
    registry=REGISTRY,
)
RECONCILE_DURATION: Final = Histogram(
    "scheduler_operator_reconcile_duration_seconds",
    "How long one SchedulerProfile reconciliation takes (validate, apply, report), in seconds.",
    buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
    registry=REGISTRY,
)
for _result in RESULTS:  # every result is exported from the start, at 0
    RECONCILES.labels(result=_result)


def result_of(reported: Mapping[str, Any]) -> str:
    """The outcome a reconciled status stands for."""
    conditions = reported.get("conditions") or []
    valid = status.find(conditions, status.CONFIG_VALID)
    if valid is not None and valid["status"] == "False":
        return REFUSED
    ready = status.find(conditions, status.READY)
    if ready is not None and ready["reason"] == "ApplyFailed":
        return APPLY_FAILED
    return APPLIED


@dataclass
class Reconciliation:
    """One reconciliation being measured; `report` its status once it is known."""

    result: str = ERROR

    def report(self, reported: Mapping[str, Any]) -> None:
        self.result = result_of(reported)


@contextmanager
def reconciling() -> Iterator[Reconciliation]:
    """Counts and times the reconciliation run inside (an exception counts as `error`)."""
    started = time.perf_counter()
    measured = Reconciliation()
    try:
        yield measured
    except BaseException:
        measured.result = ERROR
        raise
    finally:
        RECONCILE_DURATION.observe(time.perf_counter() - started)
        RECONCILES.labels(result=measured.result).inc()


def bind_address(value: str) -> tuple[str, int] | None:
    """`HOST:PORT`, `:PORT` (every interface) or `[V6]:PORT`; `0` or empty: serve none."""
    if value in ("", "0"):
        return None
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"expected HOST:PORT, :PORT or 0, got {value!r}")
    return host.strip("[]") or "0.0.0.0", int(port)  # noqa: S104 - every interface, as asked


# A scrape every few seconds needs a handful of connections; the rest are not Prometheus.
LIMITS: Final = Limits(max_connections=64)


async def answer(request: Request) -> Response:
    """GET (or HEAD) /metrics; 404 elsewhere, 405 for other methods."""
    if request.path != "/metrics":
        return plain(404, "404 page not found", close=False)
    if request.method not in ("GET", "HEAD"):
        return plain(405, "method not allowed", close=False)
    return Response(200, generate_latest(REGISTRY), CONTENT_TYPE_LATEST)


def serve(address: tuple[str, int]) -> Server:
    """Serves /metrics over plain HTTP on a thread of its own, until stop()."""
    server = Server([Endpoint(address, answer)], LIMITS)
    server.start()
    return server
