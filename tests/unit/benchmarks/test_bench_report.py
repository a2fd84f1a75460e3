"""The results document and the tables printed from it."""

from __future__ import annotations

import json

import pytest

from benchmarks.cli import results_section
from benchmarks.docs import BEGIN, DRA_RESULTS, END, RESULTS, markers, replace_section
from benchmarks.profile import HotSpot, Profile
from benchmarks.report import (
    Ceiling,
    Machine,
    Report,
    Scale,
    SchedulerRun,
    Simulation,
    markdown_table,
    ratio,
    render,
    run_rows,
    steady_rows,
    text_table,
)


def run(scheduler: str, workload: str, *, bound: int, seconds: float, p99: float) -> SchedulerRun:
    return SchedulerRun(
        scheduler=scheduler,
        workload=workload,
        pods=100,
        bound=bound,
        create_seconds=0.5,
        bound_seconds=seconds,
        attempt_p50_ms=1.0,
        attempt_p99_ms=p99,
        algorithm_p50_ms=0.5,
        algorithm_p99_ms=p99 / 4,
        peak_rss_mib=100.0 if scheduler == "upstream" else 150.0,
        cpu_seconds=bound * (0.002 if scheduler == "upstream" else 0.003),
        control_plane_cpu_seconds=bound * (0.004 if scheduler == "upstream" else 0.005),
    )


def binder(workload: str, seconds: float) -> SchedulerRun:
    return SchedulerRun(
        scheduler="binder",
        workload=workload,
        pods=100,
        bound=100,
        create_seconds=0.5,
        bound_seconds=seconds,
        attempt_p50_ms=None,
        attempt_p99_ms=None,
        peak_rss_mib=None,
        control_plane_cpu_seconds=0.3,
    )


def scale() -> Scale:
    return Scale(
        nodes=500,
        pods=100,
        ceiling=Ceiling(bindings=100, seconds=0.25, latency_p50_ms=2.0, latency_p99_ms=9.0),
        runs=[
            binder("basic", seconds=0.4),
            run("upstream", "basic", bound=100, seconds=0.5, p99=4.0),
            run("python", "basic", bound=100, seconds=1.0, p99=8.0),
            run("upstream", "mixed", bound=100, seconds=1.0, p99=4.0),
        ],
    )


def report() -> Report:
    machine = Machine(
        nproc=2, memory_gib=24, cpu_model="cpu", load_average_before=2.5, note="shared"
    )
    return Report(
        date="2026-11-22 03:00 UTC",
        kubernetes_version="v1.36.3",
        client_qps=1000,
        machine=machine,
        scales=[scale()],
        simulations=[
            Simulation(
                nodes=5000,
                workload="basic",
                pods=10,
                placed=10,
                seconds=2.0,
                cycle_p50_ms=0.15,
                cycle_p99_ms=1.234,
            )
        ],
        notes=["simulate mixed: plugin 'X' is not available"],
    )


def test_throughput_is_bound_pods_over_the_span() -> None:
    assert scale().runs[1].throughput == 200.0
    assert scale().ceiling.throughput == 400.0  # type: ignore[union-attr]


def test_a_run_without_a_span_has_zero_throughput() -> None:
    assert run("python", "basic", bound=0, seconds=0.0, p99=1.0).throughput == 0.0


@pytest.mark.parametrize(
    ("ours", "upstream", "expected"),
    [(2.0, 4.0, 0.5), (None, 4.0, None), (2.0, None, None), (2.0, 0.0, None)],
)
def test_ratio_is_ours_over_upstream(
    ours: float | None, upstream: float | None, expected: float | None
) -> None:
    assert ratio(ours, upstream) == expected


def test_ratios_only_for_workloads_both_schedulers_ran() -> None:
    assert scale().ratios == {
        "basic": {
            "throughput": 0.5,
            "attempt_p50": 1.0,
            "attempt_p99": 2.0,
            "algorithm_p50": 1.0,
            "algorithm_p99": 2.0,
            "cpu_per_pod": pytest.approx(1.5),
            "control_plane_per_pod": pytest.approx(1.25),
            "peak_rss": 1.5,
        }
    }


def test_cpu_per_pod_is_the_process_cpu_time_over_bound_pods() -> None:
    assert run("upstream", "basic", bound=100, seconds=1.0, p99=1.0).cpu_ms_per_pod == 2.0
    assert binder("basic", 1.0).cpu_ms_per_pod is None


def test_the_control_planes_cpu_is_spread_over_the_pods_bound_and_unknown_when_not_read() -> None:
    assert binder("basic", 1.0).control_plane_ms_per_pod == pytest.approx(3.0)
    assert (
        SchedulerRun(
            scheduler="python", workload="basic", pods=1, bound=1, create_seconds=0, bound_seconds=1
        ).control_plane_ms_per_pod
        is None
    )


def test_rows_show_share_of_the_ceiling_and_binder_and_a_ratio_row() -> None:
    rows = run_rows(scale())
    assert rows[0] == (
        "basic", "binder", "100/100", "250.0", "62%", "100%", "-", "-", "-", "-", "-", "3.0 ms",
        "-",
    )  # fmt: skip
    assert rows[1] == (
        "basic", "upstream", "100/100", "200.0", "50%", "80%", "1.0 ms", "4.0 ms", "0.5 ms",
        "1.0 ms", "2.0 ms", "4.0 ms", "100 MiB",
    )  # fmt: skip
    assert rows[3] == (
        "basic", "ours/upstream", "", "0.50x", "", "", "1.00x", "2.00x", "1.00x", "2.00x",
        "1.50x", "1.25x", "1.50x",
    )  # fmt: skip
    assert [r[1] for r in rows] == ["binder", "upstream", "python", "ours/upstream", "upstream"]


def test_text_table_pads_columns() -> None:
    assert text_table(("a", "bb"), [("ccc", "d")]) == "a    bb\nccc  d"


def test_markdown_table_has_a_separator_and_no_empty_cells() -> None:
    assert markdown_table(("a", "b"), [("1", "")]) == "| a | b |\n| --- | --- |\n| 1 |   |"


def test_render_names_version_machine_scale_simulation_and_notes() -> None:
    failed = report()
    failed.scales[0].failures = ["python on mixed: python scheduler exited with 2"]
    text = render(failed)
    assert "failed: python on mixed: python scheduler exited with 2" in text
    assert "Kubernetes v1.36.3, 2 CPUs, 24 GiB (shared)" in text
    assert "500 nodes, 100 pods per scheduler and workload; binding ceiling 400.0/s" in text
    assert "5000   basic     10    10      5.0     0.15 ms    1.23 ms" in text
    assert "note: simulate mixed: plugin 'X' is not available" in text
    assert render(report(), markdown=True).startswith("### Scheduler benchmark")


def test_json_carries_the_computed_figures() -> None:
    document = json.loads(report().model_dump_json())
    first = document["scales"][0]
    assert first["runs"][1]["throughput"] == 200.0
    assert first["runs"][1]["cpu_ms_per_pod"] == 2.0
    assert first["ceiling"]["throughput"] == 400.0
    assert first["ratios"]["basic"]["throughput"] == 0.5
    assert document["simulations"][0]["pods_per_second"] == 5.0


def test_docs_section_is_replaced_between_the_markers() -> None:
    text = f"# Benchmarks\n\nintro\n\n{BEGIN}\nold table\n{END}\n\nafter\n"
    replaced = replace_section(text, "new table\n")
    assert replaced == f"# Benchmarks\n\nintro\n\n{BEGIN}\nnew table\n{END}\n\nafter\n"
    assert replace_section(replaced, "new table") == replaced


def test_docs_section_is_appended_when_the_markers_are_missing() -> None:
    assert replace_section("# Benchmarks\n", "table") == f"# Benchmarks\n\n{BEGIN}\ntable\n{END}\n"


def test_a_run_of_dra_workloads_alone_has_a_section_of_its_own() -> None:
    text = f"intro\n\n{BEGIN}\nbasic table\n{END}\n"
    begin, end = markers(DRA_RESULTS)
    replaced = replace_section(text, "dra table", DRA_RESULTS)
    assert replaced == f"intro\n\n{BEGIN}\nbasic table\n{END}\n\n{begin}\ndra table\n{end}\n"
    assert results_section(report()) == RESULTS
    dra_only = report()
    for scale in dra_only.scales:
        for run in scale.runs:
            run.workload = "dra-template"
    dra_only.simulations = []
    assert results_section(dra_only) == DRA_RESULTS


def test_render_says_what_the_dra_runs_left_allocated() -> None:
    checked = report()
    for run in checked.scales[0].runs:
        run.workload, run.claims, run.claims_allocated = "dra-template", 10, 10
        run.devices_allocated_twice = 0
    text = render(checked)
    assert "ResourceClaims allocated once the pods were bound: dra-template" in text
    assert "10/10" in text
    assert "no device allocated twice" in text
    assert "ResourceClaims allocated" not in render(report())


def test_render_says_why_a_run_left_pods_unbound() -> None:
    stalled = report()
    upstream = stalled.scales[0].runs[1]
    upstream.bound = 60
    upstream.failure_messages = [("0/500 nodes are available: 500 timed out.", 40)]
    text = render(stalled)
    assert (
        "basic upstream (40 left unbound): FailedScheduling 40x: "
        "0/500 nodes are available: 500 timed out." in text
    )
    assert "FailedScheduling" not in render(report())


def test_render_shows_the_profile_of_a_profiled_run() -> None:
    profiled = report()
    profiled.profiled = True
    spot = HotSpot(function="score (scheduler_runtime/framework/runtime.py)", own=0.4, total=0.9)
    profiled.scales[0].profiles = [
        Profile(workload="basic", nodes=500, samples_file="p.txt", by_own=[spot], by_total=[spot])
    ]
    text = render(profiled)
    assert "profiled: py-spy sampled the runtime, so its figures are slowed" in text
    assert "where the runtime spent its time: basic, 500 nodes (samples: p.txt)" in text
    assert "score (scheduler_runtime/framework/runtime.py)  40.0%  90.0%" in text


def test_saturated_quantiles_are_floors_and_their_ratios_too() -> None:
    slow = scale()
    ours = slow.run("python", "basic")
    assert ours is not None
    ours.attempts_beyond_buckets = 0.3  # the p99 lies beyond the buckets, the p50 does not
    rows = run_rows(slow)
    assert rows[2][6:8] == ("1.0 ms", ">8.0 ms")
    assert rows[3][6:8] == ("1.00x", ">2.00x")
    upstream = slow.run("upstream", "basic")
    assert upstream is not None
    upstream.attempts_beyond_buckets = 0.6
    assert run_rows(slow)[3][6:8] == ("-", "-")


def test_buckets_round_trip_through_json_with_the_inf_bound() -> None:
    measured = run("python", "basic", bound=1, seconds=1.0, p99=1.0)
    measured.attempt_buckets = [(0.001, 1.0), (float("inf"), 2.0)]
    document = json.loads(measured.model_dump_json())
    assert document["attempt_buckets"][-1] == ["Infinity", 2.0]
    assert SchedulerRun.model_validate(document).attempt_buckets == measured.attempt_buckets


def test_repeated_runs_report_the_median_round_and_the_range() -> None:
    repeated = scale()
    repeated.runs += [
        run("python", "basic", bound=100, seconds=0.5, p99=7.0),  # 200/s
        run("python", "basic", bound=100, seconds=2.0, p99=9.0),  # 50/s
    ]
    median = repeated.run("python", "basic")
    assert median is not None
    assert (median.throughput, median.attempt_p99_ms) == (100.0, 8.0)  # the 1.0 s round
    rows = run_rows(repeated)
    assert [r[1] for r in rows] == ["binder", "upstream", "python", "ours/upstream", "upstream"]
    assert rows[2][3] == "100.0 (50.0-200.0)"
    assert rows[1][3] == "200.0"  # a single round shows no range
    assert "3 rounds (the median round's figures" in render(
        report().model_copy(update={"scales": [repeated]})
    )


def test_even_rounds_take_the_lower_middle() -> None:
    two = Scale(
        nodes=1,
        pods=100,
        runs=[
            run("python", "basic", bound=100, seconds=1.0, p99=1.0),
            run("python", "basic", bound=100, seconds=0.5, p99=2.0),
        ],
    )
    found = two.run("python", "basic")
    assert found is not None
    assert found.throughput == 100.0


def steady(scheduler: str, attempt_p99: float, pod_p99: float) -> SchedulerRun:
    paced = run(scheduler, "basic", bound=100, seconds=5.0, p99=attempt_p99)
    return paced.model_copy(
        update={"rate": 20.0, "pod_latency_p50_ms": pod_p99 / 2, "pod_latency_p99_ms": pod_p99}
    )


def test_steady_rate_runs_get_their_own_latency_table_with_ratios() -> None:
    paced = scale()
    paced.steady = [steady("upstream", 8.0, 40.0), steady("python", 4.0, 30.0)]
    rows = steady_rows(paced)
    assert rows[1] == (
        "basic", "python", "100/100", "1.0 ms", "4.0 ms", "0.5 ms", "1.0 ms", "15.0 ms",
        "30.0 ms",
    )  # fmt: skip
    assert rows[2] == (
        "basic", "ours/upstream", "", "1.00x", "0.50x", "1.00x", "0.50x", "0.75x", "0.75x",
    )  # fmt: skip
    text = render(report().model_copy(update={"scales": [paced]}))
    assert "500 nodes, pods created at a steady 20/s: latency when the API server" in text
    assert [r[1] for r in run_rows(paced)].count("python") == 1  # not mixed with throughput
