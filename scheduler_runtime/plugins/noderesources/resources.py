"""Which resources the scheduler accounts for, and the node-side numbers scoring uses."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from scheduler_runtime.framework.quantity import CPU, EPHEMERAL_STORAGE, MEMORY
from scheduler_runtime.framework.snapshot import Int64s, Slots, Snapshot

NATIVE_PREFIX = "kubernetes.io/"
REQUESTS_PREFIX = "requests."
HUGEPAGES_PREFIX = "hugepages-"
ATTACHABLE_VOLUMES_PREFIX = "attachable-volumes-"


def is_native(name: str) -> bool:
    return "/" not in name or name.startswith(NATIVE_PREFIX)


def is_extended(name: str) -> bool:
    """v1helper.IsExtendedResourceName: a fully qualified name outside kubernetes.io/."""
    return not is_native(name) and not name.startswith(REQUESTS_PREFIX)


def is_scalar(name: str) -> bool:
    """v1helper.IsScalarResourceName: extended, hugepages, prefixed-native, attachable volumes."""
    return (
        is_extended(name)
        or name.startswith(HUGEPAGES_PREFIX)
        or name.startswith(NATIVE_PREFIX)
        or name.startswith(ATTACHABLE_VOLUMES_PREFIX)
    )


def pod_scoring_request(
    resource: str, requests: Mapping[str, int], non_zero: Mapping[str, int], *, use_requested: bool
) -> int:
    """calculatePodResourceRequest: cpu/memory with the 100m/200Mi defaults unless the
    scorer uses real requests."""
    if resource in (CPU, MEMORY) and not use_requested:
        return non_zero.get(resource, 0)
    return requests.get(resource, 0)


def allocatable_and_requested(
    snapshot: Snapshot, slots: Slots, resource: str, pod_request: int, *, use_requested: bool
) -> tuple[Int64s, Int64s]:
    """calculateResourceAllocatableRequest for many nodes: (allocatable, requested + pod)."""
    zeros = np.zeros(len(slots), dtype=np.int64)
    if pod_request == 0 and is_scalar(resource):
        return zeros, zeros
    if resource in (CPU, MEMORY):
        column = snapshot.resource_index[resource]
        if use_requested:
            requested = snapshot.requested[slots, column]
        else:
            requested = snapshot.non_zero_requested[slots, 0 if resource == CPU else 1]
        return snapshot.allocatable[slots, column], requested + pod_request
    if resource == EPHEMERAL_STORAGE or is_scalar(resource):
        index = snapshot.column(resource)
        if index is None:
            return zeros, zeros
        return snapshot.allocatable[slots, index], snapshot.requested[slots, index] + pod_request
    return zeros, zeros
