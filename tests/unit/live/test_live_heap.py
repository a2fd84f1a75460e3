"""The runtime's garbage-collection policy: what lives is frozen out of full collections,
which only an hourly tick runs, and a frozen cycle that dies is reclaimed then; each tick hands
freed heap memory back to the system."""

from __future__ import annotations

import gc
import threading
import weakref
from collections.abc import Iterator

import pytest

from scheduler_runtime.live.run import NEVER, HeapKeeper


@pytest.fixture(autouse=True)
def restore_gc() -> Iterator[None]:
    thresholds = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*thresholds)


class Node:
    """A reference cycle: one Node pointing at itself."""

    def __init__(self) -> None:
        self.me = self


def test_freeze_keeps_what_lives_out_of_collections() -> None:
    keeper = HeapKeeper()
    alive = [{"pod": i} for i in range(100)]
    keeper.freeze()
    assert gc.get_freeze_count() >= len(alive)
    assert gc.get_threshold()[2] == NEVER
    assert gc.get_count()[2] == 0


def test_an_hourly_tick_reclaims_a_frozen_cycle() -> None:
    keeper = HeapKeeper(collect_all_every=3600)
    cycle = Node()
    died = threading.Event()
    keeper.freeze()

    weakref.finalize(cycle, died.set)
    del cycle
    keeper.tick()  # within the hour: the frozen cycle stays
    assert not died.is_set()
    keeper.collect_all_every = 0
    keeper.tick()  # the hourly full collection
    assert died.is_set()
    assert gc.get_freeze_count() > 0  # and what lives is frozen again


def test_run_ticks_until_done() -> None:
    keeper = HeapKeeper(freeze_every=0.01)
    done = threading.Event()
    runner = threading.Thread(target=keeper.run, args=(done,))
    runner.start()
    done.wait(0.1)
    done.set()
    runner.join(timeout=5)
    assert not runner.is_alive()
    assert gc.get_freeze_count() > 0


def test_each_tick_hands_freed_memory_back() -> None:
    released: list[int] = []
    keeper = HeapKeeper(release=lambda: released.append(1))
    keeper.tick()
    keeper.tick()
    assert released == [1, 1]


def test_the_c_librarys_trim_is_found_here() -> None:
    """This machine's C library is glibc: the default release is its malloc_trim, which
    answers 1 when it gave memory back and 0 when there was none."""
    assert HeapKeeper().release() in (0, 1)
