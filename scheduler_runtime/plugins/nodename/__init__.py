"""NodeName: a pod that names a node fits only that node."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from scheduler_runtime.framework.events import NODE, ActionType, ClusterEventWithHint, on
from scheduler_runtime.framework.interface import CycleState, PluginBase
from scheduler_runtime.framework.nodeinfo import NodeInfo
from scheduler_runtime.framework.podinfo import PodInfo
from scheduler_runtime.framework.snapshot import Slots, Snapshot
from scheduler_runtime.framework.status import SUCCESS, NodeVerdicts, Status

REASON = "node(s) didn't match the requested node name"


class NodeName(PluginBase[None]):
    name: ClassVar[str] = "NodeName"
    cluster_events: ClassVar[Sequence[ClusterEventWithHint]] = (on(NODE, ActionType.ADD),)

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        if pod.node_name and pod.node_name != node.name:
            return Status.unresolvable(REASON)
        return SUCCESS

    def filter_nodes(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, slots: Slots
    ) -> NodeVerdicts:
        if not pod.node_name:
            return NodeVerdicts.passing(len(slots))
        wanted = snapshot.slot(pod.node_name)
        return NodeVerdicts.rejecting(np.asarray(slots != wanted), REASON, unresolvable=True)


__all__ = ["NodeName"]
