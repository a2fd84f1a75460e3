"""What-if scheduling without a cluster: the pods of a state file (what `kubectl get
nodes,pods -A -o yaml` prints) that belong to a profile are scheduled in queue order, each
placement counting for the next, through the live scheduler's own scheduling sequence
(framework/schedule_one.py) with memory as its outcome sink."""

from __future__ import annotations

import heapq
import random
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scheduler_runtime.config import DocumentError, SchedulerConfiguration, read_documents
from scheduler_runtime.framework.admission import check_object
from scheduler_runtime.framework.algorithm import SchedulingAlgorithm
from scheduler_runtime.framework.explain import Explanation
from scheduler_runtime.framework.interface import Handle, Services
from scheduler_runtime.framework.labelselector import parse_selector
from scheduler_runtime.framework.podinfo import PodInfo, pod_info
from scheduler_runtime.framework.quantity import QuantityError
from scheduler_runtime.framework.runtime import Framework
from scheduler_runtime.framework.schedule_one import Attempt, ScheduleOne
from scheduler_runtime.framework.snapshot import Snapshot
from scheduler_runtime.framework.status import SUCCESS, Code, Status
from scheduler_runtime.framework.types import QueuedPodInfo, ScheduleResult

TERMINAL_PHASES = ("Succeeded", "Failed")


class StateError(ValueError):
    """A state file that cannot be read as Nodes and Pods."""


@dataclass(frozen=True)
class Placement:
    """Where a pod went (node None: nowhere) and the FailedScheduling message if it failed."""

    namespace: str
    name: str
    node: str | None
    message: str | None
    explanation: Explanation | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "namespace": self.namespace,
            "name": self.name,
            "node": self.node,
            "message": self.message,
            "explanation": self.explanation.as_json() if self.explanation else None,
        }


def read_state(path: str | Path) -> list[dict[str, Any]]:
    """The objects of a YAML stream or JSON file (`-`: standard input), `List` documents
    flattened; what the file holds is used as it is, not copied."""
    try:
        documents = read_documents(path)
    except DocumentError as error:
        raise StateError(str(error)) from None
    return list(_flatten(documents, "<stdin>" if str(path) == "-" else str(path)))


def _flatten(documents: Iterable[Any], where: str) -> Iterator[dict[str, Any]]:
    for index, document in enumerate(documents):
        if not isinstance(document, dict):
            raise StateError(f"{where}: document {index} is not an object")
        if "items" in document and str(document.get("kind", "")).endswith("List"):
            for position, item in enumerate(document.get("items") or ()):
                place = f"{where}: document {index} items[{position}]"
                if not isinstance(item, dict):
                    raise StateError(f"{place} is not an object")
                _check_shape(item, place)
                yield _with_kind(item, document.get("kind", ""))
        else:
            _check_shape(document, f"{where}: document {index}")
            yield document


def _with_kind(item: dict[str, Any], list_kind: str) -> dict[str, Any]:
    # NodeList / PodList items may leave out their kind.
    if "kind" not in item and list_kind in ("NodeList", "PodList"):
        item["kind"] = list_kind.removesuffix("List")
    return item


def _kind(obj: Mapping[str, Any]) -> str:
    """The object's kind for a one-line message (quoted when it is not a plain name)."""
    kind = obj.get("kind", "object")
    return kind if isinstance(kind, str) and kind.isidentifier() else repr(kind)


def _check_shape(obj: Mapping[str, Any], where: str) -> None:
    for field in ("metadata", "spec", "status"):
        if not isinstance(obj.get(field) or {}, Mapping):
            raise StateError(f"{where}: {_kind(obj)}.{field} must be an object")


def _describe(obj: Mapping[str, Any]) -> str:
    metadata = obj.get("metadata") or {}
    namespace = metadata.get("namespace")
    name = metadata.get("name") or "<unnamed>"
    return f"{_kind(obj)} {namespace + '/' if namespace else ''}{name}"


def _parse_pod(obj: dict[str, Any]) -> PodInfo:
    if not (obj.get("metadata") or {}).get("name"):
        raise StateError(f"{_describe(obj)}: metadata.name is required")
    check_object(obj)
    try:
        _check_selectors(obj.get("spec") or {})
        return pod_info(obj)
    except (QuantityError, KeyError, TypeError, ValueError) as error:
        raise StateError(f"{_describe(obj)}: {error}") from None


_AFFINITY_TERMS = ("podAffinity", "podAntiAffinity")
_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


def _check_selectors(spec: Mapping[str, Any]) -> None:
    """The pod's label selectors, as the API server checks them (a state file may hold what
    it would refuse): SelectorError names the field, from `spec`."""
    affinity = spec.get("affinity") or {}
    for kind in _AFFINITY_TERMS:
        terms = affinity.get(kind) or {}
        where = f"spec.affinity.{kind}"
        for index, term in enumerate(terms.get(_REQUIRED) or ()):
            _check_term(term, f"{where}.{_REQUIRED}[{index}]")
        for index, weighted in enumerate(terms.get(_PREFERRED) or ()):
            term = weighted.get("podAffinityTerm") or {}
            _check_term(term, f"{where}.{_PREFERRED}[{index}].podAffinityTerm")
    for index, constraint in enumerate(spec.get("topologySpreadConstraints") or ()):
        where = f"spec.topologySpreadConstraints[{index}].labelSelector"
        parse_selector(constraint.get("labelSelector"), where)


def _check_term(term: Mapping[str, Any], where: str) -> None:
    for field in ("labelSelector", "namespaceSelector"):
        parse_selector(term.get(field), f"{where}.{field}")


@dataclass(frozen=True)
class _Queued:
    """A heap entry ordered by the profile's queueSort plugin."""

    queued: QueuedPodInfo
    less: Callable[[QueuedPodInfo, QueuedPodInfo], bool]

    def __lt__(self, other: _Queued) -> bool:
        return self.less(self.queued, other.queued)


class Simulation:
    """A snapshot, one framework per profile and a queue, driven until the queue is empty;
    the outcome sink of its scheduling sequence, in memory."""

    binding_errors: tuple[type[BaseException], ...] = ()
    contains_bugs = False  # a bug stops the simulation with one clear error

    def __init__(
        self, config: SchedulerConfiguration, seed: int | None = None, *, explaining: bool = True
    ) -> None:
        self.snapshot = Snapshot()
        self.rng = random.Random(seed)  # noqa: S311 - tie-breaking, not crypto
        self.nominated: dict[str, PodInfo] = {}
        handle = Handle(
            snapshot=self.snapshot,
            binder=lambda pod, node: None,  # the assumed pod already counts on its node
            nominator=self._nominated_to,
            nominated_nodes=self._nominated_nodes,
            rng=self.rng,
            parallelism=config.parallelism,
            services=Services(delete_pod=self._delete_pod, clear_nomination=self._clear_nomination),
        )
        self.frameworks = {p.scheduler_name: Framework(p, handle) for p in config.profiles}
        self.algorithm = SchedulingAlgorithm(
            self.snapshot, config.percentage_of_nodes_to_score, self.rng
        )
        self.sequence = ScheduleOne(self.frameworks, self.algorithm, self, explaining=explaining)
        self._less = next(iter(self.frameworks.values())).less
        self._queue: list[_Queued] = []
        self._sequence = 0
        self._unschedulable: list[QueuedPodInfo] = []
        self.placements: dict[str, Placement] = {}

    # ----- loading

    def load(self, objects: Iterable[dict[str, Any]]) -> None:
        objects = list(objects)
        for obj in objects:
            if obj.get("kind") == "Node":
                if not (obj.get("metadata") or {}).get("name"):
                    raise StateError(f"{_describe(obj)}: metadata.name is required")
                check_object(obj)
                self.snapshot.add_node(obj)
            elif obj.get("kind") != "Pod":
                self.snapshot.objects.apply(obj)
        pending = []
        for obj in objects:
            if obj.get("kind") == "Pod":
                pod = _parse_pod(obj)
                if self._is_gone(pod):
                    continue
                if pod.node_name:
                    self.snapshot.add_pod(pod)
                elif pod.scheduler_name in self.frameworks:
                    pending.append(pod)
        for pod in sorted(pending, key=lambda p: p.creation_timestamp):
            if pod.nominated_node_name:
                self.nominated[pod.key] = pod
            self._enqueue(pod)

    @staticmethod
    def _is_gone(pod: PodInfo) -> bool:
        phase = (pod.pod.get("status") or {}).get("phase")
        return phase in TERMINAL_PHASES or bool(pod.pod["metadata"].get("deletionTimestamp"))

    def _enqueue(self, pod: PodInfo) -> None:
        framework = self.frameworks[pod.scheduler_name]
        if not framework.run_pre_enqueue(pod).is_success:
            return  # gated pods wait outside the queue, as upstream's do
        self._sequence += 1
        queued = QueuedPodInfo(pod, timestamp=float(self._sequence))
        heapq.heappush(self._queue, _Queued(queued, self._less))

    # ----- services the plugins use

    def _nominated_nodes(self) -> set[str]:
        return {pod.nominated_node_name for pod in self.nominated.values()}

    def _nominated_to(self, node_name: str) -> list[PodInfo]:
        return [p for p in self.nominated.values() if p.nominated_node_name == node_name]

    def _clear_nomination(self, pod: PodInfo) -> None:
        self.nominated.pop(pod.key, None)
        (pod.pod.get("status") or {}).pop("nominatedNodeName", None)

    def _delete_pod(self, pod: PodInfo) -> None:
        """A preemption victim goes; pods that could not be placed get another chance."""
        self.snapshot.remove_pod(pod.key)
        for queued in self._unschedulable:
            self._enqueue(queued.pod_info)
        self._unschedulable.clear()

    # ----- scheduling

    def run(self) -> list[Placement]:
        while self.step():
            pass
        return list(self.placements.values())

    def step(self) -> bool:
        """Runs one scheduling cycle for the next queued pod; False once none is left."""
        if not self._queue:
            return False
        self.sequence.schedule_one(heapq.heappop(self._queue).queued)
        return True

    def _record(
        self,
        pod: PodInfo,
        node: str | None,
        message: str | None,
        explanation: Explanation | None = None,
    ) -> None:
        self.placements.pop(pod.key, None)  # the last attempt counts, in its order
        self.placements[pod.key] = Placement(pod.namespace, pod.name, node, message, explanation)

    # ----- the sequence's outcome sink: memory

    def scheduling(self, pod: PodInfo) -> AbstractContextManager[object]:
        return nullcontext()

    def node_found(self, attempt: Attempt[QueuedPodInfo], result: ScheduleResult) -> None:
        pass

    def post_filter_started(self, attempt: Attempt[QueuedPodInfo]) -> None:
        pass

    def explained(self, explanation: Explanation) -> None:
        pass

    def assume(self, pod: PodInfo, node: str) -> None:
        self.snapshot.add_pod(pod.with_node(node))
        self.nominated.pop(pod.key, None)

    def forget(self, pod: PodInfo) -> None:
        self.snapshot.remove_pod(pod.key)

    def nominate(self, pod: PodInfo, node: str) -> None:
        if node:
            pod.pod.setdefault("status", {})["nominatedNodeName"] = node
            self.nominated[pod.key] = pod

    def wait_on_permit(self, framework: Framework, pod: PodInfo) -> Status:
        """One pod at a time: nothing can allow a waiting pod later, so it is judged now."""
        if framework.waiting_pods.get(pod.uid) is None:
            return SUCCESS
        framework.waiting_pods.remove(pod.uid)
        return Status.unschedulable("pod waits on permit, which simulation does not grant")

    def start_binding(
        self,
        binding_cycle: Callable[[Attempt[QueuedPodInfo]], None],
        attempt: Attempt[QueuedPodInfo],
    ) -> None:
        binding_cycle(attempt)  # the assumed pod already counts on its node

    def bound(self, attempt: Attempt[QueuedPodInfo]) -> None:
        self._record(attempt.pod, attempt.node, None, attempt.explanation)

    def failed(self, attempt: Attempt[QueuedPodInfo], status: Status) -> None:
        """The FailedScheduling message; a nominated pod tries again at once, an
        unschedulable one once preemption has made room somewhere."""
        pod = attempt.pod
        self._record(pod, None, status.message(), attempt.explanation)
        if status.code == Code.ERROR:
            return
        if attempt.nomination:
            self._enqueue(pod)
        else:
            self._unschedulable.append(attempt.queued)


def simulate(
    config: SchedulerConfiguration,
    objects: Iterable[dict[str, Any]],
    seed: int | None = None,
    *,
    explaining: bool = True,
) -> list[Placement]:
    """Places the pending pods of `objects` that name one of the profiles, in queue order;
    `explaining` keeps why each went where it went (Placement.explanation)."""
    simulation = Simulation(config, seed, explaining=explaining)
    simulation.load(objects)
    return simulation.run()


def format_table(placements: list[Placement]) -> str:
    rows = [("NAMESPACE", "NAME", "NODE", "MESSAGE")]
    rows += [(p.namespace, p.name, p.node or "<none>", p.message or "") for p in placements]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    lines = [
        "   ".join(cell.ljust(width) for cell, width in zip(row[:3], widths, strict=True))
        + ("   " + row[3] if row[3] else "")
        for row in rows
    ]
    return "\n".join(line.rstrip() for line in lines)
