"""What-if scheduling without a cluster: the pods of a state file (what `kubectl get
nodes,pods -A -o yaml` prints) that belong to a profile are scheduled in queue order, each
placement counting for the next, through the live scheduler's own backend and scheduling
sequence (backend/schedule_one.py) with memory in the cluster's place."""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterable, Iterator, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scheduler_runtime.backend import NODES, PODS, Backend
from scheduler_runtime.backend.claims import CLAIMS
from scheduler_runtime.backend.claims_api import MemoryClaimAPI, make_pod_claims
from scheduler_runtime.backend.podgroups import GroupReport, report
from scheduler_runtime.backend.schedule_one import Attempt, BindingCycle, GroupOutcome
from scheduler_runtime.backend.schedule_one_podgroup import PodGroupSequence
from scheduler_runtime.config import DocumentError, SchedulerConfiguration, read_documents
from scheduler_runtime.dra import cel
from scheduler_runtime.dra import validation as resource_validation
from scheduler_runtime.framework.admission import check_object
from scheduler_runtime.framework.algorithm import SchedulingAlgorithm
from scheduler_runtime.framework.dra import ClaimAPIError
from scheduler_runtime.framework.explain import Explanation
from scheduler_runtime.framework.interface import Handle, Preemptor, Services
from scheduler_runtime.framework.labelselector import parse_selector
from scheduler_runtime.framework.podgroups import (
    COSCHEDULING_POD_GROUP,
    POD_GROUP_KINDS,
    WORKLOAD_API,
    WORKLOAD_POD_GROUP,
    WORKLOAD_VERSIONS,
    GroupKey,
    PodGroupError,
    read_policy,
)
from scheduler_runtime.framework.podinfo import PodInfo
from scheduler_runtime.framework.quantity import QuantityError
from scheduler_runtime.framework.snapshot import Snapshot
from scheduler_runtime.framework.status import Code, Status
from scheduler_runtime.framework.types import ScheduleResult

CLAIM_TEMPLATE = "ResourceClaimTemplate"


_ANSWERED: Future[None] = Future()
_ANSWERED.set_result(None)  # a done future never changes: one serves every binding


def answered_at_once(_pod: PodInfo, _node: str) -> Future[None]:
    """The binding's answer, at once: simulate writes to no API."""
    return _ANSWERED


class StateError(ValueError):
    """A state file that cannot be read as Nodes and Pods."""


def _key(obj: Mapping[str, Any]) -> str:
    metadata = obj.get("metadata") or {}
    return f"{metadata.get('namespace') or 'default'}/{metadata.get('name') or ''}"


@dataclass(frozen=True)
class Placement:
    """Where a pod went (node None: nowhere) and the FailedScheduling message if it failed."""

    namespace: str
    name: str
    node: str | None
    message: str | None
    explanation: Explanation | None = None
    # A bound pod's ResourceClaims: its name for each, the claim's, and the allocation.
    resource_claims: tuple[dict[str, Any], ...] = ()

    def as_json(self) -> dict[str, Any]:
        placed: dict[str, Any] = {
            "namespace": self.namespace,
            "name": self.name,
            "node": self.node,
            "message": self.message,
            "explanation": self.explanation.as_json() if self.explanation else None,
        }
        if self.resource_claims:
            placed["resourceClaims"] = list(self.resource_claims)
        return placed


# The PodGroup APIs a state file may hold, by apiVersion: the workload API in either version
# (a state taken from a 1.36 cluster simulates at 1.37 too), and Coscheduling's.
POD_GROUP_VERSIONS = {
    **{f"{WORKLOAD_API}/{version}": WORKLOAD_POD_GROUP for version in WORKLOAD_VERSIONS},
    "scheduling.x-k8s.io/v1alpha1": COSCHEDULING_POD_GROUP,
}


def _pod_group(obj: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """A PodGroup's kind for the event handlers, once it reads as its API defines it."""
    version = obj.get("apiVersion")
    kind = POD_GROUP_VERSIONS.get(str(version))
    if kind is None:
        known = ", ".join(POD_GROUP_VERSIONS)
        raise StateError(f"{_describe(obj)}: apiVersion {version!r} is not one of {known}")
    try:
        read_policy(POD_GROUP_KINDS[kind], obj)
    except PodGroupError as error:
        raise StateError(f"{_describe(obj)}: {error}") from None
    return kind, obj


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
    if not isinstance(obj.get("metadata") or {}, Mapping):
        raise StateError(f"{where}: {_kind(obj)}.metadata must be an object")
    for field in ("spec", "status"):
        if not isinstance(obj.get(field) or {}, Mapping):
            raise StateError(f"{where}: {_describe(obj)}: {field} must be an object")


def _describe(obj: Mapping[str, Any]) -> str:
    metadata = obj.get("metadata") or {}
    namespace, name = metadata.get("namespace"), metadata.get("name")
    where = f"{namespace}/" if isinstance(namespace, str) and namespace else ""
    return f"{_kind(obj)} {where}{name if isinstance(name, str) and name else '<unnamed>'}"


def _checked_pod(obj: dict[str, Any]) -> dict[str, Any]:
    """The pod, once what the API server would refuse of it is ruled out."""
    if not (obj.get("metadata") or {}).get("name"):
        raise StateError(f"{_describe(obj)}: metadata.name is required")
    check_object(obj)
    try:
        _check_selectors(obj.get("spec") or {})
    except ValueError as error:
        raise StateError(f"{_describe(obj)}: {error}") from None
    return obj


def _is_bound(pod: Mapping[str, Any]) -> bool:
    return bool((pod.get("spec") or {}).get("nodeName"))


def _created(pod: Mapping[str, Any]) -> str:
    return str((pod.get("metadata") or {}).get("creationTimestamp") or "")


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


class VirtualClock:
    """Simulated time: it stands still while pods are ready and jumps ahead to the moment the
    next pod's backoff ends when none is, so a what-if run never sleeps."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class Simulation:
    """The scheduler's backend fed from a state file and driven until no pod is ready to be
    tried, with memory in the cluster's place: bindings, evictions and nominations are applied
    to the backend as the API server's watch would report them, and the outcomes are kept as
    placements."""

    def __init__(
        self, config: SchedulerConfiguration, seed: int | None = None, *, explaining: bool = True
    ) -> None:
        self.rng = random.Random(seed)  # noqa: S311 - tie-breaking, not crypto
        self.clock = VirtualClock()
        self.backend = Backend(config, clock=self.clock)
        # The API server and the resourceclaim controller, for ResourceClaims.
        self.claims = MemoryClaimAPI(
            self.backend.events,
            seconds=self.clock,
            sleep=self.clock.advance,
            rng=random.Random(seed),  # noqa: S311 - generated names, not crypto
        )
        self.claim_templates: dict[str, dict[str, Any]] = {}
        handle = Handle(
            snapshot=self.backend.snapshot,
            binder=answered_at_once,  # the binding is applied once the cycle succeeds
            nominator=self.backend.nominator,
            rng=self.rng,
            parallelism=config.parallelism,
            services=Services(
                delete_pod=self._evict,
                clear_nomination=self._clear_nomination,
                resource_claims=self.claims,
            ),
            features=config.features,
        )
        self.frameworks = self.backend.build_frameworks(handle)
        self.algorithm = SchedulingAlgorithm(
            self.snapshot, config.percentage_of_nodes_to_score, self.rng
        )
        self.sequence = PodGroupSequence(
            self.backend, self.algorithm, self, explaining=explaining, start_binding=self._bind
        )
        self.placements: dict[str, Placement] = {}
        self.group_outcomes: dict[GroupKey, GroupOutcome] = {}
        # Binding cycles of pods waiting at Permit, run once their wait is decided.
        self._held: list[tuple[BindingCycle, Attempt]] = []

    @property
    def snapshot(self) -> Snapshot:
        return self.backend.snapshot

    # ----- loading

    def load(self, objects: Iterable[dict[str, Any]]) -> None:
        """Nodes and the other objects first, then bound pods, then pending pods in the order
        they were created (the order the queue first saw them)."""
        objects = list(objects)
        self._check_resources(objects)
        events = self.backend.events
        pods: list[dict[str, Any]] = []
        for obj in objects:
            kind = obj.get("kind")
            if kind == "Pod":
                pods.append(_checked_pod(obj))
            elif kind == "Node":
                if not (obj.get("metadata") or {}).get("name"):
                    raise StateError(f"{_describe(obj)}: metadata.name is required")
                check_object(obj)
                events.upsert(NODES, obj)
            elif kind == CLAIMS:
                self.claims.load(obj)
            elif kind == CLAIM_TEMPLATE:
                self.claim_templates[_key(obj)] = obj
            elif kind == "PodGroup":
                events.upsert(*_pod_group(obj))
            else:
                events.upsert(str(kind), obj)
        pods.sort(key=lambda pod: (not _is_bound(pod), _created(pod)))
        for pod in pods:
            try:
                self._make_claims(pod)
                events.upsert(PODS, pod)
            except (QuantityError, KeyError, TypeError, ValueError) as error:
                raise StateError(f"{_describe(pod)}: {error}") from None

    def _check_resources(self, objects: Iterable[dict[str, Any]]) -> None:
        """Refuses the first resource.k8s.io object the API server would refuse, before
        anything is loaded: a run never starts on half of a state."""
        features = self.backend.config.features
        gates = cel.Features(
            consumable_capacity=features.dra_consumable_capacity,
            list_type_attributes=features.dra_list_type_attributes,
            includes=features.since(1, 36),
        )
        for obj in objects:
            resource_validation.check(obj, gates)

    def _make_claims(self, pod: dict[str, Any]) -> None:
        """What the API server and kube-controller-manager do for a pending pod before the
        scheduler sees it: a UID (claims and reservations name their pod by it), and the
        claims its ResourceClaimTemplates make."""
        if _is_bound(pod):
            return
        metadata = pod.setdefault("metadata", {})
        if not metadata.get("uid"):
            metadata["uid"] = str(uuid.UUID(int=self.claims.rng.getrandbits(128), version=4))
        if (pod.get("spec") or {}).get("resourceClaims"):
            make_pod_claims(pod, self.claim_templates, self.claims)

    # ----- scheduling

    def run(self) -> list[Placement]:
        while self.step():
            pass
        return list(self.placements.values())

    def group_reports(self) -> list[GroupReport]:
        """Each pod group with a member this run tried or holds, as it stands now."""
        groups, queue = self.backend.groups, self.backend.queue
        reports = []
        for key in groups.known():
            state = groups.state(key)
            tried = key in self.group_outcomes
            if not tried and not (state and any(member in queue for member in state.all)):
                continue
            outcome = self.group_outcomes.get(key)
            last = outcome.message or None if outcome is not None else None
            reports.append(report(groups, key, self._gated_message, last))
        return reports

    def _gated_message(self, key: str) -> str | None:
        verdict = self.backend.queue.gated(key)
        return verdict.message() if verdict is not None else None

    def step(self) -> bool:
        """Runs one scheduling cycle for the next pod ready to be tried; False once none is
        left (the pods that could not be placed wait for a change that will not come).
        When none is ready, time jumps to the next backoff's end or Permit timeout."""
        queue = self.backend.queue
        queued = queue.pop(timeout=0)
        if queued is None:
            wait = self._next_in()
            if wait is None:
                return False
            self.clock.advance(wait)
            for _, attempt in self._held:
                waiting = attempt.framework.get_waiting_pod(attempt.pod.uid)
                if waiting is not None:
                    waiting.expire()
            self._bind_decided()
            queued = queue.pop(timeout=0)
            if queued is None:
                return True
        self.sequence.schedule_one(queued)
        self._bind_decided()
        return True

    def _next_in(self) -> float | None:
        """Seconds until a pod's backoff ends or a waiting pod's Permit times out."""
        times = [self.backend.queue.next_ready_in()]
        for _, attempt in self._held:
            waiting = attempt.framework.get_waiting_pod(attempt.pod.uid)
            deadline = waiting.deadline() if waiting is not None else None
            if deadline is not None:
                times.append(max(0.0, deadline - self.clock()))
        known = [t for t in times if t is not None]
        return min(known) if known else None

    def _bind(self, binding_cycle: BindingCycle, attempt: Attempt) -> None:
        """Binds at once, unless the pod waits at Permit: then its binding cycle is held
        until its wait is decided (its group allows or rejects it, or it times out)."""
        waiting = attempt.framework.get_waiting_pod(attempt.pod.uid)
        if waiting is not None and waiting.verdict() is None:
            self._held.append((binding_cycle, attempt))
            return
        binding_cycle(attempt)

    def _bind_decided(self) -> None:
        """Runs the held binding cycles whose wait at Permit is decided (one may decide
        others: a member that fails releases its waiting siblings)."""
        while True:
            ready = [
                (cycle, attempt)
                for cycle, attempt in self._held
                if (waiting := attempt.framework.get_waiting_pod(attempt.pod.uid)) is None
                or waiting.verdict() is not None
            ]
            if not ready:
                return
            done = {id(attempt) for _, attempt in ready}
            self._held = [held for held in self._held if id(held[1]) not in done]
            for cycle, attempt in ready:
                cycle(attempt)

    # ----- what the API server and its watch would do

    def _evict(self, victim: PodInfo, preemptor: Preemptor) -> None:
        self.backend.events.delete(PODS, victim.pod)

    def _clear_nomination(self, pod: PodInfo) -> None:
        self._set_nomination(pod, None)

    def _set_nomination(self, pod: PodInfo, node: str | None) -> None:
        status = {
            k: v for k, v in (pod.pod.get("status") or {}).items() if k != "nominatedNodeName"
        }
        if node:
            status["nominatedNodeName"] = node
        self.backend.events.upsert(PODS, {**pod.pod, "status": status})

    # ----- the sequence's outcome sink: memory

    def node_found(self, attempt: Attempt, result: ScheduleResult) -> None:
        pass

    def post_filter_started(self, attempt: Attempt) -> None:
        pass

    def explained(self, explanation: Explanation) -> None:
        pass

    def expecting(self, attempt: Attempt) -> None:
        pass  # nothing else reads a nominated node here

    def group_decided(self, outcome: GroupOutcome) -> None:
        self.group_outcomes[outcome.key] = outcome

    def bound(self, attempt: Attempt) -> None:
        pod = self.backend.cache.assumed_pod(attempt.pod.id)
        patched = self.claims.pod_status.pop(attempt.pod.key, None)
        if patched:  # what PreBind wrote to the pod's status arrives with its binding
            pod = {**pod, "status": {**(pod.get("status") or {}), **patched}}
        self.backend.events.upsert(PODS, pod)
        claims = tuple(self._pod_claims(pod))
        self._record(attempt.pod, attempt.node, None, attempt.explanation, claims)

    def _pod_claims(self, pod: dict[str, Any]) -> Iterator[dict[str, Any]]:
        """Each of the pod's claims with the allocation its status now holds."""
        namespace = (pod.get("metadata") or {}).get("namespace") or "default"
        status = pod.get("status") or {}
        names = {
            e.get("name"): e.get("resourceClaimName")
            for e in status.get("resourceClaimStatuses") or ()
        }
        wanted = [
            (c.get("name"), c.get("resourceClaimName") or names.get(c.get("name")))
            for c in (pod.get("spec") or {}).get("resourceClaims") or ()
        ]
        extended = (status.get("extendedResourceClaimStatus") or {}).get("resourceClaimName")
        if extended:
            wanted.append((None, extended))
        for name, claim_name in wanted:
            if claim_name is None:
                continue
            try:
                claim = self.claims.get_claim(namespace, claim_name)
            except ClaimAPIError:
                continue
            yield {
                "name": name,
                "resourceClaimName": claim_name,
                "allocation": (claim.get("status") or {}).get("allocation"),
            }

    def failed(self, attempt: Attempt, status: Status) -> None:
        """The FailedScheduling message; a nomination is written as updatePod would. A pod
        that met an Error is not tried again: nothing in a what-if run would change it."""
        pod = attempt.pod
        self._record(pod, None, status.message(), attempt.explanation)
        if status.code == Code.ERROR:
            self.backend.queue.delete(pod.id)
        nomination = attempt.nomination
        if status.code != Code.ERROR and nomination not in (None, pod.nominated_node_name):
            self._set_nomination(pod, nomination)

    def _record(
        self,
        pod: PodInfo,
        node: str | None,
        message: str | None,
        explanation: Explanation | None = None,
        claims: tuple[dict[str, Any], ...] = (),
    ) -> None:
        self.placements.pop(pod.key, None)  # the last attempt counts, in its order
        self.placements[pod.key] = Placement(
            pod.namespace, pod.name, node, message, explanation, claims
        )


def simulate(
    config: SchedulerConfiguration,
    objects: Iterable[dict[str, Any]],
    seed: int | None = None,
    *,
    explaining: bool = True,
) -> list[Placement]:
    """Places the pending pods of `objects` that name one of the profiles, in queue order;
    `explaining` keeps why each went where it went (Placement.explanation)."""
    return simulate_with_groups(config, objects, seed, explaining=explaining)[0]


def simulate_with_groups(
    config: SchedulerConfiguration,
    objects: Iterable[dict[str, Any]],
    seed: int | None = None,
    *,
    explaining: bool = True,
) -> tuple[list[Placement], list[GroupReport]]:
    """simulate, and where each pod group it met stands at the end."""
    simulation = Simulation(config, seed, explaining=explaining)
    simulation.load(objects)
    placements = simulation.run()
    return placements, simulation.group_reports()


def format_groups(groups: list[GroupReport]) -> str:
    """The pod groups as a table: placed or not, members bound of the minimum, and why."""
    rows = [("NAMESPACE", "POD GROUP", "PLACED", "BOUND/MIN", "MEMBERS", "REASON")]
    rows += [
        (
            g.key.namespace,
            g.key.name,
            "yes" if g.placed else "no",
            f"{g.bound}/{g.minimum}",
            str(g.members),
            g.reason or "",
        )
        for g in groups
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    lines = [
        "   ".join(cell.ljust(width) for cell, width in zip(row[:5], widths, strict=True))
        + ("   " + row[5] if row[5] else "")
        for row in rows
    ]
    return "\n".join(line.rstrip() for line in lines)


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
