"""`python -m benchmarks`: the upstream kube-scheduler and this runtime, side by side on the
local control plane (tools/cluster.sh up bench, deleted afterwards unless --keep-cluster),
plus the API server's binding ceiling and `simulate`, in-process and end to end. Prints tables
and writes JSON (see docs/benchmarks.md)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime
import itertools
import os
import platform
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp

from benchmarks import docs, dra, workloads
from benchmarks.gangs import (
    GANG_GATES,
    GANG_SIZE,
    GANG_WORKLOADS,
    POD_GROUPS_PATH,
    WORKLOAD_CLUSTER_FLAGS,
    gang_objects,
    gang_timeline,
)
from benchmarks.kube import Api, ApiError, Endpoint, gather_all
from benchmarks.measure import (
    UNBOUND,
    Binding,
    bind_as_created,
    binding_ceiling,
    claims_check,
    create_dra_objects,
    create_namespace,
    create_namespaced,
    failure_messages,
    pods_path,
    remove_dra_objects,
    remove_leftovers,
    remove_namespace,
    run_pods,
    wait_default_service_account,
)
from benchmarks.nodes import ensure_nodes
from benchmarks.processes import control_plane_meter
from benchmarks.profile import Profile, hot_spots, recording
from benchmarks.report import (
    MIB,
    Ceiling,
    GangRun,
    Machine,
    Report,
    Scale,
    SchedulerRun,
    render,
    tried_again,
)
from benchmarks.schedulers import (
    ALGORITHM_HISTOGRAM,
    ATTEMPT_HISTOGRAM,
    BINDER,
    CLIENT_QPS,
    PYTHON,
    SCHEDULER_NAMES,
    SCHEDULERS,
    SchedulerFailedError,
    SchedulerProcess,
)
from benchmarks.simulated import simulate_end_to_end, simulate_throughput
from benchmarks.stats import (
    counter_by_label,
    histogram_buckets,
    histogram_quantile,
    percentile,
    share_beyond_finite_buckets,
)
from benchmarks.tools import REPO, cluster_tool, kubernetes_version
from scheduler_runtime.framework.registry import PluginLoadError
from scheduler_runtime.framework.runtime import FrameworkError

SCALES = {"quick": (100, 300), "500": (500, 2000), "5000": (5000, 10000)}
GROUP_CYCLES = "scheduler_podgroup_schedule_attempts_total"
DEFAULT_OUTPUT = REPO / "benchmarks" / "results" / "latest.json"


@dataclass(frozen=True)
class ScaleSpec:
    """One scale of a run: nodes, pods per scheduler and workload, and which workloads."""

    nodes: int
    pods: int
    workloads: tuple[str, ...]


def scale_spec(text: str, default_workloads: Sequence[str]) -> ScaleSpec:
    """NAME or NAME:WORKLOAD[,WORKLOAD...], e.g. `5000:basic`."""
    name, _, listed = text.partition(":")
    if name not in SCALES:
        raise ValueError(f"--scale {text!r}: unknown scale {name!r}; one of {', '.join(SCALES)}")
    chosen = tuple(w for w in listed.split(",") if w) or tuple(default_workloads)
    unknown = [w for w in chosen if w not in workloads.WORKLOADS]
    if unknown:
        raise ValueError(
            f"--scale {text!r}: unknown workload {unknown[0]!r}; "
            f"one of {', '.join(workloads.WORKLOADS)}"
        )
    return ScaleSpec(*SCALES[name], workloads=chosen)


@dataclass(frozen=True)
class Settings:
    """What one benchmark run covers and where it runs."""

    scales: Sequence[ScaleSpec]
    schedulers: Sequence[str]
    ceiling: bool
    kubeconfig: Path
    bin_dir: Path
    workdir: Path
    stall_seconds: float
    profile_dir: Path | None
    run_seconds: float = 0  # a scheduler run's cap; 0: none
    repeat: int = 1
    steady_rate: float = 0.0  # pods/s of the latency runs; 0 skips them
    steady_pods: int = 0
    gangs: bool = True  # the gang workloads, after the others
    gang_idle_seconds: float = 15.0  # watched after the last binding while gangs wait


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument(
        "--scale",
        action="append",
        metavar="NAME[:WORKLOADS]",
        help="nodes/pods: quick 100/300, 500 500/2000, 5000 5000/10000, optionally with its "
        "own comma-separated workloads, e.g. 5000:basic (repeatable; default 500)",
    )
    parser.add_argument("--quick", action="store_true", help="--scale quick, simulate 500 nodes")
    parser.add_argument(
        "--workload", action="append", choices=workloads.WORKLOADS, help="default: both"
    )
    parser.add_argument("--scheduler", action="append", choices=SCHEDULERS, help="default: both")
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        metavar="N",
        help="rounds of every run, alternating the schedulers; the median round is reported",
    )
    parser.add_argument(
        "--no-ceiling", action="store_true", help="skip the binding ceiling and the binder"
    )
    parser.add_argument(
        "--steady-rate",
        type=float,
        default=20.0,
        metavar="PODS_PER_S",
        help="latency runs (basic workload) with pods created at this steady rate; 0 skips them",
    )
    parser.add_argument("--steady-pods", type=int, default=600, help="pods per latency run")
    parser.add_argument(
        "--no-gangs",
        action="store_true",
        help="skip the gang workloads (gangs of 8 placed behind one that fits nowhere, and gangs "
        "of which about half fit)",
    )
    parser.add_argument(
        "--gangs-only",
        action="store_true",
        help="only the gang workloads (no ceiling, binder, simulate, other workloads or "
        "steady runs)",
    )
    parser.add_argument(
        "--gang-idle-seconds",
        type=float,
        default=15.0,
        help="how long a gang run watches after its last binding, while the gangs that do not "
        "fit wait (the CPU each scheduler uses meanwhile)",
    )
    parser.add_argument("--simulate-nodes", type=int, default=5000, help="0 skips simulate")
    parser.add_argument(
        "--simulate-pods", type=int, default=10000, help="default: the 5000 scale's 10000"
    )
    parser.add_argument(
        "--simulate-e2e-nodes",
        type=int,
        default=5000,
        help="`scheduler-runtime simulate` as a process on a state file of this many nodes "
        "(YAML and JSON); 0 skips it",
    )
    parser.add_argument(
        "--simulate-e2e-pods", type=int, default=2000, help="pending pods in that state file"
    )
    parser.add_argument(
        "--simulate-only",
        action="store_true",
        help="only the simulate figures: no cluster, no scheduler runs",
    )
    parser.add_argument("--cluster", default="bench", help="local cluster name (tools/cluster.sh)")
    parser.add_argument(
        "--keep-cluster",
        action="store_true",
        help="leave the benchmark's cluster running afterwards (default: delete it)",
    )
    parser.add_argument(
        "--stall-seconds",
        type=float,
        default=60,
        help="give up on a run after this long without a new binding",
    )
    parser.add_argument(
        "--run-seconds",
        type=float,
        default=0,
        help="give up on a scheduler run this long after its first pod was created "
        "(the report shows what was bound by then; default: no limit)",
    )
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="JSON results file")
    parser.add_argument("--docs", type=Path, help="Markdown file whose results section to rewrite")
    parser.add_argument(
        "--profile",
        type=Path,
        metavar="DIR",
        help="sample the runtime with py-spy during its runs; stacks go to DIR",
    )
    parser.add_argument("--note", default="", help="about the machine, e.g. 'shared with builds'")
    args = parser.parse_args(argv)
    if args.quick:
        args.scale = [*(args.scale or []), "quick"]
        args.simulate_nodes = min(args.simulate_nodes, 500)
        args.simulate_pods = min(args.simulate_pods, 300)
        args.simulate_e2e_nodes = min(args.simulate_e2e_nodes, 500)
        args.simulate_e2e_pods = min(args.simulate_e2e_pods, 300)
        args.steady_pods = min(args.steady_pods, 100)
    for name, value in (
        ("--simulate-nodes", args.simulate_nodes),
        ("--simulate-pods", args.simulate_pods),
        ("--simulate-e2e-nodes", args.simulate_e2e_nodes),
        ("--simulate-e2e-pods", args.simulate_e2e_pods),
        ("--steady-rate", args.steady_rate),
        ("--steady-pods", args.steady_pods),
    ):
        if value < 0:
            parser.error(f"{name} must not be negative, got {value}")
    if args.repeat < 1:
        parser.error(f"--repeat must be at least 1, got {args.repeat}")
    if args.gangs_only:
        if args.no_gangs:
            parser.error("--gangs-only and --no-gangs exclude each other")
        args.no_ceiling, args.steady_rate, args.workload = True, 0.0, []
        args.simulate_nodes = args.simulate_e2e_nodes = 0
    try:
        chosen = args.workload if args.workload is not None else workloads.WORKLOADS
        args.scales = [scale_spec(text, chosen) for text in dict.fromkeys(args.scale or ["500"])]
    except ValueError as error:
        parser.error(str(error))
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    report = Report(
        date=datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        kubernetes_version=kubernetes_version(),
        client_qps=CLIENT_QPS,
        commit=source_commit(),
        machine=machine(args.note),
        profiled=args.profile is not None,
    )
    # First, while no cluster competes for the CPUs.
    if args.simulate_nodes and args.simulate_pods:
        run_simulations(args, report)
    if args.simulate_e2e_nodes and args.simulate_e2e_pods:
        run_end_to_end_simulations(args, report)
    if not args.simulate_only:
        try:
            with tempfile.TemporaryDirectory(prefix="scheduler-bench-") as workdir:
                settings = cluster_settings(args, Path(workdir))
                asyncio.run(run_scales(settings, report))
        except (ApiError, aiohttp.ClientError, OSError, RuntimeError, TimeoutError) as error:
            # What was measured before the failure is still written, with the reason.
            report.notes.append(f"stopped early: {error}")
            write(report, args.output, args.docs)
            print(f"benchmark: {error}", file=sys.stderr)
            return 1
        finally:
            tear_down(args)
    write(report, args.output, args.docs)
    print(render(report))
    return 0


def tear_down(args: argparse.Namespace) -> None:
    """Deletes the benchmark's cluster unless --keep-cluster asks to keep it for the next
    run; a failure to delete it is said, not fatal."""
    if args.keep_cluster:
        progress(f"cluster {args.cluster} kept (tools/cluster.sh down {args.cluster} removes it)")
        return
    progress(f"deleting cluster {args.cluster}")
    try:
        cluster_tool("down", args.cluster)
    except RuntimeError as error:
        print(f"benchmark: cluster {args.cluster} not deleted: {error}", file=sys.stderr)


def cluster_settings(args: argparse.Namespace, workdir: Path) -> Settings:
    """Starts (or reuses) the benchmark's own cluster, without API server inflight limits."""
    kubeconfig = Path(
        cluster_tool("up", args.cluster, "--disable-qps-limits", *WORKLOAD_CLUSTER_FLAGS)
    )
    return Settings(
        scales=args.scales,
        schedulers=args.scheduler or SCHEDULERS,
        ceiling=not args.no_ceiling,
        kubeconfig=kubeconfig,
        bin_dir=Path(cluster_tool("bin").splitlines()[0]),
        workdir=workdir,
        stall_seconds=args.stall_seconds,
        run_seconds=args.run_seconds,
        profile_dir=args.profile,
        repeat=args.repeat,
        steady_rate=args.steady_rate,
        steady_pods=args.steady_pods,
        gangs=not args.no_gangs,
        gang_idle_seconds=args.gang_idle_seconds,
    )


async def run_scales(settings: Settings, report: Report) -> None:
    async with Api.open(Endpoint.from_kubeconfig(settings.kubeconfig)) as api:
        await remove_leftovers(api)
        for spec in settings.scales:
            scale = Scale(nodes=spec.nodes, pods=spec.pods)
            report.scales.append(scale)
            await run_scale(api, settings, scale, spec.workloads)


async def run_scale(
    api: Api, settings: Settings, scale: Scale, workload_names: Sequence[str]
) -> None:
    """Fills in `scale` run by run, so a failure keeps what came before it."""
    nodes, pods = scale.nodes, scale.pods
    progress(f"{nodes} nodes: creating and waiting until Ready")
    await ensure_nodes(api, nodes)
    if settings.ceiling:
        progress(f"{nodes} nodes: binding ceiling, {pods} bindings")
        scale.ceiling = await measure_ceiling(api, nodes, pods)
    for workload in workload_names:
        if workloads.is_dra(workload):
            progress(f"{nodes} nodes: {workload}'s DeviceClasses and ResourceSlices")
            node_names = [workloads.node_name(index) for index in range(nodes)]
            await create_dra_objects(api, dra.WORKLOADS[workload], node_names)
        try:
            for round_number in range(settings.repeat):
                await run_round(api, settings, scale, workload, round_number)
        finally:
            if workloads.is_dra(workload):
                await remove_dra_objects(api)
    if settings.gangs:
        await run_gangs(api, settings, scale)
    if settings.steady_rate and settings.steady_pods:
        await run_steady(api, settings, scale)


async def run_round(
    api: Api, settings: Settings, scale: Scale, workload: str, round_number: int
) -> None:
    """Each scheduler once on the workload (and the binder, but on DRA workloads: binding
    pods whose claims nobody allocates says nothing)."""
    nodes = scale.nodes
    pods = dra.pods_for(nodes) if workloads.is_dra(workload) else scale.pods
    of = f" (round {round_number + 1}/{settings.repeat})" if settings.repeat > 1 else ""
    if settings.ceiling and not workloads.is_dra(workload):
        progress(f"{nodes} nodes: no-algorithm binder, {pods} {workload} pods{of}")
        scale.runs.append(await run_binder(api, settings, workload, nodes=nodes, pods=pods))
    for label in settings.schedulers:
        progress(f"{nodes} nodes: {label} scheduler, {pods} {workload} pods{of}")
        try:
            run, profile = await run_scheduler(
                api, settings, label, workload, nodes=nodes, pods=pods
            )
        except SchedulerFailedError as error:
            progress(f"failed: {error}")
            scale.failures.append(f"{label} on {workload}: {error}")
            continue
        scale.runs.append(run)
        scale.profiles += [profile] if profile else []


async def run_gangs(api: Api, settings: Settings, scale: Scale) -> None:
    """Each scheduler on gangs that all fit, then on gangs of which only about half do."""
    for workload, label in itertools.product(GANG_WORKLOADS, settings.schedulers):
        gangs = scale.pods // GANG_SIZE
        progress(
            f"{scale.nodes} nodes: {label} scheduler, {gangs} gangs of {GANG_SIZE} ({workload})"
        )
        try:
            scale.gangs.append(
                await run_gang_scheduler(
                    api, settings, label, workload, nodes=scale.nodes, pods=scale.pods
                )
            )
        except SchedulerFailedError as error:
            progress(f"failed: {error}")
            scale.failures.append(f"{label} on {workload}: {error}")


async def run_gang_scheduler(
    api: Api, settings: Settings, label: str, workload: str, *, nodes: int, pods: int
) -> GangRun:
    """A fresh scheduler with the gang gates; the PodGroups first, then every pod at once.
    When not every gang fits, the run watches on for a while after its last binding."""
    namespace = unique_namespace(f"bench-{label}-{workload}-{nodes}")
    process = SchedulerProcess.for_scheduler(
        label, settings.workdir, settings.kubeconfig, settings.bin_dir, gates=GANG_GATES
    )
    groups, manifests = gang_objects(workload, pods, SCHEDULER_NAMES[label], workloads.PAUSE_IMAGE)
    await create_namespace(api, namespace)
    process.start()
    samples: list[tuple[float, float]] = []
    sampler = asyncio.create_task(sample_cpu(process, samples))
    try:
        await process.wait_ready()
        await wait_default_service_account(api, namespace)
        path = POD_GROUPS_PATH.format(namespace=namespace)
        await gather_all(api.post(path, group) for group in groups)
        cpu_before = process.cpu_seconds()
        control_plane = control_plane_meter(settings.kubeconfig)
        # Some gangs never fit (the stuck one in GANGS, about half in GANGS_HALF): the run
        # watches on for a while after its last binding.
        binding = await run_pods(api, namespace, manifests, settings.gang_idle_seconds)
        end = time.monotonic()
        process.check_running()
        metrics = await process.metrics()
        pending = (await api.get(f"{pods_path(namespace)}?{UNBOUND}"))["items"]
        peak_rss = process.peak_rss_bytes()
        cpu_seconds = process.cpu_seconds() - cpu_before
        plane_seconds = control_plane()
    finally:
        sampler.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await sampler
        process.stop()
        await remove_namespace(api, namespace)
    last_binding = max(binding.bound_at.values(), default=end)
    timeline = gang_timeline(binding.created_at, binding.bound_at, end)
    completions = [seconds * 1000 for seconds in timeline.completions]
    return GangRun(
        scheduler=label,
        workload=workload,
        gangs=len(groups),
        gang_size=GANG_SIZE,
        pods=binding.pods,
        bound=binding.bound,
        bound_seconds=binding.bound_seconds,
        gangs_placed=timeline.placed,
        partial_at_end=timeline.partial_at_end,
        longest_partial_ms=timeline.longest_partial * 1000,
        reserved_at_end=sum(1 for pod in pending if pod["status"].get("nominatedNodeName")),
        completion_p50_ms=percentile(completions, 0.5) if completions else None,
        completion_p99_ms=percentile(completions, 0.99) if completions else None,
        cpu_seconds=cpu_seconds,
        control_plane_cpu_seconds=plane_seconds,
        idle_seconds=end - last_binding,
        idle_cpu_seconds=cpu_between(samples, last_binding, end),
        group_cycles=counter_total(metrics, GROUP_CYCLES),
        peak_rss_mib=peak_rss / MIB,
    )


async def sample_cpu(process: SchedulerProcess, samples: list[tuple[float, float]]) -> None:
    """(time, CPU seconds) of the process twice a second, until cancelled."""
    while True:
        with contextlib.suppress(OSError, RuntimeError):
            samples.append((time.monotonic(), process.cpu_seconds()))
        await asyncio.sleep(0.5)


def cpu_between(samples: Sequence[tuple[float, float]], start: float, end: float) -> float | None:
    """CPU seconds used between the first sample at or after `start` and the last at or
    before `end` (None without two such samples)."""
    within = [cpu for at, cpu in samples if start <= at <= end]
    return within[-1] - within[0] if len(within) >= 2 else None


def counter_total(metrics_text: str, name: str) -> int | None:
    """A counter's total over all its label sets (None when the page has none)."""
    values = [
        float(line.rsplit(" ", 1)[1])
        for line in metrics_text.splitlines()
        if line.startswith(f"{name}{{") or line.startswith(f"{name} ")
    ]
    return int(sum(values)) if values else None


async def run_steady(api: Api, settings: Settings, scale: Scale) -> None:
    """Each scheduler on basic pods created at a steady rate the API server keeps up with:
    attempt and pod latency without a backlog (throughput runs measure queues too)."""
    for label in settings.schedulers:
        progress(
            f"{scale.nodes} nodes: {label} scheduler, {settings.steady_pods} basic pods "
            f"at {settings.steady_rate:g}/s"
        )
        try:
            run, _ = await run_scheduler(
                api,
                settings,
                label,
                workloads.BASIC,
                nodes=scale.nodes,
                pods=settings.steady_pods,
                rate=settings.steady_rate,
            )
        except SchedulerFailedError as error:
            progress(f"failed: {error}")
            scale.failures.append(f"{label} at a steady rate: {error}")
            continue
        scale.steady.append(run)


async def measure_ceiling(api: Api, nodes: int, pods: int) -> Ceiling:
    namespace = unique_namespace(f"bench-ceiling-{nodes}")
    await create_namespace(api, namespace)
    try:
        names = [workloads.node_name(index) for index in range(nodes)]
        timing = await binding_ceiling(api, namespace, pods, names, qps=CLIENT_QPS)
    finally:
        await remove_namespace(api, namespace)
    return Ceiling(
        bindings=timing.bindings,
        seconds=timing.seconds,
        latency_p50_ms=percentile(timing.latencies, 0.5) * 1000,
        latency_p99_ms=percentile(timing.latencies, 0.99) * 1000,
    )


async def run_binder(
    api: Api, settings: Settings, workload: str, *, nodes: int, pods: int
) -> SchedulerRun:
    """The workload bound by a client with no algorithm: the most a scheduler could reach
    with the pods created as in the other runs and this machine's API server."""
    namespace = unique_namespace(f"bench-{BINDER}-{workload}-{nodes}")
    await create_namespace(api, namespace)
    names = [workloads.node_name(index) for index in range(nodes)]
    binder = asyncio.create_task(bind_as_created(api, namespace, names, qps=CLIENT_QPS))
    try:
        manifests = workloads.pods(workload, pods, SCHEDULER_NAMES[BINDER])
        control_plane = control_plane_meter(settings.kubeconfig)
        binding = await run_pods(api, namespace, manifests)
        plane_seconds = control_plane()
    finally:
        binder.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await binder
        await remove_namespace(api, namespace)
    return timed_run(BINDER, workload, binding, control_plane_cpu_seconds=plane_seconds)


def timed_run(label: str, workload: str, binding: Binding, **figures: Any) -> SchedulerRun:
    """A run's timing from the watch, with whatever else was measured of the scheduler."""
    latencies = binding.pod_latencies
    return SchedulerRun(
        scheduler=label,
        workload=workload,
        pods=binding.pods,
        bound=binding.bound,
        create_seconds=binding.create_seconds,
        bound_seconds=binding.bound_seconds,
        pod_latency_p50_ms=percentile(latencies, 0.5) * 1000 if latencies else None,
        pod_latency_p99_ms=percentile(latencies, 0.99) * 1000 if latencies else None,
        **figures,
    )


async def run_scheduler(
    api: Api,
    settings: Settings,
    label: str,
    workload: str,
    *,
    nodes: int,
    pods: int,
    rate: float | None = None,
) -> tuple[SchedulerRun, Profile | None]:
    """A fresh scheduler process and namespace per run, so figures and peak RSS are its own."""
    namespace = unique_namespace(f"bench-{label}-{workload}-{nodes}")
    process = SchedulerProcess.for_scheduler(
        label, settings.workdir, settings.kubeconfig, settings.bin_dir
    )
    await create_namespace(api, namespace)
    if workloads.is_dra(workload):
        await create_namespaced(api, namespace, dra.WORKLOADS[workload].namespaced(pods))
    process.start()
    try:
        await process.wait_ready()
        cpu_before = process.cpu_seconds()  # start-up and the initial lists do not count
        control_plane = control_plane_meter(settings.kubeconfig)
        manifests = workloads.pods(workload, pods, SCHEDULER_NAMES[label])
        samples = profile_file(settings, label, workload, nodes)
        with recording(process.pid, samples) if samples else contextlib.nullcontext():
            binding = await run_pods(
                api,
                namespace,
                manifests,
                settings.stall_seconds,
                rate=rate,
                run_seconds=settings.run_seconds,
            )
        process.check_running()
        metrics = await process.settled_metrics(attempts=binding.bound)
        buckets = histogram_buckets(metrics, ATTEMPT_HISTOGRAM)
        algorithm = histogram_buckets(metrics, ALGORITHM_HISTOGRAM)
        attempts = counter_by_label(metrics, "scheduler_schedule_attempts_total", "result")
        failed = binding.bound < pods or tried_again(attempts, binding.bound)
        failures = await failure_messages(api, namespace) if failed else []
        peak_rss = process.peak_rss_bytes()
        cpu_seconds = process.cpu_seconds() - cpu_before
        plane_seconds = control_plane()
        claims = await claims_check(api, namespace) if workloads.is_dra(workload) else None
    finally:
        process.stop()
        await remove_namespace(api, namespace)
    run = timed_run(
        label,
        workload,
        binding,
        rate=rate,
        attempt_p50_ms=milliseconds(quantile(0.5, buckets)),
        attempt_p99_ms=milliseconds(quantile(0.99, buckets)),
        attempts_beyond_buckets=share_beyond_finite_buckets(buckets),
        attempt_buckets=buckets,
        algorithm_p50_ms=milliseconds(quantile(0.5, algorithm)),
        algorithm_p99_ms=milliseconds(quantile(0.99, algorithm)),
        algorithm_buckets=algorithm,
        peak_rss_mib=peak_rss / MIB,
        cpu_seconds=cpu_seconds,
        control_plane_cpu_seconds=plane_seconds,
        claims=claims.claims if claims else None,
        claims_allocated=claims.allocated if claims else None,
        devices_allocated_twice=claims.devices_twice if claims else None,
        failure_messages=failures,
        attempts=attempts,
    )
    return run, summarize_profile(samples, workload, nodes) if samples else None


def profile_file(settings: Settings, label: str, workload: str, nodes: int) -> Path | None:
    """Where py-spy writes this run's stacks; only the runtime is profiled."""
    if settings.profile_dir is None or label != PYTHON:
        return None
    settings.profile_dir.mkdir(parents=True, exist_ok=True)
    return settings.profile_dir / f"{label}-{workload}-{nodes}.txt"


def summarize_profile(samples: Path, workload: str, nodes: int) -> Profile:
    collapsed = samples.read_text()
    return Profile(
        workload=workload,
        nodes=nodes,
        samples_file=str(samples),
        by_own=hot_spots(collapsed),
        by_total=hot_spots(collapsed, rank_by="total", path_part="scheduler_runtime"),
    )


def unique_namespace(prefix: str) -> str:
    """A name of its own: the previous run's namespace may still be terminating."""
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


def quantile(q: float, buckets: list[tuple[float, float]]) -> float | None:
    return histogram_quantile(q, buckets) if buckets else None


def milliseconds(seconds: float | None) -> float | None:
    return None if seconds is None else seconds * 1000


def run_simulations(args: argparse.Namespace, report: Report) -> None:
    """Each workload through `simulate`; a runtime that cannot run it is noted, not fatal."""
    for workload in args.workload or workloads.WORKLOADS:
        progress(f"simulate: {args.simulate_nodes} nodes, {args.simulate_pods} {workload} pods")
        try:
            report.simulations.append(
                simulate_throughput(args.simulate_nodes, workload, args.simulate_pods)
            )
        except (FrameworkError, PluginLoadError) as error:
            report.notes.append(f"simulate {workload}: {error}")


def run_end_to_end_simulations(args: argparse.Namespace, report: Report) -> None:
    """`scheduler-runtime simulate` as a process on YAML and JSON state files (the table, and
    the JSON output with its explanations, of the YAML one)."""
    nodes, pods = args.simulate_e2e_nodes, args.simulate_e2e_pods
    for state_format, output in (("yaml", "table"), ("json", "table"), ("yaml", "json")):
        progress(f"simulate end to end: {nodes} nodes, {pods} pods, {state_format}, -o {output}")
        try:
            report.end_to_end.append(simulate_end_to_end(nodes, pods, state_format, output))
        except (OSError, RuntimeError) as error:
            report.notes.append(f"simulate end to end ({state_format}): {error}")


def write(report: Report, output: Path, docs_file: Path | None) -> None:
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(report.model_dump_json(indent=2) + "\n")
    if docs_file is not None:
        docs.replace_results(docs_file, render(report, markdown=True), results_section(report))


def results_section(report: Report) -> str:
    """The docs' section for this run: DRA workloads alone have their own, so that running them
    leaves the basic and mixed results in place (and the other way round)."""
    names = {run.workload for scale in report.scales for run in scale.runs}
    names |= {simulation.workload for simulation in report.simulations}
    if names and all(workloads.is_dra(name) for name in names):
        return docs.DRA_RESULTS
    return docs.RESULTS


def machine(note: str) -> Machine:
    """This machine as the docs describe it; the load average shows whether it was shared."""
    load = os.getloadavg()[0]
    return Machine(
        nproc=os.cpu_count() or 0,
        memory_gib=os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 1024**3,
        cpu_model=cpu_model(),
        load_average_before=load,
        note=", ".join(filter(None, [note, f"load average {load:.1f} before the run"])),
    )


def source_commit() -> str:
    """The commit measured; `-dirty` when the runtime had uncommitted changes."""
    head = git("rev-parse", "--short", "HEAD")
    return head + ("-dirty" if git("status", "--porcelain", "scheduler_runtime") else "")


def git(*args: str) -> str:
    done = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, check=False)
    return done.stdout.strip() if done.returncode == 0 else "unknown"


def cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def progress(message: str) -> None:
    stamp = datetime.datetime.now(datetime.UTC).strftime("%H:%M:%S")
    print(f"{stamp} {message}", file=sys.stderr, flush=True)
