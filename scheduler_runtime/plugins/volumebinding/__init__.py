"""VolumeBinding: a pod's bound PersistentVolumeClaims must be usable from the node (the
PersistentVolumes' node affinity), and its unbound WaitForFirstConsumer claims must find an
Available PersistentVolume there or be provisionable there (the class's allowedTopologies).

Reserve records the chosen PersistentVolumes and provisioning nodes in the snapshot's objects
so the next pod does not count on them; PreBind hands them to the `bind_pod_volumes` service
(the live scheduler writes them to the API server). Scoring by volume capacity follows
StorageCapacityScoring (beta, on from 1.37): off, the score step skips; on, each node scores
by the utilization its volumes would reach through `shape` (PVs for static bindings, else the
CSIStorageCapacity of the claims to provision)."""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from scheduler_runtime.config.args import VolumeBindingArgs
from scheduler_runtime.framework.events import (
    CSI_DRIVER,
    CSI_NODE,
    CSI_STORAGE_CAPACITY,
    NODE,
    PERSISTENT_VOLUME,
    PERSISTENT_VOLUME_CLAIM,
    STORAGE_CLASS,
    ActionType,
    ClusterEventWithHint,
    on,
)
from scheduler_runtime.framework.interface import (
    MAX_NODE_SCORE,
    CycleState,
    PluginBase,
    PreFilterResult,
    StateNeed,
)
from scheduler_runtime.framework.nodeinfo import NodeInfo
from scheduler_runtime.framework.objects import object_key
from scheduler_runtime.framework.podinfo import PodInfo
from scheduler_runtime.framework.snapshot import Slots, Snapshot
from scheduler_runtime.framework.status import SKIP, SUCCESS, Status
from scheduler_runtime.framework.volumes import Volumes, claim_refs
from scheduler_runtime.plugins.volumebinding.binder import (
    SELECTED_NODE,
    ClaimError,
    PodClaims,
    PodVolumes,
    class_resources,
    eligible_nodes,
    find_pod_volumes,
    pod_claims,
)

REASON_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"
STATE_KEY = "VolumeBinding"
MAX_UTILIZATION = 100
MAX_CUSTOM_PRIORITY_SCORE = 10


def _go_div(numerator: int, denominator: int) -> int:
    """Go's integer division, truncating toward zero."""
    quotient = abs(numerator) // abs(denominator)
    return quotient if (numerator < 0) == (denominator < 0) else -quotient


def broken_linear(shape: Sequence[tuple[int, int]], utilization: int) -> int:
    """helper.BuildBrokenLinearFunction for one utilization."""
    for index, (point_utilization, point_score) in enumerate(shape):
        if utilization <= point_utilization:
            if index == 0:
                return point_score
            previous_utilization, previous_score = shape[index - 1]
            return previous_score + _go_div(
                (point_score - previous_score) * (utilization - previous_utilization),
                point_utilization - previous_utilization,
            )
    return shape[-1][1]


def capacity_score(
    shape: Sequence[tuple[int, int]], resources: Mapping[str, tuple[int, int]]
) -> int:
    """buildScorerFunction: each class's utilization through the shape, every class weighing
    the same, the mean rounded half away from zero (0 without classes)."""
    if not resources:
        return 0
    total = 0
    for requested, capacity in resources.values():
        if capacity == 0 or requested > capacity:
            total += broken_linear(shape, MAX_UTILIZATION)
        else:
            total += broken_linear(shape, requested * MAX_UTILIZATION // capacity)
    return math.floor(total / len(resources) + 0.5)


@dataclass
class BindingState:
    claims: PodClaims
    by_node: dict[str, PodVolumes] = field(default_factory=dict)
    # Objects Reserve replaced in the snapshot: (kind, original, assumed), for Unreserve.
    replaced: list[tuple[str, dict[str, Any], dict[str, Any]]] = field(default_factory=list)


class VolumeBinding(PluginBase[VolumeBindingArgs]):
    name: ClassVar[str] = "VolumeBinding"
    cluster_events: ClassVar[Sequence[ClusterEventWithHint]] = (
        on(STORAGE_CLASS, ActionType.ADD | ActionType.UPDATE),
        on(PERSISTENT_VOLUME_CLAIM, ActionType.ADD | ActionType.UPDATE),
        on(PERSISTENT_VOLUME, ActionType.ADD | ActionType.UPDATE),
        on(NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
        on(CSI_NODE, ActionType.ADD | ActionType.UPDATE),
        on(CSI_DRIVER, ActionType.UPDATE),
        on(CSI_STORAGE_CAPACITY, ActionType.ADD | ActionType.UPDATE),
    )
    args_type = VolumeBindingArgs
    # Its PreFilter always writes a state (even when it skips); without it every later
    # point fails, upstream's words being the cycle state's own "not found".
    state_needs: ClassVar[Mapping[str, StateNeed]] = {
        **{point: StateNeed("preFilter") for point in ("filter", "reserve", "preBind")},
        # PreScore reads it only while there is a scorer.
        "preScore": StateNeed("preFilter", gate="storage_capacity_scoring"),
    }

    def pre_filter(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot
    ) -> tuple[PreFilterResult | None, Status]:
        if not claim_refs(pod):
            state.write(STATE_KEY, BindingState(PodClaims()))  # for PreScore, as upstream's
            return None, SKIP
        volumes = Volumes(snapshot, pod.namespace)
        try:
            claims = pod_claims(pod, volumes)
        except ClaimError as error:
            return None, Status.unresolvable(str(error))
        if claims.immediate:
            return None, Status.unresolvable(REASON_UNBOUND_IMMEDIATE)
        state.write(STATE_KEY, BindingState(claims))
        eligible = eligible_nodes(volumes, claims.bound)
        return (None if eligible is None else PreFilterResult(frozenset(eligible))), SUCCESS

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        found: BindingState = state.read(STATE_KEY)
        volumes = Volumes(self.handle.snapshot, pod.namespace)
        try:
            verdict = find_pod_volumes(volumes, found.claims, node)
        except ClaimError as error:
            return Status.unresolvable(str(error))
        if verdict.reasons:
            return Status.unresolvable(*verdict.reasons)
        found.by_node[node.name] = verdict.volumes
        return SUCCESS

    def _shape(self) -> tuple[tuple[int, int], ...] | None:
        """The scoring shape, scores scaled to node scores; None (no scorer) with
        StorageCapacityScoring off."""
        if not self.handle.features.storage_capacity_scoring:
            return None
        scale = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
        return tuple((p.utilization, p.score * scale) for p in self.args.shape or ())

    def pre_score(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, slots: Slots
    ) -> Status:
        # Upstream's PreScore runs whenever there is a scorer (the gate on), reading
        # PreFilter's state (written even for a pod without claims).
        if self._shape() is None:
            return SKIP
        found: BindingState = state.read(STATE_KEY)
        # Without claims every node scores 0, as upstream's Score says: skipping is the same.
        if not (found.claims.bound or found.claims.delayed):
            return SKIP
        return SUCCESS

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status]:
        shape = self._shape()
        if shape is None:
            return 0, SUCCESS
        found: BindingState = state.read(STATE_KEY)
        chosen = found.by_node.get(node.name)
        if chosen is None:
            return 0, SUCCESS
        return capacity_score(shape, class_resources(chosen)), SUCCESS

    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        """AssumePodVolumes: the chosen PVs count as bound and the claims to provision as
        having their node selected, in the snapshot, until Unreserve."""
        found: BindingState | None = state.get(STATE_KEY)
        if found is None:
            return SUCCESS
        chosen = found.by_node.get(node_name)
        if chosen is None:
            return SUCCESS
        for volume, claim in chosen.bindings:
            assumed = copy.deepcopy(dict(volume))
            metadata = claim.get("metadata") or {}
            assumed.setdefault("spec", {})["claimRef"] = {
                "kind": "PersistentVolumeClaim",
                "namespace": metadata.get("namespace"),
                "name": metadata.get("name"),
                "uid": metadata.get("uid"),
            }
            self._assume(found, "PersistentVolume", assumed)
        for claim in chosen.provisions:
            assumed = copy.deepcopy(dict(claim))
            assumed.setdefault("metadata", {}).setdefault("annotations", {})[SELECTED_NODE] = (
                node_name
            )
            self._assume(found, "PersistentVolumeClaim", assumed)
        return SUCCESS

    def _assume(self, found: BindingState, kind: str, obj: dict[str, Any]) -> None:
        objects = self.handle.snapshot.objects
        original = objects.get(kind, object_key(obj))
        assumed = {**obj, "kind": kind}
        if original is not None:
            found.replaced.append((kind, original, assumed))
        objects.apply(assumed)

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        found: BindingState | None = state.get(STATE_KEY)
        if found is None:
            return
        objects = self.handle.snapshot.objects
        for kind, original, assumed in reversed(found.replaced):
            # A newer object from the API server since Reserve stays.
            if objects.get(kind, object_key(assumed)) is assumed:
                objects.apply({**original, "kind": kind})
        found.replaced.clear()

    def pre_bind_pre_flight(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        """Success when PreBind has volumes to bind or provision on the node, Skip when all
        the pod's volumes are bound (or it has none)."""
        return SUCCESS if self._to_bind(state, node_name) is not None else SKIP

    def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        """BindPodVolumes through the `bind_pod_volumes` service, when there is anything
        to bind and a service to do it."""
        chosen = self._to_bind(state, node_name)
        if chosen is None:
            return SUCCESS
        bind = self.handle.services.bind_pod_volumes
        if bind is None:
            return SUCCESS
        status: Status = bind(pod, node_name, chosen, self.args.bind_timeout_seconds)
        return status

    @staticmethod
    def _to_bind(state: CycleState, node_name: str) -> PodVolumes | None:
        """The volumes Reserve chose to bind or provision on the node; None when all the
        pod's volumes are bound (upstream's allBound)."""
        found: BindingState | None = state.get(STATE_KEY)
        chosen = None if found is None else found.by_node.get(node_name)
        if chosen is None or not (chosen.bindings or chosen.provisions):
            return None
        return chosen


__all__ = ["VolumeBinding"]
