"""NodePorts: a pod's host ports must be free on the node."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

import numpy as np

from scheduler_runtime.framework.events import NODE, POD, ActionType, ClusterEventWithHint, on
from scheduler_runtime.framework.interface import CycleState, PluginBase, PreFilterResult, StateNeed
from scheduler_runtime.framework.nodeinfo import NodeInfo
from scheduler_runtime.framework.podinfo import PodInfo
from scheduler_runtime.framework.snapshot import Slots, Snapshot
from scheduler_runtime.framework.status import SKIP, SUCCESS, NodeVerdicts, Status

REASON = "node(s) didn't have free ports for the requested pod ports"


def fits_ports(pod: PodInfo, node: NodeInfo) -> bool:
    return not any(node.port_conflicts(port) for port in pod.host_ports)


class NodePorts(PluginBase[None]):
    name: ClassVar[str] = "NodePorts"
    cluster_events: ClassVar[Sequence[ClusterEventWithHint]] = (
        on(POD, ActionType.DELETE),
        on(NODE, ActionType.ADD),
    )
    state_needs: ClassVar[Mapping[str, StateNeed]] = {
        "filter": StateNeed("preFilter", 'reading "PreFilterNodePorts" from cycleState: not found')
    }

    def pre_filter(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot
    ) -> tuple[PreFilterResult | None, Status]:
        return None, SUCCESS if pod.host_ports else SKIP

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        return SUCCESS if fits_ports(pod, node) else Status.unschedulable(REASON)

    def filter_nodes(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, slots: Slots
    ) -> NodeVerdicts:
        rejected = np.zeros(len(slots), dtype=np.bool_)
        # Only nodes that already use some host port can conflict.
        for position in np.flatnonzero(snapshot.port_count[slots] > 0):
            rejected[position] = not fits_ports(pod, snapshot.info(int(slots[position])))
        return NodeVerdicts.rejecting(rejected, REASON, unresolvable=False)


__all__ = ["NodePorts"]
