"""Where the live scheduler's binding cycles run: a thread each, as upstream starts a goroutine
per pod, so a pod waiting at Permit or in PreBind (a device's binding conditions, volumes being
bound: up to ten minutes) holds nothing but its own thread and never delays another pod's
binding. At most `limit` run at once (the memory they hold stays bounded): past it, starting
one waits for one to end."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

log = logging.getLogger("scheduler_runtime.scheduler")


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

    def start(self, run: Callable[[], None]) -> None:
        """Runs `run` on a thread of its own once fewer than `limit` run."""
        with self._changed:
            while self._running >= self.limit and not self._closed:
                self._changed.wait()
            if self._closed:
                raise BindingsClosedError("the scheduler is stopping")
            self._running += 1
            self._started += 1
            name = f"binding-{self._started}"
        thread = threading.Thread(target=self._run, args=(run,), name=name, daemon=True)
        try:
            thread.start()
        except BaseException:
            self._ended()
            raise

    def _run(self, run: Callable[[], None]) -> None:
        try:
            run()
        except BaseException as bug:  # its outcome is observed, never lost
            self.on_bug(bug)
        finally:
            self._ended()

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
        return self.idle(timeout)
