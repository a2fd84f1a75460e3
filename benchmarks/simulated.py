"""`scheduler-runtime simulate` in-process: the cost of the scheduling algorithm alone."""

from __future__ import annotations

import time
from typing import Any

from benchmarks import workloads
from benchmarks.report import Simulation
from scheduler_runtime.config import load_configuration
from scheduler_runtime.simulate import Simulation as Simulator

SCHEDULER_NAME = "bench-simulate"
NAMESPACE = "bench"
CREATED = "2026-01-01T00:00:00Z"


def state(nodes: int, workload: str, pods: int) -> list[dict[str, Any]]:
    """The benchmark's nodes and a workload's pending pods, as a state file would hold them."""
    pending = workloads.pods(workload, pods, SCHEDULER_NAME)
    for pod in pending:
        pod["metadata"] |= {"namespace": NAMESPACE, "creationTimestamp": CREATED}
    return [*(workloads.node(index) for index in range(nodes)), *pending]


def simulate_throughput(nodes: int, workload: str, pods: int, seed: int = 1) -> Simulation:
    """Times the scheduling of every pod, after the snapshot is loaded (loading is not timed)."""
    config = load_configuration(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": SCHEDULER_NAME}],
        }
    )
    simulator = Simulator(config, seed)
    simulator.load(state(nodes, workload, pods))
    started = time.perf_counter()
    placements = simulator.run()
    seconds = time.perf_counter() - started
    placed = sum(1 for placement in placements if placement.node)
    return Simulation(nodes=nodes, workload=workload, pods=pods, placed=placed, seconds=seconds)
