"""A run is given up at its deadline even while pods are still being bound (a scheduler
that binds one pod every few seconds would otherwise hold the benchmark for hours)."""

from __future__ import annotations

import asyncio
import time

from benchmarks.measure import wait_while_progressing


async def _binding_slowly(bound_at: dict[str, float]) -> None:
    for index in range(1000):
        await asyncio.sleep(0.05)
        bound_at[f"p{index}"] = time.monotonic()


def test_a_run_that_still_binds_stops_at_its_deadline() -> None:
    async def run() -> int:
        bound_at: dict[str, float] = {}
        watcher = asyncio.create_task(_binding_slowly(bound_at))
        started = time.monotonic()
        await wait_while_progressing(watcher, bound_at, 10, deadline=started + 0.5)
        await asyncio.sleep(0)
        assert watcher.cancelled() or watcher.cancelling()
        return len(bound_at)

    assert 0 < asyncio.run(run()) < 1000  # 1000 only after 50 s


def test_without_a_deadline_a_stalled_run_stops_after_stall_seconds() -> None:
    async def run() -> float:
        watcher = asyncio.create_task(asyncio.sleep(60))
        started = time.monotonic()
        await wait_while_progressing(watcher, {}, 0.2)
        return time.monotonic() - started

    assert asyncio.run(run()) < 30  # not the watcher's 60 s
