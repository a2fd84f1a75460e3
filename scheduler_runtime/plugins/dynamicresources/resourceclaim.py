"""A pod's ResourceClaims as k8s.io/dynamic-resource-allocation's `resourceclaim` package
reads them: the claim behind each entry of `spec.resourceClaims`, whether a claim was made for
the pod, whether it is reserved for it; with upstream's errors, word for word."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from scheduler_runtime.framework.dra import Object

FINALIZER = "resource.kubernetes.io/delete-protection"
CLAIM_NOT_FOUND = "ResourceClaim not created yet"
API_UNSUPPORTED = "none of the supported fields are set"


class ClaimError(Exception):
    """The pod cannot use its claims (yet): the message is upstream's."""


class PodLike(Protocol):
    """What these helpers read of a pod (a PodInfo, or a pod object a hint was given)."""

    @property
    def pod(self) -> Mapping[str, Any]: ...

    @property
    def namespace(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def uid(self) -> str: ...


def claim_name(pod: PodLike, pod_claim: Mapping[str, Any]) -> tuple[str | None, bool]:
    """resourceclaim.Name: the claim's name (None when the controller decided no claim is
    needed) and whether the claim must be checked to belong to the pod."""
    if pod_claim.get("resourceClaimName") is not None:
        return str(pod_claim["resourceClaimName"]), False
    if pod_claim.get("resourceClaimTemplateName") is not None:
        for status in (pod.pod.get("status") or {}).get("resourceClaimStatuses") or ():
            if status.get("name") == pod_claim.get("name"):
                name = status.get("resourceClaimName")
                return (None if name is None else str(name)), True
        raise ClaimError(f'pod "{pod.namespace}/{pod.name}": {CLAIM_NOT_FOUND}')
    raise ClaimError(
        f'pod "{pod.namespace}/{pod.name}", spec.resourceClaim "{pod_claim.get("name", "")}": '
        f"{API_UNSUPPORTED}"
    )


def metadata(obj: Object) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def key(obj: Object) -> str:
    """klog.KObj: namespace/name."""
    meta = metadata(obj)
    namespace = meta.get("namespace") or ""
    return f"{namespace}/{meta.get('name', '')}" if namespace else str(meta.get("name", ""))


def where(obj: Object) -> tuple[str, str]:
    """The object's namespace and name, as the API paths and the assume cache take them."""
    meta = metadata(obj)
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


def uid(obj: Object) -> str:
    return str(metadata(obj).get("uid") or "")


def is_for_pod(pod: PodLike, claim: Object) -> None:
    """resourceclaim.IsForPod (PodGroup owners aside: DRAWorkloadResourceClaims is off)."""
    meta = metadata(claim)
    namespace, name = meta.get("namespace") or "", meta.get("name") or ""
    if namespace != pod.namespace:
        raise ClaimError(
            f"ResourceClaim {namespace}/{name} is not in the same namespace as Pod "
            f"{pod.namespace}/{pod.name}"
        )
    if not any(
        owner.get("controller") and owner.get("uid") == pod.uid
        for owner in meta.get("ownerReferences") or ()
    ):
        raise ClaimError(
            f"ResourceClaim {namespace}/{name} was not created for Pod {pod.namespace}/"
            f"{pod.name} (Pod is not owner)"
        )


def allocation(claim: Object) -> Mapping[str, Any] | None:
    return (claim.get("status") or {}).get("allocation")


def reserved_for(claim: Object) -> list[Mapping[str, Any]]:
    return list((claim.get("status") or {}).get("reservedFor") or ())


def is_reserved_for_pod(pod: PodLike, claim: Object) -> bool:
    """resourceclaim.IsReservedForPod (without PodGroup reservations)."""
    return any(entry.get("uid") == pod.uid for entry in reserved_for(claim))


def pod_reference(pod: PodLike) -> dict[str, str]:
    """The ResourceClaimConsumerReference a claim is reserved for a pod with."""
    return {"resource": "pods", "name": pod.name, "uid": pod.uid}


def is_sub_request_ref(reference: str) -> bool:
    return len(reference.split("/")) == 2


__all__ = [
    "FINALIZER",
    "ClaimError",
    "PodLike",
    "allocation",
    "claim_name",
    "is_for_pod",
    "is_reserved_for_pod",
    "is_sub_request_ref",
    "key",
    "pod_reference",
    "reserved_for",
    "uid",
    "where",
]
