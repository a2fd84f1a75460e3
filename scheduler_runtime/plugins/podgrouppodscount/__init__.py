"""PodGroupPodsCount (upstream's pkg/scheduler/framework/plugins/podgrouppodscount, gate
TopologyAwareWorkloadScheduling): a placement score that favours the placements where more of
the group's pods fit, counting the members already placed."""

from __future__ import annotations

from typing import ClassVar

from scheduler_runtime.framework.interface import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    PluginBase,
    PodGroupCycleState,
)
from scheduler_runtime.framework.podgroups import GroupKey, PodGroupAssignments
from scheduler_runtime.framework.status import SUCCESS, Code, Status


class PodGroupPodsCount(PluginBase[None]):
    name: ClassVar[str] = "PodGroupPodsCount"

    def score_placement(
        self, state: PodGroupCycleState, group: GroupKey, assignments: PodGroupAssignments
    ) -> tuple[int, Status]:
        groups = self.handle.pod_groups
        members = groups.state(group) if groups is not None else None
        if members is None:
            return 0, Status(Code.ERROR, (f"pod group state not found for pod group {group}",))
        return members.scheduled_count + len(assignments.proposed), SUCCESS

    def normalize_placement_score(
        self, state: PodGroupCycleState, group: GroupKey, scores: list[int]
    ) -> Status:
        """Scaled by the highest count (not by minCount, so small differences in counts make
        small differences in scores)."""
        highest = max(scores, default=0)
        if highest == 0:
            message = "no pods from pod group are assigned to any of the candidate placements"
            return Status(Code.ERROR, (message,))
        for index, score in enumerate(scores):
            scores[index] = MIN_NODE_SCORE + score * (MAX_NODE_SCORE - MIN_NODE_SCORE) // highest
        return SUCCESS


__all__ = ["PodGroupPodsCount"]
