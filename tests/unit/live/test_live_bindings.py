"""The binding threads: a thread whose binding ended takes the next one instead of a new
thread starting per pod; idle threads exit on close, and the limit still holds."""

from __future__ import annotations

import threading

from scheduler_runtime.live.bindings import Bindings


def test_a_binding_thread_takes_the_next_binding() -> None:
    bindings = Bindings(4, on_bug=lambda bug: None)
    ran: list[int] = []
    try:
        for _ in range(3):
            bindings.start(lambda: ran.append(threading.get_ident()))
            assert bindings.idle(10)
            # Parked again before the next one starts (it parks right after it ends).
            for _ in range(1000):
                if bindings._parked:
                    break
                threading.Event().wait(0.01)
        assert len(ran) == 3
        assert len(set(ran)) == 1
    finally:
        assert bindings.close(10)


def test_idle_threads_exit_on_close() -> None:
    bindings = Bindings(4, on_bug=lambda bug: None)
    names: list[str] = []
    bindings.start(lambda: names.append(threading.current_thread().name))
    assert bindings.idle(10)
    assert bindings.close(10)
    for thread in threading.enumerate():
        if thread.name in names:
            thread.join(10)
            assert not thread.is_alive()


def test_at_most_the_limit_run_at_once_and_a_failure_is_reported() -> None:
    bugs: list[BaseException] = []
    bindings = Bindings(2, on_bug=bugs.append)
    release = threading.Event()
    bindings.start(release.wait)
    bindings.start(release.wait)
    assert bindings.running() == 2
    started = threading.Event()
    third = threading.Thread(target=lambda: bindings.start(started.set))
    third.start()
    assert not started.wait(0.2)  # waits for one of the two to end
    release.set()
    assert started.wait(10)
    third.join(10)

    def fail() -> None:
        raise RuntimeError("bug")

    bindings.start(fail)
    assert bindings.idle(10)
    assert [str(bug) for bug in bugs] == ["bug"]
    assert bindings.close(10)
