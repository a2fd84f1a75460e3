"""NodeUnschedulable: cordoned nodes take only pods that tolerate the unschedulable taint."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from scheduler_runtime.framework.events import NODE, POD, ActionType, ClusterEventWithHint, on
from scheduler_runtime.framework.interface import CycleState, PluginBase
from scheduler_runtime.framework.nodeinfo import NodeInfo
from scheduler_runtime.framework.podinfo import PodInfo, Taint
from scheduler_runtime.framework.snapshot import Slots, Snapshot
from scheduler_runtime.framework.status import SUCCESS, NodeVerdicts, Status

REASON = "node(s) were unschedulable"
UNSCHEDULABLE_TAINT = Taint("node.kubernetes.io/unschedulable", "", "NoSchedule")


def _tolerates_cordon(pod: PodInfo) -> bool:
    return any(t.tolerates(UNSCHEDULABLE_TAINT) for t in pod.tolerations)


class NodeUnschedulable(PluginBase[None]):
    name: ClassVar[str] = "NodeUnschedulable"
    cluster_events: ClassVar[Sequence[ClusterEventWithHint]] = (
        on(NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
        on(POD, ActionType.UPDATE_POD_TOLERATION),
    )

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        if node.unschedulable and not _tolerates_cordon(pod):
            return Status.unresolvable(REASON)
        return SUCCESS

    def filter_nodes(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, slots: Slots
    ) -> NodeVerdicts:
        if _tolerates_cordon(pod):
            return NodeVerdicts.passing(len(slots))
        cordoned = np.asarray(snapshot.unschedulable[slots], dtype=np.bool_)
        return NodeVerdicts.rejecting(cordoned, REASON, unresolvable=True)


__all__ = ["NodeUnschedulable"]
