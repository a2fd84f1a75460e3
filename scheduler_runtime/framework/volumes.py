"""A pod's PersistentVolumeClaims and what they point to (PersistentVolumes, StorageClasses),
read from the snapshot's cluster objects, as the volume plugins share them upstream."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from scheduler_runtime.framework.podinfo import PodInfo
from scheduler_runtime.framework.snapshot import Snapshot

BETA_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"


class ChosenVolumes(Protocol):
    """VolumeBinding's choice for a pod on one node: volumes to bind to claims, claims to
    provision; PreBind writes it (the `bind_pod_volumes` service)."""

    bindings: list[tuple[Mapping[str, Any], Mapping[str, Any]]]
    provisions: list[Mapping[str, Any]]


@dataclass(frozen=True, slots=True)
class ClaimRef:
    """A claim a pod's volume uses (generic ephemeral volumes name theirs after the pod)."""

    volume: str
    claim: str
    ephemeral: bool


def claim_refs(pod: PodInfo) -> list[ClaimRef]:
    refs = []
    for volume in pod.spec.get("volumes") or ():
        name = volume.get("name") or ""
        if volume.get("persistentVolumeClaim") is not None:
            claim = (volume["persistentVolumeClaim"] or {}).get("claimName") or ""
            refs.append(ClaimRef(name, claim, ephemeral=False))
        elif volume.get("ephemeral") is not None:
            refs.append(ClaimRef(name, f"{pod.name}-{name}", ephemeral=True))
    return refs


def not_found(kind: str, name: str) -> str:
    """The API's NotFound message, as upstream passes it on."""
    return f'{kind.lower()} "{name}" not found'


def claim_class(claim: Mapping[str, Any]) -> str:
    """storagehelpers.GetPersistentVolumeClaimClass: the beta annotation wins."""
    annotations = (claim.get("metadata") or {}).get("annotations") or {}
    if BETA_CLASS_ANNOTATION in annotations:
        return str(annotations[BETA_CLASS_ANNOTATION])
    return str((claim.get("spec") or {}).get("storageClassName") or "")


def volume_name(claim: Mapping[str, Any]) -> str:
    return str((claim.get("spec") or {}).get("volumeName") or "")


class Volumes:
    """Claim, volume and class lookups for one pod's namespace."""

    def __init__(self, snapshot: Snapshot, namespace: str) -> None:
        self.objects = snapshot.objects
        self.namespace = namespace

    def claim(self, name: str) -> dict[str, Any] | None:
        return self.objects.get("PersistentVolumeClaim", f"{self.namespace}/{name}")

    def volume(self, name: str) -> dict[str, Any] | None:
        return self.objects.get("PersistentVolume", name)

    def storage_class(self, name: str) -> dict[str, Any] | None:
        return self.objects.get("StorageClass", name)
