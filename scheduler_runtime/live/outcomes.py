"""What the cluster sees of a scheduling decision, written as upstream writes it: the
`pods/binding` subresource, events.k8s.io/v1 events (`Scheduled` / `FailedScheduling`,
reported by the profile's schedulerName) and the `PodScheduled=False` condition with the
nominated node in the pod's status.

Every write that changes a pod (the binding, an eviction, the condition) is fenced: it is sent
only while `leading()` holds, asked right before the request goes on the wire, so a leader that
lost its lease binds and evicts nothing (NotLeadingError is raised instead)."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any, Final

import orjson

from scheduler_runtime.framework.interface import Preemptor
from scheduler_runtime.framework.podgroups import WorkloadAPI
from scheduler_runtime.framework.podinfo import PodInfo
from scheduler_runtime.live.kube import (
    MERGE_PATCH,
    ApiError,
    Kube,
    micro_time,
)

NORMAL, WARNING = "Normal", "Warning"
SCHEDULED, FAILED_SCHEDULING = "Scheduled", "FailedScheduling"
BINDING, SCHEDULING = "Binding", "Scheduling"
PREEMPTED, PREEMPTING = "Preempted", "Preempting"
UNSCHEDULABLE_REASON, SCHEDULER_ERROR_REASON = "Unschedulable", "SchedulerError"
NOT_FOUND = 404
NOTE_LIMIT = 1024  # events.k8s.io/v1 rejects longer notes; upstream truncates to fit


class NotLeadingError(RuntimeError):
    """A write was not sent: this instance no longer holds the lease (fenced)."""


def always() -> bool:
    return True


NOT_LEADING: Final = "not sent: this scheduler no longer holds its lease"


def truncate_note(message: str) -> str:
    """truncateMessage: keep the note within the API's limit, marking the cut with `...`."""
    if len(message) <= NOTE_LIMIT:
        return message
    return message[: NOTE_LIMIT - 3] + "..."


def scheduled_message(pod: PodInfo, node_name: str) -> str:
    return f"Successfully assigned {pod.namespace}/{pod.name} to {node_name}"


def event(
    pod: PodInfo,
    *,
    kind: str,
    reason: str,
    action: str,
    note: str,
    controller: str,
    instance: str,
    related: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """An events.k8s.io/v1 Event about a pod, named as client-go's recorder names it."""
    made = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": f"{pod.name}.{time.time_ns():x}", "namespace": pod.namespace},
        "eventTime": micro_time(),
        "reportingController": controller,
        "reportingInstance": instance,
        "action": action,
        "reason": reason,
        "type": kind,
        "note": truncate_note(note),
        "regarding": _reference(pod),
    }
    if related is not None:
        made["related"] = dict(related)
    return made


def _reference(pod: PodInfo) -> dict[str, str]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "namespace": pod.namespace,
        "name": pod.name,
        "uid": pod.uid,
        "resourceVersion": (pod.pod.get("metadata") or {}).get("resourceVersion", ""),
    }


def condition_patch(
    pod: PodInfo,
    reason: str | None,
    message: str,
    nominated_node: str | None,
    written_nomination: str | None = None,
) -> dict[str, Any] | None:
    """The status patch upstream's updatePod sends, or None when nothing would change: the
    PodScheduled=False condition with `reason` (none when None) and the nominated node (as
    it is when None, removed when ""). `written_nomination` is a nominated node this
    scheduler wrote that the pod object at hand may not show yet.

    The transition time moves only when the condition's status changes."""
    status = pod.pod.get("status") or {}
    nomination_changes = nominated_node is not None and nominated_node != (
        written_nomination or status.get("nominatedNodeName") or ""
    )
    patch: dict[str, Any] = {}
    if reason is not None:
        condition = _unschedulable_condition(pod, reason, message)
        if condition is not None:
            patch["conditions"] = [condition]
    if nomination_changes:
        patch["nominatedNodeName"] = nominated_node or None
    return {"status": patch} if patch else None


def _unschedulable_condition(pod: PodInfo, reason: str, message: str) -> dict[str, Any] | None:
    """PodScheduled=False with `reason`, or None when the pod already has it."""
    status = pod.pod.get("status") or {}
    current = next(
        (c for c in status.get("conditions") or () if c.get("type") == "PodScheduled"), None
    )
    wanted: dict[str, Any] = {
        "type": "PodScheduled",
        "status": "False",
        "reason": reason,
        "message": message,
    }
    generation = (pod.pod.get("metadata") or {}).get("generation")
    if generation is not None:
        wanted["observedGeneration"] = generation  # as upstream since 1.33
    if current is not None and all(current.get(k) == v for k, v in wanted.items()):
        return None
    transition = (
        current.get("lastTransitionTime")
        if current is not None and current.get("status") == "False"
        else None
    )
    return {**wanted, "lastProbeTime": None, "lastTransitionTime": transition or _now()}


def pod_group_condition_patch(
    group: dict[str, Any], api: WorkloadAPI, status: str, reason: str, message: str
) -> dict[str, Any] | None:
    """The status patch upstream's updatePodGroupCondition sends for the condition of `api`
    (PodGroupScheduled, PodGroupInitiallyScheduled from 1.37), or None when nothing would
    change. A group once scheduled is not set back to False by a later cycle for its extra
    members; the transition time moves only with the status."""
    kind = api.scheduled_condition
    conditions = (group.get("status") or {}).get("conditions") or ()
    current = next((c for c in conditions if c.get("type") == kind), None)
    if current is not None and current.get("status") == "True" and status != "True":
        return None
    wanted: dict[str, Any] = {
        "type": kind,
        "status": status,
        "observedGeneration": (group.get("metadata") or {}).get("generation") or 0,
        "reason": reason,
        "message": message,
    }
    if current is not None and all(current.get(k) == v for k, v in wanted.items()):
        return None
    same_status = current is not None and current.get("status") == status
    transition = current.get("lastTransitionTime") if same_status and current else None
    wanted["lastTransitionTime"] = transition or _now()
    return {"status": {"conditions": [wanted]}}


def disruption_patch(preemptor: Preemptor) -> dict[str, Any]:
    """The DisruptionTarget condition upstream puts on a victim before deleting it."""
    condition = {
        "type": "DisruptionTarget",
        "status": "True",
        "reason": "PreemptionByScheduler",
        "message": (
            f"{preemptor.scheduler_name}: preempting to accommodate a higher priority "
            f"{preemptor.kind}"
        ),
        "lastTransitionTime": _now(),
    }
    return {"status": {"conditions": [condition]}}


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class Outcomes:
    """Writes scheduling outcomes for one scheduler instance."""

    def __init__(
        self, kube: Kube, events: Kube, hostname: str, leading: Callable[[], bool] = always
    ) -> None:
        self.kube = kube
        self.hostname = hostname
        self.series = EventSeries(events)
        self.leading = leading

    def fence(self) -> None:
        """Raises NotLeadingError unless this instance may still write as the leader."""
        if not self.leading():
            raise NotLeadingError(NOT_LEADING)

    def bind(self, pod: PodInfo, node_name: str) -> None:
        """DefaultBinder: POST the Binding; raises ApiError when the API server refuses."""
        binding = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": pod.name, "namespace": pod.namespace, "uid": pod.uid},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node_name},
        }
        path = f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}/binding"
        self.fence()  # not worth waiting for the rate limiter when already deposed
        self.kube.request("POST", path, body=binding, before_send=self.fence)

    def scheduled(self, pod: PodInfo, node_name: str) -> None:
        self._event(pod, NORMAL, SCHEDULED, BINDING, scheduled_message(pod, node_name))

    def failed(self, pod: PodInfo, message: str) -> None:
        """The FailedScheduling event (the condition is a status patch of its own)."""
        self.fence()  # a new leader may have bound the pod meanwhile
        self._event(pod, WARNING, FAILED_SCHEDULING, SCHEDULING, message)

    def patch_pod_status(
        self,
        pod: PodInfo,
        reason: str | None,
        message: str,
        nominated_node: str | None,
        written_nomination: str | None = None,
    ) -> None:
        """updatePod: the PodScheduled=False condition and the nominated node, as far as
        they change anything (see condition_patch)."""
        patch = condition_patch(pod, reason, message, nominated_node, written_nomination)
        if patch is not None:
            path = f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}/status"
            self.kube.patch(path, patch, before_send=self.fence)

    def preempt(self, victim: PodInfo, preemptor: Preemptor) -> None:
        """Evicts a preemption victim as upstream's PreemptPod does: mark it as a disruption
        target, delete it, and tell its owner why (naming the pod or pod group that acted)."""
        path = f"/api/v1/namespaces/{victim.namespace}/pods/{victim.name}"
        patch = disruption_patch(preemptor)
        self.kube.patch(f"{path}/status", patch, before_send=self.fence)
        self.kube.request(
            "DELETE", path, body={"preconditions": {"uid": victim.uid}}, before_send=self.fence
        )
        note = f"Preempted by {preemptor.kind} {preemptor.uid} on node {preemptor.node}"
        self._event(
            victim,
            NORMAL,
            PREEMPTED,
            PREEMPTING,
            note,
            controller=preemptor.scheduler_name,
            related=preemptor.related,
        )

    def pod_event(self, pod: PodInfo, kind: str, reason: str, action: str, note: str) -> None:
        """An event a plugin records about the pod it schedules (BindingConditionsPending)."""
        self._event(pod, kind, reason, action, note)

    def pod_group_condition(
        self, group: dict[str, Any], api: WorkloadAPI, status: str, reason: str, message: str
    ) -> None:
        """The scheduled condition of a workload API PodGroup, at `api`'s version."""
        patch = pod_group_condition_patch(group, api, status, reason, message)
        if patch is None:
            return
        metadata = group.get("metadata") or {}
        path = (
            f"{api.pod_groups_path(str(metadata.get('namespace')))}/{metadata.get('name')}/status"
        )
        self.kube.patch(path, patch, before_send=self.fence)

    def annotate(self, pod: PodInfo, patch: dict[str, Any]) -> None:
        """A metadata patch of the pod (--explain-annotation)."""
        path = f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}"
        self.kube.patch(path, patch, before_send=self.fence)

    def _event(
        self,
        pod: PodInfo,
        kind: str,
        reason: str,
        action: str,
        note: str,
        *,
        controller: str = "",
        related: Mapping[str, str] | None = None,
    ) -> None:
        """An event about `pod`, reported by `controller` (the scheduler of whoever acted;
        the pod's own by default), naming the `related` object that acted."""
        controller = controller or pod.scheduler_name
        body = event(
            pod,
            kind=kind,
            reason=reason,
            action=action,
            note=note,
            controller=controller,
            instance=f"{controller}-{self.hostname}",
            related=related,
        )
        self.series.record(body)


# client-go's event broadcaster ends a series after six minutes without a repeat.
SERIES_FINISH_SECONDS = 360.0


def series_key(body: dict[str, Any]) -> str:
    """client-go's getKey: events with equal action, reason, reporting controller, regarding
    and related object are one series."""
    parts = (
        body.get(k) for k in ("action", "reason", "reportingController", "regarding", "related")
    )
    return orjson.dumps(list(parts), option=orjson.OPT_SORT_KEYS).decode()


class EventSeries:
    """Writes events as client-go's events.k8s.io/v1 broadcaster does: the first of a kind is
    created; repeats within six minutes patch its `series` (count, lastObservedTime) instead
    of adding another event."""

    def __init__(self, kube: Kube, clock: Callable[[], float] = time.monotonic) -> None:
        self.kube = kube
        self.clock = clock
        self._lock = threading.Lock()
        # Per series: the name of its first event, how many, when last seen. Oldest last-seen
        # first (a repeat moves its series to the end): finished series are forgotten from the
        # front, without a pass over every series per event. Only the name is kept (client-go
        # keeps the whole event): a scheduler sends one event per pod, and six minutes of them
        # would hold a kilobyte each.
        self._seen: OrderedDict[str, tuple[str, int, float]] = OrderedDict()

    def record(self, body: dict[str, Any]) -> None:
        key = series_key(body)
        now = self.clock()
        metadata = body["metadata"]
        with self._lock:
            self._forget_finished(now)
            name, count, _ = self._seen.get(key, (metadata["name"], 0, now))
            self._seen[key] = (name, count + 1, now)
            self._seen.move_to_end(key)
        collection = f"/apis/events.k8s.io/v1/namespaces/{metadata['namespace']}/events"
        if count == 0:
            self.kube.request("POST", collection, body=body)
            return
        series = {"series": {"count": count + 1, "lastObservedTime": micro_time()}}
        try:
            self.kube.patch(f"{collection}/{name}", series, content_type=MERGE_PATCH)
        except ApiError as error:
            if error.code != NOT_FOUND:
                raise
            with self._lock:  # the first event never made it (or was deleted): start again
                self._seen[key] = (metadata["name"], 1, now)
                self._seen.move_to_end(key)
            self.kube.request("POST", collection, body=body)

    def _forget_finished(self, now: float) -> None:
        while self._seen:
            key, (_, _, last) = next(iter(self._seen.items()))
            if now - last <= SERIES_FINISH_SECONDS:
                return
            del self._seen[key]
