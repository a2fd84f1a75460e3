"""The binding threads: at most `limit` cycles at once, an idle thread reused for the next
cycle, retired once idle for long, and whatever escapes a cycle handed to on_bug."""

from __future__ import annotations

import threading

import pytest

from scheduler_runtime.live.bindings import Bindings, BindingsClosedError

WAIT = 10


def test_cycles_one_after_another_run_on_one_thread() -> None:
    bindings = Bindings(4, on_bug=lambda bug: None)
    ran_on: list[str] = []
    for _ in range(50):
        bindings.start(lambda: ran_on.append(threading.current_thread().name))
        assert bindings.idle(WAIT)
    assert len(ran_on) == 50
    assert len(set(ran_on)) == 1


def test_no_more_than_limit_run_at_once_and_the_next_waits_for_one_to_end() -> None:
    bindings = Bindings(3, on_bug=lambda bug: None)
    release = threading.Event()
    for _ in range(3):
        bindings.start(lambda: release.wait(WAIT))
    assert bindings.running() == 3
    fourth_started = threading.Event()
    starter = threading.Thread(target=lambda: bindings.start(fourth_started.set))
    starter.start()
    assert not fourth_started.wait(0.3)  # waits: three run
    release.set()
    assert fourth_started.wait(WAIT)
    starter.join(WAIT)
    assert bindings.idle(WAIT)


def test_a_thread_idle_for_long_ends_and_a_later_cycle_gets_a_new_one() -> None:
    bindings = Bindings(4, on_bug=lambda bug: None, idle_seconds=0.05)
    first: list[threading.Thread] = []
    bindings.start(lambda: first.append(threading.current_thread()))
    assert bindings.idle(WAIT)
    first[0].join(WAIT)
    assert not first[0].is_alive()
    later: list[threading.Thread] = []
    bindings.start(lambda: later.append(threading.current_thread()))
    assert bindings.idle(WAIT)
    assert len(later) == 1
    assert later[0] is not first[0]


def test_what_escapes_a_cycle_reaches_on_bug_and_the_thread_serves_on() -> None:
    bugs: list[BaseException] = []
    bindings = Bindings(2, on_bug=bugs.append)

    def broken() -> None:
        raise KeyError("ns/a")

    bindings.start(broken)
    assert bindings.idle(WAIT)
    ran = threading.Event()
    bindings.start(ran.set)
    assert ran.wait(WAIT)
    assert [type(bug) for bug in bugs] == [KeyError]
    assert bindings.idle(WAIT)


def test_a_closed_set_of_threads_starts_nothing() -> None:
    bindings = Bindings(2, on_bug=lambda bug: None)
    assert bindings.close(WAIT)
    with pytest.raises(BindingsClosedError, match="stopping"):
        bindings.start(lambda: None)
