"""The in-process simulate figures: every pod timed, the workload placed."""

from __future__ import annotations

import pytest

from benchmarks.simulated import simulate_throughput


@pytest.mark.parametrize("workload", ["basic", "mixed"])
def test_every_cycle_is_timed_and_every_pod_placed(workload: str) -> None:
    result = simulate_throughput(30, workload, 24)
    assert (result.nodes, result.pods, result.placed) == (30, 24, 24)
    assert result.seconds > 0
    assert result.cycle_p50_ms is not None
    assert result.cycle_p99_ms is not None
    assert 0 < result.cycle_p50_ms <= result.cycle_p99_ms <= result.seconds * 1000
