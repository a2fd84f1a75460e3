"""Extended resources backed by DRA, the plugin's side (extendeddynamicresources.go): a pod
asking for an extended resource that a DeviceClass backs gets one special ResourceClaim for
all such resources. It lives in memory (named `<extended-resources>`) until PreBind creates
it through the API; each node gets its own variant with the requests the node cannot meet
from its allocatable (a device plugin's); a claim left from an earlier attempt is deleted in
PostFilter and the pod tried again."""

from __future__ import annotations

import logging
import sys
import time
import uuid
from collections.abc import Mapping
from typing import Any

from scheduler_runtime.dra.model import parse_claim
from scheduler_runtime.framework.dra import (
    ClaimAPIError,
    ClaimCacheError,
    Object,
    ResourceClaimClient,
    SharedDRAManager,
    copied,
)
from scheduler_runtime.framework.nodeinfo import NodeInfo
from scheduler_runtime.framework.podinfo import PodInfo
from scheduler_runtime.framework.status import Status
from scheduler_runtime.plugins.dynamicresources import resourceclaim as rc
from scheduler_runtime.plugins.dynamicresources.claims import (
    SPECIAL_CLAIM_NAME,
    PluginContext,
    StateData,
    Variant,
)
from scheduler_runtime.plugins.dynamicresources.extended import (
    is_dra_extended_resource_name,
    requests_and_mappings,
)

log = logging.getLogger(__name__)

ANNOTATION = "resource.kubernetes.io/extended-resource-claim"
# AssumeExtendedResourceTimeoutDefaultSeconds.
CACHE_WAIT_SECONDS = 120.0
# retry.DefaultRetry: five tries, 10 ms apart.
RETRY_STEPS = 5
RETRY_SECONDS = 0.01


STALE_CLAIM = Status.unresolvable("cannot schedule extended resource claim")
CANNOT_FIT = Status.unresolvable("cannot fit resource")


class ExtendedClaimError(Exception):
    """An API call for the special claim failed; the message is upstream's."""


def backed_requests(dra: SharedDRAManager, pod: PodInfo) -> dict[str, int]:
    """The pod's requests for extended resources some DeviceClass backs."""
    return {
        name: amount
        for name, amount in pod.requests.items()
        if amount
        and is_dra_extended_resource_name(name)
        and dra.extended_resource_class(name) is not None
    }


def has_backed_resource(dra: SharedDRAManager, pod: PodInfo) -> bool:
    """hasDeviceClassMappedExtendedResource."""
    return bool(backed_requests(dra, pod))


def in_memory(claim: Object) -> bool:
    return (claim.get("metadata") or {}).get("name") == SPECIAL_CLAIM_NAME


def requests(claim: Object) -> Any:
    """The claim's spec.devices.requests, None when unset."""
    return ((claim.get("spec") or {}).get("devices") or {}).get("requests")


def pre_filter(plugin: PluginContext, pod: PodInfo, data: StateData) -> Object | None:
    """preFilterExtendedResources: the claim made in an earlier attempt, else a new one in
    memory; None when the pod asks for no extended resource DRA backs (or the gate is off)."""
    if not plugin.features.extended_resource or not has_backed_resource(plugin.dra, pod):
        return None
    data.extended_resources = {
        name: amount
        for name, amount in pod.requests.items()
        if is_dra_extended_resource_name(name) and amount
    }
    data.extended_backed = frozenset(backed_requests(plugin.dra, pod))
    for claim in plugin.dra.claims.owned_by(pod.uid):
        owners = (claim.get("metadata") or {}).get("ownerReferences") or ()
        if any(o.get("name") == pod.name and o.get("uid") == pod.uid for o in owners):
            return claim
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {
            "namespace": pod.namespace,
            "name": SPECIAL_CLAIM_NAME,
            "uid": str(uuid.uuid4()),  # for SignalClaimPendingAllocation until it is created
            "generateName": f"{pod.name}-extended-resources-",
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "name": pod.name,
                    "uid": pod.uid,
                    "controller": True,
                }
            ],
            "annotations": {ANNOTATION: "true"},
        },
        "spec": {},
    }


def filter_node(
    plugin: PluginContext, data: StateData, pod: PodInfo, node: NodeInfo
) -> tuple[Variant | None, Status | None]:
    """filterExtendedResources: the node's variant of the special claim (None when the node
    meets every extended resource from its allocatable), or the status that rejects the
    node. Nodes that must get the same resources from DRA share one variant."""
    claim = data.claims.extended_claim()
    if claim is None:
        return None, None
    if requests(claim) is not None:
        # Made in an earlier attempt: PostFilter deletes it, then the pod is tried anew.
        return None, STALE_CLAIM
    needed: list[str] = []
    for name in data.extended_resources:
        allocatable = node.allocatable.get(name)
        if name in data.extended_backed and not allocatable:
            needed.append(name)
        elif allocatable is None:
            return None, CANNOT_FIT
    if (data.claims.no_user_claim() and not needed) or rc.allocation(claim) is not None:
        return None, None
    key = tuple(needed)
    found = data.extended_variants.get(key)
    if found is None:
        found = data.extended_variants[key] = _variant(plugin, data, pod, claim, key)
    return found, None


def _variant(
    plugin: PluginContext, data: StateData, pod: PodInfo, claim: Object, needed: tuple[str, ...]
) -> Variant:
    amounts = {name: data.extended_resources[name] for name in needed}
    wanted, mappings = requests_and_mappings(pod.pod, amounts, plugin.dra.extended_resource_class)
    devices: dict[str, Any] = {"requests": wanted} if wanted else {}
    variant = {**claim, "spec": {**(claim.get("spec") or {}), "devices": devices}}
    return Variant(variant, mappings, sys.intern(repr(requests(variant))), parse_claim(variant))


def create_in_api(
    client: ResourceClaimClient, data: StateData, pod: PodInfo, node_name: str
) -> dict[str, Any]:
    """createExtendedResourceClaimInAPI: the claim Filter made for the node, created."""
    found = data.node_allocations.get(node_name)
    if found is None or found.extended_claim is None:
        raise ExtendedClaimError(f"extended resource claim not found for node {node_name}")
    claim = copied(found.extended_claim)
    metadata = claim["metadata"]
    metadata.pop("name", None)
    metadata.pop("uid", None)
    (claim.get("status") or {}).pop("allocation", None)
    try:
        return client.create_claim(claim)
    except ClaimAPIError as error:
        raise ExtendedClaimError(
            f"create claim for extended resources {metadata.get('namespace', '')}/: {error}"
        ) from error


def patch_pod_status(
    client: ResourceClaimClient, data: StateData, pod: PodInfo, claim: Object, node_name: str
) -> None:
    """patchPodExtendedResourceClaimStatus: the pod says which claim and requests serve its
    containers' extended resources."""
    found = data.node_allocations.get(node_name)
    mappings = found.mappings if found is not None else []
    if not mappings:
        raise ExtendedClaimError(
            f"nil or empty request mappings, no update of pod {pod.namespace}/{pod.name} "
            "ExtendedResourceClaimStatus"
        )
    status = {
        "extendedResourceClaimStatus": {
            "requestMappings": mappings,
            "resourceClaimName": (claim.get("metadata") or {}).get("name"),
        }
    }
    try:
        client.patch_pod_status(pod.namespace, pod.name, {"status": status})
    except ClaimAPIError as error:
        raise ExtendedClaimError(
            f"update pod {pod.namespace}/{pod.name} ExtendedResourceClaimStatus: {error}"
        ) from error


def wait_in_cache(plugin: PluginContext, claim: Object) -> None:
    """waitForExtendedClaimInAssumeCache: the created claim reaches the cache through the
    watch; until then it cannot be assumed. Giving up is only logged, as upstream does.
    Upstream looks every second; this wakes when the watch reports the claim, so a binding
    does not sit out the rest of a second (nor hold a binding thread meanwhile)."""
    deadline = time.monotonic() + CACHE_WAIT_SECONDS
    while True:
        try:
            plugin.dra.claims.assume_after_api_call(claim)
            return
        except ClaimCacheError as error:
            if "could not find" not in str(error) or time.monotonic() >= deadline:
                log.info("claim %s not stored in assume cache: %s", rc.key(claim), error)
                return
        plugin.dra.claims.wait_known(*rc.where(claim), max(0.0, deadline - time.monotonic()))


def delete_claim(client: ResourceClaimClient, claim: Object) -> None:
    """deleteClaim: the finalizer off (retried on conflicts), then the claim deleted."""
    namespace, name = rc.where(claim)
    current: Mapping[str, Any] = claim
    for step in range(RETRY_STEPS):
        if step:
            client.sleep(RETRY_SECONDS)
            try:
                current = client.get_claim(namespace, name)
            except ClaimAPIError as error:
                raise ClaimAPIError(
                    error.code, f"get resourceclaim {namespace}/{name}: {error}"
                ) from error
        updated = copied(current)
        finalizers = list((updated.get("metadata") or {}).get("finalizers") or ())
        if rc.FINALIZER in finalizers:
            finalizers.remove(rc.FINALIZER)
            updated["metadata"]["finalizers"] = finalizers
        try:
            client.update_claim(updated)
            break
        except ClaimAPIError as error:
            if not error.conflict or step == RETRY_STEPS - 1:
                raise ClaimAPIError(
                    error.code, f"update resourceclaim {namespace}/{name}: {error}"
                ) from error
    client.delete_claim(namespace, name)


def unreserve(plugin: PluginContext, data: StateData) -> None:
    """unreserveExtendedResourceClaim: the allocation in flight forgotten, and a claim
    already created deleted so it is not left behind."""
    claim = data.claims.extended_claim()
    if claim is None:
        return
    tracker = plugin.dra.claims
    if tracker.maybe_remove_pending_allocation(data.claims.initial_extended_uid, False):
        tracker.restore(*rc.where(claim))
    if in_memory(claim):
        return
    try:
        delete_claim(plugin.client, claim)
    except ClaimAPIError as error:
        log.error("delete resourceclaim %s: %s", rc.key(claim), error)


__all__ = [
    "ANNOTATION",
    "ExtendedClaimError",
    "backed_requests",
    "create_in_api",
    "delete_claim",
    "filter_node",
    "has_backed_resource",
    "in_memory",
    "patch_pod_status",
    "pre_filter",
    "requests",
    "unreserve",
    "wait_in_cache",
]
