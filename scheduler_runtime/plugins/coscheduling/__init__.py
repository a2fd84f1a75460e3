"""Coscheduling (kubernetes-sigs/scheduler-plugins' pkg/coscheduling) for the
`scheduling.x-k8s.io/v1alpha1` PodGroups that Kubeflow's training and MPI operators, KubeRay
and the Spark operator create: pods labelled `scheduling.x-k8s.io/pod-group` are placed all
together once `minMember` of them exist, and only when the cluster has `minResources` free.

Its checks and messages are scheduler-plugins' (QueueSort by group, PreFilter for quorum,
gated members and minResources, PostFilter giving the group up, Permit waiting
`scheduleTimeoutSeconds` for the rest). Its groups are placed the way this scheduler places
every pod group (backend/schedule_one_podgroup.py): all members against one snapshot, so a
group that does not fit never holds nodes while it waits, and when a member fails its
waiting siblings are released at once (scheduler-plugins' Unreserve)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any, ClassVar

from scheduler_runtime.config.args import CoschedulingArgs
from scheduler_runtime.framework.events import (
    POD,
    ActionType,
    ClusterEventWithHint,
    on,
)
from scheduler_runtime.framework.interface import (
    CycleState,
    PluginBase,
    PostFilterResult,
    PreFilterResult,
)
from scheduler_runtime.framework.podgroups import (
    COSCHEDULING_POD_GROUP_EVENTS,
    GroupKey,
    GroupPolicy,
    coscheduling_group,
    group_object_hint,
    sibling_hint,
)
from scheduler_runtime.framework.podinfo import PodInfo
from scheduler_runtime.framework.quantity import PODS
from scheduler_runtime.framework.snapshot import Snapshot
from scheduler_runtime.framework.status import SUCCESS, Code, Status
from scheduler_runtime.framework.types import Diagnosis, QueuedPodInfo
from scheduler_runtime.plugins.coscheduling.resources import (
    DECIMAL_SI,
    Quantity,
    parse,
    resource_gap,
)

# A PodGroup as Coscheduling keeps state about it: its key and its UID.
_Group = tuple[GroupKey, str]


class Coscheduling(PluginBase[CoschedulingArgs]):
    name: ClassVar[str] = "Coscheduling"
    args_type = CoschedulingArgs

    def __init__(self, args: Any, handle: Any) -> None:
        super().__init__(args, handle)
        self._lock = threading.Lock()
        # Per PodGroup, by name and UID (one re-created under its name starts afresh), each
        # dropped when its PodGroup goes. When each group last failed (by the handle's
        # clock): it then sorts as if created at that moment, behind the groups that did
        # not fail (no head-of-line blocking).
        self._failed_at: dict[_Group, float] = {}
        self._backoff_until: dict[_Group, float] = {}
        self._permitted_until: dict[_Group, float] = {}  # minResources passed recently
        self._first_seen: dict[_Group, float] = {}
        if handle.pod_groups is not None:
            handle.pod_groups.watch_deletions(self._group_deleted)

    def _group_deleted(self, policy: GroupPolicy) -> None:
        """A PodGroup is gone: what was kept about it goes too."""
        group = (policy.key, policy.uid)
        with self._lock:
            for kept in (
                self._failed_at,
                self._backoff_until,
                self._permitted_until,
                self._first_seen,
            ):
                kept.pop(group, None)

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return (
            # A new member may complete the group (scheduler-plugins retries on every new pod;
            # only a sibling can help).
            on(POD, ActionType.ADD, sibling_hint(coscheduling_group)),
            on(
                COSCHEDULING_POD_GROUP_EVENTS,
                ActionType.ADD | ActionType.UPDATE_OTHER,
                group_object_hint(coscheduling_group),
            ),
        )

    def _group(self, pod: PodInfo) -> tuple[GroupKey | None, GroupPolicy | None]:
        key = coscheduling_group(pod.pod)
        groups = self.handle.pod_groups
        if key is None or groups is None:
            return key, None
        return key, groups.policy(key)

    # ----- QueueSort

    def less(self, first: QueuedPodInfo, second: QueuedPodInfo) -> bool:
        """Priority, then when the pod's group was created (or last failed) or the pod was
        first tried, then namespace/name: a group's members sort together."""
        return self.sort_key(first) < self.sort_key(second)

    def sort_key(self, queued: QueuedPodInfo) -> tuple[int, float, str]:
        """The order `less` gives, as a value (the queue keeps it with the pod's entry, so a
        group failing later cannot reorder its members under the queue's heap)."""
        pod = queued.pod_info
        return -pod.priority, self._since(queued), pod.key

    def _since(self, queued: QueuedPodInfo) -> float:
        own = queued.initial_attempt_timestamp
        if own is None:
            own = queued.timestamp
        key, policy = self._group(queued.pod_info)
        if key is None:
            return own
        with self._lock:
            group = (key, policy.uid if policy is not None else "")
            failed = self._failed_at.get(group)
            if failed is not None:
                return failed
            if policy is None:
                return own
            # The group's creation, on the queue's clock: when the scheduler first saw it.
            return self._first_seen.setdefault(group, own)

    # ----- PreFilter

    def pre_filter(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot
    ) -> tuple[PreFilterResult | None, Status]:
        """The group did not fail recently, has minMember members (not held by scheduling
        gates), and the cluster has minResources free for it."""
        key, policy = self._group(pod)
        if key is None or policy is None:
            return None, SUCCESS
        now = self.handle.clock()
        with self._lock:
            if self._backoff_until.get((key, policy.uid), 0.0) > now:
                return None, Status.unresolvable(f"podGroup {key} failed recently")
        members = self.handle.pod_groups.state(key) if self.handle.pod_groups else None
        count = members.all_count if members is not None else 0
        if count < policy.min_count:
            return None, Status.unresolvable(
                f"pre-filter pod {pod.name} cannot find enough sibling pods, current pods "
                f"number: {count}, minMember of group: {policy.min_count}"
            )
        if members is not None and members.gated > count - policy.min_count:
            return None, Status.unresolvable(
                f"pre-filter pod {pod.name} cannot proceed due to gated pods in the same PodGroup"
            )
        return None, self._check_resources(key, policy, snapshot, now)

    def _check_resources(
        self, key: GroupKey, policy: GroupPolicy, snapshot: Snapshot, now: float
    ) -> Status:
        if policy.min_resources is None:
            return SUCCESS
        with self._lock:
            if self._permitted_until.get((key, policy.uid), 0.0) > now:
                return SUCCESS
        try:
            wanted = {name: parse(value) for name, value in policy.min_resources.items()}
        except ValueError as error:
            return Status(Code.ERROR, (f"PodGroup {key} spec.minResources: {error}",))
        wanted[PODS] = Quantity(policy.min_count, 0, DECIMAL_SI)
        gap = resource_gap(snapshot.node_infos(), wanted, self._members(key))
        if gap:
            return Status.unresolvable(f"resource gap: {gap}")
        with self._lock:
            self._permitted_until[key, policy.uid] = now + self._timeout(policy)
        return SUCCESS

    def _members(self, key: GroupKey) -> frozenset[str]:
        groups = self.handle.pod_groups
        state = groups.state(key) if groups is not None else None
        return state.all if state is not None else frozenset()

    # ----- PostFilter

    def post_filter(
        self, state: CycleState, pod: PodInfo, diagnosis: Diagnosis
    ) -> tuple[PostFilterResult | None, Status]:
        """A member fits nowhere: unless enough of the group is placed already (or only a
        small share is missing), the group is given up and marked as failed."""
        key, policy = self._group(pod)
        if key is None or policy is None:
            return PostFilterResult(), Status.unschedulable("can not find pod group")
        groups = self.handle.pod_groups
        members = groups.state(key) if groups is not None else None
        assigned = members.scheduled_count if members is not None else 0
        if assigned >= policy.min_count:
            return PostFilterResult(), Status(Code.UNSCHEDULABLE)
        missing = (policy.min_count - assigned) / policy.min_count
        if missing <= self.args.pod_group_reject_percentage / 100:
            return PostFilterResult(), Status(Code.UNSCHEDULABLE)
        now = self.handle.clock()
        group = (key, policy.uid)
        with self._lock:
            backoff = self.args.pod_group_backoff_seconds
            if backoff and members is not None and members.all_count >= policy.min_count:
                self._backoff_until[group] = now + backoff
            self._permitted_until.pop(group, None)
            self._failed_at[group] = now
        message = (
            f"PodGroup {key} gets rejected due to Pod {pod.name} is unschedulable even after "
            "PostFilter"
        )
        return PostFilterResult(), Status.unschedulable(message)

    # ----- Permit

    def permit(self, state: CycleState, pod: PodInfo, node_name: str) -> tuple[Status, float]:
        """Wait until minMember members are placed (assumed or bound); the one that makes
        the group complete lets the waiting ones go."""
        key, policy = self._group(pod)
        if key is None:
            return SUCCESS, 0
        if policy is None:
            return Status.unschedulable("PodGroup not found"), 0
        groups = self.handle.pod_groups
        members = groups.state(key) if groups is not None else None
        if members is None or members.scheduled_count < policy.min_count:
            return Status(Code.WAIT), self._timeout(policy)
        if state.pod_group is None:
            with self._lock:
                self._failed_at.pop((key, policy.uid), None)
        framework = self.handle.framework
        for member in members.assumed:
            waiting = framework.get_waiting_pod(members.uids[member]) if framework else None
            if waiting is not None:
                waiting.allow(self.name)
        return SUCCESS, 0

    def _timeout(self, policy: GroupPolicy) -> float:
        """GetWaitTimeDuration: the group's scheduleTimeoutSeconds, else the args', else 60s."""
        if policy.timeout is not None:
            return policy.timeout
        return float(self.args.permit_waiting_time_seconds or 60)


__all__ = ["Coscheduling"]
