"""Pods held at Permit (upstream's waitingPodsMap): when a Permit plugin answers Wait, the pod
keeps its reserved node and its binding cycle blocks, off the scheduling loop, until every
waiting plugin allows it, one rejects it, or a plugin's timeout passes."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping

from scheduler_runtime.framework.podinfo import PodInfo
from scheduler_runtime.framework.status import SUCCESS, Status


def go_duration(seconds: float) -> str:
    """A timeout as Go's time.Duration prints it in upstream's message ("10s", "1.5s",
    "500ms", "5m0s", "1h0m0s")."""
    if seconds < 1:
        return f"{seconds * 1000:g}ms"
    hours, rest = divmod(seconds, 3600)
    minutes, rest = divmod(rest, 60)
    text = f"{rest:g}s"
    if hours or minutes:
        text = f"{int(minutes)}m{text}"
    if hours:
        text = f"{int(hours)}h{text}"
    return text


Clock = Callable[[], float]


class WaitingPod:
    """One pod waiting at Permit; plugins allow or reject it from any thread. Its timeouts
    run on `clock` (simulate's is virtual: it calls `expire` instead of waiting)."""

    def __init__(
        self, pod: PodInfo, timeouts: Mapping[str, float], clock: Clock = time.monotonic
    ) -> None:
        self.pod = pod
        self.clock = clock
        now = clock()
        self._timeouts = dict(timeouts)
        self._deadlines = {plugin: now + timeout for plugin, timeout in timeouts.items()}
        self._verdict: Status | None = None
        self._decided = threading.Event()
        self._lock = threading.Lock()

    def pending_plugins(self) -> list[str]:
        with self._lock:
            return list(self._deadlines)

    def allow(self, plugin: str) -> None:
        """The pod may go once every plugin that answered Wait has allowed it."""
        with self._lock:
            self._deadlines.pop(plugin, None)
            if not self._deadlines:
                self._decide(SUCCESS)

    def reject(self, plugin: str, message: str) -> None:
        with self._lock:
            self._decide(Status.unschedulable(message, plugin=plugin))

    def wait(self) -> Status:
        """Blocks until the pod is allowed or rejected; a passed timeout rejects it."""
        while True:
            with self._lock:
                if self._verdict is not None:
                    return self._verdict
                plugin, deadline = min(self._deadlines.items(), key=lambda item: item[1])
            if not self._decided.wait(max(0.0, deadline - self.clock())):
                self._time_out(plugin)

    def verdict(self) -> Status | None:
        """The decision, without waiting for one (None: still waiting)."""
        with self._lock:
            return self._verdict

    def deadline(self) -> float | None:
        """When the first timeout passes (None once decided)."""
        with self._lock:
            if self._verdict is not None or not self._deadlines:
                return None
            return min(self._deadlines.values())

    def expire(self) -> None:
        """Rejects the pod if a timeout has passed by its clock (simulate, which never
        blocks in `wait`)."""
        with self._lock:
            due = [p for p, deadline in self._deadlines.items() if deadline <= self.clock()]
        if due:
            self._time_out(min(due, key=lambda plugin: self._deadlines[plugin]))

    def _time_out(self, plugin: str) -> None:
        waited = go_duration(self._timeouts[plugin])
        self.reject(plugin, f"rejected due to timeout after waiting {waited} at plugin {plugin}")

    def _decide(self, verdict: Status) -> None:
        if self._verdict is None:
            self._verdict = verdict
            self._decided.set()


class WaitingPods:
    """The pods of one framework waiting at Permit, by UID."""

    def __init__(self) -> None:
        self._pods: dict[str, WaitingPod] = {}
        self._lock = threading.Lock()

    def add(self, waiting: WaitingPod) -> None:
        with self._lock:
            self._pods[waiting.pod.uid] = waiting

    def remove(self, uid: str) -> None:
        with self._lock:
            self._pods.pop(uid, None)

    def get(self, uid: str) -> WaitingPod | None:
        with self._lock:
            return self._pods.get(uid)

    def iterate(self, callback: Callable[[WaitingPod], None]) -> None:
        with self._lock:
            pods = list(self._pods.values())
        for waiting in pods:
            callback(waiting)
