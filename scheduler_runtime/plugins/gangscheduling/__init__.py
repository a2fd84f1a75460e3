"""GangScheduling (upstream's pkg/scheduler/framework/plugins/gangscheduling, gate
GangScheduling; from 1.37 GenericWorkload's): all or nothing for the pods of a
`scheduling.k8s.io` PodGroup with a gang policy. PreEnqueue holds a member until its PodGroup
and `minCount` members exist; Permit makes a placed member wait until `minCount` members are
placed, then lets them all go.

The group is placed in one pod group cycle (backend/schedule_one_podgroup.py). In 1.36 Permit
answers there whether the group would be complete; from 1.37 PlacementFeasible does, after
each member tried (and ends the cycle once the minimum is out of reach). Its members wait at
Permit for real only once the whole group is placed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from scheduler_runtime.framework.events import (
    POD,
    POD_GROUP,
    ActionType,
    ClusterEventWithHint,
    QueueingHint,
    on,
)
from scheduler_runtime.framework.interface import CycleState, PluginBase, PodGroupCycleState
from scheduler_runtime.framework.podgroups import (
    GroupKey,
    GroupPolicy,
    group_object_hint,
    scheduling_group,
    sibling_hint,
)
from scheduler_runtime.framework.podinfo import PodInfo
from scheduler_runtime.framework.status import SUCCESS, Code, Status

# permitTimeoutDuration: how long placed members wait at Permit for the rest of the gang.
PERMIT_TIMEOUT = 5 * 60.0
WAITING_FOR_MEMBERS = "waiting for minCount pods from a gang to appear in scheduling queue"
WAITING_AT_PERMIT = "waiting for minCount pods from a gang to be scheduled"


def _min_count(group: Any) -> int | None:
    """A PodGroup object's gang minCount; None without a gang policy (or a readable one)."""
    spec = group.get("spec") if isinstance(group, dict) else None
    policy = spec.get("schedulingPolicy") if isinstance(spec, dict) else None
    gang = policy.get("gang") if isinstance(policy, dict) else None
    count = gang.get("minCount") if isinstance(gang, dict) else None
    return count if isinstance(count, int) and not isinstance(count, bool) else None


def min_count_decreased(pod: PodInfo, old: Any, new: Any) -> QueueingHint:
    """isSchedulableAfterPodGroupUpdated: the pod's own PodGroup, a gang before and after,
    asking fewer members now."""
    if group_object_hint(scheduling_group)(pod, old, new) != QueueingHint.QUEUE:
        return QueueingHint.SKIP
    before, after = _min_count(old), _min_count(new)
    if before is None or after is None or after >= before:
        return QueueingHint.SKIP
    return QueueingHint.QUEUE


class GangScheduling(PluginBase[None]):
    name: ClassVar[str] = "GangScheduling"

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return (
            # A new pod may be the one that completes its gang (schedulingGroup is immutable).
            on(POD, ActionType.ADD, sibling_hint(scheduling_group)),
            # A PodGroup appearing lets its waiting members in.
            on(POD_GROUP, ActionType.ADD, group_object_hint(scheduling_group)),
            # 1.37: a PodGroup whose minCount went down may let them in (1.36's are immutable).
            on(POD_GROUP, ActionType.UPDATE, min_count_decreased),
        )

    def _group(self, pod: PodInfo) -> GroupKey | None:
        """The v1alpha2 group the pod names; none while GenericWorkload is off."""
        if not self.handle.features.generic_workload:
            return None
        return scheduling_group(pod.pod)

    def _policy(self, key: GroupKey) -> GroupPolicy | None:
        groups = self.handle.pod_groups
        return None if groups is None else groups.policy(key)

    def pre_enqueue(self, pod: PodInfo) -> Status:
        """The pod waits outside the queue until its PodGroup and minCount members exist."""
        key = self._group(pod)
        if key is None or self.handle.pod_groups is None:
            return SUCCESS
        policy = self._policy(key)
        if policy is None:
            return Status.unresolvable(
                f'waiting for pods\'s pod group "{key.name}" to appear in scheduling queue'
            )
        if not policy.gang:
            return SUCCESS
        state = self.handle.pod_groups.state(key)
        if (state.all_count if state else 0) < policy.min_count:
            return Status.unresolvable(WAITING_FOR_MEMBERS)
        return SUCCESS

    def permit(self, state: CycleState, pod: PodInfo, node_name: str) -> tuple[Status, float]:
        """Wait until minCount members are placed (assumed or bound); the member that
        completes the gang lets every waiting one go."""
        key = self._group(pod)
        groups = self.handle.pod_groups
        if key is None or groups is None:
            return SUCCESS, 0
        policy = groups.policy(key)
        if policy is None:
            message = (
                f'failed to get podGroup {key}: podgroups.scheduling.k8s.io "{key.name}" not found'
            )
            return Status(Code.ERROR, (message,)), 0
        if not policy.gang:
            return SUCCESS, 0
        members = groups.state(key)
        if members is None or members.scheduled_count < policy.min_count:
            return Status(Code.WAIT, (WAITING_AT_PERMIT,)), PERMIT_TIMEOUT
        framework = self.handle.framework
        for member in members.assumed:
            waiting = framework.get_waiting_pod(members.uids[member]) if framework else None
            if waiting is not None:
                waiting.allow(self.name)
        return SUCCESS, 0

    def placement_feasible(
        self, state: PodGroupCycleState, group: GroupKey, remaining: int, scheduled: int
    ) -> Status:
        """PlacementFeasible (1.37): the gang's minCount (1 without a gang policy) is met,
        may still be met by the members left to try (Wait), or cannot be (Unschedulable)."""
        policy = self._policy(group)
        minimum = policy.min_count if policy is not None and policy.gang else 1
        if remaining + scheduled < minimum:
            return Status.unschedulable(
                f"minCount ({minimum}) cannot be satisfied: {scheduled} scheduled, "
                f"{remaining} remaining"
            )
        if scheduled < minimum:
            return Status(
                Code.WAIT,
                (
                    f"minCount ({minimum}) is not yet satisfied: {scheduled} scheduled, "
                    f"{remaining} remaining",
                ),
            )
        return SUCCESS


__all__ = ["GangScheduling"]
