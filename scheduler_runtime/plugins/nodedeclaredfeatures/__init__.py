"""NodeDeclaredFeatures: a pod that needs a node feature (a restart rule that restarts all
containers, host network in a user namespace, ...) fits only nodes that declare it in
`status.declaredFeatures` (upstream's pkg/scheduler/framework/plugins/nodedeclaredfeatures).

Behind the NodeDeclaredFeatures gate (beta, on in 1.36): with the gate off it does nothing,
as upstream's. A pod's needs are worked out once in PreFilter (which skips the plugin for the
pods that need nothing, nearly all of them). A node that declares a new feature, or a pod
whose spec changes, retries the unschedulable pods (upstream's queueing hints for Node
add/UpdateNodeDeclaredFeature and Pod update).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

import numpy as np

from scheduler_runtime.framework.events import NODE, POD, ActionType, ClusterEventWithHint, on
from scheduler_runtime.framework.interface import (
    CycleState,
    Handle,
    PluginBase,
    PreFilterResult,
    StateNeed,
)
from scheduler_runtime.framework.nodeinfo import NodeInfo
from scheduler_runtime.framework.podinfo import PodInfo
from scheduler_runtime.framework.snapshot import Slots, Snapshot
from scheduler_runtime.framework.status import SKIP, SUCCESS, NodeVerdicts, Status
from scheduler_runtime.plugins.nodedeclaredfeatures.features import (
    declared_features,
    required_features,
)

STATE_KEY = "PreFilterNodeDeclaredFeatures"
REASON = "node(s) didn't match Pod's required features"


class NodeDeclaredFeatures(PluginBase[None]):
    name: ClassVar[str] = "NodeDeclaredFeatures"
    state_needs: ClassVar[Mapping[str, StateNeed]] = {
        "filter": StateNeed(
            "preFilter",
            f'error reading "{STATE_KEY}" from cycle-state: not found',
            gate="node_declared_features",  # with the gate off, Filter reads nothing
        )
    }

    def __init__(self, args: None, handle: Handle) -> None:
        super().__init__(args, handle)
        self.enabled = handle.features.node_declared_features

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """A node declaring a feature, or the pod's own update, as upstream's registers."""
        if not self.enabled:
            return ()
        return (
            on(NODE, ActionType.ADD | ActionType.UPDATE_NODE_DECLARED_FEATURE),
            on(POD, ActionType.UPDATE),
        )

    def pre_filter(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot
    ) -> tuple[PreFilterResult | None, Status]:
        if not self.enabled:
            return None, SKIP
        required = required_features(pod.spec)
        if not required:
            return None, SKIP
        state.write(STATE_KEY, required)
        return None, SUCCESS

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        if not self.enabled:
            return SUCCESS
        required: frozenset[str] = state.read(STATE_KEY)
        if required <= declared_features(node.node):
            return SUCCESS
        return Status.unresolvable(REASON)

    def filter_nodes(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, slots: Slots
    ) -> NodeVerdicts:
        if not self.enabled:
            return NodeVerdicts.passing(len(slots))
        required: frozenset[str] = state.read(STATE_KEY)
        rejected = np.fromiter(
            (not required <= declared_features(snapshot.info(int(slot)).node) for slot in slots),
            dtype=np.bool_,
            count=len(slots),
        )
        return NodeVerdicts.rejecting(rejected, REASON, unresolvable=True)


__all__ = ["NodeDeclaredFeatures"]
