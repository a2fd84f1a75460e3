"""Preemption's evictions leave the live scheduler once per victim: two members of a pod
group's cycle (whose snapshot does not show the first eviction) may choose the same victim,
and the pod is deleted, and told why, once."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from backend_support import pod

from scheduler_runtime.config import load_configuration
from scheduler_runtime.framework.interface import Preemptor
from scheduler_runtime.framework.podinfo import pod_info
from scheduler_runtime.live import scheduler as live
from scheduler_runtime.live.apiconfig import ApiConfig
from scheduler_runtime.live.kube import Kube
from scheduler_runtime.live.metrics import SchedulerMetrics
from scheduler_runtime.live.outcomes import Outcomes
from scheduler_runtime.live.scheduler import Scheduler


@pytest.fixture
def sent() -> list[tuple[str, str]]:
    return []


@pytest.fixture
def scheduler(sent: list[tuple[str, str]]) -> Iterator[Scheduler]:
    config = load_configuration(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": "ours"}],
        }
    )
    kube = Kube(ApiConfig.at("http://127.0.0.1:9"))
    made = Scheduler(config, kube, Outcomes(kube, kube, "test"), SchedulerMetrics())

    def record(write: Any, victim: Any, preemptor: Preemptor) -> None:
        sent.append((victim.name, preemptor.uid))

    made._record = record  # type: ignore[method-assign]
    yield made
    made.stop(finish_bindings=False)


def preemptor(uid: str) -> Preemptor:
    return Preemptor("pod", uid, "ours", "n1", {})


def test_a_victim_is_evicted_once_whoever_chooses_it_again(
    scheduler: Scheduler, sent: list[tuple[str, str]]
) -> None:
    victim, other = pod_info(pod("victim", node_name="n1")), pod_info(pod("other", node_name="n1"))
    scheduler._evict(victim, preemptor("g-0"))
    scheduler._evict(victim, preemptor("g-1"))
    scheduler._evict(other, preemptor("g-1"))
    assert sent == [("victim", "g-0"), ("other", "g-1")]


def test_the_victims_remembered_are_bounded(
    scheduler: Scheduler, sent: list[tuple[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(live, "VICTIMS_KEPT", 2)
    victims = [pod_info(pod(f"v-{i}", node_name="n1")) for i in range(3)]
    for victim in victims:
        scheduler._evict(victim, preemptor("p"))
    assert len(scheduler._evicted) == 2
    scheduler._evict(victims[0], preemptor("q"))  # forgotten, so evicted again
    assert sent[-1] == ("v-0", "q")
