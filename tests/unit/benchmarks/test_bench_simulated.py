"""The in-process simulate figures: every pod timed, the workload placed."""

from __future__ import annotations

import gc

import pytest

from benchmarks.simulated import live_heap_policy, simulate_throughput
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
