"""Out-of-tree plugins run behind a guard: an exception, a call that overruns the plugin's time
budget or a result of the wrong type becomes that plugin's Error status for the pod, with one
log line, so a broken plugin can neither crash nor stall the scheduler. In-tree plugins are
called directly and stay on the fast path.

A guarded call runs on a daemon thread and is abandoned when its budget ends (Python cannot
stop a thread); while a plugin has `MAX_ABANDONED` calls still running, further calls fail at
once instead of piling up threads.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

import numpy as np

from scheduler_runtime.framework.interface import PostFilterResult, PreFilterResult
from scheduler_runtime.framework.podinfo import PodInfo
from scheduler_runtime.framework.snapshot import Int64s, Slots, Snapshot
from scheduler_runtime.framework.status import Code, NodeVerdicts, Status

log = logging.getLogger("scheduler_runtime.plugins")

MAX_ABANDONED = 4
# Called by the queue for every comparison or pod added: a thread per call would cost more
# than these cheap checks ever should, so they are checked but not timed.
UNTIMED = frozenset({"less", "pre_enqueue"})


class FrameworkError(RuntimeError):
    """A plugin cannot be built, or returned an Error status during a cycle."""


class PluginCallError(Exception):
    """What went wrong in one guarded call, worded for the log and the pod's events."""


def _is_status(value: Any) -> bool:
    return isinstance(value, Status)


def _is_score(value: Any) -> bool:
    return (
        isinstance(value, tuple)
        and len(value) == 2
        and isinstance(value[0], int | np.integer)
        and not isinstance(value[0], bool)
        and _is_status(value[1])
    )


def _pair_of(first: type) -> Callable[[Any], bool]:
    def check(value: Any) -> bool:
        return (
            isinstance(value, tuple)
            and len(value) == 2
            and (value[0] is None or isinstance(value[0], first))
            and _is_status(value[1])
        )

    return check


def _is_permit(value: Any) -> bool:
    return (
        isinstance(value, tuple)
        and len(value) == 2
        and _is_status(value[0])
        and isinstance(value[1], int | float)
    )


# What each method must return, and what stands in for it when the call fails.
_RESULTS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "pre_enqueue": (_is_status, "a Status"),
    "filter": (_is_status, "a Status"),
    "pre_score": (_is_status, "a Status"),
    "normalize_score": (_is_status, "a Status"),
    "reserve": (_is_status, "a Status"),
    "pre_bind_pre_flight": (_is_status, "a Status"),
    "pre_bind": (_is_status, "a Status"),
    "bind": (_is_status, "a Status"),
    "add_pod": (_is_status, "a Status"),
    "remove_pod": (_is_status, "a Status"),
    "score": (_is_score, "(int, Status)"),
    "pre_filter": (_pair_of(PreFilterResult), "(PreFilterResult | None, Status)"),
    "post_filter": (_pair_of(PostFilterResult), "(PostFilterResult | None, Status)"),
    "permit": (_is_permit, "(Status, float)"),
    "less": (lambda value: isinstance(value, bool), "a bool"),
    "unreserve": (lambda value: True, "None"),
    "post_bind": (lambda value: True, "None"),
}


def _failed(method: str, status: Status) -> Any:
    """The result a failed call of `method` stands for."""
    if method in ("pre_filter", "post_filter"):
        return None, status
    if method == "score":
        return 0, status
    if method == "permit":
        return status, 0.0
    if method == "less":
        return False
    if method in ("unreserve", "post_bind"):
        return None
    return status


class _each:  # noqa: N801 - reads as a predicate
    """A check applied to every value of a per-node result list."""

    def __init__(self, item: Callable[[Any], bool]) -> None:
        self.item = item

    def __call__(self, values: list[Any]) -> bool:
        return all(self.item(value) for value in values)


def _shape(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape}"
    return type(value).__name__


def _pod_key(args: Sequence[Any]) -> str:
    return next((arg.key for arg in args if isinstance(arg, PodInfo)), "")


class GuardedPlugin:
    """An out-of-tree plugin seen through its guard; exposes exactly the methods it defines,
    plus batch `filter_nodes` / `score_nodes` that run its per-node methods over all
    candidate nodes within one budget."""

    def __init__(
        self,
        plugin: Any,
        budget: float,
        to_verdicts: Callable[[str, Sequence[Status]], NodeVerdicts],
    ) -> None:
        self.plugin = plugin
        self.name: str = plugin.name
        self.budget = float(getattr(plugin, "time_budget", budget))
        self._to_verdicts = to_verdicts
        self._abandoned = 0
        self._lock = threading.Lock()
        for method in _RESULTS:
            inner = getattr(plugin, method, None)
            if callable(inner):
                setattr(self, method, self._guarded(method, inner))
        if any(callable(getattr(plugin, m, None)) for m in ("filter", "filter_nodes")):
            self.filter_nodes = self._filter_nodes
        if any(callable(getattr(plugin, m, None)) for m in ("score", "score_nodes")):
            self.score_nodes = self._score_nodes
        if callable(getattr(plugin, "events_to_register", None)):
            self.events_to_register = plugin.events_to_register  # asked once, at start

    def _guarded(self, method: str, inner: Callable[..., Any]) -> Callable[..., Any]:
        check, expected = _RESULTS[method]

        def call(*args: Any) -> Any:
            try:
                return self._checked(method, lambda: inner(*args), check, expected)
            except PluginCallError as failure:
                return _failed(method, self._error(method, args, failure))

        return call

    def _filter_nodes(
        self, state: Any, pod: PodInfo, snapshot: Snapshot, slots: Slots
    ) -> NodeVerdicts:
        """The plugin's own batch filter, or its per-node filter over every candidate."""
        batch = getattr(self.plugin, "filter_nodes", None)
        if callable(batch):
            verdicts: NodeVerdicts = self._checked_or_raise(
                "filter_nodes",
                pod,
                lambda: batch(state, pod, snapshot, slots),
                lambda value: isinstance(value, NodeVerdicts) and len(value.rejected) == len(slots),
                f"NodeVerdicts for {len(slots)} nodes",
            )
            return verdicts
        statuses: list[Status] = self._checked_or_raise(
            "filter",
            pod,
            lambda: [self.plugin.filter(state, pod, snapshot.info(int(s))) for s in slots],
            _each(_is_status),
            "a Status",
        )
        failed = next((status for status in statuses if status.code == Code.ERROR), None)
        if failed is not None:
            self._raise("filter", pod, PluginCallError(failed.message()))
        return self._to_verdicts(self.name, statuses)

    def _score_nodes(self, state: Any, pod: PodInfo, snapshot: Snapshot, slots: Slots) -> Int64s:
        """The plugin's own batch score, or its per-node score over every candidate."""
        batch = getattr(self.plugin, "score_nodes", None)
        if callable(batch):
            scores: Int64s = self._checked_or_raise(
                "score_nodes",
                pod,
                lambda: np.asarray(batch(state, pod, snapshot, slots), dtype=np.int64),
                lambda value: value.shape == (len(slots),),
                f"{len(slots)} integer scores",
            )
            return scores
        pairs: list[tuple[int, Status]] = self._checked_or_raise(
            "score",
            pod,
            lambda: [self.plugin.score(state, pod, snapshot.info(int(s))) for s in slots],
            _each(_is_score),
            "(int, Status)",
        )
        failed = next((status for _, status in pairs if not status.is_success), None)
        if failed is not None:
            self._raise("score", pod, PluginCallError(failed.message()))
        return np.array([int(score) for score, _ in pairs], dtype=np.int64)

    def _checked(
        self, method: str, run: Callable[[], Any], check: Callable[[Any], bool], expected: str
    ) -> Any:
        result = self._within_budget(method, run)
        if not check(result):
            shown = result
            if isinstance(check, _each):  # name the wrong value, not the list around it
                shown = next(value for value in result if not check.item(value))
            raise PluginCallError(f"{method} returned {_shape(shown)}, expected {expected}")
        return result

    def _checked_or_raise(
        self,
        method: str,
        pod: PodInfo,
        run: Callable[[], Any],
        check: Callable[[Any], bool],
        expected: str,
    ) -> Any:
        """For the batch methods, whose callers take an error as FrameworkError."""
        try:
            return self._checked(method, run, check, expected)
        except PluginCallError as failure:
            self._raise(method, pod, failure)

    def _within_budget(self, method: str, function: Callable[[], Any]) -> Any:
        if method in UNTIMED:
            try:
                return function()
            except Exception as error:  # whatever a user's plugin raises is its failure
                raise PluginCallError(f"{method} raised {type(error).__name__}: {error}") from None
        with self._lock:
            if self._abandoned >= MAX_ABANDONED:
                raise PluginCallError(
                    f"{self._abandoned} earlier calls are still running past their time budget"
                )
        outcome: list[Any] = []

        def target() -> None:
            try:
                outcome.append((True, function()))
            except Exception as error:  # whatever a user's plugin raises is its failure
                outcome.append((False, error))
            finally:
                with self._lock:
                    if abandoned.is_set():
                        self._abandoned -= 1

        abandoned = threading.Event()
        worker = threading.Thread(target=target, name=f"plugin-{self.name}", daemon=True)
        worker.start()
        worker.join(self.budget)
        with self._lock:
            if not outcome:
                abandoned.set()
                self._abandoned += 1
                raise PluginCallError(
                    f"{method} did not return within its time budget of {self.budget:g}s"
                )
        succeeded, value = outcome[0]
        if not succeeded:
            raise PluginCallError(f"{method} raised {type(value).__name__}: {value}")
        return value

    def _error(self, method: str, args: Sequence[Any], failure: PluginCallError) -> Status:
        pod = _pod_key(args)
        log.warning(
            'plugin failed plugin="%s" point="%s" pod="%s" error="%s"',
            self.name,
            method,
            pod,
            failure,
        )
        return Status(Code.ERROR, (f"plugin {self.name} failed: {failure}",), self.name, failure)

    def _raise(self, method: str, pod: PodInfo, failure: PluginCallError) -> NoReturn:
        status = self._error(method, (pod,), failure)
        raise FrameworkError(status.message()) from failure
