"""The instruction guard: instructions the runtime executes per pod, counted by valgrind
(callgrind) on fixed workloads with a fixed hash seed, so the figure does not move with the
machine's load as wall-clock times do.

Each workload runs in a process of its own under callgrind: a warm-up (the nodes, the first
WARM_UP pods scheduled) and then the measured pods, with a marker call before and after them
(callgrind dumps its counts on entering MARKER), so start-up and warm-up are not counted and
the measured part divided by its pods is the cost of a pod.

The simulate workloads drive `Simulation` (the scheduling sequence with memory in the API
server's place); `live-basic` replays a watch stream through the live scheduler's entry point
(the reflector's event handling) with a Kube that answers every request at once: each pod
added, bound by the scheduler, marked bound and running by the watch, then deleted.

`python -m benchmarks.instructions` prints the table (baseline, now, change); `--baseline`
rewrites benchmarks/instructions.json; `--profile WORKLOAD` prints the top functions."""

from __future__ import annotations

import argparse
import cProfile
import ctypes
import json
import mmap
import os
import platform
import pstats
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from benchmarks import gangs, simulated, workloads
from scheduler_runtime.live.run import HeapKeeper

BASELINE = Path(__file__).with_name("instructions.json")
NODES = 100
# Multiples of the gang size, so gangs split whole.
WARM_UP = 24
MEASURED = 96
# Workloads whose pods are all placed (the measure is the cost of a pod that is scheduled).
SIMULATED = ("basic", "mixed", "dra-claim", "gangs")
LIVE = "live-basic"
WORKLOADS = (*SIMULATED, LIVE)
TOLERANCE = 0.05  # a workload failing the check grew more than this over its baseline
COLLECTED = re.compile(r"Collected\s*:\s*(\d+)")


# ----- what runs under the counter


def _objects(workload: str, nodes: int, pods: int) -> tuple[list[Any], list[Any], list[Any]]:
    """(setup objects, warm-up pods and their objects, measured pods and their objects)."""
    if workload == "gangs":
        groups, members = gangs.gang_objects(
            gangs.GANGS, pods, simulated.SCHEDULER_NAME, workloads.PAUSE_IMAGE
        )
        groups = [g for g in groups if g["metadata"]["name"] != gangs.STUCK]
        members = [m for m in members if m["metadata"]["labels"]["gang"] != gangs.STUCK]
        for obj in (*groups, *members):
            obj["metadata"] |= {"namespace": simulated.NAMESPACE, "creationTimestamp": "2026-01-01"}
        setup = [workloads.node(i) for i in range(nodes)]
        warm_groups = WARM_UP // gangs.GANG_SIZE
        return (
            setup,
            [*groups[:warm_groups], *members[:WARM_UP]],
            [*groups[warm_groups:], *members[WARM_UP:]],
        )
    every = simulated.state(nodes, "basic" if workload == LIVE else workload, pods)
    pending = [o for o in every if o.get("kind") == "Pod"]
    claims = [o for o in every if o.get("kind") == "ResourceClaim"]
    setup = [o for o in every if o.get("kind") not in ("Pod", "ResourceClaim")]
    # A pod's claim loads with it (dra-claim: pod i uses claim i).
    return (
        setup,
        [*claims[:WARM_UP], *pending[:WARM_UP]],
        [*claims[WARM_UP:], *pending[WARM_UP:]],
    )


class Callgrind:
    """callgrind's client requests (valgrind/callgrind.h), issued from Python: amd64 machine
    code in an executable page, the special instruction sequence valgrind recognises (outside
    valgrind it does nothing and returns 0)."""

    BASE = (ord("C") << 24) | (ord("T") << 16)
    DUMP_STATS, ZERO_STATS, START_INSTRUMENTATION, STOP_INSTRUMENTATION = (
        BASE,
        BASE + 1,
        BASE + 4,
        BASE + 5,
    )
    # rax = rdi (the request's arguments), rdx = 0 (the default result), the preamble (rdi
    # rotated by 3, 13, 61 and 51 bits: unchanged), xchg rbx,rbx (the request), return rdx.
    CODE = bytes.fromhex("4889f831d248c1c70348c1c70d48c1c73d48c1c7334887db4889d0c3")

    def __init__(self) -> None:
        if platform.machine() != "x86_64":
            raise RuntimeError(f"the instruction counter needs x86_64, not {platform.machine()}")
        self._page = mmap.mmap(
            -1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC
        )
        self._page.write(self.CODE)
        address = ctypes.addressof(ctypes.c_char.from_buffer(self._page))
        self._call = ctypes.CFUNCTYPE(ctypes.c_uint64, ctypes.c_void_p)(address)
        self._args = (ctypes.c_uint64 * 6)()

    def request(self, code: int) -> int:
        self._args[0] = code
        return int(self._call(ctypes.addressof(self._args)))

    def start(self) -> None:
        """Counts from here on (the process runs uncounted until then)."""
        self.request(self.START_INSTRUMENTATION)
        self.request(self.ZERO_STATS)

    def stop(self) -> None:
        """Writes the counts since start() (the run's first dump) and stops counting."""
        self.request(self.DUMP_STATS)
        self.request(self.STOP_INSTRUMENTATION)


def run_simulated(workload: str, state: Path, counter: Callgrind | Profiled) -> int:
    """Schedules the warm-up, then the measured pods between two markers; the pods placed."""
    from scheduler_runtime.config import load_configuration  # noqa: PLC0415
    from scheduler_runtime.config.features import DEFAULTS, parse_feature_gates  # noqa: PLC0415
    from scheduler_runtime.simulate import Simulation  # noqa: PLC0415

    setup, warm, measured = orjson.loads(state.read_bytes())
    gates = parse_feature_gates(gangs.GANG_GATES, "1.36") if workload == "gangs" else DEFAULTS
    config = load_configuration(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": simulated.SCHEDULER_NAME}],
        },
        feature_gates=gates,
    )
    simulation = Simulation(config, seed=1, explaining=False)
    simulation.load([*setup, *warm])
    while simulation.step():
        pass
    # As the live runtime keeps its heap (HeapKeeper): the warm-up's objects frozen, no full
    # collection, so where a collection falls cannot move the count by several percent.
    HeapKeeper().freeze()
    counter.start()
    simulation.load(measured)
    while simulation.step():
        pass
    counter.stop()
    return sum(1 for placement in simulation.placements.values() if placement.node)


class Profiled:
    """cProfile over the measured part, in place of the counter (its call counts are as
    deterministic as the instructions; they name the Python functions callgrind cannot)."""

    def __init__(self) -> None:
        self.profile = cProfile.Profile()

    def start(self) -> None:
        self.profile.enable()

    def stop(self) -> None:
        self.profile.disable()


def run(workload: str, state: Path, counter: Callgrind | Profiled | None = None) -> int:
    counter = counter or Callgrind()
    if workload == LIVE:
        from benchmarks.instructions_live import run_live  # noqa: PLC0415

        return run_live(state, counter)
    return run_simulated(workload, state, counter)


# ----- the counter


@dataclass(frozen=True)
class Count:
    workload: str
    pods: int
    instructions: int  # of the measured part

    @property
    def per_pod(self) -> int:
        return round(self.instructions / self.pods)


def tool_versions() -> dict[str, str]:
    """The Python minor and valgrind major.minor a count holds for."""
    found = subprocess.run(["valgrind", "--version"], capture_output=True, text=True, check=True)
    valgrind = found.stdout.strip().removeprefix("valgrind-")
    return {"python": ".".join(platform.python_version_tuple()[:2]), "valgrind": valgrind}


def _state_file(directory: Path, workload: str) -> Path:
    objects = _objects(workload, NODES, WARM_UP + MEASURED)
    path = directory / f"{workload}.json"
    path.write_bytes(orjson.dumps(objects))
    return path


def count(workload: str, directory: Path, keep: bool = False) -> Count:
    """One workload under callgrind: its measured part's instructions."""
    state = _state_file(directory, workload)
    out = directory / f"callgrind.{workload}"
    command = [
        "valgrind",
        "--tool=callgrind",
        f"--callgrind-out-file={out}",
        "--instr-atstart=no",
        "--dump-instr=no",
        sys.executable,
        "-m",
        "benchmarks.instructions",
        "--run",
        workload,
        str(state),
    ]
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{workload}: exited {done.returncode}: {done.stderr[-3000:]}")
    placed = int(done.stdout.split()[-1])
    if placed != WARM_UP + MEASURED:
        raise RuntimeError(f"{workload}: {placed} pods placed, expected {WARM_UP + MEASURED}")
    measured = _measured(out)
    if not measured.exists():
        raise RuntimeError(f"{workload}: callgrind wrote no dump of the measured part")
    instructions = _total(measured)
    if not keep:
        measured.unlink()
        out.unlink(missing_ok=True)
    return Count(workload, MEASURED, instructions)


def _measured(out: Path) -> Path:
    """The dump Callgrind.stop() asked for (the one at exit holds what ran after it)."""
    return out.with_name(out.name + ".1")


def _total(dump: Path) -> int:
    for line in dump.read_text().splitlines():
        if line.startswith("summary:"):
            return int(line.split()[1])
    raise RuntimeError(f"{dump}: no summary line")


def measure(names: Sequence[str], jobs: int = 2) -> dict[str, int]:
    """Instructions per pod of each workload (run `jobs` at once)."""
    with (
        tempfile.TemporaryDirectory(prefix="instructions-") as workdir,
        ThreadPoolExecutor(jobs) as pool,
    ):
        counts = list(pool.map(lambda name: count(name, Path(workdir)), names))
    return {c.workload: c.per_pod for c in counts}


# ----- the baseline and the check


class BaselineMismatchError(RuntimeError):
    """The baseline was measured with another Python minor or valgrind major."""


def load_baseline(path: Path = BASELINE) -> dict[str, Any]:
    return dict(json.loads(path.read_text()))


def write_baseline(per_pod: Mapping[str, int], path: Path = BASELINE) -> None:
    document = {
        "about": "instructions per pod (callgrind Ir, PYTHONHASHSEED=0): make instructions",
        "nodes": NODES,
        "pods": MEASURED,
        **tool_versions(),
        "workloads": dict(per_pod),
    }
    path.write_text(json.dumps(document, indent=2) + "\n")


def check_versions(baseline: Mapping[str, Any], now: Mapping[str, str]) -> None:
    """Counts compare only under the Python minor and valgrind major they were taken with."""
    then_valgrind = str(baseline.get("valgrind", "")).split(".")[0]
    if baseline.get("python") != now["python"] or then_valgrind != now["valgrind"].split(".")[0]:
        raise BaselineMismatchError(
            f"benchmarks/instructions.json was measured with Python {baseline.get('python')} "
            f"and valgrind {baseline.get('valgrind')}; this is Python {now['python']} and "
            f"valgrind {now['valgrind']}, whose counts differ: run `make instructions-baseline` "
            "on main with these versions and commit the file"
        )


def regressions(baseline: Mapping[str, int], now: Mapping[str, int]) -> list[str]:
    """The workloads grown more than TOLERANCE over their baseline, each said in a line."""
    grown = []
    for name, then in baseline.items():
        if name in now and now[name] > then * (1 + TOLERANCE):
            grown.append(
                f"{name}: {now[name]} instructions per pod, {change(then, now[name])} over "
                f"the baseline's {then} (more than {TOLERANCE:.0%})"
            )
    return grown


def change(then: int, now: int) -> str:
    return f"{(now - then) / then:+.1%}"


def table(baseline: Mapping[str, int], now: Mapping[str, int]) -> str:
    rows = [("workload", "baseline", "now", "change")]
    for name, value in now.items():
        then = baseline.get(name)
        rows.append(
            (
                name,
                str(then) if then else "-",
                str(value),
                change(then, value) if then else "-",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    return "\n".join(
        "  ".join(
            cell.ljust(w) if i == 0 else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        )
        for row in rows
    )


def profile(workload: str, top: int) -> str:
    """The workload's measured part: callgrind_annotate's top (C) functions by instructions,
    then cProfile's top Python functions by their own time, with calls per pod."""
    with tempfile.TemporaryDirectory(prefix="instructions-") as workdir:
        directory = Path(workdir)
        counted = count(workload, directory, keep=True)
        done = subprocess.run(
            [
                "callgrind_annotate",
                "--threshold=100",
                str(_measured(directory / f"callgrind.{workload}")),
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        profiled = Profiled()
        run(workload, _state_file(directory, workload), profiled)
    lines = done.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if "file:function" in line) + 2
    out = [f"{workload}: {counted.per_pod} instructions per pod; top C functions:"]
    out += [line[:160] for line in lines[start : start + top]]
    stats = pstats.Stats(profiled.profile)
    rows = sorted(stats.stats.items(), key=lambda item: item[1][2], reverse=True)  # type: ignore[attr-defined]
    out.append(f"top Python functions (own time), calls per pod ({MEASURED} pods):")
    for (path, line, name), (_, calls, own, cumulative, _) in rows[:top]:
        where = f"{Path(path).name}:{line}({name})"
        out.append(f"{calls / MEASURED:10.1f} {own:8.3f}s {cumulative:8.3f}s  {where}")
    return "\n".join(out)


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.instructions")
    parser.add_argument("--run", nargs=2, metavar=("WORKLOAD", "STATE"), help=argparse.SUPPRESS)
    parser.add_argument("--baseline", action="store_true", help="rewrite the baseline")
    parser.add_argument("--profile", metavar="WORKLOAD", help="top functions of a workload")
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--repeat", type=int, default=1, help="runs per workload (spread)")
    parser.add_argument("workloads", nargs="*", default=list(WORKLOADS))
    args = parser.parse_args(list(argv) if argv is not None else None)
    if args.run:
        print(run(args.run[0], Path(args.run[1])))
        return 0
    if args.profile:
        print(profile(args.profile, args.top))
        return 0
    if args.repeat > 1:
        for _ in range(args.repeat):
            print(measure(args.workloads), flush=True)
        return 0
    now = measure(args.workloads)
    if args.baseline:
        write_baseline(now)
        print(table({}, now))
        return 0
    baseline = load_baseline()
    check_versions(baseline, tool_versions())
    print(table(baseline["workloads"], now))
    grown = regressions(baseline["workloads"], now)
    for line in grown:
        print(line, file=sys.stderr)
    return 1 if grown else 0


if __name__ == "__main__":
    raise SystemExit(main())
