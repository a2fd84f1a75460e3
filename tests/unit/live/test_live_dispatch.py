"""The live scheduler's writes and binding cycles in ordinary races, against a fake API server
whose answers the test holds back: a bug met in a binding cycle still releases what the pod
held; a refusal reported before a pod's binding never lands after it; pods waiting in PreBind
do not hold back another pod's binding."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from backend_support import node, pod

from scheduler_runtime.backend import NODES, PODS
from scheduler_runtime.backend.api_dispatcher import CallQueue
from scheduler_runtime.backend.schedule_one import GroupOutcome
from scheduler_runtime.config import load_configuration, parse_feature_gates
from scheduler_runtime.framework.podgroups import (
    WORKLOAD_API,
    WORKLOAD_POD_GROUP,
    GroupKey,
    workload_api,
)
from scheduler_runtime.framework.podinfo import pod_info
from scheduler_runtime.framework.runtime import Framework
from scheduler_runtime.framework.status import SUCCESS, Status
from scheduler_runtime.live import scheduler as live
from scheduler_runtime.live.api_calls import RELEVANCES, PodGroupStatusPatchCall, PodStatusPatchCall
from scheduler_runtime.live.kube import RateLimiter
from scheduler_runtime.live.metrics import SchedulerMetrics
from scheduler_runtime.live.outcomes import Outcomes
from scheduler_runtime.live.reflector import object_paths
from scheduler_runtime.plugins.volumebinding import VolumeBinding

PROFILE = "ours"
WAIT = 30.0  # only so a broken test does not hang


class FakeKube:
    """Records every write; a write whose path contains a held fragment waits for release."""

    def __init__(self) -> None:
        self.limiter = RateLimiter(qps=0, burst=1)
        self.writes: list[tuple[str, str, Any]] = []
        self.held: dict[str, threading.Event] = {}
        self.reached: dict[str, threading.Event] = {}
        self.refused: set[str] = set()
        self._lock = threading.Lock()

    def hold(self, fragment: str) -> threading.Event:
        self.reached[fragment] = threading.Event()
        self.held[fragment] = threading.Event()
        return self.held[fragment]

    def request(self, method: str, path: str, body: Any = None, **_: Any) -> dict[str, Any]:
        return self._write(method, path, body)

    def patch(self, path: str, body: Any, **_: Any) -> dict[str, Any]:
        return self._write("PATCH", path, body)

    def get(self, path: str, **_: Any) -> dict[str, Any]:
        return {}

    def _write(self, method: str, path: str, body: Any) -> dict[str, Any]:
        for fragment, release in self.held.items():
            if fragment in path:
                self.reached[fragment].set()
                release.wait(WAIT)
        if any(fragment in path for fragment in self.refused):
            raise OSError("connection refused")
        with self._lock:
            self.writes.append((method, path, body))
        return {}

    def about(self, name: str) -> list[str]:
        """The writes to pod `name` and its subresources (events aside), as `METHOD sub`."""
        prefix = f"/api/v1/namespaces/ns/pods/{name}"
        with self._lock:
            return [
                f"{method} {path[len(prefix) :] or '/'} {_what(body)}"
                for method, path, body in self.writes
                if path == prefix or path.startswith(prefix + "/")
            ]


def _what(body: Any) -> str:
    status = (body or {}).get("status") or {}
    conditions = status.get("conditions") or [{}]
    return str(conditions[0].get("reason") or body.get("target", {}).get("name") or "")


def make(kube: FakeKube) -> live.Scheduler:
    config = load_configuration(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": PROFILE}],
        }
    )
    outcomes = Outcomes(kube, kube, "test")  # type: ignore[arg-type]
    return live.Scheduler(config, kube, outcomes, SchedulerMetrics())  # type: ignore[arg-type]


@pytest.fixture
def kube() -> FakeKube:
    return FakeKube()


@pytest.fixture
def scheduler(kube: FakeKube) -> Iterator[live.Scheduler]:
    made = make(kube)
    yield made
    for release in kube.held.values():
        release.set()
    made.stop()


def attempt(scheduler: live.Scheduler, name: str, **changes: Any) -> None:
    """Adds (or updates) pod `name` and runs one scheduling cycle for it."""
    scheduler.backend.events.upsert(PODS, pod(name, scheduler=PROFILE, **changes))
    queued = scheduler.queue.pop(timeout=WAIT)
    assert queued is not None
    assert queued.pod_info.name == name
    scheduler.schedule_one(queued)


def unexpected(scheduler: live.Scheduler, where: str) -> float:
    value = scheduler.metrics.registry.get_sample_value(
        "scheduler_runtime_unexpected_errors_total", {"where": where}
    )
    return value or 0.0


def wait_bindings(scheduler: live.Scheduler) -> None:
    """Until no binding cycle runs (the binding threads of the code before this change had
    no such count: their pool is shut down instead)."""
    bindings = getattr(scheduler, "bindings", None)
    if bindings is not None:
        assert bindings.idle(WAIT)
    else:
        scheduler.binding.shutdown(wait=True)  # type: ignore[attr-defined]


def test_a_bug_in_the_binding_cleanup_is_logged_counted_and_the_pod_released(
    scheduler: live.Scheduler,
    kube: FakeKube,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The binding is refused, and Unreserve meets a bug (as the KeyError of a deletion
    landing mid-cleanup): the pod is still forgotten, back in the queue, and the bug is in
    the log with the pod and in the metric."""
    scheduler.backend.events.replace(NODES, [node("n1")])
    kube.refused.add("/binding")

    def broken(*_: Any) -> None:
        raise KeyError("ns/a")

    monkeypatch.setattr(VolumeBinding, "unreserve", broken)
    with caplog.at_level(logging.ERROR, logger="scheduler_runtime.scheduler"):
        attempt(scheduler, "a")
        wait_bindings(scheduler)
    assert not scheduler.backend.cache.is_assumed("uid-a")
    assert "uid-a" in scheduler.queue  # back in the queue (backoff)
    assert scheduler.queue.pending()["backoff"] == 1
    assert unexpected(scheduler, "binding_cleanup") == 1
    assert any('pod="ns/a"' in r.getMessage() for r in caplog.records)


def test_a_refusal_reported_before_the_binding_never_lands_after_it(
    kube: FakeKube, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pod a is refused while the API server is slow with another pod's write, then fits and
    is bound: its pending refusal is superseded, never written over the binding."""
    monkeypatch.setattr(live, "DISPATCH_WORKERS", 1, raising=False)
    monkeypatch.setattr(live, "REPORTING_WORKERS", 1)
    scheduler = make(kube)
    try:
        slow = kube.hold("/pods/z/status")
        attempt(scheduler, "z")  # no node: refused, and its status write hangs
        assert kube.reached["/pods/z/status"].wait(WAIT)
        attempt(scheduler, "a")  # no node: refused; its write waits behind z's
        scheduler.backend.events.replace(NODES, [node("n1")])  # now a fits
        for _ in range(2):  # z is tried again too (refused again: its patches merge)
            queued = scheduler.queue.pop(timeout=WAIT)
            assert queued is not None
            scheduler.schedule_one(queued)
        pending_binding(scheduler)  # a's binding waits for the API server too
        slow.set()
        wait_bindings(scheduler)
    finally:
        scheduler.stop()
    assert kube.about("a") == ["POST /binding n1"]


def pending_binding(scheduler: live.Scheduler) -> None:
    """Until a binding waits in the dispatcher (the code before this change had none: it
    wrote bindings on their own, so the test goes on after its deadline)."""
    for _ in range(int(WAIT / 0.01)):
        value = scheduler.metrics.registry.get_sample_value(
            "scheduler_pending_async_api_calls", {"call_type": "pod_binding"}
        )
        if value == 1:
            return
        threading.Event().wait(0.01)


def test_pods_waiting_in_prebind_do_not_hold_back_another_pods_binding(
    scheduler: live.Scheduler, kube: FakeKube, monkeypatch: pytest.MonkeyPatch
) -> None:
    """70 pods wait in PreBind (as for a device's binding conditions); the next one binds."""
    scheduler.backend.events.replace(NODES, [node("n1")])
    release = threading.Event()
    waiting = threading.Semaphore(0)
    prebind, pre_flight = Framework.run_pre_bind, Framework.run_pre_bind_pre_flight

    def has_work(framework: Framework, state: Any, info: Any, node_name: str) -> Status:
        if info.name.startswith("waits-"):
            return SUCCESS  # PreBind will have work: the binding cycle gets a thread
        return pre_flight(framework, state, info, node_name)

    def slow_prebind(framework: Framework, state: Any, info: Any, node_name: str) -> Status:
        if info.name.startswith("waits-"):
            waiting.release()
            release.wait(4 * WAIT)  # longer than the test waits for the next pod
            return SUCCESS
        return prebind(framework, state, info, node_name)

    monkeypatch.setattr(Framework, "run_pre_bind_pre_flight", has_work)
    monkeypatch.setattr(Framework, "run_pre_bind", slow_prebind)
    for n in range(70):
        attempt(scheduler, f"waits-{n}", cpu="1m")
    deadline = time.monotonic() + WAIT
    arrived = sum(waiting.acquire(timeout=max(0, deadline - time.monotonic())) for _ in range(70))
    attempt(scheduler, "next", cpu="1m")
    bound = threading.Event()
    for _ in range(int(WAIT / 0.01)):
        if kube.about("next"):
            bound.set()
            break
        threading.Event().wait(0.01)
    release.set()
    assert arrived == 70
    assert bound.is_set()
    assert kube.about("next") == ["POST /binding n1"]


def test_an_event_a_plugin_records_never_fails_its_caller(
    scheduler: live.Scheduler, kube: FakeKube
) -> None:
    """DynamicResources records BindingConditionsPending in PreBind: the API server refusing
    the event must not fail the binding (the event is written off the plugin's thread)."""
    kube.refused.add("/events")
    claims = scheduler.backend.frameworks[PROFILE].handle.services.resource_claims
    assert claims is not None
    claims.event(pod("a"), "Normal", "BindingConditionsPending", "Scheduling", "waiting")
    scheduler.reporting.shutdown(wait=True)
    assert not kube.writes  # refused, and logged


def test_the_newest_pending_pod_group_condition_is_the_one_written(kube: FakeKube) -> None:
    """A cycle's PodGroupScheduled=False still pending when the next cycle places the group:
    only True is written."""
    outcomes = Outcomes(kube, kube, "test")  # type: ignore[arg-type]
    group = {"metadata": {"namespace": "ns", "name": "g", "uid": "uid-g", "generation": 1}}
    calls = CallQueue(RELEVANCES, lambda *_: None)
    api = workload_api("1.36")
    calls.add(PodGroupStatusPatchCall(outcomes, group, ("False", "Unschedulable", "1/2"), api))
    calls.add(PodGroupStatusPatchCall(outcomes, group, ("True", "Scheduled", ""), api))
    queued = calls.pop()
    assert queued is not None
    queued.call.execute()
    calls.finalize(queued)
    assert calls.pending() == 0
    (write,) = kube.writes
    assert write[1].endswith("/podgroups/g/status")
    assert write[2]["status"]["conditions"][0]["status"] == "True"


@pytest.mark.parametrize(
    ("minor", "version", "condition"),
    [("1.36", "v1alpha2", "PodGroupScheduled"), ("1.37", "v1beta1", "PodGroupInitiallyScheduled")],
)
def test_a_pod_groups_condition_is_written_at_the_emulated_minors_version(
    kube: FakeKube, minor: str, version: str, condition: str
) -> None:
    """1.37 removed v1alpha2: its scheduler watches v1beta1 PodGroups and sets
    PodGroupInitiallyScheduled on them; 1.36's, PodGroupScheduled on v1alpha2 ones."""
    config = load_configuration(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": PROFILE}],
        },
        feature_gates=parse_feature_gates("GenericWorkload=true", minor),
    )
    outcomes = Outcomes(kube, kube, "test")  # type: ignore[arg-type]
    scheduler = live.Scheduler(config, kube, outcomes, SchedulerMetrics())  # type: ignore[arg-type]
    try:
        paths = object_paths(scheduler.workload_api)
        assert paths[WORKLOAD_POD_GROUP] == f"/apis/scheduling.k8s.io/{version}/podgroups"
        group = {
            "metadata": {"namespace": "ns", "name": "g", "uid": "uid-g", "generation": 2},
            "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}},
        }
        scheduler.backend.events.upsert(WORKLOAD_POD_GROUP, group)
        scheduler.group_decided(GroupOutcome(GroupKey(WORKLOAD_API, "ns", "g"), SUCCESS))
        scheduler.dispatcher.close(timeout=WAIT)
    finally:
        scheduler.stop(finish_bindings=False)
    (write,) = [w for w in kube.writes if "/podgroups/" in w[1]]
    assert write[1] == f"/apis/scheduling.k8s.io/{version}/namespaces/ns/podgroups/g/status"
    (written,) = write[2]["status"]["conditions"]
    wrote = (written["type"], written["status"], written["reason"])
    assert wrote == (condition, "True", "Scheduled")
    assert written["observedGeneration"] == 2


def test_a_newer_status_patch_keeps_the_older_ones_nomination(kube: FakeKube) -> None:
    """The nominated node written before Permit, then a refusal without a nomination of its
    own, both pending: one patch with both (upstream's PodStatusPatchCall.Merge)."""
    outcomes = Outcomes(kube, kube, "test")  # type: ignore[arg-type]
    info = pod_info(pod("a"))
    calls = CallQueue(RELEVANCES, lambda *_: None)
    calls.add(PodStatusPatchCall(outcomes, info, nominated_node="n1"))
    calls.add(PodStatusPatchCall(outcomes, info, "Unschedulable", "0/1 nodes are available."))
    queued = calls.pop()
    assert queued is not None
    queued.call.execute()
    (write,) = kube.writes
    assert write[2]["status"]["nominatedNodeName"] == "n1"
    assert write[2]["status"]["conditions"][0]["reason"] == "Unschedulable"


def test_a_pod_with_nothing_to_wait_for_binds_on_no_thread_of_its_own(
    scheduler: live.Scheduler, kube: FakeKube
) -> None:
    """Its binding is sent from the loop and its cycle ends on the dispatcher's worker that
    receives the answer: no binding thread is started, and the cycle counts among the
    bindings under way (stop waits for it) until it has ended."""
    scheduler.backend.events.replace(NODES, [node("n1")])
    answer = kube.hold("/binding")
    before = set(threading.enumerate())
    attempt(scheduler, "a")
    assert kube.reached["/binding"].wait(WAIT)
    assert scheduler.bindings.running() == 1
    assert "uid-a" in scheduler.queue  # in flight until its cycle ends
    answer.set()
    assert scheduler.bindings.idle(WAIT)
    assert kube.about("a") == ["POST /binding n1"]
    assert "uid-a" not in scheduler.queue  # done: bound
    started = set(threading.enumerate()) - before
    assert not [thread for thread in started if thread.name.startswith("binding-")]
