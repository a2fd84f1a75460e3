"""The API calls the live scheduler sends through its dispatcher (upstream's
pkg/scheduler/framework/api_calls): the pod's binding and its status patch, with upstream's
types and relevances, and the PodGroupScheduled condition of a PodGroup, a call type of its
own for another kind of object (upstream writes it straight from the scheduling loop)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from scheduler_runtime.backend.api_dispatcher import APICall
from scheduler_runtime.framework.podgroups import WorkloadAPI
from scheduler_runtime.framework.podinfo import PodInfo
from scheduler_runtime.live.explanations import annotation_patch
from scheduler_runtime.live.outcomes import Outcomes, condition_patch, pod_group_condition_patch

POD_STATUS_PATCH, POD_BINDING = "pod_status_patch", "pod_binding"
POD_GROUP_STATUS_PATCH = "pod_group_status_patch"
# A more relevant call overwrites a less relevant one pending for the same object; a less
# relevant one is skipped while a more relevant one is pending. Equal relevances only for
# different kinds of object.
RELEVANCES = {POD_STATUS_PATCH: 1, POD_BINDING: 2, POD_GROUP_STATUS_PATCH: 1}


@dataclass(eq=False)
class PodBindingCall:
    """PodBindingCall: the pods/binding subresource."""

    outcomes: Outcomes
    pod: PodInfo
    node: str
    call_type: str = field(default=POD_BINDING, init=False)

    @property
    def uid(self) -> str:
        return self.pod.uid

    @property
    def key(self) -> str:
        return self.pod.key

    def execute(self) -> None:
        self.outcomes.bind(self.pod, self.node)

    def merge(self, old: APICall) -> None:
        return None  # overwrites the previous call

    def is_noop(self) -> bool:
        return False


@dataclass(eq=False)
class PodStatusPatchCall:
    """PodStatusPatchCall: the PodScheduled=False condition (`reason`, none when None) and
    the nominated node (None: unchanged; "": removed), patched over the pod's status as the
    pod object at hand shows it; with --explain-annotation, the attempt's explanation too."""

    outcomes: Outcomes
    pod: PodInfo
    reason: str | None = None
    message: str = ""
    nominated_node: str | None = None
    written_nomination: str | None = None
    annotation: str | None = None
    call_type: str = field(default=POD_STATUS_PATCH, init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    @property
    def uid(self) -> str:
        return self.pod.uid

    @property
    def key(self) -> str:
        return self.pod.key

    def _patch(self) -> dict[str, Any] | None:
        return condition_patch(
            self.pod, self.reason, self.message, self.nominated_node, self.written_nomination
        )

    def execute(self) -> None:
        with self._lock:  # merged into by a newer call only while pending: never now
            reason, message, nominated, written = (
                self.reason,
                self.message,
                self.nominated_node,
                self.written_nomination,
            )
            annotation = self.annotation
        if reason is not None or nominated is not None:
            self.outcomes.patch_pod_status(self.pod, reason, message, nominated, written)
        if annotation is not None:
            self.outcomes.annotate(self.pod, annotation_patch(annotation))

    def merge(self, old: APICall) -> None:
        """A newer patch keeps what the older one would have written and it does not
        replace: the nominated node, the condition, the annotation."""
        if not isinstance(old, PodStatusPatchCall):
            raise TypeError(f"call of type {type(old).__name__} is not a PodStatusPatchCall")
        with self._lock:
            if self.nominated_node is None and old.nominated_node is not None:
                self.nominated_node = old.nominated_node
                self.written_nomination = old.written_nomination
            if self.reason is None and old.reason is not None:
                self.reason, self.message = old.reason, old.message
            if self.annotation is None:
                self.annotation = old.annotation

    def is_noop(self) -> bool:
        return self.annotation is None and self._patch() is None


@dataclass(eq=False)
class PodGroupStatusPatchCall:
    """The scheduled condition of a workload API PodGroup (PodGroupScheduled in 1.36's
    v1alpha2, PodGroupInitiallyScheduled in 1.37's v1beta1)."""

    outcomes: Outcomes
    group: dict[str, Any]
    condition: tuple[str, str, str]  # status, reason, message
    api: WorkloadAPI
    call_type: str = field(default=POD_GROUP_STATUS_PATCH, init=False)

    @property
    def uid(self) -> str:
        metadata = self.group.get("metadata") or {}
        return str(metadata.get("uid") or f"podgroup:{self.key}")

    @property
    def key(self) -> str:
        metadata = self.group.get("metadata") or {}
        return f"{metadata.get('namespace')}/{metadata.get('name')}"

    def execute(self) -> None:
        self.outcomes.pod_group_condition(self.group, self.api, *self.condition)

    def merge(self, old: APICall) -> None:
        return None  # the newer condition is the one that holds

    def is_noop(self) -> bool:
        return pod_group_condition_patch(self.group, self.api, *self.condition) is None
