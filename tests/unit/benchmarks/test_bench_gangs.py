"""The gang benchmark's pieces that need no cluster: its workload, the replay of a run's
bindings into gangs placed, partly bound and completed, and its table."""

from __future__ import annotations

from benchmarks.cli import counter_total, cpu_between, parse_args
from benchmarks.gangs import GANG_SIZE, GANGS, GANGS_HALF, gang_objects, gang_timeline
from benchmarks.report import GangRun, Scale, gang_rows


def test_each_gang_is_a_podgroup_of_its_size_and_its_pods_name_it() -> None:
    groups, pods = gang_objects(GANGS, 20, "bench-python", "pause")
    assert len(groups) == 3  # and the one that fits nowhere, first
    assert len(pods) == 3 * GANG_SIZE
    assert groups[0]["spec"]["schedulingPolicy"] == {"gang": {"minCount": GANG_SIZE}}
    assert [g["metadata"]["name"] for g in groups] == ["gang-stuck", "gang-0000", "gang-0001"]
    assert pods[0]["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "100"
    assert {p["spec"]["schedulingGroup"]["podGroupName"] for p in pods[GANG_SIZE:]} == {
        "gang-0000",
        "gang-0001",
    }
    _, big = gang_objects(GANGS_HALF, 8, "bench-python", "pause")
    assert big[0]["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "15"


def test_the_timeline_counts_gangs_placed_partly_bound_and_their_completion() -> None:
    created = {f"gang-{g:04d}-{i}": 1.0 + g for g in range(3) for i in range(GANG_SIZE)}
    bound = {f"gang-0000-{i}": 5.0 + i * 0.01 for i in range(GANG_SIZE)}  # whole
    bound |= {f"gang-0001-{i}": 6.0 for i in range(3)}  # three of eight, to the end
    timeline = gang_timeline(created, bound, end=10.0)
    assert (timeline.placed, timeline.partial_at_end) == (1, 1)
    assert round(timeline.longest_partial, 3) == 4.0  # from 6.0 to the end
    assert [round(c, 3) for c in timeline.completions] == [4.07]  # last created 1.0, bound 5.07


def test_a_gang_bound_one_member_after_another_is_partial_only_meanwhile() -> None:
    created = {f"gang-0000-{i}": 0.0 for i in range(GANG_SIZE)}
    bound = {f"gang-0000-{i}": 1.0 + i * 0.1 for i in range(GANG_SIZE)}
    timeline = gang_timeline(created, bound, end=3.0)
    assert (timeline.placed, timeline.partial_at_end) == (1, 0)
    assert round(timeline.longest_partial, 3) == 0.7


def test_counters_and_cpu_samples_are_read_as_measured() -> None:
    page = (
        "# TYPE scheduler_podgroup_schedule_attempts_total counter\n"
        'scheduler_podgroup_schedule_attempts_total{profile="p",result="scheduled"} 3\n'
        'scheduler_podgroup_schedule_attempts_total{profile="p",result="unschedulable"} 4\n'
    )
    assert counter_total(page, "scheduler_podgroup_schedule_attempts_total") == 7
    assert counter_total(page, "nothing_total") is None
    samples = [(0.0, 1.0), (1.0, 1.5), (2.0, 2.5), (3.0, 2.6)]
    assert cpu_between(samples, 1.0, 3.0) == 1.1
    assert cpu_between(samples, 2.5, 2.9) is None


def test_gangs_only_runs_nothing_else() -> None:
    args = parse_args(["--gangs-only", "--scale", "quick"])
    assert (args.no_ceiling, args.steady_rate, args.simulate_nodes) == (True, 0.0, 0)
    assert args.scales[0].workloads == ()


def test_the_gang_table_compares_the_two_schedulers() -> None:
    def run(scheduler: str, cycles: int, idle_cpu: float) -> GangRun:
        return GangRun(
            scheduler=scheduler, workload=GANGS_HALF, gangs=4, gang_size=8, pods=32, bound=16,
            bound_seconds=2.0, gangs_placed=2, partial_at_end=0, longest_partial_ms=40.0,
            reserved_at_end=0, completion_p50_ms=100.0, completion_p99_ms=200.0,
            cpu_seconds=1.6, control_plane_cpu_seconds=3.2 if cycles > 3 else 1.6,
            idle_seconds=10.0, idle_cpu_seconds=idle_cpu, group_cycles=cycles,
        )  # fmt: skip

    scale = Scale(nodes=100, pods=32, gangs=[run("upstream", 30000, 7.0), run("python", 3, 0.1)])
    rows = gang_rows(scale)
    assert rows[0][:5] == (GANGS_HALF, "upstream", "2/4", "16/32", "8.0")
    assert rows[0][11] == "200.0 ms"  # the API server's and etcd's CPU per pod bound
    assert rows[0][12] == "70% for 10 s"
    assert rows[2][1] == "ours/upstream"
    assert rows[2][9] == "0.00x"  # group cycles
    assert rows[2][11] == "0.50x"
    assert rows[2][12] == "0.01x"  # CPU while the rest waited
