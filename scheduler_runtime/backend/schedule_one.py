"""Upstream's scheduleOne (pkg/scheduler/schedule_one.go), written once for the live
scheduler and for simulate: the scheduling cycle (the algorithm, PostFilter when no node
fits, assume, Reserve, Permit) and the binding cycle (WaitOnPermit, PreBind, Bind,
PostBind), with upstream's failure statuses and messages.

What an attempt does to the scheduler's state (the cache, the queue, the nominator) happens
here, on the backend; where the binding cycle runs and who hears of the outcome are the
caller's: the live scheduler binds on a thread pool and reports to the cluster, simulate binds
at once and keeps the outcomes in memory."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from scheduler_runtime.backend.queue import QueuedPod
from scheduler_runtime.framework.algorithm import SchedulingAlgorithm
from scheduler_runtime.framework.events import POD, ActionType, ClusterEvent
from scheduler_runtime.framework.explain import Explanation, explain
from scheduler_runtime.framework.interface import CycleState
from scheduler_runtime.framework.isolation import FrameworkError
from scheduler_runtime.framework.podgroups import GroupKey
from scheduler_runtime.framework.podinfo import PodInfo
from scheduler_runtime.framework.runtime import Framework
from scheduler_runtime.framework.status import SUCCESS, Code, Status
from scheduler_runtime.framework.types import (
    Diagnosis,
    FitError,
    NodeToStatus,
    NoNodesAvailableError,
    ScheduleResult,
)

if TYPE_CHECKING:
    from scheduler_runtime.backend import Backend

log = logging.getLogger("scheduler_runtime.scheduler")


def fields(**values: Any) -> str:
    """key="value" pairs for one structured log line, quoted as klog quotes them."""
    return " ".join(
        f"{key}={json.dumps(value) if isinstance(value, str) else value}"
        for key, value in values.items()
    )


def nothing() -> None:
    return None


@dataclass(slots=True)
class Attempt:
    """One pod's way through a scheduling and binding cycle. `pod` is the pod as the
    attempt started with it: updates meanwhile change the queue's record (what goes back to
    the queue), never the pod being bound, unreserved or forgotten."""

    queued: QueuedPod
    framework: Framework
    state: CycleState
    started: float
    pod: PodInfo = field(init=False)
    node: str = ""
    assumed: bool = False
    nomination: str | None = None  # from postFilter; "" withdraws an earlier nomination
    expected: str = ""  # the node written as its nominated node before it waited at Permit
    pre_flight: Status = SUCCESS  # PreBindPreFlight's, run before the binding cycle
    # Nothing to wait for but the binding's answer: the cycle is bind_at_once, which returns
    # once the binding is sent and calls `ended` when it has ended, on the answer's thread.
    binds_at_once: bool = False
    ended: Callable[[], None] = field(default=nothing)
    why: dict[str, Any] = field(default_factory=dict)  # for the pod's log line
    explanation: Explanation | None = None

    def __post_init__(self) -> None:
        self.pod = self.queued.pod_info


@dataclass(frozen=True)
class GroupOutcome:
    """How a pod group's scheduling cycle ended (Success: its placed members go on to
    binding; Unschedulable; Error), the message its PodGroup's condition carries, and each
    member's lot: (pod key, node) for those placed, (pod key, message) for the others."""

    key: GroupKey
    status: Status
    placed: tuple[tuple[str, str], ...] = ()
    failed: tuple[tuple[str, str], ...] = ()
    waiting_on_preemption: bool = False
    profile: str = ""
    started: float = 0.0  # when the cycle started, by the sequence's clock
    algorithm_seconds: float = 0.0  # how long trying the group took

    @property
    def message(self) -> str:
        return self.status.message()


class OutcomeSink(Protocol):
    """Who hears how an attempt went: the cluster (live) or memory (simulate). Reporting
    only: the cache, queue and nominator are already up to date when it is told."""

    def node_found(self, attempt: Attempt, result: ScheduleResult) -> None:
        """The algorithm found a node (before the pod is assumed there)."""

    def post_filter_started(self, attempt: Attempt) -> None:
        """No node fits and PostFilter plugins (preemption) are about to run."""

    def explained(self, explanation: Explanation) -> None:
        """Why the attempt went where it went, or nowhere."""

    def bound(self, attempt: Attempt) -> None:
        """The pod is bound to `attempt.node`."""

    def expecting(self, attempt: Attempt) -> None:
        """The pod will wait at Permit or have PreBind work before it binds to
        `attempt.node`: the cluster is told through its nominated node (upstream's
        NominatedNodeNameForExpectation)."""

    def group_decided(self, outcome: GroupOutcome) -> None:
        """A pod group's cycle ended (its members' own outcomes are reported each)."""

    def failed(self, attempt: Attempt, status: Status) -> None:
        """The attempt failed with `status` and the pod is back in the queue
        (handleSchedulingFailure's report)."""


BindingCycle = Callable[[Attempt], None]
# Told where a bug was met (a scheduling cycle, a binding cycle, its cleanup): live counts it.
BugCounter = Callable[[str], None]


def ignore_bug(_where: str) -> None:
    return None


# Runs a binding cycle that may wait: now (simulate) or elsewhere (live: a thread of its own).
BindingStarter = Callable[[BindingCycle, Attempt], None]


def bind_now(binding_cycle: BindingCycle, attempt: Attempt) -> None:
    binding_cycle(attempt)


class ScheduleOne:
    """The scheduling sequence of one scheduler: the backend it takes pods from and keeps
    current, the algorithm its profiles share, and the sink its outcomes go to.

    `explaining` keeps why each pod went where it went (a pass over the rejected nodes per
    pod); `binding_errors` are the exceptions a binding may meet that are the pod's Error, not
    a bug (the API's, live); `contains_bugs` says whether a bug met in a cycle costs only that
    pod's attempt (live) or stops everything (simulate); `on_bug` counts the bugs met."""

    def __init__(
        self,
        backend: Backend,
        algorithm: SchedulingAlgorithm,
        sink: OutcomeSink,
        *,
        explaining: bool,
        start_binding: BindingStarter = bind_now,
        binding_errors: tuple[type[BaseException], ...] = (),
        contains_bugs: bool = False,
        clock: Callable[[], float] = time.monotonic,
        on_bug: BugCounter = ignore_bug,
    ) -> None:
        self.backend = backend
        self.algorithm = algorithm
        self.sink = sink
        self.explaining = explaining
        self.start_binding = start_binding
        self.contains_bugs = contains_bugs
        self.clock = clock
        self.on_bug = on_bug
        self._binding_errors: tuple[type[BaseException], ...] = (FrameworkError, *binding_errors)

    def schedule_one(self, queued: QueuedPod) -> None:
        """One pod: the scheduling cycle, then (when a node was reserved) the binding cycle."""
        pod = queued.pod_info
        if self._skip(pod):
            self.backend.queue.done(pod.id)
            return
        framework = self.backend.frameworks[pod.scheduler_name]
        queued.unschedulable_plugins = set()  # what rejects it now, not in an earlier try
        attempt = Attempt(queued, framework, CycleState(), self.clock())
        with self.backend.cache.frozen():
            try:
                status = self.scheduling_cycle(attempt)
            except Exception as bug:
                if not self.contains_bugs:
                    raise
                status = self._abandon(attempt, bug)
        if not status.is_success:
            self._failed(attempt, status)
            return
        # The pod stays in flight until bound, so a deletion meanwhile is not requeued.
        self._start_binding(attempt)

    def _start_binding(self, attempt: Attempt) -> None:
        """Runs PreBindPreFlight, then hands the binding cycle over: bind_at_once for a pod
        with nothing to wait for but the API's answer (it needs no thread of its own), the
        whole binding_cycle for any other; should that fail, the pod is not left assumed."""
        try:
            attempt.binds_at_once = self._pre_flight(attempt)
            cycle = self.bind_at_once if attempt.binds_at_once else self.binding_cycle
            self.start_binding(cycle, attempt)
        except Exception as bug:
            try:
                self._bug("binding_start", attempt, bug)
            finally:  # its message only: simulate raises the bug on, traceback and all
                self._end_binding(attempt, Status(Code.ERROR, (str(bug),)))

    def _skip(self, pod: PodInfo) -> bool:
        """skipPodSchedule: a pod being deleted, or already assumed, is not scheduled."""
        deleting = (pod.pod.get("metadata") or {}).get("deletionTimestamp")
        return bool(deleting) or self.backend.cache.is_assumed(pod.id)

    def scheduling_cycle(self, attempt: Attempt) -> Status:
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
            why = explain(pod, framework, self.algorithm, node=attempt.node, state=state)
            self._explained(attempt, why)
        return self.reserve_and_permit(attempt)

    def reserve_and_permit(self, attempt: Attempt) -> Status:
        """Assume the pod on `attempt.node`, reserve, permit; all undone when one fails."""
        pod, framework, state = attempt.pod, attempt.framework, attempt.state
        self._assume(attempt)
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
                status = Status(Code.UNSCHEDULABLE, status.reasons, status.plugin, status.error)
        return status

    def _abandon(self, attempt: Attempt, bug: Exception) -> Status:
        """A bug met while scheduling one pod costs that pod's attempt (an Error, retried
        with backoff), never the scheduling loop, which would otherwise stop silently."""
        log.exception("Error scheduling pod %s", fields(pod=attempt.pod.key))
        self.on_bug("scheduling_cycle")
        if attempt.assumed:
            self._forget(attempt)
        attempt.node = ""
        return Status.as_error(bug)

    def _post_filter(self, attempt: Attempt, error: FitError) -> Status:
        """No node fits: let postFilter plugins (preemption) try; the FitError message,
        with theirs appended, is what the user reads."""
        framework, pod = attempt.framework, attempt.pod
        attempt.queued.unschedulable_plugins = set(error.diagnosis.unschedulable_plugins)
        why = (
            explain(
                pod,
                framework,
                self.algorithm,
                node=None,
                diagnosis=error.diagnosis,
                state=attempt.state,
            )
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
                self.backend.nominator.nominate(pod, attempt.nomination)
        if why is not None:
            self._explained(attempt, dataclasses.replace(why, message=str(error)))
        return Status(Code.UNSCHEDULABLE, (str(error),), "", error)

    def _explained(self, attempt: Attempt, explanation: Explanation) -> None:
        attempt.explanation = explanation
        self.sink.explained(explanation)

    def _assume(self, attempt: Attempt) -> None:
        """Counts the pod on its node from now on; a nominated pod waits for no node now."""
        self.backend.cache.assume(attempt.pod, attempt.node)
        self.backend.nominator.delete(attempt.pod.id)
        attempt.assumed = True

    def _forget(self, attempt: Attempt) -> None:
        self.backend.cache.forget(attempt.pod)
        attempt.assumed = False

    def _failed(self, attempt: Attempt, status: Status) -> None:
        """handleSchedulingFailure: back to the queue (unschedulable pods wait for an event
        that could help with what rejected them, errors back off), then the report."""
        if isinstance(status.error, FitError):
            rejecting = status.error.diagnosis.unschedulable_plugins
            attempt.queued.unschedulable_plugins |= {plugin for plugin in rejecting if plugin}
        try:
            self.backend.queue.requeue(attempt.queued, unschedulable=status.code != Code.ERROR)
        finally:
            self.sink.failed(attempt, status)

    def _pre_flight(self, attempt: Attempt) -> bool:
        """RunPreBindPreFlights (its plugins only say whether PreBind will have work), and
        the nominated node written for a pod that will wait: whether the binding cycle has
        nothing to wait for but the binding's answer (binds_at_once)."""
        pod, framework, state = attempt.pod, attempt.framework, attempt.state
        try:
            status = framework.run_pre_bind_pre_flight(state, pod, attempt.node)
        except self._binding_errors as error:
            status = Status.as_error(error)
        attempt.pre_flight = status
        if not (status.is_success or status.is_skip):
            return False
        self._expecting(attempt, prebinds=status.is_success)
        return status.is_skip and framework.binds_at_once(state, pod)

    def binding_cycle(self, attempt: Attempt) -> None:
        """WaitOnPermit, PreBind, Bind, then PostBind, or the failure: unreserve, forget,
        requeue. Whatever is raised on the way, the pod does not stay in flight: the cleanup
        runs, and a bug is logged with the pod and counted."""
        status: Status | None = None
        try:
            status = self._before_bind(attempt)
            if status.is_success:
                bound = attempt.framework.run_bind(attempt.state, attempt.pod, attempt.node)
                status = self._bound(bound)
        except self._binding_errors as error:
            status = Status.as_error(error)
        except Exception as bug:  # the pod must not stay in flight forever
            self._bug("binding_cycle", attempt, bug)
            status = Status.as_error(bug)
        finally:
            self._end_cycle(attempt, status)

    def bind_at_once(self, attempt: Attempt) -> None:
        """The binding cycle of a pod with nothing to wait for: the binding is sent, and the
        cycle ends (PostBind, or the failure) on the thread that receives the answer."""
        status: Status | None = None
        try:
            status = self._before_bind(attempt)  # passes at once: nothing waits, nothing runs
            if status.is_success:
                answered = functools.partial(self._answered, attempt)
                bind = attempt.framework.run_bind_async
                bind(attempt.state, attempt.pod, attempt.node, answered)
                return
        except self._binding_errors as error:
            status = Status.as_error(error)
        except Exception as bug:
            self._bug("binding_cycle", attempt, bug)
            status = Status.as_error(bug)
        self._end_cycle(attempt, status)

    def _answered(self, attempt: Attempt, status: Status) -> None:
        self._end_cycle(attempt, self._bound(status))

    def _before_bind(self, attempt: Attempt) -> Status:
        """WaitOnPermit and PreBind, after the pre-flight."""
        pod, framework, state, node = attempt.pod, attempt.framework, attempt.state, attempt.node
        status = attempt.pre_flight
        if status.is_success or status.is_skip:
            status = located(framework.wait_on_permit(pod), "Permit")
        else:
            framework.waiting_pods.remove(pod.uid)  # nothing will wait for it now
        if status.is_rejected:
            status = permit_rejection(attempt, status)
        if status.is_success:
            status = located(framework.run_pre_bind(state, pod, node), "PreBind")
        return status

    @staticmethod
    def _bound(status: Status) -> Status:
        """The Bind extension point's status, as the binding cycle reads it."""
        if status.is_skip:
            return Status(Code.ERROR, ("no bind plugin bound the pod",))
        return located(status, "Bind")

    def _end_cycle(self, attempt: Attempt, status: Status | None) -> None:
        """The binding cycle's end, whatever it met (None: it was interrupted)."""
        try:
            self._end_binding(attempt, status or Status(Code.ERROR, ("binding interrupted",)))
        except Exception as bug:
            self._bug("binding_cleanup", attempt, bug)
        finally:
            ended, attempt.ended = attempt.ended, nothing  # told once
            ended()

    def _end_binding(self, attempt: Attempt, status: Status) -> None:
        """The bound pod leaves the queue and is reported; any other goes back."""
        if not status.is_success:
            self._binding_failed(attempt, binding_status(status))
            return
        pod = attempt.pod
        try:
            attempt.framework.run_post_bind(attempt.state, pod, attempt.node)
        finally:
            try:
                self.backend.queue.done(pod.id)
            finally:
                self.sink.bound(attempt)

    def _bug(self, where: str, attempt: Attempt, bug: Exception) -> None:
        """An exception nothing expected: logged with the pod and counted; simulate stops."""
        if not self.contains_bugs:
            raise bug
        log.error(
            "Unexpected error in the %s %s",
            where.replace("_", " "),
            fields(pod=attempt.pod.key, node=attempt.node),
            exc_info=bug,
        )
        self.on_bug(where)

    def _expecting(self, attempt: Attempt, *, prebinds: bool) -> None:
        """NominatedNodeNameForExpectation: a pod whose PreBind has work to do, or that will
        wait at Permit, has its node written as its nominated node first (otherwise it is
        bound at once, and the nomination would only be cleared by the binding)."""
        framework = attempt.framework
        if not framework.handle.features.nominated_node_name_for_expectation:
            return
        if prebinds or framework.will_wait_on_permit(attempt.pod):
            self.sink.expecting(attempt)
            attempt.expected = attempt.node

    def _binding_failed(self, attempt: Attempt, status: Status) -> None:
        """handleBindingCycleError: unreserve and forget; the room the pod held is freed, an
        AssignedPodDelete for the other pods (for the pod itself too, when it met an error:
        it is in flight still, and goes to backoff); its nomination is withdrawn. Each step
        runs even when one before it raised (which is raised once all have run)."""
        pod = attempt.pod
        framework, state, node = attempt.framework, attempt.state, attempt.node
        cache = self.backend.cache
        with cache.lock:  # a deletion may land between the two
            held = cache.assumed_pod(pod.id) if cache.is_assumed(pod.id) else None
        freed = ClusterEvent(POD, ActionType.DELETE)
        with contextlib.ExitStack() as steps:  # run last first, each whatever the others do
            if held is not None and status.is_rejected:
                steps.callback(self.backend.queue.on_event, freed, held, None, skip=pod.id)
            steps.callback(self._failed, attempt, status)
            if held is not None and not status.is_rejected:
                steps.callback(self.backend.queue.on_event, freed, held, None)
            steps.callback(self._withdraw, attempt)
            steps.callback(self._forget, attempt)
            steps.callback(framework.run_unreserve, state, pod, node)

    @staticmethod
    def _withdraw(attempt: Attempt) -> None:
        attempt.node, attempt.nomination = "", ""


def permit_rejection(attempt: Attempt, status: Status) -> Status:
    """A Reserve or Permit rejection reads as upstream's: a FitError over the one suggested
    node, naming the plugin that rejected it."""
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
    return Status(Code.UNSCHEDULABLE, status.reasons, status.plugin, status.error)
