"""The Dynamic Resource Allocation workloads of upstream's scheduler_perf
(test/integration/scheduler_perf/dra and its templates), on the benchmark's nodes: the slices
scheduler_perf's test driver publishes (10 GPU-like devices per node, `resourceSlice()` of
dra.go), its DeviceClasses, and pods whose claims fill the cluster as its 5000pods_500nodes
workloads fill theirs. Pure functions of an index, like workloads.py: every run (and every
scheduler) gets the same objects.

- dra-template: SchedulingWithResourceClaimTemplate (a claim per pod from a template);
- dra-claim: SchedulingWithResourceClaim (claims made beforehand, five pods share each);
- dra-extended: ExtendedResource (a DeviceClass backs `example.com/gpu`, pods ask for one);
- dra-partitionable: Partitionable (devices share a node's counters; two partitions per
  device's worth of counters, so each node still holds ten claims);
- dra-prioritized: FirstAvailable (a first choice no device satisfies, then test-class)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

DRIVER = "test-driver.cdi.k8s.io"
DEVICES_PER_NODE = 10
PAUSE = "registry.k8s.io/pause:3.10"
RESOURCE_API = "resource.k8s.io/v1"
TEMPLATE = "test-claim-template"
EXTENDED_RESOURCE = "example.com/gpu"
CLAIM_SHARERS = 5  # pod-with-claim-ref.yaml: five pods share access to the same claim
PART_OF = {"app.kubernetes.io/part-of": "scheduler-benchmark"}


def _device(index: int) -> dict[str, Any]:
    """One device as scheduler_perf's test driver publishes it."""
    return {
        "name": f"instance-{index}",
        "attributes": {
            "model": {"string": "A100"},
            "family": {"string": "GPU"},
            "driverVersion": {"version": "1.2.3"},
            "dra.example.com/numa": {"int": index},
        },
        "capacity": {"memory": {"value": "1Gi"}},
    }


def _slice(name: str, node: str, slices: int, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": RESOURCE_API,
        "kind": "ResourceSlice",
        "metadata": {"name": name, "labels": dict(PART_OF)},
        "spec": {
            "driver": DRIVER,
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": slices},
            **spec,
        },
    }


def node_slices(node: str) -> list[dict[str, Any]]:
    return [_slice(node, node, 1, devices=[_device(i) for i in range(DEVICES_PER_NODE)])]


def partitionable_slices(node: str) -> list[dict[str, Any]]:
    """A counter set per node of ten devices' worth, and twice as many partitions of one."""
    counters = {"memory": {"value": f"{DEVICES_PER_NODE}Gi"}}
    consumes = [{"counterSet": "gpu", "counters": {"memory": {"value": "1Gi"}}}]
    partitions = [
        {**_device(i), "name": f"partition-{i}", "consumesCounters": consumes}
        for i in range(2 * DEVICES_PER_NODE)
    ]
    return [
        _slice(f"{node}-counters", node, 2, sharedCounters=[{"name": "gpu", "counters": counters}]),
        _slice(f"{node}-devices", node, 2, devices=partitions),
    ]


def device_class(name: str, driver: str = DRIVER, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": RESOURCE_API,
        "kind": "DeviceClass",
        "metadata": {"name": name, "labels": dict(PART_OF)},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}], **spec},
    }


def _template(requests: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "apiVersion": RESOURCE_API,
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": TEMPLATE},
        "spec": {"spec": {"devices": {"requests": requests}}},
    }


ONE_DEVICE = [{"name": "req-0", "exactly": {"deviceClassName": "test-class"}}]
FIRST_AVAILABLE = [
    {
        "name": "req-0",
        "firstAvailable": [
            {"name": "sub-0", "deviceClassName": "no-devices-class"},
            {"name": "sub-1", "deviceClassName": "test-class"},
        ],
    }
]


def _pod(name: str, scheduler_name: str, **spec: Any) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "pause", "image": PAUSE}
    if "resources" in spec:
        container["resources"] = spec.pop("resources")
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "schedulerName": scheduler_name,
            "terminationGracePeriodSeconds": 0,
            "containers": [container],
            **spec,
        },
    }


def templated_pod(index: int, scheduler_name: str) -> dict[str, Any]:
    """pod-with-claim-template.yaml."""
    return _pod(
        f"test-dra-{index:05d}",
        scheduler_name,
        resources={"claims": [{"name": "resource"}]},
        resourceClaims=[{"name": "resource", "resourceClaimTemplateName": TEMPLATE}],
    )


def claim_pod(index: int, scheduler_name: str) -> dict[str, Any]:
    """pod-with-claim-ref.yaml: pods 0-4 share claim 0, 5-9 claim 1, and so on."""
    return _pod(
        f"test-dra-{index:05d}",
        scheduler_name,
        resources={"claims": [{"name": "resource"}]},
        resourceClaims=[
            {"name": "resource", "resourceClaimName": f"test-claim-{index // CLAIM_SHARERS}"}
        ],
    )


def extended_pod(index: int, scheduler_name: str) -> dict[str, Any]:
    """pod-with-extended-resource.yaml."""
    amounts = {EXTENDED_RESOURCE: "1"}
    return _pod(
        f"test-dra-{index:05d}", scheduler_name, resources={"requests": amounts, "limits": amounts}
    )


def claims(count: int) -> list[dict[str, Any]]:
    """resourceclaim.yaml, one claim per five pods."""
    return [
        {
            "apiVersion": RESOURCE_API,
            "kind": "ResourceClaim",
            "metadata": {"name": f"test-claim-{index}"},
            "spec": {"devices": {"requests": ONE_DEVICE}},
        }
        for index in range((count + CLAIM_SHARERS - 1) // CLAIM_SHARERS)
    ]


@dataclass(frozen=True)
class DraWorkload:
    """A scheduler_perf DRA workload: the cluster-scoped objects it needs (classes, and slices
    per node), the namespaced ones made before the pods, and the pods."""

    name: str
    upstream: str  # scheduler_perf's name for it
    classes: tuple[dict[str, Any], ...]
    slices: Callable[[str], list[dict[str, Any]]]
    namespaced: Callable[[int], list[dict[str, Any]]]
    pod: Callable[[int, str], dict[str, Any]]


TEST_CLASS = device_class("test-class")
WORKLOADS = {
    w.name: w
    for w in (
        DraWorkload(
            "dra-template",
            "SchedulingWithResourceClaimTemplate",
            (TEST_CLASS,),
            node_slices,
            lambda pods: [_template(ONE_DEVICE)],
            templated_pod,
        ),
        DraWorkload(
            "dra-claim",
            "SchedulingWithResourceClaim",
            (TEST_CLASS,),
            node_slices,
            claims,
            claim_pod,
        ),
        DraWorkload(
            "dra-extended",
            "ExtendedResource",
            (device_class("test-class", extendedResourceName=EXTENDED_RESOURCE),),
            node_slices,
            lambda pods: [],
            extended_pod,
        ),
        DraWorkload(
            "dra-partitionable",
            "Partitionable",
            (TEST_CLASS,),
            partitionable_slices,
            lambda pods: [_template(ONE_DEVICE)],
            templated_pod,
        ),
        DraWorkload(
            "dra-prioritized",
            "FirstAvailable",
            (TEST_CLASS, device_class("no-devices-class", "no-such-driver.cdi.k8s.io")),
            node_slices,
            lambda pods: [_template(FIRST_AVAILABLE)],
            templated_pod,
        ),
    )
}


def pods_for(nodes: int) -> int:
    """Pods that fill `nodes` nodes' devices, as 5000pods_500nodes fills 500."""
    return nodes * DEVICES_PER_NODE


def pods(workload: str, count: int, scheduler_name: str) -> list[dict[str, Any]]:
    build = WORKLOADS[workload].pod
    return [build(index, scheduler_name) for index in range(count)]


@dataclass(frozen=True)
class ClaimsCheck:
    """What the workload's ResourceClaims hold once its pods are bound."""

    claims: int
    allocated: int
    devices_twice: int  # devices in more than one claim's allocation (none may be)


def check_claims(items: Sequence[Mapping[str, Any]]) -> ClaimsCheck:
    """Counts the allocated claims and the devices allocated more than once (a share of a
    device, with a shareID, is its own)."""
    seen: set[tuple[str, ...]] = set()
    allocated = twice = 0
    for claim in items:
        allocation = (claim.get("status") or {}).get("allocation")
        if not allocation:
            continue
        allocated += 1
        for result in (allocation.get("devices") or {}).get("results") or ():
            key = tuple(str(result.get(k, "")) for k in ("driver", "pool", "device", "shareID"))
            if key in seen:
                twice += 1
            seen.add(key)
    return ClaimsCheck(len(items), allocated, twice)


__all__ = [
    "DEVICES_PER_NODE",
    "WORKLOADS",
    "ClaimsCheck",
    "DraWorkload",
    "check_claims",
    "pods",
    "pods_for",
]
