"""Hot spots summed from py-spy's collapsed stacks."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.profile import hot_spots, recorder_command

COLLAPSED = """\
run (scheduler_runtime/live/scheduler.py:10);score (scheduler_runtime/framework/runtime.py:5) 60
run (scheduler_runtime/live/scheduler.py:10);score (scheduler_runtime/framework/runtime.py:7) 20
run (scheduler_runtime/live/scheduler.py:12);loads (orjson/__init__.py:1) 15
run (scheduler_runtime/live/scheduler.py:11) 5
"""
RUN = "run (scheduler_runtime/live/scheduler.py)"
SCORE = "score (scheduler_runtime/framework/runtime.py)"
LOADS = "loads (orjson/__init__.py)"


def test_lines_of_one_function_add_up_and_rank_by_own_time() -> None:
    spots = hot_spots(COLLAPSED)
    assert [s.function for s in spots] == [SCORE, LOADS, RUN]
    assert spots[0].own == pytest.approx(0.8)
    assert spots[2].own == pytest.approx(0.05)
    assert spots[2].total == pytest.approx(1.0)


def test_ranking_by_total_keeps_only_matching_frames() -> None:
    spots = hot_spots(COLLAPSED, rank_by="total", path_part="scheduler_runtime")
    assert [(s.function, s.total) for s in spots] == [(RUN, 1.0), (SCORE, 0.8)]


def test_top_limits_the_list() -> None:
    assert len(hot_spots(COLLAPSED, top=1)) == 1


def test_no_samples_no_hot_spots() -> None:
    assert hot_spots("py-spy> nothing sampled\n") == []


def test_recorder_does_not_pause_the_scheduler() -> None:
    command = recorder_command(42, Path("/out.txt"))
    assert command[1:3] == ["record", "--pid=42"]
    assert "--nonblocking" in command
    assert "--format=raw" in command


def test_recorder_samples_the_python_code_on_the_cpu() -> None:
    """Only the thread holding the GIL is sampled: threads waiting on a socket or a lock are
    not where the runtime spends its CPU."""
    assert "--gil" in recorder_command(42, Path("/out.txt"))
