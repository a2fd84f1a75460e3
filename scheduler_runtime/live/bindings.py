"""Where the live scheduler's binding cycles run: a thread each, as upstream starts a goroutine
per pod, so a pod waiting at Permit or in PreBind (a device's binding conditions, volumes being
bound: up to ten minutes) holds nothing but its own thread and never delays another pod's
binding. A pod with nothing to wait for but its binding's answer needs no thread: its cycle
is counted from `begin` until it ends on the thread that receives the answer. At most `limit`
run at once (the memory they hold stays bounded): past it, starting one waits for one to end.
A thread whose cycle ended waits a while for the next one: starting a thread costs the
scheduling loop about 0.1 ms, a pod's whole binding cycle not much more."""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable

log = logging.getLogger("scheduler_runtime.scheduler")

IDLE_SECONDS = 60.0  # how long a thread with no cycle to run is kept


class BindingsClosedError(RuntimeError):
    """The scheduler is stopping: no further binding starts."""


class Bindings:
    """The binding threads: those running a cycle, and those idle waiting for one."""

    def __init__(
        self,
        limit: int,
        on_bug: Callable[[BaseException], None],
        idle_seconds: float = IDLE_SECONDS,
    ) -> None:
        self.limit = limit
        self.on_bug = on_bug
        self.idle_seconds = idle_seconds
        self._changed = threading.Condition()
        self._cycles: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._running = 0
        self._idle = 0  # threads waiting for a cycle, less the cycles queued for them
        self._closed = False
        self._started = 0

    def start(self, run: Callable[[], None]) -> None:
        """Runs `run` on a thread of its own once fewer than `limit` run."""
        with self._changed:
            self._enter()
            if self._idle:
                self._idle -= 1
                self._cycles.put(run)  # under the lock: an idle thread timing out sees it
                return
            self._started += 1
            name = f"binding-{self._started}"
        thread = threading.Thread(target=self._serve, args=(run,), name=name, daemon=True)
        try:
            thread.start()
        except BaseException:
            self._ended()
            raise

    def begin(self) -> Callable[[], None]:
        """Counts a cycle that needs no thread of its own (it ends on the thread that receives
        its API answer) as running, once fewer than `limit` run, until the function returned
        is called."""
        with self._changed:
            self._enter()
        return self._ended

    def _enter(self) -> None:
        while self._running >= self.limit and not self._closed:
            self._changed.wait()
        if self._closed:
            raise BindingsClosedError("the scheduler is stopping")
        self._running += 1

    def _serve(self, run: Callable[[], None] | None) -> None:
        """Runs `run`, then each cycle given to it while idle, until none comes."""
        while run is not None:
            try:
                run()
            except BaseException as bug:  # its outcome is observed, never lost
                self.on_bug(bug)
            finally:
                self._ended(idle=True)
            run = self._next()

    def _next(self) -> Callable[[], None] | None:
        """The next cycle; None once none came for `idle_seconds` (the thread then ends)."""
        while True:
            try:
                return self._cycles.get(timeout=self.idle_seconds)
            except queue.Empty:
                with self._changed:
                    if self._cycles.empty():  # else one was queued as the wait ended
                        self._idle -= 1
                        return None

    def _ended(self, *, idle: bool = False) -> None:
        with self._changed:
            self._running -= 1
            self._idle += idle
            self._changed.notify_all()

    def running(self) -> int:
        with self._changed:
            return self._running

    def idle(self, timeout: float | None = None) -> bool:
        """Waits until no binding runs; False when some still run after `timeout`."""
        with self._changed:
            return self._changed.wait_for(lambda: self._running == 0, timeout)

    def close(self, timeout: float | None = None) -> bool:
        """No further binding starts; waits for those under way (see idle)."""
        with self._changed:
            self._closed = True
            self._changed.notify_all()
        return self.idle(timeout)
