"""The DRA workloads of the benchmark (upstream's scheduler_perf ones): each fills every
node's devices, in simulate as on a cluster, and one pod more finds none."""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks import dra
from benchmarks.simulated import simulate_throughput, state


@pytest.mark.parametrize("workload", sorted(dra.WORKLOADS))
def test_each_dra_workload_fills_the_nodes_devices(workload: str) -> None:
    nodes = 4
    filled = simulate_throughput(nodes, workload, dra.pods_for(nodes))
    assert filled.placed == filled.pods == nodes * dra.DEVICES_PER_NODE


@pytest.mark.parametrize("workload", ["dra-template", "dra-partitionable", "dra-prioritized"])
def test_a_pod_more_than_the_devices_stays_pending(workload: str) -> None:
    over = simulate_throughput(2, workload, dra.pods_for(2) + 1)
    assert over.placed == over.pods - 1


def test_five_pods_share_each_claim() -> None:
    objects = state(2, "dra-claim", 12)
    claims = [o for o in objects if o.get("kind") == "ResourceClaim"]
    pods = [o for o in objects if o.get("kind") == "Pod"]
    assert [c["metadata"]["name"] for c in claims] == [
        "test-claim-0",
        "test-claim-1",
        "test-claim-2",
    ]
    used = [p["spec"]["resourceClaims"][0]["resourceClaimName"] for p in pods]
    assert used.count("test-claim-0") == 5
    assert used[-1] == "test-claim-2"


def test_claims_are_counted_and_a_device_in_two_allocations_is_found() -> None:
    def claim(*devices: str, share: str = "") -> dict[str, Any]:
        results = [
            {"driver": "d", "pool": "p", "device": device, **({"shareID": share} if share else {})}
            for device in devices
        ]
        return {"status": {"allocation": {"devices": {"results": results}}}}

    assert dra.check_claims([claim("a"), claim("b"), {"status": {}}]) == dra.ClaimsCheck(3, 2, 0)
    assert dra.check_claims([claim("a"), claim("a", "b")]).devices_twice == 1
    assert dra.check_claims([claim("a", share="1"), claim("a", share="2")]).devices_twice == 0
