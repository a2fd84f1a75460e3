"""Where the live scheduler's binding cycles run: a thread each, as upstream starts a goroutine
per pod, so a pod waiting at Permit or in PreBind (a device's binding conditions, volumes being
bound: up to ten minutes) holds nothing but its own thread and never delays another pod's
binding. At most `limit` run at once (the memory they hold stays bounded): past it, starting
one waits for one to end. A thread whose binding ended waits IDLE_SECONDS for the next one
before it exits: starting a thread per pod cost more than the rest of the binding's own work."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

log = logging.getLogger("scheduler_runtime.scheduler")
IDLE_SECONDS = 10.0


class _Parked:
    """An idle binding thread's slot: the next binding handed to it, or None to exit."""

    __slots__ = ("ready", "run")

    def __init__(self) -> None:
        self.ready = threading.Event()
        self.run: Callable[[], None] | None = None


class BindingsClosedError(RuntimeError):
    """The scheduler is stopping: no further binding starts."""


class Bindings:
    """The binding threads under way."""

    def __init__(self, limit: int, on_bug: Callable[[BaseException], None]) -> None:
        self.limit = limit
        self.on_bug = on_bug
        self._changed = threading.Condition()
        self._running = 0
        self._closed = False
        self._started = 0
        self._parked: list[_Parked] = []  # idle threads, the latest parked last

    def start(self, run: Callable[[], None]) -> None:
        """Runs `run` on a thread of its own (an idle one, else a new one) once fewer than
        `limit` run."""
        with self._changed:
            while self._running >= self.limit and not self._closed:
                self._changed.wait()
            if self._closed:
                raise BindingsClosedError("the scheduler is stopping")
            self._running += 1
            if self._parked:
                parked = self._parked.pop()
                parked.run = run
                parked.ready.set()
                return
            self._started += 1
            name = f"binding-{self._started}"
        thread = threading.Thread(target=self._serve, args=(run,), name=name, daemon=True)
        try:
            thread.start()
        except BaseException:
            self._ended()
            raise

    def _serve(self, run: Callable[[], None] | None) -> None:
        """Runs bindings until none comes within IDLE_SECONDS, or the bindings close."""
        while run is not None:
            try:
                run()
            except BaseException as bug:  # its outcome is observed, never lost
                self.on_bug(bug)
            finally:
                self._ended()
            run = self._park()

    def _park(self) -> Callable[[], None] | None:
        """The next binding handed to this thread; None when it should exit."""
        parked = _Parked()
        with self._changed:
            if self._closed:
                return None
            self._parked.append(parked)
        if parked.ready.wait(IDLE_SECONDS):
            return parked.run
        with self._changed:
            if parked.ready.is_set():  # handed one while the wait ended
                return parked.run
            self._parked.remove(parked)
        return None

    def _ended(self) -> None:
        with self._changed:
            self._running -= 1
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
            parked, self._parked = self._parked, []
        for slot in parked:  # idle threads exit
            slot.ready.set()
        return self.idle(timeout)
