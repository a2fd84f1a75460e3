"""What the benchmark creates: kwok nodes shaped like a cloud node pool, and the pods of each
workload. Pure functions of an index, so every run (and every scheduler) gets the same objects."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from benchmarks import dra

BASIC, MIXED = "basic", "mixed"
# Without a cluster's DRA objects (slices, classes) only the first two run: see is_dra.
WORKLOADS = (BASIC, MIXED, *dra.WORKLOADS)
# Marks what the benchmark owns (its nodes and namespaces), so it never touches anything else.
PART_OF = {"app.kubernetes.io/part-of": "scheduler-benchmark"}
PART_OF_SELECTOR = urlencode({"labelSelector": "app.kubernetes.io/part-of=scheduler-benchmark"})
ZONES = ("zone-a", "zone-b", "zone-c")
# Pods sharing an affinity, anti-affinity or spread rule; anti-affinity needs this many nodes.
GROUP_SIZE = 10
PAUSE_IMAGE = "registry.k8s.io/pause:3.10"
# (cpu, memory) requests the pods cycle through: small services, as most clusters run.
REQUESTS = (("100m", "128Mi"), ("250m", "256Mi"), ("500m", "512Mi"), ("1", "1Gi"))
MIXED_KINDS = ("requests", "spread", "anti-affinity", "affinity")


@dataclass(frozen=True)
class NodeShape:
    """An instance type: capacity, and allocatable after the system's reservation."""

    instance_type: str
    cpu: int
    memory_gi: int
    reserved_cpu_m: int = 100
    reserved_memory_mi: int = 1024


SHAPES = (
    NodeShape("m5.4xlarge", cpu=16, memory_gi=64),
    NodeShape("m5.8xlarge", cpu=32, memory_gi=128),
    NodeShape("m5.16xlarge", cpu=64, memory_gi=256),
)


def node_name(index: int) -> str:
    return f"bench-node-{index:05d}"


def node(index: int) -> dict[str, Any]:
    """Node `index`: zones round-robin, and each zone holds every shape."""
    name = node_name(index)
    zone = ZONES[index % len(ZONES)]
    shape = SHAPES[(index // len(ZONES)) % len(SHAPES)]
    capacity = {"cpu": str(shape.cpu), "memory": f"{shape.memory_gi}Gi", "pods": "110"}
    allocatable = {
        "cpu": f"{shape.cpu * 1000 - shape.reserved_cpu_m}m",
        "memory": f"{shape.memory_gi * 1024 - shape.reserved_memory_mi}Mi",
        "pods": "110",
    }
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "node.kubernetes.io/instance-type": shape.instance_type,
                "topology.kubernetes.io/region": "region-1",
                "topology.kubernetes.io/zone": zone,
                "type": "kwok",
                **PART_OF,
            },
            "annotations": {"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
        },
        "spec": {},
        "status": {
            "capacity": capacity,
            "allocatable": allocatable,
            "nodeInfo": {
                "architecture": "amd64",
                "operatingSystem": "linux",
                "kubeletVersion": "fake",
            },
        },
    }


def is_dra(workload: str) -> bool:
    """A Dynamic Resource Allocation workload (benchmarks.dra): it needs ResourceSlices and
    DeviceClasses, and fills the nodes' devices whatever the scale's pod count."""
    return workload in dra.WORKLOADS


def pods(workload: str, count: int, scheduler_name: str) -> list[dict[str, Any]]:
    """`count` pods of a workload for the scheduler named `scheduler_name`."""
    if workload not in WORKLOADS:
        raise ValueError(f"workload {workload!r}: expected one of {', '.join(WORKLOADS)}")
    if is_dra(workload):
        return dra.pods(workload, count, scheduler_name)
    build = basic_pod if workload == "basic" else mixed_pod
    return [build(index, scheduler_name) for index in range(count)]


def basic_pod(index: int, scheduler_name: str) -> dict[str, Any]:
    """A pod with cpu and memory requests and nothing else to satisfy."""
    return pod(f"basic-{index:05d}", scheduler_name, index, {"app": f"basic-{index % 20}"})


def mixed_pod(index: int, scheduler_name: str) -> dict[str, Any]:
    """Every fourth pod is plain; the others, in groups, spread over zones, keep off each
    other's nodes, or stay in one zone together."""
    kind = MIXED_KINDS[index % len(MIXED_KINDS)]
    group = f"{kind}-{index // len(MIXED_KINDS) // GROUP_SIZE}"
    manifest = pod(f"mixed-{index:05d}", scheduler_name, index, {"group": group})
    selector = {"matchLabels": {"group": group}}
    spec = manifest["spec"]
    if kind == "spread":
        spec["topologySpreadConstraints"] = [
            spread("topology.kubernetes.io/zone", "DoNotSchedule", selector),
            spread("kubernetes.io/hostname", "ScheduleAnyway", selector),
        ]
    elif kind == "anti-affinity":
        term = {"labelSelector": selector, "topologyKey": "kubernetes.io/hostname"}
        spec["affinity"] = {
            "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
        }
    elif kind == "affinity":
        zone_term = {"labelSelector": selector, "topologyKey": "topology.kubernetes.io/zone"}
        host_term = {"labelSelector": selector, "topologyKey": "kubernetes.io/hostname"}
        spec["affinity"] = {
            "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [zone_term]},
            "podAntiAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 50, "podAffinityTerm": host_term}
                ]
            },
        }
    return manifest


def spread(topology_key: str, when_unsatisfiable: str, selector: dict[str, Any]) -> dict[str, Any]:
    return {
        "maxSkew": 1,
        "topologyKey": topology_key,
        "whenUnsatisfiable": when_unsatisfiable,
        "labelSelector": selector,
    }


def pod(name: str, scheduler_name: str, index: int, labels: dict[str, str]) -> dict[str, Any]:
    cpu, memory = REQUESTS[index % len(REQUESTS)]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "schedulerName": scheduler_name,
            "terminationGracePeriodSeconds": 0,
            "containers": [
                {
                    "name": "app",
                    "image": PAUSE_IMAGE,
                    "resources": {"requests": {"cpu": cpu, "memory": memory}},
                }
            ],
        },
    }
