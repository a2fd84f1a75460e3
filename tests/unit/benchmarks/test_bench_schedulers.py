"""Both schedulers get the same configuration; the command line checks its options."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from benchmarks.cli import ScaleSpec, parse_args
from benchmarks.processes import CONTROL_PLANE, control_plane_cpu_seconds, cpu_seconds
from benchmarks.schedulers import (
    SchedulerProcess,
    configuration,
    runtime_command,
    upstream_command,
)
from scheduler_runtime.config import load_configuration


def test_configurations_differ_only_in_the_scheduler_name() -> None:
    upstream = configuration("bench-upstream", Path("/k"))
    ours = configuration("bench-python", Path("/k"))
    assert upstream["profiles"] == [{"schedulerName": "bench-upstream"}]
    assert {**upstream, "profiles": None} == {**ours, "profiles": None}


def test_the_runtime_reads_the_configuration_as_upstream_would() -> None:
    config = load_configuration(configuration("bench-python", Path("/k")))
    assert config.scheduler_names == ("bench-python",)
    assert config.client_connection.qps == 1000
    assert config.client_connection.burst == 1000
    assert config.leader_election.leader_elect is False


def test_upstream_serves_metrics_without_a_token_review() -> None:
    command = upstream_command(Path("/bin/kube-scheduler"), Path("/c.yaml"), 10259)
    assert "--config=/c.yaml" in command
    assert "--secure-port=10259" in command
    assert "--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics" in command


def test_the_runtime_serves_metrics_on_its_secure_port_as_upstream_does() -> None:
    command = runtime_command(Path("/c.yaml"), Path("/k"), 4321)
    assert command[1:3] == ["run", "--config=/c.yaml"]
    upstream = upstream_command(Path("/bin/kube-scheduler"), Path("/c.yaml"), 4321)
    # The same serving flags, so neither pays for a review the other skips.
    assert [f for f in command if f not in ("--kubeconfig=/k", "run")][1:] == upstream[1:]
    assert not any(flag.startswith("--listen") for flag in command)


# basic, mixed, then upstream's scheduler_perf DRA workloads.
ALL_WORKLOADS = (
    "basic",
    "mixed",
    "dra-template",
    "dra-claim",
    "dra-extended",
    "dra-partitionable",
    "dra-prioritized",
)


def test_quick_picks_the_small_scale_and_a_small_simulation() -> None:
    args = parse_args(["--quick"])
    assert args.scales == [ScaleSpec(100, 300, ALL_WORKLOADS)]
    assert (args.simulate_nodes, args.simulate_pods) == (500, 300)


def test_each_scale_may_name_its_own_workloads() -> None:
    args = parse_args(["--scale", "500", "--scale", "5000:basic", "--workload", "mixed"])
    assert args.scales == [ScaleSpec(500, 2000, ("mixed",)), ScaleSpec(5000, 10000, ("basic",))]


def test_the_default_scale_is_500_nodes_with_every_workload() -> None:
    assert parse_args([]).scales == [ScaleSpec(500, 2000, ALL_WORKLOADS)]


@pytest.mark.parametrize(
    ("scale", "message"),
    [
        ("50", "--scale '50': unknown scale '50'; one of quick, 500, 5000"),
        (
            "500:gpu",
            "--scale '500:gpu': unknown workload 'gpu'; one of basic, mixed, dra-template, "
            "dra-claim, dra-extended, dra-partitionable, dra-prioritized",
        ),
    ],
)
def test_bad_scale_is_a_usage_error(
    scale: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        parse_args(["--scale", scale])
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_negative_simulation_size_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        parse_args(["--simulate-pods", "-1"])
    assert exit_info.value.code == 2
    assert "--simulate-pods must not be negative, got -1" in capsys.readouterr().err


def test_cpu_seconds_and_peak_rss_are_read_from_the_process(tmp_path: Path) -> None:
    busy = "import time\nend = time.process_time() + 0.3\nwhile time.process_time() < end: pass\n"
    command = [sys.executable, "-c", busy + "time.sleep(30)"]
    process = SchedulerProcess("busy", command, "http://127.0.0.1:9", tmp_path / "busy.log")
    process.start()
    try:
        deadline = time.monotonic() + 20
        while process.cpu_seconds() < 0.3 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert 0.3 <= process.cpu_seconds() < 5
        assert process.peak_rss_bytes() > 1024 * 1024
    finally:
        process.stop()


def test_repeat_must_be_positive(capsys: pytest.CaptureFixture[str]) -> None:
    assert parse_args(["--repeat", "3"]).repeat == 3
    with pytest.raises(SystemExit):
        parse_args(["--repeat", "0"])
    assert "--repeat must be at least 1, got 0" in capsys.readouterr().err


def test_the_control_planes_cpu_is_read_from_the_pid_files_beside_the_kubeconfig(
    tmp_path: Path,
) -> None:
    kubeconfig = tmp_path / "kubeconfig.yaml"
    assert control_plane_cpu_seconds(kubeconfig) is None  # not a local cluster
    (tmp_path / "pids").mkdir()
    for name in CONTROL_PLANE:
        (tmp_path / "pids" / f"{name}.pid").write_text(f"{os.getpid()}\n")
    sum(range(2_000_000))  # some CPU time of this process
    mine = cpu_seconds(os.getpid())
    read = control_plane_cpu_seconds(kubeconfig)
    assert read is not None
    assert mine > 0
    assert read >= 2 * mine  # both files name this process
