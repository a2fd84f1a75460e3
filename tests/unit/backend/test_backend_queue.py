"""The scheduling queue: PrioritySort order, exponential backoff, unschedulable pods moved on
cluster events, the five-minute flush, scheduling gates and pods changed while in flight."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from scheduler_runtime.backend.queue import (
    MAX_UNSCHEDULABLE_SECONDS,
    STALE_ENTRIES,
    SchedulingQueue,
)
from scheduler_runtime.framework.events import (
    NODE,
    POD,
    POD_GROUP,
    ActionType,
    ClusterEvent,
    QueueingHint,
    on,
)
from scheduler_runtime.framework.interface import Handle
from scheduler_runtime.framework.podinfo import PodInfo, pod_info
from scheduler_runtime.framework.snapshot import Snapshot
from scheduler_runtime.framework.status import SUCCESS, Status
from scheduler_runtime.plugins.queuesort import PrioritySort
from scheduler_runtime.plugins.schedulinggates import SchedulingGates


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def pending(name: str, priority: int = 0, gates: tuple[str, ...] = (), **extra: Any) -> PodInfo:
    return pod_info(
        {
            "metadata": {"name": name, "namespace": "ns", **extra},
            "spec": {
                "priority": priority,
                "containers": [{"name": "c", "image": "pause"}],
                "schedulingGates": [{"name": g} for g in gates],
            },
        }
    )


NODE_ADDED = ClusterEvent(NODE, ActionType.ADD)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def counts() -> list[dict[str, int]]:
    return []


@pytest.fixture
def queue(clock: Clock, counts: list[dict[str, int]]) -> SchedulingQueue:
    handle = Handle(Snapshot())
    return SchedulingQueue(
        less=PrioritySort(None, handle).less,
        pre_enqueue=SchedulingGates(None, handle).pre_enqueue,
        initial_backoff=1,
        max_backoff=10,
        clock=clock,
        on_change=counts.append,
    )


def drain(queue: SchedulingQueue) -> list[str]:
    names = []
    while (queued := queue.pop(timeout=0)) is not None:
        names.append(queued.pod_info.name)
        queue.done(queued.id)
    return names


def test_higher_priority_first_then_first_queued(queue: SchedulingQueue, clock: Clock) -> None:
    for name, priority in [("low", 0), ("high", 100), ("low-later", 0), ("mid", 50)]:
        queue.add(pending(name, priority))
        clock.now += 1
    assert drain(queue) == ["high", "mid", "low", "low-later"]


def test_pop_times_out_when_empty(queue: SchedulingQueue) -> None:
    assert queue.pop(timeout=0) is None


def test_unschedulable_pod_waits_for_a_cluster_event(queue: SchedulingQueue, clock: Clock) -> None:
    queue.add(pending("a"))
    queued = queue.pop(timeout=0)
    assert queued is not None
    queue.requeue(queued, unschedulable=True)
    assert queue.pending()["unschedulable"] == 1
    clock.now += 100
    assert queue.pop(timeout=0) is None
    queue.on_event(NODE_ADDED)
    again = queue.pop(timeout=0)
    assert again is queued
    assert again.attempts == 2


def test_moved_pod_waits_out_its_backoff(queue: SchedulingQueue, clock: Clock) -> None:
    queue.add(pending("a"))
    queued = queue.pop(timeout=0)
    assert queued is not None
    queue.requeue(queued, unschedulable=True)
    queue.on_event(NODE_ADDED)
    assert queue.pending() == {"active": 0, "backoff": 1, "unschedulable": 0, "gated": 0}
    assert queue.pop(timeout=0) is None
    clock.now += 1.0  # first attempt: initial backoff of one second
    assert queue.pop(timeout=0) is queued


@pytest.mark.parametrize(
    ("attempts", "seconds"), [(1, 1), (2, 2), (3, 4), (4, 8), (5, 10), (12, 10)]
)
def test_backoff_doubles_up_to_the_maximum(
    queue: SchedulingQueue, attempts: int, seconds: float
) -> None:
    assert queue.backoff_seconds(attempts) == seconds


def test_errors_go_to_backoff_not_unschedulable(queue: SchedulingQueue, clock: Clock) -> None:
    queue.add(pending("a"))
    queued = queue.pop(timeout=0)
    assert queued is not None
    queue.requeue(queued, unschedulable=False)
    assert queue.pending()["backoff"] == 1
    clock.now += 1
    assert queue.pop(timeout=0) is queued


def test_event_while_in_flight_sends_the_pod_to_backoff(
    queue: SchedulingQueue, clock: Clock
) -> None:
    queue.add(pending("a"))
    queued = queue.pop(timeout=0)
    assert queued is not None
    queue.on_event(NODE_ADDED)  # a node arrived during the attempt: it may fit now
    queue.requeue(queued, unschedulable=True)
    assert queue.pending()["backoff"] == 1


def hinted_queue(clock: Clock, gate: Callable[[PodInfo], Status] | None = None) -> SchedulingQueue:
    """A queue whose plugins say which events help: Fit a deleted pod, Affinity an added pod
    labelled app=web, Gang (a preEnqueue plugin) an added PodGroup."""

    def web_pod(pod: PodInfo, old: Any, new: Any) -> QueueingHint:
        labels = (new.get("metadata") or {}).get("labels") or {}
        return QueueingHint.QUEUE if labels.get("app") == "web" else QueueingHint.SKIP

    registrations = {
        "Fit": (on(POD, ActionType.DELETE),),
        "Affinity": (on(POD, ActionType.ADD, web_pod),),
        "Gang": (on(POD_GROUP, ActionType.ADD),),
    }
    handle = Handle(Snapshot())
    return SchedulingQueue(
        less=PrioritySort(None, handle).less,
        pre_enqueue=gate or SchedulingGates(None, handle).pre_enqueue,
        registrations=lambda profile: registrations,
        clock=clock,
    )


def rejected(queue: SchedulingQueue, name: str, plugin: str) -> None:
    queue.add(pending(name))
    queued = queue.pop(timeout=0)
    assert queued is not None
    queued.unschedulable_plugins = {plugin}
    queue.requeue(queued, unschedulable=True)


def assigned(labels: dict[str, str]) -> dict[str, Any]:
    return {"metadata": {"name": "other", "namespace": "ns", "labels": labels}}


def test_an_event_tries_again_only_the_pods_their_plugins_say_it_can_help(clock: Clock) -> None:
    queue = hinted_queue(clock)
    rejected(queue, "too-big", "Fit")
    rejected(queue, "needs-web", "Affinity")
    queue.on_event(NODE_ADDED)  # neither registered node events
    queue.on_event(ClusterEvent(POD, ActionType.ADD), None, assigned({"app": "db"}))  # hint: skip
    assert queue.pending()["unschedulable"] == 2
    queue.on_event(ClusterEvent(POD, ActionType.ADD), None, assigned({"app": "web"}))
    assert queue.pending() == {"active": 0, "backoff": 1, "unschedulable": 1, "gated": 0}
    queue.on_event(ClusterEvent(POD, ActionType.DELETE), assigned({}), None)
    assert queue.pending()["unschedulable"] == 0


def test_a_hint_that_fails_counts_as_queue(clock: Clock) -> None:
    def broken(pod: PodInfo, old: Any, new: Any) -> QueueingHint:
        raise KeyError("metadata")

    queue = hinted_queue(clock)
    queue.registrations = lambda profile: {"Affinity": (on(POD, ActionType.ADD, broken),)}
    rejected(queue, "needs-web", "Affinity")
    queue.on_event(ClusterEvent(POD, ActionType.ADD), None, assigned({}))
    assert queue.pending()["unschedulable"] == 0


def test_events_seen_in_flight_are_judged_by_the_plugins_that_rejected_the_pod(
    clock: Clock,
) -> None:
    queue = hinted_queue(clock)
    queue.add(pending("a"))
    queued = queue.pop(timeout=0)
    assert queued is not None
    queue.on_event(NODE_ADDED)  # while in flight: Fit does not care
    queued.unschedulable_plugins = {"Fit"}
    queue.requeue(queued, unschedulable=True)
    assert queue.pending()["unschedulable"] == 1
    queue.on_event(ClusterEvent(POD, ActionType.DELETE), assigned({}), None)
    assert queue.pending()["backoff"] == 1


def test_an_event_the_gating_plugin_registered_lets_a_gated_pod_in(clock: Clock) -> None:
    group_exists = False

    def gang(pod: PodInfo) -> Status:
        return SUCCESS if group_exists else Status.unresolvable("waiting", plugin="Gang")

    queue = hinted_queue(clock, gate=gang)
    queue.add(pending("member"))
    assert queue.pending()["gated"] == 1
    group_exists = True
    queue.on_event(NODE_ADDED)  # not an event the gate asked for: not looked at again
    assert queue.pending()["gated"] == 1
    queue.on_event(ClusterEvent(POD_GROUP, ActionType.ADD), None, {})
    assert queue.pending() == {"active": 1, "backoff": 0, "unschedulable": 0, "gated": 0}


def test_unschedulable_pods_are_retried_after_five_minutes(
    queue: SchedulingQueue, clock: Clock
) -> None:
    queue.add(pending("a"))
    queued = queue.pop(timeout=0)
    assert queued is not None
    queue.requeue(queued, unschedulable=True)
    clock.now += MAX_UNSCHEDULABLE_SECONDS - 1
    queue.flush_unschedulable()
    assert queue.pending()["unschedulable"] == 1
    clock.now += 2
    queue.flush_unschedulable()
    assert queue.pop(timeout=0) is queued


def test_gated_pod_waits_until_its_gates_are_removed(queue: SchedulingQueue) -> None:
    queue.add(pending("a", gates=("example.com/wait",)))
    assert queue.pending()["gated"] == 1
    assert queue.pop(timeout=0) is None
    queue.add(pending("a"))
    assert queue.pending() == {"active": 1, "backoff": 0, "unschedulable": 0, "gated": 0}
    assert drain(queue) == ["a"]


def test_status_only_update_does_not_wake_an_unschedulable_pod(queue: SchedulingQueue) -> None:
    queue.add(pending("a", resourceVersion="1"))
    queued = queue.pop(timeout=0)
    assert queued is not None
    queue.requeue(queued, unschedulable=True)
    queue.add(pending("a", resourceVersion="2"))  # e.g. our own condition patch
    assert queue.pending()["unschedulable"] == 1
    queue.add(pending("a", resourceVersion="3", labels={"fixed": "yes"}))
    assert queue.pending()["unschedulable"] == 0


def test_an_update_of_the_pod_in_flight_is_judged_when_its_attempt_fails(clock: Clock) -> None:
    """Upstream's addEventsIfPodInFlight: the pod's own update during its attempt is an
    event like any other; the plugin that rejects the pod says whether it could help."""
    queue = hinted_queue(clock)
    queue.registrations = lambda profile: {
        "Tolerations": (on(POD, ActionType.UPDATE_POD_TOLERATION),)
    }
    for update, where in [
        ({"resourceVersion": "2"}, "unschedulable"),  # our own status patch: no help
        ({"resourceVersion": "3", "labels": {"x": "y"}}, "unschedulable"),  # not registered
        ({"resourceVersion": "4", "tolerations": True}, "backoff"),
    ]:
        name = f"pod-{update['resourceVersion']}"
        queue.add(pending(name, resourceVersion="1"))
        queued = queue.pop(timeout=0)
        assert queued is not None
        updated = pending(name, **{k: v for k, v in update.items() if k != "tolerations"})
        if update.get("tolerations"):
            updated.pod["spec"]["tolerations"] = [{"key": "k", "operator": "Exists"}]
            updated = pod_info(updated.pod)
        queue.add(updated)
        queued.unschedulable_plugins = {"Tolerations"}
        queue.requeue(queued, unschedulable=True)
        assert queue.ids() == {queued.id}
        assert queue.pending()[where] == 1, update
        queue.delete(queued.id)


def test_a_claim_made_for_an_unschedulable_pod_is_an_update_that_may_help(clock: Clock) -> None:
    """isPodUpdated keeps status.resourceClaimStatuses: the claim controller's note of the
    claim it made reaches DynamicResources' hint (UpdatePodGeneratedResourceClaim)."""
    queue = hinted_queue(clock)
    queue.registrations = lambda profile: {
        "DynamicResources": (on(POD, ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM),)
    }
    rejected(queue, "with-claim", "DynamicResources")
    made = pending("with-claim", resourceVersion="2")
    made.pod["status"] = {"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "c-1"}]}
    queue.add(pod_info(made.pod))
    assert queue.pending()["backoff"] == 1


def test_pod_deleted_in_flight_is_not_requeued(queue: SchedulingQueue) -> None:
    queue.add(pending("a"))
    queued = queue.pop(timeout=0)
    assert queued is not None
    queue.delete("ns/a")
    queue.requeue(queued, unschedulable=True)
    assert sum(queue.pending().values()) == 0
    assert "ns/a" not in queue


def test_update_in_flight_is_used_on_requeue(queue: SchedulingQueue) -> None:
    queue.add(pending("a", priority=1))
    queued = queue.pop(timeout=0)
    assert queued is not None
    queue.add(pending("a", priority=7))
    queue.requeue(queued, unschedulable=True)
    assert queued.pod_info.priority == 7


def test_pending_counts_are_reported(queue: SchedulingQueue, counts: list[dict[str, int]]) -> None:
    queue.add(pending("a"))
    queue.add(pending("b", gates=("g",)))
    assert counts[-1] == {"active": 1, "backoff": 0, "unschedulable": 0, "gated": 1}


def test_close_wakes_a_blocked_pop(queue: SchedulingQueue) -> None:
    queue.close()
    assert queue.pop() is None


def test_pods_pushed_again_leave_a_bounded_heap(queue: SchedulingQueue) -> None:
    """Each priority change pushes a fresh entry; the stale ones are dropped before they
    outnumber the live ones by more than a few dozen."""
    queue.add(pending("other"))
    for priority in range(1000):
        queue.add(pending("a", priority=priority))
    assert len(queue._active_heap) <= 2 * 2 + STALE_ENTRIES
    assert drain(queue) == ["a", "other"]


def test_a_pod_in_flight_sees_only_the_events_since_it_left_the_queue(
    queue: SchedulingQueue,
) -> None:
    """One log for all pods in flight (upstream's inFlightEvents): an event is added once,
    and each pod judges the events from when it went in flight on."""
    queue.add(pending("a"))
    queue.add(pending("b"))
    first = queue.pop(timeout=0)
    assert first is not None
    queue.on_event(NODE_ADDED)  # during a's attempt only
    second = queue.pop(timeout=0)
    assert second is not None
    queue.requeue(second, unschedulable=True)
    assert queue.pending()["unschedulable"] == 1  # b saw nothing that could help it
    queue.requeue(first, unschedulable=True)
    assert queue.pending()["backoff"] == 1  # a saw the node arrive


def test_the_in_flight_log_keeps_only_what_pods_in_flight_need(queue: SchedulingQueue) -> None:
    queue.add(pending("a"))
    queue.on_event(NODE_ADDED)  # nobody in flight: not kept
    assert len(queue._in_flight_events) == 0
    queued = queue.pop(timeout=0)
    assert queued is not None
    for _ in range(3):
        queue.on_event(NODE_ADDED)
    assert len(queue._in_flight_events) == 3  # once each, not once per pod in flight
    queue.done(queued.id)
    assert len(queue._in_flight_events) == 0


@pytest.mark.parametrize(("kept", "goes_to"), [(2, "backoff"), (8, "unschedulable")])
def test_a_pod_whose_events_were_dropped_is_tried_again(
    clock: Clock, monkeypatch: pytest.MonkeyPatch, kept: int, goes_to: str
) -> None:
    """A pod that waits in flight (at Permit) while more events than the log keeps happen
    cannot be judged by them: it goes to backoff, as after a change no hint can judge."""
    queue = hinted_queue(clock)
    monkeypatch.setattr(queue._in_flight_events, "limit", kept)
    queue.add(pending("a"))
    queue.add(pending("b"))
    waits, quick = queue.pop(timeout=0), queue.pop(timeout=0)
    assert waits is not None
    assert quick is not None
    for _ in range(3):
        queue.on_event(NODE_ADDED)  # none helps a pod Fit rejected
    queue.done(quick.id)
    waits.unschedulable_plugins = {"Fit"}
    queue.requeue(waits, unschedulable=True)
    assert queue.pending()[goes_to] == 1
