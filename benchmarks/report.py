"""Results: the JSON document a run writes, and the tables it prints (plain and Markdown)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict, computed_field

from benchmarks.gangs import GANG_GATE_NAMES, WORKLOAD
from benchmarks.profile import Profile
from benchmarks.schedulers import BINDER, PYTHON, UPSTREAM

MIB = 1024 * 1024


def per_second(count: int, seconds: float) -> float:
    return count / seconds if seconds > 0 else 0.0


def ms_per_pod(seconds: float | None, pods: int) -> float | None:
    """CPU seconds spread over the pods bound, in milliseconds each."""
    return None if seconds is None or not pods else seconds * 1000 / pods


def ratio(ours: float | None, upstream: float | None) -> float | None:
    """ours / upstream, or None when either is unknown or upstream is zero."""
    if ours is None or upstream is None or upstream == 0:
        return None
    return ours / upstream


class Machine(BaseModel):
    nproc: int
    memory_gib: float
    cpu_model: str
    load_average_before: float
    note: str


def tried_again(attempts: Mapping[str, float], bound: int) -> bool:
    """Attempts (by result) beyond the one each bound pod needed."""
    return sum(attempts.values()) > bound


class SchedulerRun(BaseModel):
    """One scheduler on one workload: throughput from the first creation to the last binding."""

    model_config = ConfigDict(ser_json_inf_nan="strings")  # the +Inf bucket as "Infinity"

    scheduler: str
    workload: str
    pods: int
    bound: int
    create_seconds: float
    bound_seconds: float
    attempt_p50_ms: float | None = None
    attempt_p99_ms: float | None = None
    # Attempts slower than the histogram's highest finite bucket: quantiles there are floors.
    attempts_beyond_buckets: float = 0.0
    # The scheduler's attempt histogram as scraped: (upper bound in seconds, cumulative count).
    attempt_buckets: list[tuple[float, float]] = []
    # scheduling_algorithm_duration_seconds: the cycle up to a chosen node, without binding.
    algorithm_p50_ms: float | None = None
    algorithm_p99_ms: float | None = None
    algorithm_buckets: list[tuple[float, float]] = []
    peak_rss_mib: float | None = None
    # CPU time (user + system) the scheduler process used from its first pod to the end.
    cpu_seconds: float | None = None
    # The local API server's and etcd's CPU time over the same stretch (None: not local).
    control_plane_cpu_seconds: float | None = None
    # Pods created this many per second (None: all at once), and each pod's latency from its
    # creation to its binding, as the watch saw them.
    rate: float | None = None
    pod_latency_p50_ms: float | None = None
    pod_latency_p99_ms: float | None = None
    # DRA workloads: the namespace's ResourceClaims once the pods were bound, how many were
    # allocated, and devices found in more than one claim's allocation.
    claims: int | None = None
    claims_allocated: int | None = None
    devices_allocated_twice: int | None = None
    # scheduler_schedule_attempts_total by result (scheduled, unschedulable, error): how
    # often pods were tried, beyond the one attempt each needs.
    attempts: dict[str, float] = {}
    # Runs that left pods unbound or tried some again: the most frequent FailedScheduling
    # messages of the scheduler's events.
    failure_messages: list[tuple[str, int]] = []

    def tried_again(self) -> bool:
        """Whether some pod needed more than one attempt."""
        return tried_again(self.attempts, self.bound)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def throughput(self) -> float:
        return per_second(self.bound, self.bound_seconds)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def cpu_ms_per_pod(self) -> float | None:
        return ms_per_pod(self.cpu_seconds, self.bound)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def control_plane_ms_per_pod(self) -> float | None:
        return ms_per_pod(self.control_plane_cpu_seconds, self.bound)

    def saturated(self, q: float) -> bool:
        """Whether the q-quantile lies beyond the buckets (so it only says "at least")."""
        return self.attempts_beyond_buckets > 1 - q


class Ceiling(BaseModel):
    """Bindings per second a minimal client gets from the API server at the same QPS."""

    bindings: int
    seconds: float
    latency_p50_ms: float
    latency_p99_ms: float

    @computed_field  # type: ignore[prop-decorator]
    @property
    def throughput(self) -> float:
        return per_second(self.bindings, self.seconds)


class GangRun(BaseModel):
    """One scheduler on a gang workload (gangs of `gang_size`, all or nothing), gates
    GenericWorkload and GangScheduling on for both schedulers."""

    scheduler: str
    workload: str
    gangs: int
    gang_size: int
    pods: int
    bound: int
    bound_seconds: float  # from the first creation to the last binding
    gangs_placed: int
    partial_at_end: int  # gangs with some but not all members bound when the run ended
    longest_partial_ms: float  # the longest any gang was partly bound (bindings in flight)
    reserved_at_end: int  # pending members left with a nominated node
    completion_p50_ms: float | None = None  # a gang's last pod created -> its last binding
    completion_p99_ms: float | None = None
    cpu_seconds: float | None = None
    control_plane_cpu_seconds: float | None = None  # the API server's and etcd's meanwhile
    # After the last binding, while the gangs that do not fit wait: how long the run watched,
    # the CPU the scheduler used meanwhile, and how many pod group cycles it ran in all.
    idle_seconds: float = 0.0
    idle_cpu_seconds: float | None = None
    group_cycles: int | None = None
    peak_rss_mib: float | None = None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def throughput(self) -> float:
        return per_second(self.bound, self.bound_seconds)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def cpu_ms_per_pod(self) -> float | None:
        return ms_per_pod(self.cpu_seconds, self.bound)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def control_plane_ms_per_pod(self) -> float | None:
        return ms_per_pod(self.control_plane_cpu_seconds, self.bound)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def idle_cpu_share(self) -> float | None:
        """The share of one CPU the scheduler used while the rest waited."""
        if self.idle_cpu_seconds is None or self.idle_seconds <= 0:
            return None
        return self.idle_cpu_seconds / self.idle_seconds


class Scale(BaseModel):
    nodes: int
    pods: int
    ceiling: Ceiling | None = None
    runs: list[SchedulerRun] = []
    gangs: list[GangRun] = []
    # Latency at a steady creation rate the API server keeps up with (not a throughput run).
    steady: list[SchedulerRun] = []
    profiles: list[Profile] = []
    failures: list[str] = []

    def rounds(self, scheduler: str, workload: str) -> list[SchedulerRun]:
        return [r for r in self.runs if r.scheduler == scheduler and r.workload == workload]

    def run(self, scheduler: str, workload: str) -> SchedulerRun | None:
        """The median run by throughput (the lower of the middle two for an even count):
        one real run, so its figures belong together."""
        rounds = sorted(self.rounds(scheduler, workload), key=lambda r: r.throughput)
        return rounds[(len(rounds) - 1) // 2] if rounds else None

    def median_runs(self) -> list[SchedulerRun]:
        """The median run of each scheduler and workload, in the order they first ran."""
        pairs = dict.fromkeys((r.scheduler, r.workload) for r in self.runs)
        return [run for pair in pairs if (run := self.run(*pair)) is not None]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def ratios(self) -> dict[str, dict[str, float | None]]:
        """Per workload, ours/upstream for each figure."""
        result = {}
        for workload in dict.fromkeys(r.workload for r in self.runs):
            ours, upstream = self.run(PYTHON, workload), self.run(UPSTREAM, workload)
            if ours is None or upstream is None:
                continue
            result[workload] = {
                "throughput": ratio(ours.throughput, upstream.throughput),
                "attempt_p50": ratio(ours.attempt_p50_ms, upstream.attempt_p50_ms),
                "attempt_p99": ratio(ours.attempt_p99_ms, upstream.attempt_p99_ms),
                "algorithm_p50": ratio(ours.algorithm_p50_ms, upstream.algorithm_p50_ms),
                "algorithm_p99": ratio(ours.algorithm_p99_ms, upstream.algorithm_p99_ms),
                "cpu_per_pod": ratio(ours.cpu_ms_per_pod, upstream.cpu_ms_per_pod),
                "control_plane_per_pod": ratio(
                    ours.control_plane_ms_per_pod, upstream.control_plane_ms_per_pod
                ),
                "peak_rss": ratio(ours.peak_rss_mib, upstream.peak_rss_mib),
            }
        return result


class Simulation(BaseModel):
    """`scheduler-runtime simulate` in-process: the algorithm alone, no API server."""

    nodes: int
    workload: str
    pods: int
    placed: int
    seconds: float
    cycle_p50_ms: float | None = None
    cycle_p99_ms: float | None = None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def pods_per_second(self) -> float:
        return per_second(self.pods, self.seconds)


class EndToEndSimulation(BaseModel):
    """`scheduler-runtime simulate` as a process on a state file, from start to exit."""

    nodes: int
    pods: int
    state_format: str  # yaml or json, as kubectl prints a List
    output: str  # table or json
    state_mib: float
    placed: int | None = None  # counted from the table
    seconds: float
    peak_rss_mib: float | None = None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def pods_per_second(self) -> float:
        return per_second(self.pods, self.seconds)


class Report(BaseModel):
    date: str
    kubernetes_version: str
    client_qps: int
    commit: str = "unknown"
    profiled: bool = False
    machine: Machine
    scales: list[Scale] = []
    simulations: list[Simulation] = []
    end_to_end: list[EndToEndSimulation] = []
    notes: list[str] = []


# ----- formatting


def number(value: float | None, unit: str = "", digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}{unit}"


def times(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def percent(part: float, whole: float | None) -> str:
    return "-" if not whole else f"{100 * part / whole:.0f}%"


def latency(milliseconds: float | None, saturated: bool) -> str:
    return (">" if saturated and milliseconds is not None else "") + number(milliseconds, " ms")


RUN_HEADER = (
    "workload",
    "scheduler",
    "bound",
    "pods/s",
    "of ceiling",
    "of binder",
    "attempt p50",
    "attempt p99",
    "algorithm p50",
    "algorithm p99",
    "CPU/pod",
    "apiserver+etcd CPU/pod",
    "peak RSS",
)


def run_rows(scale: Scale) -> list[tuple[str, ...]]:
    """A row per scheduler and workload, then the ours/upstream ratios of that workload.

    "of ceiling" compares with the bare binding ceiling, "of binder" with the scheduler
    without an algorithm on the same workload (pods created alike, bound as they come)."""
    ceiling = scale.ceiling.throughput if scale.ceiling else None
    rows: list[tuple[str, ...]] = []
    for run in scale.median_runs():
        binder = scale.run(BINDER, run.workload)
        rows.append(
            (
                run.workload,
                run.scheduler,
                f"{run.bound}/{run.pods}",
                throughput_cell(scale.rounds(run.scheduler, run.workload)),
                percent(run.throughput, ceiling),
                percent(run.throughput, binder.throughput if binder else None),
                latency(run.attempt_p50_ms, run.saturated(0.5)),
                latency(run.attempt_p99_ms, run.saturated(0.99)),
                number(run.algorithm_p50_ms, " ms"),
                number(run.algorithm_p99_ms, " ms"),
                number(run.cpu_ms_per_pod, " ms"),
                number(run.control_plane_ms_per_pod, " ms"),
                number(run.peak_rss_mib, " MiB", 0),
            )
        )
        upstream = scale.run(UPSTREAM, run.workload)
        figures = scale.ratios.get(run.workload)
        if run.scheduler == PYTHON and figures and upstream:
            rows.append(
                (
                    run.workload,
                    "ours/upstream",
                    "",
                    times(figures["throughput"]),
                    "",
                    "",
                    latency_ratio(figures["attempt_p50"], run, upstream, 0.5),
                    latency_ratio(figures["attempt_p99"], run, upstream, 0.99),
                    times(figures["algorithm_p50"]),
                    times(figures["algorithm_p99"]),
                    times(figures["cpu_per_pod"]),
                    times(figures["control_plane_per_pod"]),
                    times(figures["peak_rss"]),
                )
            )
    return rows


def throughput_cell(rounds: Sequence[SchedulerRun]) -> str:
    """The median throughput, with the range when the run was repeated."""
    values = sorted(r.throughput for r in rounds)
    median = number(values[(len(values) - 1) // 2])
    return median if len(values) == 1 else f"{median} ({values[0]:.1f}-{values[-1]:.1f})"


def latency_ratio(value: float | None, ours: SchedulerRun, upstream: SchedulerRun, q: float) -> str:
    """A floor when only our quantile is saturated; unknown when upstream's is."""
    if upstream.saturated(q):
        return "-"
    return (">" if ours.saturated(q) and value is not None else "") + times(value)


def scale_title(scale: Scale) -> str:
    title = f"{scale.nodes} nodes, {scale.pods} pods per scheduler and workload"
    if any(r.workload.startswith("dra-") for r in scale.runs):
        title += (
            f" ({scale.nodes * 10} for the dra- workloads: 10 devices per node, every one "
            "allocated by the end, as scheduler_perf's 5000pods_500nodes)"
        )
    repeats = max((len(scale.rounds(r.scheduler, r.workload)) for r in scale.runs), default=1)
    if repeats > 1:
        title += f", {repeats} rounds (the median round's figures, pods/s with its range)"
    if scale.ceiling:
        c = scale.ceiling
        title += (
            f"; binding ceiling {c.throughput:.1f}/s "
            f"(call p50 {c.latency_p50_ms:.1f} ms, p99 {c.latency_p99_ms:.1f} ms)"
        )
    return title


GANG_HEADER = (
    "workload",
    "scheduler",
    "gangs placed",
    "bound",
    "pods/s",
    "gang done p50",
    "gang done p99",
    "longest partial",
    "partial/reserved at end",
    "group cycles",
    "CPU/pod",
    "apiserver+etcd CPU/pod",
    "CPU while waiting",
    "peak RSS",
)


def gang_rows(scale: Scale) -> list[tuple[str, ...]]:
    """A row per gang run, then ours/upstream for each workload."""
    rows: list[tuple[str, ...]] = []
    for run in scale.gangs:
        rows.append(
            (
                run.workload,
                run.scheduler,
                f"{run.gangs_placed}/{run.gangs}",
                f"{run.bound}/{run.pods}",
                number(run.throughput),
                number(run.completion_p50_ms, " ms"),
                number(run.completion_p99_ms, " ms"),
                number(run.longest_partial_ms, " ms"),
                f"{run.partial_at_end}/{run.reserved_at_end}",
                "-" if run.group_cycles is None else str(run.group_cycles),
                number(run.cpu_ms_per_pod, " ms"),
                number(run.control_plane_ms_per_pod, " ms"),
                "-"
                if run.idle_cpu_share is None
                else f"{100 * run.idle_cpu_share:.0f}% for {run.idle_seconds:.0f} s",
                number(run.peak_rss_mib, " MiB", 0),
            )
        )
        upstream = next(
            (r for r in scale.gangs if r.scheduler == UPSTREAM and r.workload == run.workload),
            None,
        )
        if run.scheduler == PYTHON and upstream is not None:
            rows.append(
                (
                    run.workload,
                    "ours/upstream",
                    "",
                    "",
                    times(ratio(run.throughput, upstream.throughput)),
                    times(ratio(run.completion_p50_ms, upstream.completion_p50_ms)),
                    times(ratio(run.completion_p99_ms, upstream.completion_p99_ms)),
                    "",
                    "",
                    times(ratio(run.group_cycles, upstream.group_cycles)),
                    times(ratio(run.cpu_ms_per_pod, upstream.cpu_ms_per_pod)),
                    times(ratio(run.control_plane_ms_per_pod, upstream.control_plane_ms_per_pod)),
                    times(ratio(run.idle_cpu_share, upstream.idle_cpu_share)),
                    times(ratio(run.peak_rss_mib, upstream.peak_rss_mib)),
                )
            )
    return rows


def gang_title(scale: Scale) -> str:
    first = scale.gangs[0]
    return (
        f"{scale.nodes} nodes, gangs of {first.gang_size} pods created together "
        f"({WORKLOAD.api_version} PodGroups; {' and '.join(GANG_GATE_NAMES)} on for "
        "both): gangs, all fitting but one created first that fits nowhere; gangs-half, of "
        "which the nodes hold about half. Gang done: from a gang's last pod created to its last "
        "binding; partial: gangs with some but not all members bound; reserved: pending "
        "members with a nominated node; CPU while waiting: after the last binding"
    )


STEADY_HEADER = (
    "workload",
    "scheduler",
    "bound",
    "attempt p50",
    "attempt p99",
    "algorithm p50",
    "algorithm p99",
    "pod p50",
    "pod p99",
)


def steady_rows(scale: Scale) -> list[tuple[str, ...]]:
    """A row per scheduler of the steady-rate runs, then ours/upstream."""
    rows: list[tuple[str, ...]] = []
    for run in scale.steady:
        rows.append(
            (
                run.workload,
                run.scheduler,
                f"{run.bound}/{run.pods}",
                latency(run.attempt_p50_ms, run.saturated(0.5)),
                latency(run.attempt_p99_ms, run.saturated(0.99)),
                number(run.algorithm_p50_ms, " ms"),
                number(run.algorithm_p99_ms, " ms"),
                number(run.pod_latency_p50_ms, " ms"),
                number(run.pod_latency_p99_ms, " ms"),
            )
        )
    runs = {run.scheduler: run for run in scale.steady}
    ours, upstream = runs.get(PYTHON), runs.get(UPSTREAM)
    if ours and upstream:
        rows.append(
            (
                ours.workload,
                "ours/upstream",
                "",
                latency_ratio(
                    ratio(ours.attempt_p50_ms, upstream.attempt_p50_ms), ours, upstream, 0.5
                ),
                latency_ratio(
                    ratio(ours.attempt_p99_ms, upstream.attempt_p99_ms), ours, upstream, 0.99
                ),
                times(ratio(ours.algorithm_p50_ms, upstream.algorithm_p50_ms)),
                times(ratio(ours.algorithm_p99_ms, upstream.algorithm_p99_ms)),
                times(ratio(ours.pod_latency_p50_ms, upstream.pod_latency_p50_ms)),
                times(ratio(ours.pod_latency_p99_ms, upstream.pod_latency_p99_ms)),
            )
        )
    return rows


def steady_title(scale: Scale) -> str:
    rate = scale.steady[0].rate
    return (
        f"{scale.nodes} nodes, pods created at a steady {rate:g}/s: latency when the API server "
        "keeps up (pod: from its creation to its binding, as a watch sees it)"
    )


PROFILE_HEADER = ("function (own time)", "own", "on stack")


def profile_rows(profile: Profile) -> list[tuple[str, ...]]:
    return [
        (spot.function, f"{100 * spot.own:.1f}%", f"{100 * spot.total:.1f}%")
        for spot in profile.by_own
    ]


SIMULATION_HEADER = ("nodes", "workload", "pods", "placed", "pods/s", "cycle p50", "cycle p99")


def simulation_rows(simulations: Sequence[Simulation]) -> list[tuple[str, ...]]:
    return [
        (
            str(s.nodes),
            s.workload,
            str(s.pods),
            str(s.placed),
            number(s.pods_per_second),
            number(s.cycle_p50_ms, " ms", 2),
            number(s.cycle_p99_ms, " ms", 2),
        )
        for s in simulations
    ]


END_TO_END_HEADER = (
    "nodes",
    "pods",
    "state file",
    "output",
    "placed",
    "seconds",
    "pods/s",
    "peak RSS",
)


def end_to_end_rows(runs: Sequence[EndToEndSimulation]) -> list[tuple[str, ...]]:
    return [
        (
            str(r.nodes),
            str(r.pods),
            f"{r.state_format}, {r.state_mib:.1f} MiB",
            f"-o {r.output}",
            "-" if r.placed is None else str(r.placed),
            number(r.seconds, " s", 2),
            number(r.pods_per_second),
            number(r.peak_rss_mib, " MiB", 0),
        )
        for r in runs
    ]


def text_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Columns padded to their widest cell, two spaces apart."""
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in [header, *rows]
    ]
    return "\n".join(lines)


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = [header, ["---"] * len(header), *rows]
    return "\n".join("| " + " | ".join(cell or " " for cell in row) + " |" for row in lines)


def claims_line(scale: Scale) -> str:
    """For the DRA runs: the claims allocated by the end and whether any device went twice."""
    checked = [run for run in scale.runs if run.claims is not None]
    if not checked:
        return ""
    counts = ", ".join(
        f"{run.workload} {run.scheduler} {run.claims_allocated}/{run.claims}" for run in checked
    )
    twice = sum(run.devices_allocated_twice or 0 for run in checked)
    verdict = "no device allocated twice" if not twice else f"{twice} devices allocated twice"
    return f"ResourceClaims allocated once the pods were bound: {counts}; {verdict}"


def attempts_line(scale: Scale) -> str:
    """Attempts by result, for the runs whose pods were tried more than once each."""
    retried = [
        f"{run.workload} {run.scheduler} "
        + ", ".join(f"{count:.0f} {result}" for result, count in sorted(run.attempts.items()))
        for run in scale.runs
        if run.tried_again()
    ]
    return (
        "scheduling attempts, where pods were tried more than once: " + "; ".join(retried)
        if retried
        else ""
    )


def failure_lines(scale: Scale) -> list[str]:
    """Why pods were refused, in the runs that left some unbound or tried some again: the
    messages their scheduler's events gave most."""
    return [
        f"{run.workload} {run.scheduler} ({run.pods - run.bound} left unbound): "
        f"FailedScheduling {count}x: {message}"
        for run in scale.runs
        for message, count in run.failure_messages
    ]


def render(report: Report, *, markdown: bool = False) -> str:
    """The whole report as text tables, or as Markdown for the docs."""
    draw = markdown_table if markdown else text_table
    heading = "### " if markdown else ""
    parts = [
        f"{heading}Scheduler benchmark, {report.date}: Kubernetes {report.kubernetes_version}, "
        f"{report.machine.nproc} CPUs, {report.machine.memory_gib:.0f} GiB "
        f"({report.machine.note}); client QPS/burst {report.client_qps}/{report.client_qps}; "
        f"commit {report.commit}"
    ]
    if report.profiled:
        parts.append("profiled: py-spy sampled the runtime, so its figures are slowed")
    for scale in report.scales:
        if scale.runs:  # none with --gangs-only
            parts += [scale_title(scale), draw(RUN_HEADER, run_rows(scale))]
        if scale.gangs:
            parts += [gang_title(scale), draw(GANG_HEADER, gang_rows(scale))]
        if scale.steady:
            parts += [steady_title(scale), draw(STEADY_HEADER, steady_rows(scale))]
        if claims := claims_line(scale):
            parts.append(claims)
        if attempts := attempts_line(scale):
            parts.append(attempts)
        parts += failure_lines(scale)
        parts += [f"failed: {failure}" for failure in scale.failures]
        for profile in scale.profiles:
            parts += [
                f"where the runtime spent its time: {profile.workload}, {profile.nodes} nodes "
                f"(samples: {profile.samples_file})",
                draw(PROFILE_HEADER, profile_rows(profile)),
            ]
    if report.simulations:
        parts += [
            "simulate, in-process (the algorithm alone)",
            draw(SIMULATION_HEADER, simulation_rows(report.simulations)),
        ]
    if report.end_to_end:
        parts += [
            "simulate, end to end (the command on a state file as kubectl prints a List: "
            "start-up, reading, placing, output)",
            draw(END_TO_END_HEADER, end_to_end_rows(report.end_to_end)),
        ]
    parts += [f"note: {note}" for note in report.notes]
    return "\n\n".join(parts) + "\n"
