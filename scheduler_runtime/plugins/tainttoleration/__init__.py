"""TaintToleration: NoSchedule/NoExecute taints must be tolerated (filter); untolerated
PreferNoSchedule taints count against a node (score, normalized in reverse)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

import numpy as np

from scheduler_runtime.framework.events import NODE, POD, ActionType, ClusterEventWithHint, on
from scheduler_runtime.framework.interface import (
    CycleState,
    PluginBase,
    StateNeed,
    default_normalize_score,
)
from scheduler_runtime.framework.nodeinfo import NodeInfo
from scheduler_runtime.framework.podinfo import PodInfo, Taint, Toleration
from scheduler_runtime.framework.snapshot import Int64s, Slots, Snapshot
from scheduler_runtime.framework.status import SUCCESS, NodeVerdicts, Status

HARD_EFFECTS = ("NoSchedule", "NoExecute")
PREFER_NO_SCHEDULE = "PreferNoSchedule"
STATE_KEY = "PreScoreTaintToleration"


def untolerated_taint(
    taints: tuple[Taint, ...], tolerations: tuple[Toleration, ...]
) -> Taint | None:
    """v1helper.FindMatchingUntoleratedTaint over the NoSchedule/NoExecute taints."""
    for taint in taints:
        if taint.effect in HARD_EFFECTS and not any(t.tolerates(taint) for t in tolerations):
            return taint
    return None


# Upstream stopped naming the taint in 1.31 (a user may not see other tenants' taints).
REASON = "node(s) had untolerated taint(s)"


def count_intolerable(taints: tuple[Taint, ...], tolerations: tuple[Toleration, ...]) -> int:
    return sum(
        1
        for taint in taints
        if taint.effect == PREFER_NO_SCHEDULE and not any(t.tolerates(taint) for t in tolerations)
    )


def prefer_no_schedule_tolerations(pod: PodInfo) -> tuple[Toleration, ...]:
    return tuple(t for t in pod.tolerations if t.effect in ("", PREFER_NO_SCHEDULE))


class TaintToleration(PluginBase[None]):
    name: ClassVar[str] = "TaintToleration"
    cluster_events: ClassVar[Sequence[ClusterEventWithHint]] = (
        on(NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
        on(POD, ActionType.UPDATE_POD_TOLERATION),
    )
    state_needs: ClassVar[Mapping[str, StateNeed]] = {
        "score": StateNeed(
            "preScore", 'failed to read "PreScoreTaintToleration" from cycleState: not found'
        )
    }

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        taint = untolerated_taint(node.taints, pod.tolerations)
        return SUCCESS if taint is None else Status.unresolvable(REASON)

    def filter_nodes(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, slots: Slots
    ) -> NodeVerdicts:
        rejected = np.zeros(len(slots), dtype=np.bool_)
        if len(snapshot.taint_sets) == 1:  # only the empty set: no node has a taint
            return NodeVerdicts.rejecting(rejected, REASON, unresolvable=True)
        ids = snapshot.taint_set[slots]
        for taint_set in np.unique(ids):
            if untolerated_taint(snapshot.taint_sets[int(taint_set)], pod.tolerations):
                rejected |= ids == taint_set
        return NodeVerdicts.rejecting(rejected, REASON, unresolvable=True)

    def pre_score(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, slots: Slots
    ) -> Status:
        state.write(STATE_KEY, prefer_no_schedule_tolerations(pod))
        return SUCCESS

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status]:
        tolerations = state.get(STATE_KEY) or prefer_no_schedule_tolerations(pod)
        return count_intolerable(node.taints, tolerations), SUCCESS

    def score_nodes(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, slots: Slots
    ) -> Int64s:
        if len(snapshot.taint_sets) == 1:  # only the empty set: no node has a taint
            return np.zeros(len(slots), dtype=np.int64)
        tolerations = state.get(STATE_KEY) or prefer_no_schedule_tolerations(pod)
        ids = snapshot.taint_set[slots]
        unique, inverse = np.unique(ids, return_inverse=True)
        counts = np.array(
            [count_intolerable(snapshot.taint_sets[int(i)], tolerations) for i in unique],
            dtype=np.int64,
        )
        scores: Int64s = counts[inverse]
        return scores

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: Int64s) -> Status:
        default_normalize_score(scores, reverse=True)
        return SUCCESS


__all__ = ["TaintToleration"]
