"""The API dispatcher's call queue (upstream's callQueue): one call per object at a time, a more
relevant call supersedes a pending one, a less relevant one is skipped, calls of one type merge,
and a call added while one is in flight runs after it. Driven step by step: no worker threads."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import pytest

from scheduler_runtime.backend.api_dispatcher import (
    APICall,
    APIDispatcher,
    CallOverwrittenError,
    CallQueue,
    CallSkippedError,
)

RELEVANCES = {"pod_status_patch": 1, "pod_binding": 2}


@dataclass(eq=False)
class Call:
    uid: str
    call_type: str
    writes: list[str] = field(default_factory=list)
    noop: bool = False

    def execute(self) -> None:
        pass

    def merge(self, old: APICall) -> None:
        assert isinstance(old, Call)
        self.writes = old.writes + self.writes

    def is_noop(self) -> bool:
        return self.noop


def status(uid: str, *writes: str) -> Call:
    return Call(uid, "pod_status_patch", list(writes))


def binding(uid: str) -> Call:
    return Call(uid, "pod_binding", ["bind"])


def queue() -> tuple[CallQueue, dict[str, int]]:
    pending: dict[str, int] = {}

    def gauge(call_type: str, change: int) -> None:
        pending[call_type] = pending.get(call_type, 0) + change

    return CallQueue(RELEVANCES, gauge), pending


def test_a_binding_supersedes_a_pending_status_patch() -> None:
    calls, pending = queue()
    refusal = calls.add(status("a", "refused"))
    bind = calls.add(binding("a"))
    with pytest.raises(CallOverwrittenError):
        refusal.finished.result(0)
    popped = calls.pop()
    assert popped is bind
    calls.finalize(popped)
    assert calls.pending() == 0
    assert pending == {"pod_status_patch": 0, "pod_binding": 0}


def test_a_status_patch_is_skipped_while_the_binding_is_pending_or_in_flight() -> None:
    calls, _ = queue()
    bind = calls.add(binding("a"))
    late = calls.add(status("a", "refused"))
    with pytest.raises(CallSkippedError):
        late.finished.result(0)
    popped = calls.pop()
    assert popped is bind
    later = calls.add(status("a", "refused again"))  # the binding is in flight
    with pytest.raises(CallSkippedError):
        later.finished.result(0)
    calls.finalize(popped)
    assert calls.pending() == 0


def test_a_newer_status_patch_merges_into_the_pending_one() -> None:
    calls, _ = queue()
    older = calls.add(status("a", "nominate n1"))
    newer = calls.add(status("a", "refused"))
    with pytest.raises(CallOverwrittenError):
        older.finished.result(0)
    popped = calls.pop()
    assert popped is newer
    assert isinstance(popped.call, Call)
    assert popped.call.writes == ["nominate n1", "refused"]
    assert calls.pending() == 0


def test_a_call_added_while_one_is_in_flight_runs_after_it() -> None:
    calls, _ = queue()
    first = calls.add(status("a", "first"))
    other = calls.add(status("b", "other pod"))
    in_flight = calls.pop()
    assert in_flight is first
    bind = calls.add(binding("a"))  # more relevant, but waits for the patch under way
    assert calls.pop() is other
    assert calls.pending() == 0  # not queued until the one in flight is done
    calls.finalize(in_flight)
    assert calls.pop() is bind


def test_a_noop_call_is_skipped_and_takes_a_pending_one_with_it() -> None:
    calls, _ = queue()
    calls.add(status("a", "old"))
    noop = calls.add(Call("a", "pod_status_patch", noop=True))
    with pytest.raises(CallSkippedError):
        noop.finished.result(0)
    assert calls.pending() == 0


def test_the_dispatcher_runs_each_objects_calls_in_order_and_reports_failures() -> None:
    landed: list[str] = []
    started, release = threading.Event(), threading.Event()

    @dataclass(eq=False)
    class Slow(Call):
        def execute(self) -> None:
            landed.append(f"{self.uid}: {self.writes}")
            if self.writes == ["refused"]:
                started.set()
                release.wait(10)
            if self.call_type == "pod_binding" and self.uid == "b":
                raise RuntimeError("refused by the API server")

    dispatcher = APIDispatcher(RELEVANCES, 4)
    first = dispatcher.add(Slow("a", "pod_status_patch", ["refused"]))
    assert started.wait(10)
    bound = dispatcher.add(Slow("a", "pod_binding", ["bind"]))
    failed = dispatcher.add(Slow("b", "pod_binding", ["bind"]))
    with pytest.raises(RuntimeError, match="refused by the API server"):
        failed.result(10)
    assert not bound.done()  # waits for the patch under way about the same pod
    release.set()
    first.result(10)
    bound.result(10)
    dispatcher.close(10)
    assert [w for w in landed if w.startswith("a")] == ["a: ['refused']", "a: ['bind']"]
    with pytest.raises(CallSkippedError):
        dispatcher.add(status("c", "after close")).result(0)
