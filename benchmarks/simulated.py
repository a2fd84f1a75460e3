"""`scheduler-runtime simulate` in-process: the cost of the scheduling algorithm alone."""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from benchmarks import workloads
from benchmarks.report import Simulation
from benchmarks.stats import percentile
from scheduler_runtime.config import load_configuration
from scheduler_runtime.live.run import HeapKeeper
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


@contextmanager
def live_heap_policy() -> Iterator[None]:
    """The live runtime's garbage-collection policy (HeapKeeper), so the cycles measured
    pause as the live scheduler's do; the previous policy is restored afterwards."""
    threshold = gc.get_threshold()
    keeper, done = HeapKeeper(), threading.Event()
    keeper.freeze()
    thread = threading.Thread(target=keeper.run, args=(done,), daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
        gc.unfreeze()
        gc.set_threshold(*threshold)


def simulate_throughput(nodes: int, workload: str, pods: int, seed: int = 1) -> Simulation:
    """Times each pod's scheduling cycle, after the snapshot is loaded (loading is not timed):
    the throughput and the cycle latencies of the algorithm alone, on an otherwise idle
    process."""
    config = load_configuration(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": SCHEDULER_NAME}],
        }
    )
    simulator = Simulator(config, seed)
    simulator.load(state(nodes, workload, pods))
    cycles: list[float] = []
    with live_heap_policy():
        while True:
            started = time.perf_counter()
            if not simulator.step():
                break
            cycles.append(time.perf_counter() - started)
    placed = sum(1 for placement in simulator.placements.values() if placement.node)
    return Simulation(
        nodes=nodes,
        workload=workload,
        pods=pods,
        placed=placed,
        seconds=sum(cycles),
        cycle_p50_ms=percentile(cycles, 0.5) * 1000 if cycles else None,
        cycle_p99_ms=percentile(cycles, 0.99) * 1000 if cycles else None,
    )
