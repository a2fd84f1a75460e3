"""The in-process simulate figures: every pod timed, the workload placed."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
import yaml

from benchmarks.simulated import (
    live_heap_policy,
    simulate_end_to_end,
    simulate_throughput,
    state_file,
)
from scheduler_runtime.live.run import NEVER


@pytest.mark.parametrize("workload", ["basic", "mixed"])
def test_every_cycle_is_timed_and_every_pod_placed(workload: str) -> None:
    result = simulate_throughput(30, workload, 24)
    assert (result.nodes, result.pods, result.placed) == (30, 24, 24)
    assert result.seconds > 0
    assert result.cycle_p50_ms is not None
    assert result.cycle_p99_ms is not None
    assert 0 < result.cycle_p50_ms <= result.cycle_p99_ms <= result.seconds * 1000


def test_cycles_run_under_the_live_heap_policy_which_is_then_undone() -> None:
    before = gc.get_threshold()
    with live_heap_policy():
        assert gc.get_threshold()[2] == NEVER  # full collections wait for the keeper
        assert gc.get_freeze_count() > 0
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


@pytest.mark.parametrize("state_format", ["yaml", "json"])
def test_end_to_end_runs_the_command_on_a_kubectl_list(state_format: str) -> None:
    result = simulate_end_to_end(30, 24, state_format)
    assert (result.nodes, result.pods, result.placed) == (30, 24, 24)
    assert result.state_format == state_format
    assert result.seconds > 0
    assert result.peak_rss_mib is not None
    assert result.peak_rss_mib > 10


def test_the_state_file_is_a_list_as_kubectl_prints_it(tmp_path: Path) -> None:
    for state_format in ("yaml", "json"):
        document = yaml.safe_load(state_file(tmp_path, 3, 2, state_format).read_text())
        assert (document["apiVersion"], document["kind"]) == ("v1", "List")
        assert [item["kind"] for item in document["items"]] == ["Node"] * 3 + ["Pod"] * 2
