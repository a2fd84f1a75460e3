"""Permit's Wait as upstream's: a waiting pod binds once every waiting plugin allows it, not
at all once one rejects it or its timeout passes; the sample PairUp plugin holds the first
pod of a pair until its partner comes."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from importlib.metadata import EntryPoint
from typing import Any

import pytest

from scheduler_runtime.config import load_configuration
from scheduler_runtime.framework import registry as registry_module
from scheduler_runtime.framework.interface import Code, CycleState, Handle
from scheduler_runtime.framework.podinfo import PodInfo, pod_info
from scheduler_runtime.framework.runtime import Framework
from scheduler_runtime.framework.snapshot import Snapshot
from scheduler_runtime.framework.waiting import WaitingPod, go_duration

PAIR = "sample.example.com/pair"


def pod(name: str, **labels: str) -> PodInfo:
    return pod_info(
        {
            "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}", "labels": labels},
            "spec": {"containers": [{"name": "c"}]},
        }
    )


def waiting_in_thread(waiting: WaitingPod) -> tuple[threading.Thread, list[Any]]:
    verdicts: list[Any] = []
    thread = threading.Thread(target=lambda: verdicts.append(waiting.wait()))
    thread.start()
    return thread, verdicts


@pytest.mark.parametrize(
    ("seconds", "printed"),
    [
        (10, "10s"),
        (1.5, "1.5s"),
        (0.5, "500ms"),
        (0.25, "250ms"),
        (60, "1m0s"),
        (300, "5m0s"),
        (90.5, "1m30.5s"),
        (3600, "1h0m0s"),
        (3725, "1h2m5s"),
    ],
)
def test_timeouts_print_as_go_durations(seconds: float, printed: str) -> None:
    assert go_duration(seconds) == printed


def test_a_waiting_pod_goes_once_every_waiting_plugin_allows_it() -> None:
    waiting = WaitingPod(pod("a"), {"First": 30, "Second": 30})
    thread, verdicts = waiting_in_thread(waiting)
    waiting.allow("First")
    assert waiting.pending_plugins() == ["Second"]
    waiting.allow("Second")
    thread.join(5)
    assert verdicts[0].is_success


def test_one_rejection_ends_the_wait() -> None:
    waiting = WaitingPod(pod("a"), {"First": 30})
    thread, verdicts = waiting_in_thread(waiting)
    waiting.reject("First", "not today")
    thread.join(5)
    assert (verdicts[0].code, verdicts[0].reasons, verdicts[0].plugin) == (
        Code.UNSCHEDULABLE,
        ("not today",),
        "First",
    )


def test_on_a_virtual_clock_a_wait_is_decided_by_expire_not_by_waiting() -> None:
    now = [100.0]
    waiting = WaitingPod(pod("a"), {"GangScheduling": 300}, clock=lambda: now[0])
    assert (waiting.verdict(), waiting.deadline()) == (None, 400.0)
    now[0] = 399.0
    waiting.expire()
    assert waiting.verdict() is None
    now[0] = 400.0
    waiting.expire()
    verdict = waiting.verdict()
    assert verdict is not None
    assert verdict.reasons == (
        "rejected due to timeout after waiting 5m0s at plugin GangScheduling",
    )
    assert waiting.deadline() is None
    assert waiting.wait() is verdict  # decided: no blocking


def test_permit_keeps_the_waiting_plugins_reason_as_upstream_words_it(pair_up: Framework) -> None:
    status = pair_up.run_permit(CycleState(), pod("first", **{PAIR: "w"}), "n1", wait=False)
    assert (status.code, status.plugin) == (Code.WAIT, "PairUp")
    assert status.reasons == ("one or more plugins asked to wait and no plugin rejected pod",)
    assert pair_up.get_waiting_pod(pod("first").uid) is None  # asked only: nothing waits


def test_the_shortest_timeout_rejects_with_upstreams_message() -> None:
    status = WaitingPod(pod("a"), {"Slow": 30, "Quick": 0.05}).wait()
    assert status.code == Code.UNSCHEDULABLE
    assert status.reasons == ("rejected due to timeout after waiting 50ms at plugin Quick",)


@pytest.fixture
def pair_up(monkeypatch: pytest.MonkeyPatch) -> Iterator[Framework]:
    """A profile with the sample package's PairUp permit plugin (installed with the tests)."""
    point = EntryPoint("PairUp", "sample_plugin:PairUp", registry_module.ENTRY_POINT_GROUP)
    monkeypatch.setattr(
        registry_module,
        "entry_points",
        lambda group: [point] if group == registry_module.ENTRY_POINT_GROUP else [],
    )
    registry_module.registry.cache_clear()
    config = load_configuration(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [
                {
                    "plugins": {"permit": {"enabled": [{"name": "PairUp"}]}},
                    "pluginConfig": [{"name": "PairUp", "args": {"timeoutSeconds": 0.2}}],
                }
            ],
        }
    )
    yield Framework(config.profiles[0], Handle(Snapshot()))
    registry_module.registry.cache_clear()


def test_pair_up_binds_a_pair_together(pair_up: Framework) -> None:
    first, second = pod("first", **{PAIR: "x"}), pod("second", **{PAIR: "x"})
    assert pair_up.run_permit(CycleState(), first, "n1").code == Code.WAIT
    assert pair_up.get_waiting_pod(first.uid) is not None
    assert pair_up.run_permit(CycleState(), second, "n2").is_success
    assert pair_up.wait_on_permit(first).is_success
    assert pair_up.get_waiting_pod(first.uid) is None
    assert pair_up.wait_on_permit(second).is_success  # never waited


def test_pair_up_lets_a_lone_pod_time_out(pair_up: Framework) -> None:
    lone = pod("lone", **{PAIR: "y"})
    assert pair_up.run_permit(CycleState(), lone, "n1").code == Code.WAIT
    status = pair_up.wait_on_permit(lone)
    assert status.reasons == ("rejected due to timeout after waiting 200ms at plugin PairUp",)
    assert pair_up.run_permit(CycleState(), pod("unpaired"), "n1").is_success


def test_a_waiting_pod_can_be_rejected_from_outside(pair_up: Framework) -> None:
    lone = pod("lone", **{PAIR: "z"})
    pair_up.run_permit(CycleState(), lone, "n1")
    assert pair_up.reject_waiting_pod(lone.uid)
    assert pair_up.wait_on_permit(lone).reasons == ("removed",)
    assert not pair_up.reject_waiting_pod(lone.uid)
