"""Upstream's scheduleOne (pkg/scheduler/schedule_one.go), written once for the live
scheduler and for simulate: the scheduling cycle (the algorithm, PostFilter when no node
fits, assume, Reserve, Permit) and the binding cycle (WaitOnPermit, PreBind, Bind,
PostBind), with upstream's failure statuses and messages.

Where an attempt's effects go is the caller's `OutcomeSink`: the live scheduler assumes pods
in its cache, binds through the API server on a thread pool and reports events; simulate
keeps everything in memory and binds at once."""

from __future__ import annotations

import dataclasses
import json
import logging
import time
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from scheduler_runtime.framework.algorithm import SchedulingAlgorithm
from scheduler_runtime.framework.explain import Explanation, explain
from scheduler_runtime.framework.interface import CycleState
from scheduler_runtime.framework.isolation import FrameworkError
from scheduler_runtime.framework.podinfo import PodInfo
from scheduler_runtime.framework.runtime import Framework
from scheduler_runtime.framework.status import SUCCESS, Code, Status
from scheduler_runtime.framework.types import (
    Diagnosis,
    FitError,
    NodeToStatus,
    NoNodesAvailableError,
    QueuedPodInfo,
    ScheduleResult,
)

log = logging.getLogger("scheduler_runtime.scheduler")

QueuedT = TypeVar("QueuedT", bound=QueuedPodInfo)


def fields(**values: Any) -> str:
    """key="value" pairs for one structured log line, quoted as klog quotes them."""
    return " ".join(
        f"{key}={json.dumps(value) if isinstance(value, str) else value}"
        for key, value in values.items()
    )


@dataclass(slots=True)
class Attempt(Generic[QueuedT]):
    """One pod's way through a scheduling and binding cycle."""

    queued: QueuedT
    framework: Framework
    state: CycleState
    started: float
    node: str = ""
    assumed: bool = False
    nomination: str | None = None  # from postFilter; "" withdraws an earlier nomination
    why: dict[str, Any] = field(default_factory=dict)  # for the pod's log line
    explanation: Explanation | None = None

    @property
    def pod(self) -> PodInfo:
        return self.queued.pod_info


class OutcomeSink(Protocol[QueuedT]):
    """Where a scheduling sequence's effects go: the cluster (live) or memory (simulate)."""

    # Exceptions a binding may meet that are the pod's Error, not a bug (the API's, live).
    binding_errors: tuple[type[BaseException], ...]
    # Whether a bug met in a cycle costs only that pod's attempt (live) or stops all (simulate).
    contains_bugs: bool

    def scheduling(self, pod: PodInfo) -> AbstractContextManager[object]:
        """Held during the scheduling cycle (the live cache stays still under it)."""

    def node_found(self, attempt: Attempt[QueuedT], result: ScheduleResult) -> None:
        """The algorithm found a node (before the pod is assumed there)."""

    def post_filter_started(self, attempt: Attempt[QueuedT]) -> None:
        """No node fits and PostFilter plugins (preemption) are about to run."""

    def explained(self, explanation: Explanation) -> None:
        """Why the attempt went where it went, or nowhere."""

    def assume(self, pod: PodInfo, node: str) -> None:
        """Count the pod on `node` from now on, before it is bound."""

    def forget(self, pod: PodInfo) -> None:
        """The assumed pod no longer counts."""

    def nominate(self, pod: PodInfo, node: str) -> None:
        """PostFilter nominated the pod to `node` ("" withdraws a nomination)."""

    def wait_on_permit(self, framework: Framework, pod: PodInfo) -> Status:
        """The verdict on a pod that Permit plugins made wait."""

    def start_binding(
        self, binding_cycle: Callable[[Attempt[QueuedT]], None], attempt: Attempt[QueuedT]
    ) -> None:
        """Runs the binding cycle, now or elsewhere."""

    def bound(self, attempt: Attempt[QueuedT]) -> None:
        """The pod is bound to `attempt.node`."""

    def failed(self, attempt: Attempt[QueuedT], status: Status) -> None:
        """The attempt failed with `status` (handleSchedulingFailure)."""


class ScheduleOne(Generic[QueuedT]):
    """The scheduling sequence of one scheduler: its profiles' frameworks, the algorithm
    they share, and the sink its outcomes go to. `explaining` keeps why each pod went
    where it went (a pass over the rejected nodes per pod)."""

    def __init__(
        self,
        frameworks: Mapping[str, Framework],
        algorithm: SchedulingAlgorithm,
        sink: OutcomeSink[QueuedT],
        *,
        explaining: bool,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.frameworks = frameworks
        self.algorithm = algorithm
        self.sink = sink
        self.explaining = explaining
        self.clock = clock
        self._binding_errors: tuple[type[BaseException], ...] = (
            FrameworkError,
            *sink.binding_errors,
        )

    def schedule_one(self, queued: QueuedT) -> None:
        """One pod: the scheduling cycle, then (when a node was reserved) the binding cycle."""
        pod = queued.pod_info
        framework = self.frameworks[pod.scheduler_name]
        attempt = Attempt(queued, framework, CycleState(), self.clock())
        with self.sink.scheduling(pod):
            try:
                status = self.scheduling_cycle(attempt)
            except Exception as bug:
                if not self.sink.contains_bugs:
                    raise
                status = self._abandon(attempt, bug)
        if not status.is_success:
            self.sink.failed(attempt, status)
            return
        # The pod stays in flight until bound, so a deletion meanwhile is not requeued.
        self.sink.start_binding(self.binding_cycle, attempt)

    def scheduling_cycle(self, attempt: Attempt[QueuedT]) -> Status:
        """Find a node, assume the pod there, reserve, permit."""
        pod, framework, state = attempt.pod, attempt.framework, attempt.state
        try:
            result = self.algorithm.schedule_pod(framework, state, pod)
        except FitError as error:
            return self._post_filter(attempt, error)
        except NoNodesAvailableError as error:
            return Status.unresolvable(str(error))
        except FrameworkError as error:
            if self.explaining:
                failed = Explanation(pod.namespace, pod.name, pod.scheduler_name, None, str(error))
                self._explained(attempt, failed)
            return Status.as_error(error)
        self.sink.node_found(attempt, result)
        attempt.node = result.suggested_host
        if self.explaining:
            self._explained(attempt, explain(pod, framework, self.algorithm, node=attempt.node))
        self.sink.assume(pod, attempt.node)
        attempt.assumed = True
        status = located(framework.run_reserve(state, pod, attempt.node), "Reserve")
        if status.is_success:
            status = framework.run_permit(state, pod, attempt.node)
            if status.code == Code.WAIT:
                status = SUCCESS  # the binding cycle waits for it, off the scheduling loop
            status = located(status, "Permit")
            if status.is_rejected:
                status = permit_rejection(attempt, status)
        if not status.is_success:
            framework.run_unreserve(state, pod, attempt.node)
            self._forget(attempt)
            if status.code not in (Code.ERROR, Code.UNSCHEDULABLE_AND_UNRESOLVABLE):
                status = Status(Code.UNSCHEDULABLE, status.reasons, status.plugin)
        return status

    def _abandon(self, attempt: Attempt[QueuedT], bug: Exception) -> Status:
        """A bug met while scheduling one pod costs that pod's attempt (an Error, retried
        with backoff), never the scheduling loop, which would otherwise stop silently."""
        log.exception("Error scheduling pod %s", fields(pod=attempt.pod.key))
        if attempt.assumed:
            self._forget(attempt)
        attempt.node = ""
        return Status.as_error(bug)

    def _post_filter(self, attempt: Attempt[QueuedT], error: FitError) -> Status:
        """No node fits: let postFilter plugins (preemption) try; the FitError message,
        with theirs appended, is what the user reads."""
        framework, pod = attempt.framework, attempt.pod
        attempt.queued.unschedulable_plugins = set(error.diagnosis.unschedulable_plugins)
        why = (
            explain(pod, framework, self.algorithm, node=None, diagnosis=error.diagnosis)
            if self.explaining
            else None
        )
        if framework.has("postFilter"):
            self.sink.post_filter_started(attempt)
            try:
                result, status = framework.run_post_filter(attempt.state, pod, error.diagnosis)
            except FrameworkError as failure:
                return Status.as_error(failure)
            error.diagnosis.post_filter_msg = status.message()
            if result is not None and result.nominating is not None:
                attempt.nomination = result.nominating.node_name
                self.sink.nominate(pod, attempt.nomination)
        if why is not None:
            self._explained(attempt, dataclasses.replace(why, message=str(error)))
        return Status(Code.UNSCHEDULABLE, (str(error),), "", error)

    def _explained(self, attempt: Attempt[QueuedT], explanation: Explanation) -> None:
        attempt.explanation = explanation
        self.sink.explained(explanation)

    def _forget(self, attempt: Attempt[QueuedT]) -> None:
        self.sink.forget(attempt.pod)
        attempt.assumed = False

    def binding_cycle(self, attempt: Attempt[QueuedT]) -> None:
        """WaitOnPermit, PreBind, Bind, then PostBind, or the failure: unreserve, forget."""
        pod, framework, state, node = attempt.pod, attempt.framework, attempt.state, attempt.node
        try:
            status = framework.run_pre_bind_pre_flight(state, pod, node)
            if status.is_success:
                status = located(self.sink.wait_on_permit(framework, pod), "Permit")
            else:
                framework.waiting_pods.remove(pod.uid)  # nothing will wait for it now
            if status.is_rejected:
                status = permit_rejection(attempt, status)
            if status.is_success:
                status = located(framework.run_pre_bind(state, pod, node), "PreBind")
            if status.is_success:
                status = located(framework.run_bind(state, pod, node), "Bind")
                if status.is_skip:
                    status = Status(Code.ERROR, ("no bind plugin bound the pod",))
        except self._binding_errors as error:
            status = Status.as_error(error)
        except Exception as bug:  # the pod must not stay in flight forever
            if not self.sink.contains_bugs:
                raise
            log.exception("Error binding pod %s", fields(pod=pod.key, node=node))
            status = Status.as_error(bug)
        if not status.is_success:
            framework.run_unreserve(state, pod, node)
            self._forget(attempt)
            attempt.node = ""
            self.sink.failed(attempt, binding_status(status))
            return
        framework.run_post_bind(state, pod, node)
        self.sink.bound(attempt)


def permit_rejection(attempt: Attempt[Any], status: Status) -> Status:
    """A Permit rejection reads as upstream's: a FitError over the one suggested node."""
    diagnosis = Diagnosis(NodeToStatus(attempt.framework.handle.snapshot), {status.plugin})
    diagnosis.node_to_status.set(attempt.node, status)
    error = FitError(attempt.pod, 1, diagnosis)
    return Status(status.code, (str(error),), status.plugin, error)


def located(status: Status, point: str) -> Status:
    """An error names the extension point and plugin, as upstream's messages do."""
    if status.code != Code.ERROR or not status.plugin:
        return status
    message = f'running {point} plugin "{status.plugin}": {status.message()}'
    return Status(Code.ERROR, (message,), status.plugin, status.error)


def binding_status(status: Status) -> Status:
    if status.code == Code.ERROR:
        return status
    return Status(Code.UNSCHEDULABLE, status.reasons, status.plugin)
