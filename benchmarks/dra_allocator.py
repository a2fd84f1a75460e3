"""Micro-benchmark of the DRA allocator (not a test): microseconds per node-allocation, the
cost of one DynamicResources Filter call, for the claim shapes of upstream's scheduler_perf
DRA workloads (test/integration/scheduler_perf/dra and its templates) on 500 nodes with 10
devices each, as upstream's test driver publishes them.

    python -m benchmarks.dra_allocator [--nodes 500] [--pods 200]

Each workload fills the cluster as scheduler_perf does: pod after pod, a new Allocator (the
plugin's PreFilter) with the devices taken so far, then Filter on every node until the first
that fits; "filter all" asks every node, as a Filter over all candidates would."""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from scheduler_runtime.dra import allocator as alloc
from scheduler_runtime.dra import cel, model

DRIVER = "test-driver.cdi.k8s.io"


def node_slice(node: str, devices: int) -> dict[str, Any]:
    """scheduler_perf's resourceSlice(): one slice per node, `devices` GPU-like devices."""
    return {
        "metadata": {"name": node},
        "spec": {
            "driver": DRIVER,
            "nodeName": node,
            "pool": {"name": node, "resourceSliceCount": 1},
            "devices": [
                {
                    "name": f"instance-{i}",
                    "attributes": {
                        "model": {"string": "A100"},
                        "family": {"string": "GPU"},
                        "driverVersion": {"version": "1.2.3"},
                        "dra.example.com/numa": {"int": i},
                    },
                    "capacity": {"memory": {"value": "1Gi"}},
                }
                for i in range(devices)
            ],
        },
    }


def partitionable_slices(node: str, devices: int) -> list[dict[str, Any]]:
    """A counter set per node that lets any `devices` of 2*`devices` partitions be used."""
    counters = {"memory": {"value": f"{devices}Gi"}}
    pool = {"name": node, "resourceSliceCount": 2}
    partitions = [
        {
            "name": f"partition-{i}",
            "consumesCounters": [{"counterSet": "gpu", "counters": {"memory": {"value": "1Gi"}}}],
        }
        for i in range(2 * devices)
    ]
    return [
        {
            "metadata": {"name": f"{node}-counters"},
            "spec": {
                "driver": DRIVER,
                "pool": pool,
                "nodeName": node,
                "sharedCounters": [{"name": "gpu", "counters": counters}],
            },
        },
        {
            "metadata": {"name": f"{node}-devices"},
            "spec": {"driver": DRIVER, "pool": pool, "nodeName": node, "devices": partitions},
        },
    ]


def shared_slice(node: str, devices: int) -> dict[str, Any]:
    """resourceslice-consumablecapacity.yaml, per node."""
    capacity = {
        "memory": {
            "value": "80Gi",
            "requestPolicy": {"default": "1Gi", "validRange": {"min": "1Gi"}},
        }
    }
    return {
        "metadata": {"name": node},
        "spec": {
            "driver": DRIVER,
            "nodeName": node,
            "pool": {"name": node, "resourceSliceCount": 1},
            "devices": [
                {"name": "shareable-device", "allowMultipleAllocations": True, "capacity": capacity}
            ],
        },
    }


def device_class(name: str, expression: str) -> model.DeviceClass:
    selectors = [{"cel": {"expression": expression}}]
    return model.parse_class({"metadata": {"name": name}, "spec": {"selectors": selectors}})


CLASSES = {
    c.name: c
    for c in (
        device_class("test-class", f'device.driver == "{DRIVER}"'),
        device_class("no-devices-class", 'device.driver == "no-such-driver.cdi.k8s.io"'),
        device_class(
            "capacity-class",
            f'device.driver == "{DRIVER}" && device.allowMultipleAllocations == true',
        ),
    )
}


def claim(name: str, requests: list[dict[str, Any]], **devices: Any) -> model.Claim:
    spec = {"devices": {"requests": requests, **devices}}
    return model.parse_claim({"metadata": {"name": name, "namespace": "test"}, "spec": spec})


def exactly(name: str, cls: str = "test-class", **extra: Any) -> dict[str, Any]:
    request = {"deviceClassName": cls, "allocationMode": "ExactCount", **extra}
    return {"name": name, "exactly": request}


def sub(name: str, cls: str) -> dict[str, Any]:
    return {"name": name, "deviceClassName": cls, "allocationMode": "ExactCount", "count": 1}


@dataclass(frozen=True)
class Workload:
    name: str
    claims: Callable[[int], list[model.Claim]]
    slices: Callable[[str, int], list[dict[str, Any]]] = lambda n, d: [node_slice(n, d)]
    pods_per_node: int = 10


WORKLOADS = [
    Workload("SchedulingWithResourceClaimTemplate", lambda i: [claim(f"c{i}", [exactly("req-0")])]),
    Workload(
        "SchedulingWithExtendedResource",  # the special claim: one request per container
        lambda i: [claim(f"c{i}", [exactly("container-0-request-0", count=1)])],
    ),
    Workload(
        "SchedulingWithPrioritizedList",
        lambda i: [
            claim(
                f"c{i}",
                [
                    {
                        "name": "req-0",
                        "firstAvailable": [
                            sub("sub-0", "no-devices-class"),
                            sub("sub-1", "test-class"),
                        ],
                    }
                ],
            )
        ],
    ),
    Workload(
        "SchedulingWithManyClaims",  # pod-with-many-claim-templates: four claims
        lambda i: [claim(f"c{i}-{k}", [exactly("req-0")]) for k in range(4)],
        pods_per_node=2,
    ),
    Workload(
        "SchedulingWithMatchAttribute",  # two devices on the same NUMA node
        lambda i: [
            claim(
                f"c{i}",
                [exactly("req-0", count=2)],
                constraints=[{"requests": ["req-0"], "matchAttribute": f"{DRIVER}/model"}],
            )
        ],
        pods_per_node=5,
    ),
    Workload(
        "SchedulingWithPartitionableDevices",
        lambda i: [claim(f"c{i}", [exactly("req-0")])],
        slices=partitionable_slices,
    ),
    Workload(
        "SchedulingWithConsumableCapacity",
        lambda i: [
            claim(
                f"c{i}",
                [
                    exactly("req-0", "capacity-class", capacity={"requests": {"memory": "40Gi"}}),
                    exactly("req-1", "capacity-class", capacity={"requests": {"memory": "40Gi"}}),
                ],
            )
        ],
        slices=lambda n, d: [shared_slice(n, d)],
        pods_per_node=1,
    ),
]


def run(workload: Workload, nodes: int, devices: int, pods: int) -> dict[str, float]:
    names = [f"scheduler-perf-dra-{i:04d}" for i in range(nodes)]
    index = alloc.SliceIndex(
        model.parse_slice(s) for n in names for s in workload.slices(n, devices)
    )
    features = alloc.Features()
    cache = cel.Cache(features=features.cel)
    state = alloc.AllocatedState()
    node_objs = [alloc.Node(n) for n in names]
    calls = 0
    first_fit_time = 0.0
    all_time = 0.0
    all_calls = 0
    cold = 0.0
    placed = 0
    for pod in range(min(pods, nodes * workload.pods_per_node)):
        claims = workload.claims(pod)
        allocator = alloc.Allocator(features, state, CLASSES, index, cache)
        start = time.perf_counter()
        chosen = None
        for node in node_objs[pod // workload.pods_per_node :]:
            calls += 1
            result = allocator.allocate(node, claims)
            if result is not None:
                chosen = result
                break
        elapsed = time.perf_counter() - start
        if pod == 0:
            cold = elapsed * 1e6
        first_fit_time += elapsed
        if pod % 10 == 0:  # filter on every node, as a Filter over all candidates does
            start = time.perf_counter()
            for node in node_objs:
                allocator.allocate(node, claims)
            all_time += time.perf_counter() - start
            all_calls += nodes
        if chosen is not None:
            placed += 1
            for allocation in chosen:
                state.add_allocation(allocation)
    return {
        "cold_us": cold,
        "first_fit_us": first_fit_time / calls * 1e6,
        "all_nodes_us": all_time / max(all_calls, 1) * 1e6,
        "filter_ms": all_time / max(all_calls, 1) * nodes * 1e3,
        "placed": placed,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--devices", type=int, default=10)
    parser.add_argument("--pods", type=int, default=200)
    args = parser.parse_args()
    print(f"{args.nodes} nodes x {args.devices} devices, {args.pods} pods per workload")
    print(f"{'workload':40} {'first pod':>10} {'µs/node':>9} {'µs/node':>9} {'filter':>9}", end="")
    print(f" {'placed':>7}")
    print(f"{'':40} {'(µs)':>10} {'(fit)':>9} {'(all)':>9} {'(ms)':>9}")
    for workload in WORKLOADS:
        r = run(workload, args.nodes, args.devices, args.pods)
        print(
            f"{workload.name:40} {r['cold_us']:10.0f} {r['first_fit_us']:9.1f} "
            f"{r['all_nodes_us']:9.1f} {r['filter_ms']:9.2f} {r['placed']:7.0f}"
        )


if __name__ == "__main__":
    main()
