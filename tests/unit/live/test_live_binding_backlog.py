"""Handing pods to binding: the loop waits while requests pile up for the API client (so Reserve
and PreBind stay close together when the API server is the bottleneck), but only so long, and
pods parked at Permit or in PreBind send nothing, so they do not count."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from scheduler_runtime.config import load_configuration
from scheduler_runtime.live import scheduler as live
from scheduler_runtime.live.apiconfig import ApiConfig
from scheduler_runtime.live.kube import Kube
from scheduler_runtime.live.metrics import SchedulerMetrics
from scheduler_runtime.live.outcomes import Outcomes


@pytest.fixture
def scheduler(monkeypatch: pytest.MonkeyPatch) -> Iterator[live.Scheduler]:
    monkeypatch.setattr(live, "BINDING_BACKLOG", 1)
    monkeypatch.setattr(live, "BACKLOG_WAIT_SECONDS", 0.3)
    config = load_configuration(
        {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
    )
    kube = Kube(ApiConfig.at("http://127.0.0.1:9"))
    made = live.Scheduler(config, kube, Outcomes(kube, kube, "test"), SchedulerMetrics())
    yield made
    made.stop(finish_bindings=False)


def may_wait(name: str) -> Any:
    """An attempt whose binding cycle may wait: it runs on a binding thread."""
    return SimpleNamespace(name=name, binds_at_once=False)


def test_the_loop_waits_for_the_backlog_to_drain(
    scheduler: live.Scheduler, monkeypatch: pytest.MonkeyPatch
) -> None:
    backlog = iter([5, 5, 5, 0])
    asked: list[int] = []

    def waiting() -> int:
        asked.append(1)
        return next(backlog)

    monkeypatch.setattr(scheduler, "backlog", waiting)
    ran = threading.Event()
    scheduler._start_binding(lambda _: ran.set(), may_wait("a"))
    assert ran.wait(10)
    assert len(asked) == 4  # it waited until the backlog was down


def test_the_loop_waits_for_a_full_backlog_only_so_long(
    scheduler: live.Scheduler, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scheduler, "backlog", lambda: 5)  # never drains
    ran: list[Any] = []
    scheduler._start_binding(ran.append, may_wait("a"))
    assert scheduler.bindings.idle(10)
    assert [attempt.name for attempt in ran] == ["a"]


def test_pods_parked_in_binding_threads_are_no_backlog(scheduler: live.Scheduler) -> None:
    release = threading.Event()
    for n in range(5):
        scheduler._start_binding(lambda _: release.wait(10), may_wait(str(n)))
    assert scheduler.backlog() == 0
    assert scheduler.bindings.running() == 5
    release.set()
    assert scheduler.bindings.idle(10)
