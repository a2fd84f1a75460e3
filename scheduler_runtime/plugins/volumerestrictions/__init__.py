"""VolumeRestrictions: a GCE PD, AWS EBS, iSCSI or RBD disk another pod on the node mounts
read-write cannot be mounted again, and a ReadWriteOncePod claim serves one pod only."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from scheduler_runtime.framework.events import (
    NODE,
    PERSISTENT_VOLUME_CLAIM,
    POD,
    ActionType,
    ClusterEventWithHint,
    on,
)
from scheduler_runtime.framework.interface import CycleState, PluginBase, PreFilterResult, StateNeed
from scheduler_runtime.framework.nodeinfo import NodeInfo
from scheduler_runtime.framework.podinfo import PodInfo
from scheduler_runtime.framework.snapshot import Snapshot
from scheduler_runtime.framework.status import SKIP, SUCCESS, Status
from scheduler_runtime.framework.volumes import Volumes, not_found

REASON_DISK_CONFLICT = "node(s) had no available disk"
REASON_READ_WRITE_ONCE_POD = (
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode "
    "already in-use by another pod"
)
STATE_KEY = "PreFilterVolumeRestrictions"
DISK_SOURCES = ("gcePersistentDisk", "awsElasticBlockStore", "rbd", "iscsi")


def _volumes(pod: PodInfo) -> list[Mapping[str, Any]]:
    return list(pod.spec.get("volumes") or ())


def _both_read_only(first: Mapping[str, Any], second: Mapping[str, Any]) -> bool:
    return bool(first.get("readOnly")) and bool(second.get("readOnly"))


def _same_disk(source: str, disk: Mapping[str, Any], other: Mapping[str, Any]) -> bool:
    match source:
        case "gcePersistentDisk":
            return bool(disk.get("pdName") == other.get("pdName"))
        case "awsElasticBlockStore":
            return bool(disk.get("volumeID") == other.get("volumeID"))
        case "iscsi":
            return bool(disk.get("iqn") == other.get("iqn"))
    # rbd: the same image of the same pool, seen through a shared Ceph monitor
    return bool(
        set(disk.get("monitors") or ()) & set(other.get("monitors") or ())
        and (disk.get("pool") or "rbd") == (other.get("pool") or "rbd")
        and disk.get("image") == other.get("image")
    )


def disks_conflict(volume: Mapping[str, Any], existing: Mapping[str, Any]) -> bool:
    """isVolumeConflict for one pair of volumes: the same disk conflicts unless both mount
    it read-only (an EBS volume conflicts even then)."""
    for source in DISK_SOURCES:
        if source not in volume or source not in existing:
            continue
        disk, other = volume[source], existing[source]
        if not _same_disk(source, disk, other):
            continue
        if source == "awsElasticBlockStore" or not _both_read_only(disk, other):
            return True
    return False


def _claim_keys(pod: PodInfo) -> list[str]:
    return [
        f"{pod.namespace}/{(v['persistentVolumeClaim'] or {}).get('claimName') or ''}"
        for v in _volumes(pod)
        if v.get("persistentVolumeClaim") is not None
    ]


@dataclass
class RestrictionsState:
    """The pod's ReadWriteOncePod claims and how many of them other pods already use."""

    read_write_once_pod: frozenset[str] = frozenset()
    conflicts: int = 0
    disks: list[Mapping[str, Any]] = field(default_factory=list)

    def clone(self) -> RestrictionsState:
        return RestrictionsState(self.read_write_once_pod, self.conflicts, self.disks)

    def update_with_pod(self, other: PodInfo, delta: int) -> None:
        for key in _claim_keys(other):
            if key in self.read_write_once_pod:
                self.conflicts += delta


class VolumeRestrictions(PluginBase[None]):
    name: ClassVar[str] = "VolumeRestrictions"
    cluster_events: ClassVar[Sequence[ClusterEventWithHint]] = (
        on(POD, ActionType.DELETE),
        on(NODE, ActionType.ADD),
        on(PERSISTENT_VOLUME_CLAIM, ActionType.ADD),
    )
    state_needs: ClassVar[Mapping[str, StateNeed]] = {
        "filter": StateNeed(
            "preFilter", 'cannot read "PreFilterVolumeRestrictions" from cycleState'
        )
    }

    def pre_filter(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot
    ) -> tuple[PreFilterResult | None, Status]:
        disks = [v for v in _volumes(pod) if any(source in v for source in DISK_SOURCES)]
        volumes = Volumes(snapshot, pod.namespace)
        exclusive = set()
        for volume in _volumes(pod):
            if volume.get("persistentVolumeClaim") is None:
                continue
            name = (volume["persistentVolumeClaim"] or {}).get("claimName") or ""
            claim = volumes.claim(name)
            if claim is None:
                return None, Status.unresolvable(not_found("PersistentVolumeClaim", name))
            if "ReadWriteOncePod" in ((claim.get("spec") or {}).get("accessModes") or ()):
                exclusive.add(f"{pod.namespace}/{name}")
        conflicts = self._claims_in_use(snapshot, exclusive)
        if not disks and not conflicts:
            return None, SKIP
        state.write(STATE_KEY, RestrictionsState(frozenset(exclusive), conflicts, disks))
        return None, SUCCESS

    @staticmethod
    def _claims_in_use(snapshot: Snapshot, claims: set[str]) -> int:
        """How many of `claims` some pod on a node uses (StorageInfos.IsPVCUsedByPods)."""
        if not claims:
            return 0
        used = {key for pod in snapshot.pods() for key in _claim_keys(pod)}
        return len(claims & used)

    def add_pod(
        self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node: NodeInfo
    ) -> Status:
        found: RestrictionsState = state.read(STATE_KEY)
        found.update_with_pod(pod_to_add, 1)
        return SUCCESS

    def remove_pod(
        self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node: NodeInfo
    ) -> Status:
        found: RestrictionsState = state.read(STATE_KEY)
        found.update_with_pod(pod_to_remove, -1)
        return SUCCESS

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        found: RestrictionsState = state.read(STATE_KEY)
        for volume in found.disks:
            for existing in node.pods.values():
                if any(disks_conflict(volume, other) for other in _volumes(existing)):
                    return Status.unschedulable(REASON_DISK_CONFLICT)
        if found.conflicts > 0:
            return Status.unschedulable(REASON_READ_WRITE_ONCE_POD)
        return SUCCESS


__all__ = ["VolumeRestrictions"]
