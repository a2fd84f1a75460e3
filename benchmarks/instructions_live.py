"""The live path under the instruction counter: a pod's watch events as the API server sends
them (added, bound, running, being deleted, deleted) fed through the reflector's event
handling into the live scheduler, whose API requests a Kube answers at once, without a
server. One pod at a time: added, scheduled, bound; its watch events follow the binding, and
each pod is deleted once LAG newer pods are bound (the cluster stays at a steady size)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

import orjson

from scheduler_runtime.backend import NODES, PODS
from scheduler_runtime.config import load_configuration
from scheduler_runtime.live.apiconfig import ApiConfig
from scheduler_runtime.live.kube import Kube
from scheduler_runtime.live.metrics import SchedulerMetrics
from scheduler_runtime.live.outcomes import Outcomes
from scheduler_runtime.live.reflector import Reflector
from scheduler_runtime.live.run import HeapKeeper
from scheduler_runtime.live.scheduler import Scheduler

LAG = 20  # pods bound before the oldest is deleted
CREATED = "2026-01-01T00:00:00Z"
STARTED = "2026-01-01T00:00:01Z"


class Counter(Protocol):
    def start(self) -> None: ...

    def stop(self) -> None: ...


class AnsweringKube(Kube):
    """Every request answered at once with an empty object; bindings and events counted."""

    def __init__(self) -> None:
        super().__init__(ApiConfig.at("http://127.0.0.1:9"))
        self.changed = threading.Condition()
        self.bound: dict[str, str] = {}  # pod name -> node
        self.events = 0

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
        if before_send is not None:
            before_send()
        with self.changed:
            if path.endswith("/binding"):
                self.bound[body["metadata"]["name"]] = body["target"]["name"]
            elif path.endswith("/events"):
                self.events += 1
            self.changed.notify_all()
        return {}

    def wait(self, ready: Callable[[], bool]) -> None:
        with self.changed:
            if not self.changed.wait_for(ready, timeout=60):
                raise RuntimeError("the replay waited 60s for the scheduler")


class Replay:
    """The watch streams of nodes and pods, played to the live scheduler."""

    def __init__(self, nodes: list[dict[str, Any]]) -> None:
        config = load_configuration(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "profiles": [{"schedulerName": "bench-simulate"}],
            }
        )
        self.kube = AnsweringKube()
        outcomes = Outcomes(self.kube, self.kube, "replay")
        self.scheduler = Scheduler(config, self.kube, outcomes, SchedulerMetrics())
        events = self.scheduler.backend.events
        self.nodes = Reflector(self.kube, NODES, "/api/v1/nodes", events)
        self.pods = Reflector(self.kube, PODS, "/api/v1/pods", events)
        self.version = 0
        self.played: list[dict[str, Any]] = []  # pods added, oldest first
        for node in nodes:
            self._send(self.nodes, "ADDED", node)

    def _send(self, reflector: Reflector, kind: str, obj: dict[str, Any]) -> None:
        self.version += 1
        obj["metadata"]["resourceVersion"] = str(self.version)
        # Decoded from its JSON line, as Kube.watch hands the reflector an event.
        line = orjson.dumps({"type": kind, "object": obj})
        reflector._handle(orjson.loads(line))

    def pod(self, pod: dict[str, Any]) -> None:
        """Pod added, scheduled (one cycle of the loop), bound: its watch events; then the
        oldest pod's deletion once LAG pods are bound."""
        name = pod["metadata"]["name"]
        pod["metadata"] |= {"uid": f"uid-{name}", "creationTimestamp": CREATED}
        self._send(self.pods, "ADDED", pod)
        queued = self.scheduler.queue.pop(timeout=0)
        if queued is None:
            raise RuntimeError(f"pod {name}: not queued")
        self.scheduler.schedule_one(queued)
        self.kube.wait(lambda: name in self.kube.bound)
        pod["spec"]["nodeName"] = self.kube.bound[name]
        scheduled = {"type": "PodScheduled", "status": "True"}
        pod["status"] = {"phase": "Pending", "conditions": [scheduled]}
        self._send(self.pods, "MODIFIED", pod)
        ready = [{"type": t, "status": "True"} for t in ("Initialized", "Ready")]
        pod["status"] = {
            "phase": "Running",
            "conditions": [scheduled, *ready],
            "podIP": "10.0.0.1",
            "startTime": STARTED,
            "containerStatuses": [{"name": "app", "ready": True, "restartCount": 0}],
        }
        self._send(self.pods, "MODIFIED", pod)
        self.played.append(pod)
        if len(self.played) > LAG:
            self._delete(self.played.pop(0))

    def _delete(self, pod: dict[str, Any]) -> None:
        pod["metadata"] |= {"deletionTimestamp": STARTED, "deletionGracePeriodSeconds": 0}
        self._send(self.pods, "MODIFIED", pod)
        self._send(self.pods, "DELETED", pod)

    def settle(self, pods: int) -> None:
        """Waits until every pod's Scheduled event is written."""
        self.kube.wait(lambda: self.kube.events >= pods)


def run_live(state: Path, counter: Counter) -> int:
    """The warm-up pods, then the measured ones between two markers; the pods bound."""
    setup, warm, measured = orjson.loads(state.read_bytes())
    replay = Replay(setup)
    for pod in warm:
        replay.pod(pod)
    replay.settle(len(warm))
    # As the live runtime keeps its heap (HeapKeeper): the warm-up's objects frozen, no full
    # collection, so where a collection falls cannot move the count by several percent.
    HeapKeeper().freeze()
    counter.start()
    for pod in measured:
        replay.pod(pod)
    replay.settle(len(warm) + len(measured))
    counter.stop()
    replay.scheduler.stop()
    return len(replay.kube.bound)
