"""The live scheduler: upstream's scheduleOne (framework/schedule_one.py) with the cluster as
its outcome sink. One scheduling cycle at a time over the frozen cache; the binding cycle
(preBind, bind, postBind) runs on a thread pool so the next pod is scheduled meanwhile.
Failures are reported as upstream reports them and the pod goes back to the queue.

With leader election, the outcomes' `leading()` is asked before every cycle (and by the outcomes
right before every binding): once it fails, the loop stops without scheduling and `on_fenced`
is told.
Stopping ends the loop first, then the bindings, then the reports, each after the one that
feeds it."""

from __future__ import annotations

import logging
import random
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import urllib3

from scheduler_runtime.backend import Backend
from scheduler_runtime.backend.podgroups import report
from scheduler_runtime.backend.queue import QueuedPod, SchedulingQueue
from scheduler_runtime.backend.schedule_one import Attempt, BindingCycle, GroupOutcome, fields
from scheduler_runtime.backend.schedule_one_podgroup import PodGroupSequence
from scheduler_runtime.config import SchedulerConfiguration
from scheduler_runtime.framework.algorithm import SchedulingAlgorithm
from scheduler_runtime.framework.explain import Explanation, annotation
from scheduler_runtime.framework.interface import (
    DEFAULT_PLUGIN_TIME_BUDGET,
    Handle,
    Services,
)
from scheduler_runtime.framework.podgroups import WORKLOAD_API, GroupKey
from scheduler_runtime.framework.podinfo import PodInfo
from scheduler_runtime.framework.status import Code, Status
from scheduler_runtime.framework.types import ScheduleResult
from scheduler_runtime.live.claims import LiveClaimAPI
from scheduler_runtime.live.explanations import ExplanationStore, annotation_patch
from scheduler_runtime.live.kube import ApiError, Kube
from scheduler_runtime.live.metrics import (
    ERROR,
    SCHEDULED,
    UNSCHEDULABLE,
    WAITING_ON_PREEMPTION,
    SchedulerMetrics,
)
from scheduler_runtime.live.outcomes import NotLeadingError, Outcomes
from scheduler_runtime.live.volumes import VolumeBinder

log = logging.getLogger("scheduler_runtime.scheduler")

# Bindings wait on the API server, not on Python: many may be under way at once (upstream
# starts a goroutine per pod). Events, status patches and evictions go through a pool of
# their own, so neither the scheduling loop nor the bindings wait for them.
BINDING_WORKERS = 64
REPORTING_WORKERS = 8
# Past this many pods waiting for a binding thread the loop waits (at most BACKLOG_WAIT
# seconds per pod) before its next cycle. When the API server is the bottleneck, a loop that
# runs ahead only lengthens the wait between a pod's Reserve and its PreBind: what it holds
# (a claim's allocation in flight, which makes every other pod sharing the claim
# unschedulable until written; the cycle's state) is held that much longer, for nothing. The
# wait is bounded so pods parked at Permit in every thread cannot stall the loop.
BINDING_BACKLOG = BINDING_WORKERS
BACKLOG_WAIT_SECONDS = 1.0
PREEMPTION = "DefaultPreemption"
GROUPS_KEPT = 10_000  # the pod groups whose last cycle /explain can tell
# The PodGroupScheduled condition's reasons when a group is not placed.
UNSCHEDULABLE_GROUP, SCHEDULER_ERROR = "Unschedulable", "SchedulerError"
# Failures of a binding's API calls: the pod's Error, not a bug.
API_ERRORS = (ApiError, urllib3.exceptions.HTTPError, OSError)
# How long stop() waits for the scheduling cycle under way (it may still start a binding).
CYCLE_STOP_SECONDS = 30.0


def nothing() -> None:
    return None


class Scheduler:
    """The backend (profiles, queue, cache) and the loop that drives it; the outcome sink of
    its scheduling sequence: events, conditions, metrics and explanations."""

    def __init__(
        self,
        config: SchedulerConfiguration,
        kube: Kube,
        outcomes: Outcomes,
        metrics: SchedulerMetrics,
        rng: random.Random | None = None,
        *,
        explanations: ExplanationStore | None = None,
        explain_annotation: bool = False,
        plugin_time_budget: float = DEFAULT_PLUGIN_TIME_BUDGET,
        on_fenced: Callable[[], None] = nothing,
    ) -> None:
        self.kube = kube
        self.on_fenced = on_fenced
        self.explanations = explanations or ExplanationStore()
        self.explain_annotation = explain_annotation
        # Explaining costs a pass over the rejected nodes per pod: skipped when nobody asks.
        explaining = self.explanations.capacity > 0 or explain_annotation
        self.outcomes = outcomes
        self.metrics = metrics
        self.rng = rng or random.Random()  # noqa: S311 - tie-breaking, not crypto
        self.backend = Backend(config, on_change=metrics.set_pending)
        self.backend.build_frameworks(self._handle(config, plugin_time_budget))
        self.algorithm = SchedulingAlgorithm(
            self.backend.snapshot, config.percentage_of_nodes_to_score, self.rng
        )
        self.binding = ThreadPoolExecutor(BINDING_WORKERS, thread_name_prefix="binding")
        self._backlog = threading.Semaphore(BINDING_BACKLOG)
        self.reporting = ThreadPoolExecutor(REPORTING_WORKERS, thread_name_prefix="reporting")
        # Writes about a pod waiting for the one under way about it, by pod key.
        self._reports: dict[str, deque[tuple[Any, tuple[Any, ...], dict[str, Any]]]] = {}
        self._reports_lock = threading.Lock()
        self.stopping = threading.Event()
        self._scheduled_groups: set[tuple[GroupKey, str]] = set()  # PodGroups (by uid) set True
        # How each group's last cycle ended, for /explain (the newest GROUPS_KEPT groups).
        self._group_messages: OrderedDict[GroupKey, str] = OrderedDict()
        self._explaining = threading.Lock()
        self._loop_idle = threading.Event()  # set while no scheduling loop runs
        self._loop_idle.set()
        self.sequence = PodGroupSequence(
            self.backend,
            self.algorithm,
            self,
            explaining=explaining,
            start_binding=self._start_binding,
            binding_errors=(*API_ERRORS, NotLeadingError),
            contains_bugs=True,
        )
        metrics.watch_state(self.state_sizes)

    def state_sizes(self) -> dict[str, int]:
        """The backend's sizes, the pods with writes waiting to be reported, and the
        v1alpha2 PodGroups remembered as scheduled (scheduler_runtime_state_objects)."""
        return {
            **self.backend.sizes(),
            "pending_reports": len(self._reports),
            "scheduled_pod_groups": len(self._scheduled_groups),
        }

    @property
    def queue(self) -> SchedulingQueue:
        return self.backend.queue

    def _handle(self, config: SchedulerConfiguration, plugin_time_budget: float) -> Handle:
        return Handle(
            snapshot=self.backend.snapshot,
            plugin_time_budget=plugin_time_budget,
            binder=self.outcomes.bind,
            nominator=self.backend.nominator,
            rng=self.rng,
            parallelism=config.parallelism,
            record_extension_point=self.metrics.extension_point,
            features=config.features,
            services=Services(
                delete_pod=self._evict,
                clear_nomination=self._clear_nomination,
                bind_pod_volumes=VolumeBinder(self.kube, self.outcomes.fence),
                metrics_registry=self.metrics.registry,  # plugins' own metrics
                resource_claims=LiveClaimAPI(self.kube, self.outcomes),
            ),
        )

    def _evict(self, victim: PodInfo, preemptor: PodInfo) -> None:
        """The delete_pod service of preemption; runs off the scheduling loop. The victim
        stops counting when its deletion arrives through the watch, as upstream's does."""
        self._report(self.outcomes.preempt, victim, preemptor)

    def _clear_nomination(self, pod: PodInfo) -> None:
        self.backend.nominator.delete(pod.key)
        self._report(self.outcomes.clear_nomination, pod)

    # ----- the loop

    def run(self) -> None:
        """Schedules pods one at a time until stop(), or until the lease is no longer held."""
        self._loop_idle.clear()
        try:
            while not self.stopping.is_set():
                queued = self.queue.pop(timeout=1.0)
                if queued is None or self.stopping.is_set():
                    continue
                if not self.outcomes.leading():
                    self._fenced(queued)
                    return
                self.schedule_one(queued)
        finally:
            self._loop_idle.set()

    def _fenced(self, queued: QueuedPod) -> None:
        """The lease was not renewed within renewDeadline: no further cycle starts."""
        self.stopping.set()
        self.queue.done(queued.key)
        log.error(
            "Not scheduling pod %s: the lease was not renewed within renewDeadline",
            queued.key,
        )
        self.on_fenced()

    def stop(self, *, finish_bindings: bool = True) -> None:
        """Stops scheduling; bindings already under way finish, and so do those waiting to
        start unless `finish_bindings` is False (after losing the lease).

        The order matters: the cycle under way ends first (it may still hand a pod to the
        binding pool), then the bindings (they report their outcomes), then the reports."""
        self.stopping.set()
        self.queue.close()
        if not self._loop_idle.wait(CYCLE_STOP_SECONDS):
            log.warning("the scheduling cycle under way did not end within %ss", CYCLE_STOP_SECONDS)
        self.binding.shutdown(wait=True, cancel_futures=not finish_bindings)
        self.reporting.shutdown(wait=True)

    def schedule_one(self, queued: QueuedPod) -> None:
        self.sequence.schedule_one(queued)

    # ----- the sequence's outcome sink: the cluster

    def node_found(self, attempt: Attempt, result: ScheduleResult) -> None:
        # As upstream: from the cycle's start (here, including the wait for the cache lock,
        # as upstream's includes its snapshot update) to a suggested host.
        self.metrics.algorithm_duration.observe(time.monotonic() - attempt.started)
        if log.isEnabledFor(logging.INFO):  # the why costs a pass over the scores
            attempt.why = self._why(result)

    def post_filter_started(self, attempt: Attempt) -> None:
        if PREEMPTION in attempt.framework.profile.enabled("postFilter"):
            self.metrics.preemption_attempts.inc()

    def explained(self, explanation: Explanation) -> None:
        self.explanations.add(explanation)

    def _start_binding(self, binding_cycle: BindingCycle, attempt: Attempt) -> None:
        waiting = self._backlog.acquire(timeout=BACKLOG_WAIT_SECONDS)

        def bind() -> None:
            if waiting:
                self._backlog.release()  # it has a thread now
            binding_cycle(attempt)

        try:
            self.binding.submit(bind)
        except RuntimeError:  # the pool shut down: only after a cycle outlived stop()'s wait
            if not self.stopping.is_set():
                raise
            log.warning("Not binding pod %s: the scheduler is stopping", attempt.pod.key)

    def bound(self, attempt: Attempt) -> None:
        pod, node = attempt.pod, attempt.node
        elapsed = time.monotonic() - attempt.started
        self.metrics.attempt(SCHEDULED, pod.scheduler_name, elapsed)
        queued_at = attempt.queued.initial_attempt_timestamp or attempt.started
        self.metrics.scheduled(attempt.queued.attempts, time.monotonic() - queued_at)
        if log.isEnabledFor(logging.INFO):
            log.info(
                "Successfully bound pod to node %s",
                fields(pod=pod.key, profile=pod.scheduler_name, node=node, **attempt.why),
            )
        self._report(self.outcomes.scheduled, pod, node)
        self._annotate(attempt)

    def expecting(self, attempt: Attempt) -> None:
        """Runs on the binding thread, before the pod waits at Permit (as upstream's does):
        a failure is logged and the binding goes on."""
        try:
            self.outcomes.expect(attempt.pod, attempt.node)
        except (*API_ERRORS, NotLeadingError) as failure:
            log.warning(
                "Failed to update the nominated node name in the binding cycle %s",
                fields(pod=attempt.pod.key, nominatedNodeName=attempt.node, err=str(failure)),
            )

    def group_decided(self, outcome: GroupOutcome) -> None:
        """The pod group's log line and, for a scheduling.k8s.io/v1alpha2 PodGroup, its
        PodGroupScheduled condition."""
        status = outcome.status
        self._remember(outcome)
        result = (
            SCHEDULED
            if status.is_success
            else ERROR
            if status.code == Code.ERROR
            else WAITING_ON_PREEMPTION
            if outcome.waiting_on_preemption
            else UNSCHEDULABLE
        )
        elapsed = time.monotonic() - outcome.started
        self.metrics.pod_group_attempt(result, outcome.profile, elapsed, outcome.algorithm_seconds)
        if log.isEnabledFor(logging.INFO):
            what = (
                "Successfully scheduled a pod group"
                if status.is_success
                else "Unable to schedule a pod group"
            )
            log.info(
                "%s %s",
                what,
                fields(
                    podGroup=str(outcome.key),
                    scheduledPods=len(outcome.placed),
                    unschedulablePods=len(outcome.failed),
                    reason=status.message(),
                ),
            )
        group = self.backend.groups.object(outcome.key)
        if outcome.key.api != WORKLOAD_API or group is None:
            return
        # Once scheduled, a group is not set back to False by a cycle for its extra members,
        # even before the watch shows the True this scheduler wrote.
        uid = (group.get("metadata") or {}).get("uid", "")
        if (outcome.key, uid) in self._scheduled_groups and not status.is_success:
            return
        if status.is_success:
            self._scheduled_groups.add((outcome.key, uid))
            condition = ("True", "Scheduled", status.message())
        elif status.code == Code.ERROR:
            condition = ("False", SCHEDULER_ERROR, status.message())
        else:
            condition = ("False", UNSCHEDULABLE_GROUP, status.message())
        try:
            self.reporting.submit(self._write_group, group, *condition)
        except RuntimeError:  # the pool shut down: only after a cycle outlived stop()'s wait
            if not self.stopping.is_set():
                raise

    def _remember(self, outcome: GroupOutcome) -> None:
        with self._explaining:
            self._group_messages.pop(outcome.key, None)
            self._group_messages[outcome.key] = outcome.message
            while len(self._group_messages) > GROUPS_KEPT:
                self._group_messages.popitem(last=False)

    def explain(self, key: str) -> dict[str, Any] | None:
        """/explain for pod `key`: its last attempt's explanation, and for a member of a pod
        group, where the group stands (members existing against its minimum, waiting at
        Permit, bound) and why it waits, even before the pod was first tried."""
        found = self.explanations.lookup(key)
        groups = self.backend.groups
        member = groups.member(key)
        if member is None:
            return found
        group = groups.groups_of(key)[0]
        with self._explaining:
            last = self._group_messages.get(group)

        def held(pod: str) -> str | None:
            verdict = self.queue.gated(pod)
            return verdict.message() if verdict is not None else None

        standing = report(groups, group, held, last).as_json()
        if found is None:
            spec = member.get("spec") or {}
            found = {
                "pod": key,
                "profile": spec.get("schedulerName") or "default-scheduler",
                "node": spec.get("nodeName"),
                "message": held(key) or "not tried yet: it is tried with its pod group",
                "evaluatedNodes": 0,
                "feasibleNodes": 0,
                "filtered": [],
                "candidates": [],
            }
        return {**found, "podGroup": standing}

    def _write_group(self, group: dict[str, Any], *condition: str) -> None:
        try:
            self.outcomes.pod_group_condition(group, *condition)
        except NotLeadingError:
            log.info("Not updating PodGroup status: no longer leading")
        except API_ERRORS as failure:
            log.warning("Failed to update PodGroup status: %s", failure)

    def failed(self, attempt: Attempt, status: Status) -> None:
        """handleSchedulingFailure's report: event, condition and nominated node."""
        pod = attempt.pod
        error = status.code == Code.ERROR
        message = status.message()
        result = ERROR if error else UNSCHEDULABLE
        self.metrics.attempt(result, pod.scheduler_name, time.monotonic() - attempt.started)
        nominated = None if error else attempt.nomination
        if attempt.expected:  # it waited at Permit with its node as nominated node: withdrawn
            nominated = ""
        if log.isEnabledFor(logging.INFO):
            log.info(
                "Unable to schedule pod %s",
                fields(
                    pod=pod.key,
                    profile=pod.scheduler_name,
                    result=result,
                    reason=message,
                    nominatedNode=nominated or "",
                ),
            )
        if not attempt.queued.deleted:  # nobody to tell about a pod that is gone
            self._report(
                self.outcomes.failed,
                pod,
                message,
                error=error,
                nominated_node=nominated,
                written_nomination=attempt.expected or None,
            )
            self._annotate(attempt)

    def _annotate(self, attempt: Attempt) -> None:
        """With --explain-annotation: the compact explanation on the pod itself."""
        if self.explain_annotation and attempt.explanation is not None:
            self._report(self._write_annotation, attempt.pod, annotation(attempt.explanation))

    def _write_annotation(self, pod: PodInfo, text: str) -> None:
        path = f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}"
        self.kube.patch(path, annotation_patch(text), before_send=self.outcomes.fence)

    def _report(self, write: Any, *args: Any, **kwargs: Any) -> None:
        """Runs an API write about the pod `args[0]` on the reporting pool, after the writes
        about the same pod reported before it (so an older refusal never lands over a newer
        one); a failure is logged, never raised."""
        key = args[0].key
        with self._reports_lock:
            queued = self._reports.get(key)
            if queued is not None:  # a write about this pod is under way: this one follows it
                queued.append((write, args, kwargs))
                return
            self._reports[key] = deque()
        try:
            self.reporting.submit(self._report_in_order, key, write, args, kwargs)
        except RuntimeError:  # the pool shut down: only after a cycle outlived stop()'s wait
            with self._reports_lock:
                self._reports.pop(key, None)
            if not self.stopping.is_set():
                raise
            log.warning("Not reporting the outcome for pod %s: stopping", key)

    def _report_in_order(
        self, key: str, write: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> None:
        while True:
            try:
                self._write(write, *args, **kwargs)
            except Exception:  # a bug in one write must not hold back the pod's next ones
                log.exception("reporting the outcome for pod %s failed", key)
            with self._reports_lock:
                queued = self._reports[key]
                if not queued:
                    del self._reports[key]
                    return
                write, args, kwargs = queued.popleft()

    @staticmethod
    def _write(write: Any, *args: Any, **kwargs: Any) -> None:
        try:
            write(*args, **kwargs)
        except NotLeadingError:
            log.info("Not reporting the outcome for pod %s: no longer leading", args[0].key)
        except API_ERRORS as failure:
            log.warning("reporting the outcome for pod %s failed: %s", args[0].key, failure)

    def _why(self, result: ScheduleResult) -> dict[str, Any]:
        """Why the node was chosen: how many nodes were weighed and, when several fit, the
        chosen node's total and per-plugin scores."""
        why: dict[str, Any] = {
            "evaluatedNodes": result.evaluated_nodes,
            "feasibleNodes": result.feasible_nodes,
        }
        placement = self.algorithm.last_placement
        if placement is not None and result.feasible_nodes > 1:
            slot = self.backend.snapshot.slot(result.suggested_host)
            position = int((placement.slots == slot).argmax())
            why["score"] = int(placement.totals[position])
            why["scores"] = ",".join(
                f"{name}:{int(values[position])}" for name, values in placement.by_plugin.items()
            )
        return why
