"""PrioritySort: higher priority first, then the pod queued earlier.

From 1.37, with GenericWorkload on, upstream's queue holds a PodGroup's members as one entry
sorted by the PodGroup's own priority (QueuedPodGroupInfo.GetPriority; unset reads 0), not by
its pods'. Here members are queued one by one and the first popped pulls its group in, so a
member sorts at its group's priority."""

from __future__ import annotations

from typing import ClassVar

from scheduler_runtime.framework.interface import Handle, PluginBase
from scheduler_runtime.framework.podgroups import scheduling_group
from scheduler_runtime.framework.podinfo import PodInfo
from scheduler_runtime.framework.types import QueuedPodInfo


class PrioritySort(PluginBase[None]):
    name: ClassVar[str] = "PrioritySort"

    def __init__(self, args: None, handle: Handle) -> None:
        super().__init__(args, handle)
        features = handle.features
        self._groups_queued_as_one = features.generic_workload and features.since(1, 37)

    def less(self, first: QueuedPodInfo, second: QueuedPodInfo) -> bool:
        p1, p2 = self.priority(first.pod_info), self.priority(second.pod_info)
        return p1 > p2 or (p1 == p2 and first.timestamp < second.timestamp)

    def sort_key(self, queued: QueuedPodInfo) -> tuple[int, float]:
        """The order `less` gives, as a value."""
        return -self.priority(queued.pod_info), queued.timestamp

    def priority(self, pod: PodInfo) -> int:
        """The priority the pod is queued at: its group's, for a PodGroup member at 1.37."""
        groups = self.handle.pod_groups
        if not self._groups_queued_as_one or groups is None:
            return pod.priority
        key = scheduling_group(pod.pod)
        policy = None if key is None else groups.policy(key)
        if policy is None:  # not a member, or its PodGroup unseen (it waits at PreEnqueue)
            return pod.priority
        return policy.priority or 0


__all__ = ["PrioritySort"]
