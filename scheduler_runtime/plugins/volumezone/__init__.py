"""VolumeZone: a pod whose bound PersistentVolumes carry zone or region labels may only go
to nodes in those zones and regions (nodes without any such label accept every pod)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from scheduler_runtime.framework.events import (
    NODE,
    PERSISTENT_VOLUME,
    PERSISTENT_VOLUME_CLAIM,
    STORAGE_CLASS,
    ActionType,
    ClusterEventWithHint,
    on,
)
from scheduler_runtime.framework.interface import CycleState, PluginBase, PreFilterResult
from scheduler_runtime.framework.nodeinfo import NodeInfo
from scheduler_runtime.framework.podinfo import PodInfo
from scheduler_runtime.framework.snapshot import Mask, Slots, Snapshot
from scheduler_runtime.framework.status import SKIP, SUCCESS, NodeVerdicts, Status
from scheduler_runtime.framework.volumes import Volumes, claim_class, claim_refs, not_found

REASON = "node(s) had no available volume zone"
STATE_KEY = "PreFilterVolumeZone"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
TOPOLOGY_LABELS = (BETA_ZONE, BETA_REGION, ZONE, REGION)
GA_LABEL = {BETA_ZONE: ZONE, BETA_REGION: REGION}


@dataclass(frozen=True, slots=True)
class VolumeTopology:
    """One topology label of a volume: the values (zones split on "__") it allows."""

    key: str
    values: frozenset[str]


def volume_topologies(volume: Mapping[str, Any]) -> list[VolumeTopology]:
    labels = (volume.get("metadata") or {}).get("labels") or {}
    return [
        VolumeTopology(key, frozenset(v for v in str(labels[key]).split("__") if v))
        for key in TOPOLOGY_LABELS
        if key in labels
    ]


class VolumeZone(PluginBase[None]):
    name: ClassVar[str] = "VolumeZone"
    cluster_events: ClassVar[Sequence[ClusterEventWithHint]] = (
        on(STORAGE_CLASS, ActionType.ADD),
        on(NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
        on(PERSISTENT_VOLUME_CLAIM, ActionType.ADD | ActionType.UPDATE),
        on(PERSISTENT_VOLUME, ActionType.ADD | ActionType.UPDATE),
    )

    def _topologies(self, pod: PodInfo, snapshot: Snapshot) -> tuple[list[VolumeTopology], Status]:
        """getPVbyPod: unbound claims that wait for their first consumer are skipped."""
        volumes = Volumes(snapshot, pod.namespace)
        found: list[VolumeTopology] = []
        for ref in claim_refs(pod):
            if not ref.claim:
                return [], Status.unresolvable("PersistentVolumeClaim had no name")
            claim = volumes.claim(ref.claim)
            if claim is None:
                return [], Status.unresolvable(not_found("PersistentVolumeClaim", ref.claim))
            bound_to = (claim.get("spec") or {}).get("volumeName")
            if not bound_to:
                status = self._unbound(volumes, claim)
                if not status.is_success:
                    return [], status
                continue
            volume = volumes.volume(bound_to)
            if volume is None:
                return [], Status.unresolvable(not_found("PersistentVolume", bound_to))
            found.extend(volume_topologies(volume))
        return found, SUCCESS

    @staticmethod
    def _unbound(volumes: Volumes, claim: Mapping[str, Any]) -> Status:
        class_name = claim_class(claim)
        if not class_name:
            return Status.unresolvable("PersistentVolumeClaim had no pv name and storageClass name")
        storage_class = volumes.storage_class(class_name)
        if storage_class is None:
            return Status.unresolvable(not_found("StorageClass", class_name))
        mode = storage_class.get("volumeBindingMode")
        if mode is None:
            return Status.unresolvable(f'VolumeBindingMode not set for StorageClass "{class_name}"')
        if mode == "WaitForFirstConsumer":
            return SUCCESS
        return Status.unresolvable("PersistentVolume had no name")

    def pre_filter(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot
    ) -> tuple[PreFilterResult | None, Status]:
        topologies, status = self._topologies(pod, snapshot)
        if not status.is_success:
            return None, status
        if not topologies:
            return None, SKIP
        state.write(STATE_KEY, topologies)
        return None, SUCCESS

    def _pod_topologies(
        self, state: CycleState, pod: PodInfo
    ) -> tuple[list[VolumeTopology], Status]:
        """PreFilter's topologies, or (preFilter disabled) the same looked up here, as
        upstream's filter falls back to."""
        found: list[VolumeTopology] | None = state.get(STATE_KEY)
        if found is not None:
            return found, SUCCESS
        if not claim_refs(pod):
            return [], SUCCESS
        return self._topologies(pod, self.handle.snapshot)

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        labels = node.labels
        if not any(key in labels for key in TOPOLOGY_LABELS):
            return SUCCESS
        topologies, status = self._pod_topologies(state, pod)
        if not status.is_success:
            return status
        for topology in topologies:
            value = labels.get(topology.key)
            if value is None:
                value = labels.get(GA_LABEL.get(topology.key, topology.key))
            if value is None or value not in topology.values:
                return Status.unresolvable(REASON)
        return SUCCESS

    def filter_nodes(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, slots: Slots
    ) -> NodeVerdicts:
        unconstrained = np.zeros(snapshot.capacity, dtype=np.bool_)
        for key in TOPOLOGY_LABELS:
            unconstrained |= snapshot.label_exists(key)
        unconstrained = ~unconstrained
        allowed: Mask = np.ones(snapshot.capacity, dtype=np.bool_)
        topologies, status = self._pod_topologies(state, pod)
        if not status.is_success:
            rejected = ~unconstrained[slots]
            return NodeVerdicts.rejecting(rejected, status.message(), unresolvable=True)
        for topology in topologies:
            own = snapshot.label_exists(topology.key)
            fallback = GA_LABEL.get(topology.key, topology.key)
            matches = np.where(
                own,
                snapshot.label_in(topology.key, topology.values),
                snapshot.label_in(fallback, topology.values),
            )
            allowed &= matches
        rejected = ~(unconstrained | allowed)[slots]
        return NodeVerdicts.rejecting(rejected, REASON, unresolvable=True)


__all__ = ["VolumeZone"]
