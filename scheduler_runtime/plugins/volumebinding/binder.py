"""The volume binder's decisions (upstream's volumebinding/binder.go), read-only: which
claims a pod has, whether a node satisfies its bound volumes' node affinity, and which
PersistentVolume (or dynamic provisioning, within the CSIStorageCapacity the node can reach
when the class's CSI driver asks for capacity tracking) would serve each unbound
WaitForFirstConsumer claim on a node."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from scheduler_runtime.framework.labelselector import SelectorError, parse_selector
from scheduler_runtime.framework.nodeinfo import NodeInfo
from scheduler_runtime.framework.nodeselector import parse_terms, terms_match
from scheduler_runtime.framework.podinfo import PodInfo
from scheduler_runtime.framework.quantity import QuantityError, amount
from scheduler_runtime.framework.volumes import (
    Volumes,
    claim_class,
    claim_refs,
    not_found,
    volume_name,
)

BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
SELECTED_NODE = "volume.kubernetes.io/selected-node"
NO_PROVISIONER = "kubernetes.io/no-provisioner"
HOSTNAME = "kubernetes.io/hostname"

REASON_NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
REASON_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
REASON_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"


class ClaimError(ValueError):
    """A claim the pod cannot be scheduled with (missing, being deleted, not its own...)."""


@dataclass
class PodClaims:
    """The pod's claims by kind of binding (GetPodVolumeClaims)."""

    bound: list[Mapping[str, Any]] = field(default_factory=list)
    immediate: list[Mapping[str, Any]] = field(default_factory=list)
    delayed: list[Mapping[str, Any]] = field(default_factory=list)


@dataclass
class PodVolumes:
    """What binding the pod to a node would take: PVs to bind claims to, claims to
    provision."""

    bindings: list[tuple[Mapping[str, Any], Mapping[str, Any]]] = field(default_factory=list)
    provisions: list[Mapping[str, Any]] = field(default_factory=list)
    # The CSIStorageCapacity found for each claim to provision (None: capacity not tracked).
    capacities: list[Mapping[str, Any] | None] = field(default_factory=list)


def _name(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


def _owned_by(claim: Mapping[str, Any], pod: PodInfo) -> bool:
    return any(
        ref.get("controller") and ref.get("uid") == pod.uid
        for ref in (claim.get("metadata") or {}).get("ownerReferences") or ()
    )


def pod_claims(pod: PodInfo, volumes: Volumes) -> PodClaims:
    """podHasPVCs and GetPodVolumeClaims; raises ClaimError with upstream's message."""
    claims = PodClaims()
    for ref in claim_refs(pod):
        claim = volumes.claim(ref.claim)
        if claim is None:
            if ref.ephemeral:
                raise ClaimError(
                    "waiting for ephemeral volume controller to create the "
                    f'persistentvolumeclaim "{ref.claim}"'
                )
            raise ClaimError(not_found("PersistentVolumeClaim", ref.claim))
        _check_usable(claim, ref.claim, pod, ephemeral=ref.ephemeral)
        annotations = (claim.get("metadata") or {}).get("annotations") or {}
        if volume_name(claim) and BIND_COMPLETED in annotations:
            claims.bound.append(claim)
        elif not volume_name(claim) and _delays_binding(volumes, claim):
            claims.delayed.append(claim)
        else:
            claims.immediate.append(claim)
    return claims


def _check_usable(claim: Mapping[str, Any], name: str, pod: PodInfo, *, ephemeral: bool) -> None:
    if (claim.get("status") or {}).get("phase") == "Lost":
        raise ClaimError(
            f'persistentvolumeclaim "{name}" bound to non-existent persistentvolume '
            f'"{volume_name(claim)}"'
        )
    if (claim.get("metadata") or {}).get("deletionTimestamp"):
        raise ClaimError(f'persistentvolumeclaim "{name}" is being deleted')
    if ephemeral and not _owned_by(claim, pod):
        raise ClaimError(
            f"PVC {pod.namespace}/{name} was not created for pod {pod.namespace}/{pod.name} "
            "(pod is not owner)"
        )


def _delays_binding(volumes: Volumes, claim: Mapping[str, Any]) -> bool:
    """IsDelayBindingMode."""
    class_name = claim_class(claim)
    if not class_name:
        return False
    storage_class = volumes.storage_class(class_name)
    if storage_class is None:
        return False
    mode = storage_class.get("volumeBindingMode")
    if mode is None:
        raise ClaimError(f'VolumeBindingMode not set for StorageClass "{class_name}"')
    return bool(mode == "WaitForFirstConsumer")


def node_affinity_matches(volume: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """CheckNodeAffinity: the node (seen by its labels only) satisfies the PV's required
    node affinity, or the PV has none."""
    required = ((volume.get("spec") or {}).get("nodeAffinity") or {}).get("required")
    if required is None:
        return True
    return terms_match(parse_terms(required.get("nodeSelectorTerms")), labels, "")


def local_volume_node_names(volume: Mapping[str, Any]) -> set[str]:
    """GetLocalPersistentVolumeNodeNames: the hostnames the PV's terms pin it to."""
    required = ((volume.get("spec") or {}).get("nodeAffinity") or {}).get("required") or {}
    result: set[str] = set()
    for term in required.get("nodeSelectorTerms") or ():
        nodes: set[str] | None = None
        for expression in term.get("matchExpressions") or ():
            if expression.get("key") == HOSTNAME and expression.get("operator") == "In":
                values = set(expression.get("values") or ())
                nodes = values if nodes is None else nodes & values
        result |= nodes or set()
    return result


def eligible_nodes(volumes: Volumes, bound: Sequence[Mapping[str, Any]]) -> set[str] | None:
    """GetEligibleNodes: the nodes local PVs of bound claims allow (None: no restriction)."""
    eligible: set[str] | None = None
    for claim in bound:
        volume = volumes.volume(volume_name(claim))
        if volume is None:
            return None
        names = local_volume_node_names(volume)
        if names:
            eligible = names if eligible is None else eligible & names
    return eligible


def _storage(obj: Mapping[str, Any], path: tuple[str, ...]) -> int:
    value: Any = obj
    for key in path:
        value = (value or {}).get(key)
    try:
        return amount("storage", value) if value is not None else 0
    except QuantityError:
        return 0


def _requested(claim: Mapping[str, Any]) -> int:
    return _storage(claim, ("spec", "resources", "requests", "storage"))


def _capacity(volume: Mapping[str, Any]) -> int:
    return _storage(volume, ("spec", "capacity", "storage"))


def _bound_to(volume: Mapping[str, Any], claim: Mapping[str, Any]) -> bool:
    """IsVolumeBoundToClaim."""
    ref = (volume.get("spec") or {}).get("claimRef") or {}
    metadata = claim.get("metadata") or {}
    if ref.get("name") != metadata.get("name") or ref.get("namespace") != metadata.get("namespace"):
        return False
    return not ref.get("uid") or ref.get("uid") == metadata.get("uid")


def _selector_matches(claim: Mapping[str, Any], volume: Mapping[str, Any]) -> bool:
    raw = (claim.get("spec") or {}).get("selector")
    if raw is None:
        return True
    try:
        selector = parse_selector(raw, "spec.selector")
    except SelectorError:
        return False
    return selector.matches((volume.get("metadata") or {}).get("labels") or {})


def _access_modes_fit(claim: Mapping[str, Any], volume: Mapping[str, Any]) -> bool:
    """CheckAccessModes: the PV offers every access mode the claim asks for."""
    offered = set((volume.get("spec") or {}).get("accessModes") or ())
    return all(mode in offered for mode in (claim.get("spec") or {}).get("accessModes") or ())


def find_matching_volume(
    claim: Mapping[str, Any],
    candidates: Sequence[Mapping[str, Any]],
    labels: Mapping[str, str],
    excluded: set[str],
) -> Mapping[str, Any] | None:
    """FindMatchingVolume on the scheduler path: a PV pre-bound to the claim, else the
    smallest Available PV of the claim's class that fits it and the node."""
    wanted = _requested(claim)
    smallest: Mapping[str, Any] | None = None
    for volume in candidates:
        spec = volume.get("spec") or {}
        if _name(volume) in excluded or (spec.get("claimRef") and not _bound_to(volume, claim)):
            continue
        if _capacity(volume) < wanted or (volume.get("metadata") or {}).get("deletionTimestamp"):
            continue
        if (spec.get("volumeMode") or "Filesystem") != (
            (claim.get("spec") or {}).get("volumeMode") or "Filesystem"
        ):
            continue
        fits_node = node_affinity_matches(volume, labels)
        if _bound_to(volume, claim):
            return volume if fits_node else None
        available = (volume.get("status") or {}).get("phase") == "Available"
        same_class = (spec.get("storageClassName") or "") == claim_class(claim)
        if not (available and same_class and fits_node and _selector_matches(claim, volume)):
            continue
        if _access_modes_fit(claim, volume) and (
            smallest is None or _capacity(smallest) > _capacity(volume)
        ):
            smallest = volume
    return smallest


def _topology_allows(storage_class: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """MatchTopologySelectorTerms over the class's allowedTopologies (none: any node)."""
    terms = storage_class.get("allowedTopologies") or ()
    if not terms:
        return True
    return any(
        all(
            e.get("key") in labels and labels[e["key"]] in (e.get("values") or ())
            for e in term.get("matchLabelExpressions") or ()
        )
        for term in terms
    )


@dataclass
class Verdict:
    """FindPodVolumes for one node."""

    bound_satisfied: bool = True
    bound_found: bool = True
    unbound_satisfied: bool = True
    sufficient_storage: bool = True
    volumes: PodVolumes = field(default_factory=PodVolumes)

    @property
    def reasons(self) -> tuple[str, ...]:
        checks = (
            (self.bound_satisfied, REASON_NODE_CONFLICT),
            (self.unbound_satisfied, REASON_BIND_CONFLICT),
            (self.sufficient_storage, REASON_NOT_ENOUGH_SPACE),
            (self.bound_found, REASON_PV_NOT_EXIST),
        )
        return tuple(reason for ok, reason in checks if not ok)


def find_pod_volumes(volumes: Volumes, claims: PodClaims, node: NodeInfo) -> Verdict:
    verdict = Verdict()
    for claim in claims.bound:
        volume = volumes.volume(volume_name(claim))
        if volume is None:
            verdict.bound_found = False
            break
        if not node_affinity_matches(volume, node.labels):
            verdict.bound_satisfied = False
            break
    if claims.delayed:
        _place_delayed(volumes, claims.delayed, node, verdict)
    return verdict


def _place_delayed(
    volumes: Volumes, delayed: Sequence[Mapping[str, Any]], node: NodeInfo, verdict: Verdict
) -> None:
    to_match: list[Mapping[str, Any]] = []
    to_provision: list[Mapping[str, Any]] = []
    for claim in delayed:
        annotations = (claim.get("metadata") or {}).get("annotations") or {}
        if SELECTED_NODE in annotations:
            if annotations[SELECTED_NODE] != node.name:
                verdict.unbound_satisfied = False
                return
            to_provision.append(claim)
        else:
            to_match.append(claim)
    chosen: set[str] = set()
    all_volumes = list(volumes.objects.all("PersistentVolume"))
    for claim in sorted(to_match, key=_requested):
        class_volumes = [
            v
            for v in all_volumes
            if ((v.get("spec") or {}).get("storageClassName") or "") == claim_class(claim)
        ]
        volume = find_matching_volume(claim, class_volumes, node.labels, chosen)
        if volume is None:
            verdict.unbound_satisfied = False
            to_provision.append(claim)
            continue
        chosen.add(_name(volume))
        verdict.volumes.bindings.append((volume, claim))
    if to_provision:
        verdict.unbound_satisfied = _can_provision(volumes, to_provision, node, verdict)


def _can_provision(
    volumes: Volumes, claims: Sequence[Mapping[str, Any]], node: NodeInfo, verdict: Verdict
) -> bool:
    """checkVolumeProvisions: each claim's class provisions on the node, within a
    CSIStorageCapacity it reaches (the first claim short of it: sufficient_storage off)."""
    for claim in claims:
        class_name = claim_class(claim)
        if not class_name:
            raise ClaimError(f'no class for claim "{_claim_key(claim)}"')
        storage_class = volumes.storage_class(class_name)
        if storage_class is None:
            raise ClaimError(f'failed to find storage class "{class_name}"')
        provisioner = storage_class.get("provisioner") or ""
        if provisioner in ("", NO_PROVISIONER):
            return False
        if not _topology_allows(storage_class, node.labels):
            return False
        sufficient, capacity = _has_enough_capacity(volumes, provisioner, claim, class_name, node)
        if not sufficient:
            verdict.sufficient_storage = False
            verdict.volumes.provisions.clear()
            verdict.volumes.capacities.clear()
            return True
        verdict.volumes.provisions.append(claim)
        verdict.volumes.capacities.append(capacity)
    return True


def _has_enough_capacity(
    volumes: Volumes, provisioner: str, claim: Mapping[str, Any], class_name: str, node: NodeInfo
) -> tuple[bool, Mapping[str, Any] | None]:
    """hasEnoughCapacity: only for a CSI driver whose CSIDriver sets storageCapacity, the
    first CSIStorageCapacity of the class that the node reaches and that fits the claim."""
    requests = ((claim.get("spec") or {}).get("resources") or {}).get("requests") or {}
    if "storage" not in requests:
        return True, None  # no size to check
    driver = volumes.objects.get("CSIDriver", provisioner)
    if ((driver or {}).get("spec") or {}).get("storageCapacity") is not True:
        return True, None
    size = _requested(claim)
    for capacity in volumes.objects.all("CSIStorageCapacity"):
        if (
            capacity.get("storageClassName") == class_name
            and _capacity_sufficient(capacity, size)
            and _node_has_access(capacity, node.labels)
        ):
            return True, capacity
    return False, None


def _capacity_sufficient(capacity: Mapping[str, Any], size: int) -> bool:
    """capacitySufficient: maximumVolumeSize, more precise, before capacity."""
    limit = capacity.get("maximumVolumeSize")
    if limit is None:
        limit = capacity.get("capacity")
    return limit is not None and _storage({"limit": limit}, ("limit",)) >= size


def _node_has_access(capacity: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """nodeHasAccess: the capacity's nodeTopology selects the node (none: unavailable)."""
    topology = capacity.get("nodeTopology")
    if topology is None:
        return False
    try:
        return parse_selector(topology, "nodeTopology").matches(labels)
    except SelectorError:
        return False


def class_resources(chosen: PodVolumes) -> dict[str, tuple[int, int]]:
    """Score's (requested, capacity) per storage class: the static bindings' claims and PVs
    when there are any, else the claims to provision against the CSIStorageCapacity found for
    each (one capacity per class, not summed: two claims share it)."""
    found: dict[str, tuple[int, int]] = {}
    if chosen.bindings:
        for volume, claim in chosen.bindings:
            name = str((volume.get("spec") or {}).get("storageClassName") or "")
            requested, capacity = found.get(name, (0, 0))
            found[name] = (requested + _requested(claim), capacity + _capacity(volume))
        return found
    for claim, node_capacity in zip(chosen.provisions, chosen.capacities, strict=True):
        if node_capacity is None:
            continue
        name = str((claim.get("spec") or {}).get("storageClassName") or "")
        requested, _ = found.get(name, (0, 0))
        found[name] = (requested + _requested(claim), _storage(node_capacity, ("capacity",)))
    return found


def _claim_key(claim: Mapping[str, Any]) -> str:
    metadata = claim.get("metadata") or {}
    return f"{metadata.get('namespace') or ''}/{metadata.get('name') or ''}"
