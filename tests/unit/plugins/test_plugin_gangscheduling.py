"""GangScheduling as upstream's: PreEnqueue holds members until their PodGroup and minCount
members exist, Permit waits five minutes for the rest and lets them all go once the gang is
complete, and only a sibling or the group's own PodGroup brings a held member back."""

from __future__ import annotations

from typing import Any

from scheduler_runtime.backend.podgroups import PodGroups
from scheduler_runtime.framework.events import ActionType, QueueingHint
from scheduler_runtime.framework.features import Features
from scheduler_runtime.framework.interface import Code, CycleState, Handle
from scheduler_runtime.framework.podgroups import WORKLOAD_POD_GROUP
from scheduler_runtime.framework.podinfo import pod_info
from scheduler_runtime.framework.snapshot import Snapshot
from scheduler_runtime.framework.waiting import WaitingPod, WaitingPods
from scheduler_runtime.plugins.gangscheduling import GangScheduling


def member(name: str, group: str = "gang", namespace: str = "ns") -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}"},
        "spec": {"schedulingGroup": {"podGroupName": group}, "containers": []},
    }


def pod_group(policy: dict[str, Any], name: str = "gang") -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "ns"}, "spec": {"schedulingPolicy": policy}}


class Waiting:
    """The framework's waiting pods, as the plugin's handle reaches them."""

    def __init__(self) -> None:
        self.pods = WaitingPods()

    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        return self.pods.get(uid)


GATES_ON = Features(generic_workload=True, gang_scheduling=True)


def plugin(
    groups: PodGroups, waiting: Waiting | None = None, features: Features = GATES_ON
) -> GangScheduling:
    handle = Handle(Snapshot(), pod_groups=groups, framework=waiting, features=features)  # type: ignore[arg-type]
    return GangScheduling(None, handle)


def test_members_wait_outside_the_queue_for_their_podgroup_then_for_min_count() -> None:
    groups = PodGroups()
    gang = plugin(groups)
    first = pod_info(member("a"))
    groups.upsert_pod(first.id, first.pod)
    status = gang.pre_enqueue(first)
    assert (status.code, status.reasons) == (
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        ('waiting for pods\'s pod group "gang" to appear in scheduling queue',),
    )
    groups.upsert_group(WORKLOAD_POD_GROUP, pod_group({"gang": {"minCount": 2}}))
    assert gang.pre_enqueue(first).reasons == (
        "waiting for minCount pods from a gang to appear in scheduling queue",
    )
    groups.upsert_pod("ns/b", member("b"))
    assert gang.pre_enqueue(first).is_success


def test_pods_without_a_group_or_with_a_basic_policy_are_not_held() -> None:
    groups = PodGroups()
    gang = plugin(groups)
    loner = pod_info({"metadata": {"name": "x", "namespace": "ns"}, "spec": {}})
    assert gang.pre_enqueue(loner).is_success
    assert gang.permit(CycleState(), loner, "n1")[0].is_success
    groups.upsert_group(WORKLOAD_POD_GROUP, pod_group({"basic": {}}))
    assert gang.pre_enqueue(pod_info(member("a"))).is_success
    assert gang.permit(CycleState(), pod_info(member("a")), "n1")[0].is_success


def test_permit_waits_five_minutes_until_the_gang_is_placed_then_lets_all_go() -> None:
    groups = PodGroups()
    waiting = Waiting()
    gang = plugin(groups, waiting)
    groups.upsert_group(WORKLOAD_POD_GROUP, pod_group({"gang": {"minCount": 2}}))
    first, second = pod_info(member("a")), pod_info(member("b"))
    for pod in (first, second):
        groups.upsert_pod(pod.id, pod.pod)
    groups.assume(first, "n1")
    status, timeout = gang.permit(CycleState(), first, "n1")
    assert (status.code, status.reasons, timeout) == (
        Code.WAIT,
        ("waiting for minCount pods from a gang to be scheduled",),
        300.0,
    )
    held = WaitingPod(first, {"GangScheduling": timeout})
    waiting.pods.add(held)
    groups.assume(second, "n2")
    assert gang.permit(CycleState(), second, "n2")[0].is_success
    verdict = held.verdict()
    assert verdict is not None
    assert verdict.is_success


def test_permit_without_its_podgroup_is_an_error_as_upstream() -> None:
    status, _ = plugin(PodGroups()).permit(CycleState(), pod_info(member("a")), "n1")
    assert (status.code, status.reasons) == (
        Code.ERROR,
        ('failed to get podGroup ns/gang: podgroups.scheduling.k8s.io "gang" not found',),
    )


def test_only_a_sibling_or_the_own_podgroup_brings_a_held_member_back() -> None:
    gang = plugin(PodGroups())
    hints = {
        (event.event.resource, event.event.action): event.hint
        for event in gang.events_to_register()
    }
    held = pod_info(member("a"))
    pod_hint = hints["Pod", ActionType.ADD]
    group_hint = hints["scheduling.k8s.io/PodGroup", ActionType.ADD]
    assert pod_hint is not None
    assert group_hint is not None
    assert pod_hint(held, None, member("b")) is QueueingHint.QUEUE
    assert pod_hint(held, None, member("b", group="other")) is QueueingHint.SKIP
    assert pod_hint(held, None, member("b", namespace="elsewhere")) is QueueingHint.SKIP
    assert group_hint(held, None, pod_group({"basic": {}})) is QueueingHint.QUEUE
    assert group_hint(held, None, pod_group({"basic": {}}, name="other")) is QueueingHint.SKIP


def test_without_generic_workload_no_pod_is_held_or_waits() -> None:
    groups = PodGroups()
    groups.upsert_group(WORKLOAD_POD_GROUP, pod_group({"gang": {"minCount": 3}}))
    gang = plugin(groups, features=Features())
    assert gang.pre_enqueue(pod_info(member("a"))).is_success
    assert gang.permit(CycleState(), pod_info(member("a")), "n1")[0].is_success
