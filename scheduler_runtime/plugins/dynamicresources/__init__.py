"""DynamicResources, as far as pods without resource claims go (the only pods this scheduler
places): upstream enables it by default since DRA went GA (1.34), between InterPodAffinity
and DefaultPreemption, and its PostFilter adds "no new claims to deallocate" to every
FailedScheduling message. Pods that do reference resource claims are refused with a clear
reason, because allocating devices is not supported.

Like upstream's, it runs at filter, score (0 for every node), reserve and preBind too (doing
nothing else for such pods), and
needs the state its PreFilter always writes: a profile that runs it there but not at
preFilter fails every pod, as upstream's does."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

import numpy as np

from scheduler_runtime.framework.interface import (
    CycleState,
    PluginBase,
    PostFilterResult,
    PreFilterResult,
    StateNeed,
)
from scheduler_runtime.framework.nodeinfo import NodeInfo
from scheduler_runtime.framework.podinfo import PodInfo
from scheduler_runtime.framework.snapshot import Int64s, Slots, Snapshot
from scheduler_runtime.framework.status import SKIP, SUCCESS, NodeVerdicts, Status
from scheduler_runtime.framework.types import Diagnosis

NO_CLAIMS_TO_DEALLOCATE = "no new claims to deallocate"
CLAIMS_NOT_SUPPORTED = "pod has resource claims, which this scheduler does not allocate"
STATE_KEY = "PreFilterDynamicResources"


class DynamicResources(PluginBase[None]):
    name: ClassVar[str] = "DynamicResources"
    state_needs: ClassVar[Mapping[str, StateNeed]] = {
        point: StateNeed("preFilter")
        for point in ("filter", "postFilter", "score", "reserve", "preBind")
    }

    def pre_filter(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot
    ) -> tuple[PreFilterResult | None, Status]:
        state.write(STATE_KEY, True)
        if pod.spec.get("resourceClaims"):
            return None, Status.unresolvable(CLAIMS_NOT_SUPPORTED)
        return None, SKIP

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        return SUCCESS  # a pod without claims fits every node (its PreFilter skips this)

    def filter_nodes(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, slots: Slots
    ) -> NodeVerdicts:
        return NodeVerdicts.rejecting(np.zeros(len(slots), dtype=np.bool_), "", unresolvable=False)

    def score_nodes(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, slots: Slots
    ) -> Int64s:
        return np.zeros(len(slots), dtype=np.int64)  # no claims: no preference

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: Int64s) -> Status:
        return SUCCESS  # all 0 stay 0, as upstream's default normalization leaves them

    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        return SUCCESS  # no claims to reserve

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        return None

    def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        return SUCCESS  # no claims to bind

    def post_filter(
        self, state: CycleState, pod: PodInfo, diagnosis: Diagnosis
    ) -> tuple[PostFilterResult | None, Status]:
        if state.get(STATE_KEY) is None:
            # An earlier PreFilter rejected the pod before this one ran: upstream's PostFilter
            # then fails reading its state, and its error ends the message ("... not found").
            return None, Status.as_error(LookupError("not found"))
        return None, Status.unschedulable(NO_CLAIMS_TO_DEALLOCATE)


__all__ = ["DynamicResources"]
