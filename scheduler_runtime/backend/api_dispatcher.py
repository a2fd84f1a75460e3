"""Upstream's API dispatcher (pkg/scheduler/backend/api_dispatcher, feature
SchedulerAsyncAPICalls): every API call about an object goes through one queue, at most one
call per object (keyed by UID) pending or in flight at a time, so the writes about an object
land in order. A newer call meets the pending one as upstream's callQueue.merge decides: a
less relevant call is skipped (a status patch while the binding is pending), a more relevant
one overwrites it (the binding supersedes a pending status patch), a call of the same type
merges with it (a newer status patch takes over the older's pending parts). A call added while
one for the object is in flight waits for it to finish.

The calls run on a fixed set of worker threads (upstream: a goroutine per call), so the API
client's concurrency is bounded; the call types themselves are the caller's (live/api_calls)."""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Protocol

log = logging.getLogger("scheduler_runtime.scheduler")


class CallSkippedError(Exception):
    """fwk.ErrCallSkipped: the call was not executed (a more relevant one is queued, or it
    would change nothing)."""


class CallOverwrittenError(Exception):
    """fwk.ErrCallOverwritten: a newer call for the object took this one's place."""


class APICall(Protocol):
    """fwk.APICall: one API call about one object."""

    @property
    def call_type(self) -> str: ...

    @property
    def uid(self) -> str: ...

    def execute(self) -> None:
        """Sends the call; raises what the API (or the fence) raised."""

    def merge(self, old: APICall) -> None:
        """Takes over what the older pending call of the same type still had to write."""

    def is_noop(self) -> bool:
        """Whether sending it would change nothing."""


@dataclass(eq=False)
class QueuedCall:
    """A call in the queue, with who waits for it and its identity among the object's calls."""

    call: APICall
    call_id: int
    finished: Future[None] = field(default_factory=Future)

    def finish(self, error: BaseException | None = None) -> None:
        """sendOnFinish: tells whoever waits, once."""
        if self.finished.done():
            return
        if error is None:
            self.finished.set_result(None)
        else:
            self.finished.set_exception(error)


# Result labels of upstream's async call metrics.
SUCCESS, ERROR = "success", "error"
Observer = Callable[[str, str, float], None]  # call type, result, seconds
PendingGauge = Callable[[str, int], None]  # call type, change


def ignore_observation(_call_type: str, _result: str, _seconds: float) -> None:
    return None


def ignore_pending(_call_type: str, _change: int) -> None:
    return None


class CallQueue:
    """callQueue: the object UIDs whose call waits to run, in order, and for each tracked
    object its one pending or in-flight call."""

    def __init__(self, relevances: Mapping[str, int], pending: PendingGauge) -> None:
        self.relevances = relevances
        self._pending_gauge = pending
        self._lock = threading.Lock()
        self._ready = threading.Condition(self._lock)
        self._closed = False
        self._next_id = 0
        self._calls: dict[str, QueuedCall] = {}
        self._order: deque[str] = deque()
        self._in_flight: set[str] = set()

    def add(self, call: APICall) -> QueuedCall:
        """Queues `call`, or skips, overwrites or merges as upstream's add does; a skipped
        call's future is already failed with CallSkippedError."""
        with self._lock:
            queued = QueuedCall(call, self._next_id)
            self._next_id += 1
            if self._closed:  # nothing would run it
                queued.finish(CallSkippedError("the dispatcher is closed"))
                return queued
            old = self._calls.get(call.uid)
            if old is not None and not self._merge(old, queued):
                return queued
            self._enqueue(queued, old is not None)
            return queued

    def _merge(self, old: QueuedCall, new: QueuedCall) -> bool:
        """merge: False when the new call is skipped."""
        old_type, new_type = old.call.call_type, new.call.call_type
        if self.relevances[new_type] < self.relevances[old_type]:
            new.finish(CallSkippedError("a more relevant call is already enqueued for this object"))
            return False
        if old_type != new_type:
            if old.call.uid in self._in_flight:
                return True  # it runs once the call in flight has finished
            self._pending_gauge(old_type, -1)
            self._pending_gauge(new_type, 1)
            old.finish(CallOverwrittenError("a more relevant call was enqueued for this object"))
            return True
        try:
            new.call.merge(old.call)
        except Exception as error:  # handed to whoever waits for the call
            new.finish(error)
            return False
        old.finish(CallOverwrittenError("a call of the same type was enqueued for this object"))
        return True

    def _enqueue(self, queued: QueuedCall, old_present: bool) -> None:
        uid = queued.call.uid
        if queued.call.is_noop() and uid not in self._in_flight:
            if old_present:
                self._remove_pending(uid)
            queued.finish(CallSkippedError("call does not need to be executed: it has no effect"))
            return
        self._calls[uid] = queued
        if old_present:
            return  # already queued, or queued again when the call in flight finishes
        self._order.append(uid)
        self._pending_gauge(queued.call.call_type, 1)
        self._ready.notify()

    def _remove_pending(self, uid: str) -> None:
        queued = self._calls.pop(uid, None)
        if queued is not None and uid not in self._in_flight:
            self._order.remove(uid)
            self._pending_gauge(queued.call.call_type, -1)

    def pop(self) -> QueuedCall | None:
        """The next call to run (None once closed and empty); finalize() must follow."""
        with self._lock:
            while not self._order:
                if self._closed:
                    return None
                self._ready.wait()
            uid = self._order.popleft()
            queued = self._calls[uid]
            self._in_flight.add(uid)
            self._pending_gauge(queued.call.call_type, -1)
            return queued

    def finalize(self, queued: QueuedCall) -> None:
        """The call has run: the object's newer call, if one came meanwhile, is queued."""
        with self._lock:
            uid = queued.call.uid
            self._in_flight.discard(uid)
            newer = self._calls[uid]
            if newer.call_id == queued.call_id:
                del self._calls[uid]
                return
            self._order.append(uid)
            self._pending_gauge(newer.call.call_type, 1)
            self._ready.notify()

    def pending(self) -> int:
        """How many objects' calls wait to run."""
        with self._lock:
            return len(self._order)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._ready.notify_all()


class APIDispatcher:
    """Runs the queued calls on `workers` threads; the result of each reaches its future."""

    def __init__(
        self,
        relevances: Mapping[str, int],
        workers: int,
        *,
        observe: Observer = ignore_observation,
        pending: PendingGauge = ignore_pending,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.queue = CallQueue(relevances, pending)
        self.observe = observe
        self.clock = clock
        self._starting = threading.Lock()
        self._running = False
        self._workers = [
            threading.Thread(target=self._work, name=f"api-dispatcher-{n}", daemon=True)
            for n in range(workers)
        ]

    def run(self) -> None:
        """Starts the workers (the first call does, if nothing did before)."""
        with self._starting:
            if not self._running:
                self._running = True
                for worker in self._workers:
                    worker.start()

    def add(self, call: APICall) -> Future[None]:
        """Queues `call`; its future ends with its result, CallSkippedError or
        CallOverwrittenError."""
        if not self._running:
            self.run()
        return self.queue.add(call).finished

    def pending(self) -> int:
        return self.queue.pending()

    def close(self, timeout: float | None = None) -> None:
        """No further call is taken once the queue is empty; waits for the workers."""
        self.queue.close()
        for worker in self._workers:
            if worker.ident is not None:
                worker.join(timeout)

    def _work(self) -> None:
        while (queued := self.queue.pop()) is not None:
            started = self.clock()
            error: BaseException | None = None
            try:
                queued.call.execute()
            except Exception as failed:  # handed to whoever waits for the call
                error = failed
            finally:
                self.queue.finalize(queued)
            result = SUCCESS if error is None else ERROR
            self.observe(queued.call.call_type, result, self.clock() - started)
            queued.finish(error)
