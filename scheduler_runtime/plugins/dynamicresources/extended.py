"""What extended resources backed by DRA (DRAExtendedResource) need besides the allocator:
which resource names DRA may back, and the requests of the special claim the plugin
allocates for a pod on a node (`createRequestsAndMappings` in the plugin's
extendeddynamicresources.go). The claim's requests are ordinary `exactly` requests, so the
allocator handles the claim like any other. Which DeviceClass backs a resource name is the
scheduler's to know (`framework.dra.ExtendedResourceClasses`, fed by DeviceClass events).

`requests_and_mappings(pod, {resource: quantity}, device_class)` gives the claim's
`spec.devices.requests` and the pod's `status.extendedResourceClaimStatus.requestMappings`."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from scheduler_runtime.framework.dra import DEVICE_CLASS_PREFIX, Object
from scheduler_runtime.framework.quantity import QuantityError
from scheduler_runtime.framework.quantity import parse as parse_quantity

# Which DeviceClass backs an extended resource name (None: none does).
ClassResolver = Callable[[str], Object | None]
_NATIVE_PREFIX = "kubernetes.io/"


def is_extended_resource_name(name: str) -> bool:
    """v1helper.IsExtendedResourceName: has a domain, none of kubernetes.io, not requests.*."""
    return not (name.startswith("requests.") or "/" not in name or _NATIVE_PREFIX in name)


def is_dra_extended_resource_name(name: str) -> bool:
    """schedutil.IsDRAExtendedResourceName."""
    return is_extended_resource_name(name) or name.startswith(DEVICE_CLASS_PREFIX)


def _count(container: Mapping[str, Any], resource: str) -> int:
    """The container's integer request for the resource (AsInt64), 0 when absent or not whole."""
    raw = ((container.get("resources") or {}).get("requests") or {}).get(resource)
    if raw is None:
        return 0
    try:
        return parse_quantity(str(raw)).as_int64() or 0
    except QuantityError:
        return 0


def _container_request(
    index: int,
    container: Mapping[str, Any],
    resource: str,
    class_name: str,
    reusable: Sequence[dict[str, Any] | None],
) -> tuple[dict[str, Any] | None, list[dict[str, str]]]:
    """createResourceRequestAndMappings."""
    wanted = _count(container, resource)
    if not wanted:
        return None, []
    name = str(container.get("name", ""))
    mappings: list[dict[str, str]] = []
    total = 0
    for request in reusable:
        if request is None:
            continue
        total += int(request["exactly"]["count"])
        mappings.append(
            {"containerName": name, "resourceName": resource, "requestName": request["name"]}
        )
        if total >= wanted:
            return None, mappings
    keys = sorted((container.get("resources") or {}).get("requests") or {})
    position = keys.index(resource) if resource in keys else 0
    request_name = f"container-{index}-request-{position}"
    request = {
        "name": request_name,
        "exactly": {
            "deviceClassName": class_name,
            "allocationMode": "ExactCount",
            "count": wanted - total,
        },
    }
    mappings.append({"containerName": name, "resourceName": resource, "requestName": request_name})
    return request, mappings


def requests_and_mappings(
    pod: Mapping[str, Any], extended_resources: Mapping[str, int], device_class: ClassResolver
) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """createRequestsAndMappings: the special claim's requests (sorted by name) and the
    container-to-request mappings, for the extended resources this node must get from DRA.
    Init containers that run to completion reuse the requests of later long-lived ones."""
    spec = pod.get("spec") or {}
    init = list(spec.get("initContainers") or ())
    containers = init + list(spec.get("containers") or ())
    long_lived = [
        i for i, c in enumerate(containers) if i >= len(init) or c.get("restartPolicy") == "Always"
    ]
    short_lived = [i for i in range(len(init)) if i not in long_lived]
    requests: list[dict[str, Any]] = []
    mappings: list[dict[str, str]] = []
    for resource in sorted(extended_resources):
        cls = device_class(resource)
        if cls is None:
            continue
        class_name = str((cls.get("metadata") or {}).get("name") or "")
        long_requests: list[dict[str, Any] | None] = [None] * len(containers)
        long_mappings: list[dict[str, str]] = []
        for i in long_lived:
            request, found = _container_request(i, containers[i], resource, class_name, [])
            long_requests[i] = request
            long_mappings += found
        biggest: dict[str, Any] | None = None
        short_names: set[str] = set()
        short_mappings: list[dict[str, str]] = []
        for i in short_lived:
            request, found = _container_request(
                i, containers[i], resource, class_name, long_requests[i:]
            )
            if request is not None:
                short_names.add(request["name"])
                if biggest is None or biggest["exactly"]["count"] < request["exactly"]["count"]:
                    biggest = request
            short_mappings += found
        if biggest is not None and len(short_names) > 1:
            short_names.discard(biggest["name"])
            for m in short_mappings:
                if m["requestName"] in short_names:
                    m["requestName"] = biggest["name"]
        if biggest is not None:
            requests.append(biggest)
        requests += [r for r in long_requests if r is not None]
        mappings += long_mappings + short_mappings
    requests.sort(key=lambda r: str(r["name"]))
    return requests, mappings


__all__ = [
    "ClassResolver",
    "is_dra_extended_resource_name",
    "is_extended_resource_name",
    "requests_and_mappings",
]
