"""Handing work to the pools: the loop waits while the binding pool has a full backlog (so
Reserve and PreBind stay close together when the API server is the bottleneck), but only so
long, so pods parked at Permit in every binding thread cannot stall it; writes about one pod
land in the order they were reported."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import kubernetes
import pytest

from scheduler_runtime.config import load_configuration
from scheduler_runtime.live import scheduler as live
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
    kube = Kube(
        kubernetes.client.ApiClient(kubernetes.client.Configuration(host="http://127.0.0.1:9"))
    )
    made = live.Scheduler(config, kube, Outcomes(kube, kube, "test"), SchedulerMetrics())
    made.binding.shutdown()
    made.binding = ThreadPoolExecutor(1)  # one binding thread
    yield made
    made.stop(finish_bindings=False)


def test_the_loop_waits_for_a_full_backlog_only_so_long(scheduler: live.Scheduler) -> None:
    release, ran = threading.Event(), []

    def binding_cycle(attempt: Any) -> None:
        release.wait(10)  # the API server answers slowly, or the pod waits at Permit
        ran.append(attempt)

    started = time.monotonic()
    scheduler._start_binding(binding_cycle, "a")  # takes the thread
    time.sleep(0.05)
    scheduler._start_binding(binding_cycle, "b")  # waits for it: the backlog is full
    handed_two = time.monotonic() - started
    scheduler._start_binding(binding_cycle, "c")  # the loop waited, then went on
    handed_three = time.monotonic() - started
    release.set()
    scheduler.binding.shutdown(wait=True)
    assert handed_two < 0.3 <= handed_three
    assert ran == ["a", "b", "c"]


def test_writes_about_one_pod_land_in_the_order_they_were_reported(
    scheduler: live.Scheduler,
) -> None:
    """An older refusal must never land over a newer outcome (the reporting pool has several
    threads): writes about the same pod wait for the one under way; other pods' do not."""
    landed: list[str] = []
    first_started = threading.Event()

    def write(pod: Any, what: str) -> None:
        if what == "refused, 1 member":
            first_started.set()
            time.sleep(0.2)  # a slow API server
        landed.append(f"{pod.key}: {what}")

    class Pod:
        def __init__(self, key: str) -> None:
            self.key = key

    scheduler._report(write, Pod("ns/a"), "refused, 1 member")
    first_started.wait(5)
    scheduler._report(write, Pod("ns/a"), "refused, 2 members")
    scheduler._report(write, Pod("ns/b"), "scheduled")
    scheduler.reporting.shutdown(wait=True)
    assert [w for w in landed if w.startswith("ns/a")] == [
        "ns/a: refused, 1 member",
        "ns/a: refused, 2 members",
    ]
    assert landed[0] == "ns/b: scheduled"  # not held behind another pod's slow write
