"""What a pod leaves behind is freed by reference counting alone. The live runtime runs full
collections rarely (HeapKeeper), so a reference cycle made per pod stays until then: about
4 KB a pod, 2 MiB a minute under the soak's churn. Each case ends with no cyclic garbage made
of the runtime's objects or frames."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest
from backend_support import live_scheduler, pod

from scheduler_runtime.backend import PODS
from scheduler_runtime.live.apiconfig import ApiConfig
from scheduler_runtime.live.kube import ApiError, Kube
from scheduler_runtime.live.scheduler import Scheduler

PROFILE = "ours"
WAIT = 10


class PodGoneKube(Kube):
    """An API server whose pods are gone by the time they are bound (404), as when a pod is
    deleted while its binding is on the way; every other write succeeds."""

    def __init__(self) -> None:
        super().__init__(ApiConfig.at("http://localhost"))

    def request(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, Any] | None = None,
        body: Any = None,
        content_type: str = "",
        timeout: float | None = None,
        before_send: Callable[[], None] | None = None,
    ) -> dict[str, Any]:
        if path.endswith("/binding"):
            name = path.split("/")[-2]
            raise ApiError(404, "NotFound", f'pods "{name}" not found')
        return {}


@pytest.fixture
def scheduler() -> Iterator[Scheduler]:
    """A scheduler whose pods are gone when their binding arrives."""
    kube = PodGoneKube()
    made = live_scheduler(kube, PROFILE)
    yield made
    made.stop(finish_bindings=False)


def runtime_garbage(case: Callable[[], None]) -> list[str]:
    """The runtime's objects and frames that only the cycle collector could free after
    `case` ran (anything else the interpreter or pytest made is not ours to judge)."""
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        case()
        gc.collect()
        found = [_ours(thing) for thing in gc.garbage]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    return sorted(name for name in found if name)


def _ours(thing: Any) -> str:
    if type(thing).__name__ == "frame":
        code = thing.f_code
        return code.co_qualname if "scheduler_runtime" in code.co_filename else ""
    kind = type(thing)
    return kind.__qualname__ if kind.__module__.startswith("scheduler_runtime") else ""


def attempt(scheduler: Scheduler, name: str, cpu: str = "1") -> None:
    scheduler.backend.events.upsert(PODS, pod(name, scheduler=PROFILE, cpu=cpu))
    queued = scheduler.queue.pop(timeout=1)
    assert queued is not None
    scheduler.schedule_one(queued)


def test_a_binding_for_a_pod_already_gone(scheduler: Scheduler) -> None:
    def case() -> None:
        attempt(scheduler, "refused")
        assert scheduler.bindings.idle(WAIT)
        assert "uid-refused" in scheduler.queue.ids()  # back in the queue until its deletion
        # The API writers end: each held its last call's error, the binding's among them.
        scheduler.stop()

    assert runtime_garbage(case) == []


def test_a_pod_no_node_fits(scheduler: Scheduler) -> None:
    def case() -> None:
        attempt(scheduler, "too-big", cpu="64")
        assert "uid-too-big" in scheduler.queue.ids()

    assert runtime_garbage(case) == []


def test_a_pod_deleted_while_in_active_q(scheduler: Scheduler) -> None:
    def case() -> None:
        gone = pod("gone", scheduler=PROFILE)
        scheduler.backend.events.upsert(PODS, gone)
        scheduler.backend.events.delete(PODS, gone)
        assert scheduler.queue.pop(timeout=0) is None

    assert runtime_garbage(case) == []
