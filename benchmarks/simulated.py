"""`scheduler-runtime simulate`: in-process, the cost of the scheduling algorithm alone; end
to end, the command as a user runs it on a state file of a large cluster."""

from __future__ import annotations

import gc
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson
import yaml

from benchmarks import dra, workloads
from benchmarks.report import MIB, EndToEndSimulation, Simulation
from benchmarks.stats import percentile
from scheduler_runtime.config import load_configuration
from scheduler_runtime.live.run import HeapKeeper
from scheduler_runtime.simulate import Simulation as Simulator

SCHEDULER_NAME = "bench-simulate"
NAMESPACE = "bench"
CREATED = "2026-01-01T00:00:00Z"


def state(nodes: int, workload: str, pods: int) -> list[dict[str, Any]]:
    """The benchmark's nodes and a workload's pending pods, as a state file would hold them;
    for a DRA workload also its DeviceClasses, every node's ResourceSlices and the claims or
    templates its pods name."""
    pending = workloads.pods(workload, pods, SCHEDULER_NAME)
    for pod in pending:
        pod["metadata"] |= {"namespace": NAMESPACE, "creationTimestamp": CREATED}
    objects = [workloads.node(index) for index in range(nodes)]
    if workloads.is_dra(workload):
        made = dra.WORKLOADS[workload]
        objects += made.classes
        objects += [s for i in range(nodes) for s in made.slices(workloads.node_name(i))]
        for obj in made.namespaced(pods):
            obj["metadata"]["namespace"] = NAMESPACE
            objects.append(obj)
    return [*objects, *pending]


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


def state_file(directory: Path, nodes: int, pods: int, state_format: str) -> Path:
    """A state as `kubectl get nodes,pods -A -o yaml` (or `-o json`) prints it: one v1 List,
    block-style YAML or JSON indented as kubectl indents it."""
    document = {
        "apiVersion": "v1",
        "items": state(nodes, "basic", pods),
        "kind": "List",
        "metadata": {"resourceVersion": ""},
    }
    path = directory / f"state-{nodes}-{pods}.{state_format}"
    if state_format == "json":
        path.write_bytes(orjson.dumps(document, option=orjson.OPT_INDENT_2))
    else:
        dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
        with path.open("w") as out:
            yaml.dump(document, out, Dumper=dumper, default_flow_style=False)
    return path


def high_water_kib(pid: int) -> int:
    """VmHWM of a running process (0 once it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def simulate_end_to_end(
    nodes: int, pods: int, state_format: str = "yaml", output: str = "table", seed: int = 1
) -> EndToEndSimulation:
    """`scheduler-runtime simulate` as a process, from its start to its exit: interpreter
    start, reading the configuration and the state file, the pods placed, the output
    written (to /dev/null, counted for the table)."""
    with tempfile.TemporaryDirectory(prefix="scheduler-simulate-") as workdir:
        directory = Path(workdir)
        config = directory / "config.yaml"
        config.write_text(
            yaml.safe_dump(
                {
                    "apiVersion": "kubescheduler.config.k8s.io/v1",
                    "kind": "KubeSchedulerConfiguration",
                    "profiles": [{"schedulerName": SCHEDULER_NAME}],
                }
            )
        )
        state_path = state_file(directory, nodes, pods, state_format)
        command = [
            str(Path(sys.executable).parent / "scheduler-runtime"),
            "simulate",
            "--config",
            str(config),
            "--state",
            str(state_path),
            "--seed",
            str(seed),
            "-o",
            output,
        ]
        printed = directory / "out.txt"
        with printed.open("wb") as out, (directory / "err.txt").open("wb") as err:
            started = time.perf_counter()
            process = subprocess.Popen(command, stdout=out, stderr=err)
            peak_kib = 0
            while process.poll() is None:
                # The child's own high-water mark (its rusage would count the fork of this
                # process, which holds the whole state it just wrote).
                peak_kib = max(peak_kib, high_water_kib(process.pid))
                time.sleep(0.01)
            seconds = time.perf_counter() - started
        if process.returncode != 0:
            error = (directory / "err.txt").read_text()[-2000:]
            raise RuntimeError(f"simulate failed ({process.returncode}): {error}")
        placed = None
        if output == "table":
            rows = printed.read_text().splitlines()[1:]
            placed = sum(1 for row in rows if row.split()[2:3] != ["<none>"])
        return EndToEndSimulation(
            nodes=nodes,
            pods=pods,
            state_format=state_format,
            output=output,
            state_mib=state_path.stat().st_size / MIB,
            placed=placed,
            seconds=seconds,
            peak_rss_mib=peak_kib / 1024 if peak_kib else None,
        )
