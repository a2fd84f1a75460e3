"""The live scheduler: upstream's scheduleOne. One scheduling cycle at a time (the core's
algorithm over the frozen snapshot), then assume, reserve and permit; the binding cycle
(preBind, bind, postBind) runs on a thread pool so the next pod is scheduled meanwhile.
Failures are reported as upstream reports them and the pod goes back to the queue."""

from __future__ import annotations

import dataclasses
import json
import logging
import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import urllib3

from scheduler_runtime.config import SchedulerConfiguration
from scheduler_runtime.framework.algorithm import SchedulingAlgorithm
from scheduler_runtime.framework.explain import Explanation, annotation, explain
from scheduler_runtime.framework.interface import (
    DEFAULT_PLUGIN_TIME_BUDGET,
    SUCCESS,
    Code,
    CycleState,
    Handle,
    Services,
    Status,
)
from scheduler_runtime.framework.podinfo import PodInfo
from scheduler_runtime.framework.runtime import Framework, FrameworkError
from scheduler_runtime.framework.snapshot import Snapshot
from scheduler_runtime.framework.types import (
    Diagnosis,
    FitError,
    NodeToStatus,
    NoNodesAvailableError,
    ScheduleResult,
)
from scheduler_runtime.live.cache import ClusterCache
from scheduler_runtime.live.explanations import ExplanationStore, annotation_patch
from scheduler_runtime.live.kube import STRATEGIC_MERGE_PATCH, ApiError, Kube
from scheduler_runtime.live.metrics import ERROR, SCHEDULED, UNSCHEDULABLE, SchedulerMetrics
from scheduler_runtime.live.outcomes import Outcomes
from scheduler_runtime.live.queue import QueuedPod, SchedulingQueue, priority_sort
from scheduler_runtime.live.volumes import VolumeBinder

log = logging.getLogger("scheduler_runtime.scheduler")

# Bindings wait on the API server, not on Python: many may be under way at once (upstream
# starts a goroutine per pod). Events, status patches and evictions go through a pool of
# their own, so neither the scheduling loop nor the bindings wait for them.
BINDING_WORKERS = 64
REPORTING_WORKERS = 8
PREEMPTION = "DefaultPreemption"


def fields(**values: Any) -> str:
    """key="value" pairs for one structured log line, quoted as klog quotes them."""
    return " ".join(
        f"{key}={json.dumps(value) if isinstance(value, str) else value}"
        for key, value in values.items()
    )


@dataclass
class Attempt:
    """One pod's way through a scheduling and binding cycle."""

    queued: QueuedPod
    framework: Framework
    state: CycleState
    started: float
    node: str = ""
    nomination: str | None = None  # from postFilter; "" withdraws an earlier nomination
    why: dict[str, Any] = field(default_factory=dict)  # for the pod's log line
    explanation: Explanation | None = None

    @property
    def pod(self) -> PodInfo:
        return self.queued.pod_info


class Scheduler:
    """Profiles, queue and cache, and the loop that drives them."""

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
    ) -> None:
        self.kube = kube
        self.plugin_time_budget = plugin_time_budget
        self.explanations = explanations or ExplanationStore()
        self.explain_annotation = explain_annotation
        # Explaining costs a pass over the rejected nodes per pod: skipped when nobody asks.
        self.explaining = self.explanations.capacity > 0 or explain_annotation
        self.outcomes = outcomes
        self.metrics = metrics
        self.rng = rng or random.Random()  # noqa: S311 - tie-breaking, not crypto
        self.snapshot = Snapshot()
        self.frameworks = {
            profile.scheduler_name: Framework(profile, self._handle(config))
            for profile in config.profiles
        }
        first = next(iter(self.frameworks.values()))
        self.queue = SchedulingQueue(
            less=first.less if first.has("queueSort") else priority_sort,
            pre_enqueue=self._may_enqueue,
            initial_backoff=config.pod_initial_backoff_seconds,
            max_backoff=config.pod_max_backoff_seconds,
            on_change=metrics.set_pending,
        )
        self.cache = ClusterCache(self.snapshot, self.queue, self.frameworks)
        self.algorithm = SchedulingAlgorithm(
            self.snapshot, config.percentage_of_nodes_to_score, self.rng
        )
        self.binding = ThreadPoolExecutor(BINDING_WORKERS, thread_name_prefix="binding")
        self.reporting = ThreadPoolExecutor(REPORTING_WORKERS, thread_name_prefix="reporting")
        self.stopping = threading.Event()
        self._cycle_pod: PodInfo | None = None  # the pod of the running scheduling cycle

    def _handle(self, config: SchedulerConfiguration) -> Handle:
        return Handle(
            snapshot=self.snapshot,
            plugin_time_budget=self.plugin_time_budget,
            binder=self.outcomes.bind,
            nominator=self._nominated_pods,
            nominated_nodes=self._nominated_node_names,
            rng=self.rng,
            parallelism=config.parallelism,
            record_extension_point=self.metrics.extension_point,
            services=Services(
                delete_pod=self._evict,
                clear_nomination=self._clear_nomination,
                bind_pod_volumes=VolumeBinder(self.kube),
                metrics_registry=self.metrics.registry,  # plugins' own metrics
            ),
        )

    def _evict(self, victim: PodInfo) -> None:
        """The delete_pod service of preemption; runs off the scheduling loop. The victim
        stops counting when its deletion arrives through the watch, as upstream's does."""
        preemptor = self._cycle_pod
        if preemptor is not None:
            self._report(self.outcomes.preempt, victim, preemptor)

    def _clear_nomination(self, pod: PodInfo) -> None:
        self.cache.nominate(pod, "")
        self._report(self.outcomes.clear_nomination, pod)

    def _nominated_pods(self, node_name: str) -> list[PodInfo]:
        return self.cache.nominated_pods(node_name)

    def _nominated_node_names(self) -> list[str]:
        return self.cache.nominated_node_names()

    def _may_enqueue(self, pod: PodInfo) -> bool:
        framework = self.frameworks.get(pod.scheduler_name)
        return framework is not None and framework.run_pre_enqueue(pod).is_success

    # ----- the loop

    def run(self) -> None:
        """Schedules pods one at a time until stop()."""
        while not self.stopping.is_set():
            queued = self.queue.pop(timeout=1.0)
            if queued is not None and not self.stopping.is_set():
                self.schedule_one(queued)

    def stop(self, *, finish_bindings: bool = True) -> None:
        """Stops scheduling; bindings already under way finish, and so do those waiting to
        start unless `finish_bindings` is False (after losing the lease)."""
        self.stopping.set()
        self.queue.close()
        self.binding.shutdown(wait=True, cancel_futures=not finish_bindings)
        self.reporting.shutdown(wait=True)

    def schedule_one(self, queued: QueuedPod) -> None:
        pod = queued.pod_info
        framework = self.frameworks[pod.scheduler_name]
        attempt = Attempt(queued, framework, CycleState(), time.monotonic())
        if self.cache.is_assumed(pod.key) or (pod.pod.get("metadata") or {}).get(
            "deletionTimestamp"
        ):
            self.queue.done(pod.key)
            return
        with self.cache.frozen():
            self._cycle_pod = pod
            try:
                status = self._scheduling_cycle(attempt)
            except Exception as bug:
                status = self._abandon(attempt, bug)
            finally:
                self._cycle_pod = None
        if not status.is_success:
            self._fail(attempt, status)
            return
        # The pod stays in flight until bound, so a deletion meanwhile is not requeued.
        self.binding.submit(self._binding_cycle, attempt)

    def _scheduling_cycle(self, attempt: Attempt) -> Status:
        """Runs under the cache lock: find a node, assume the pod there, reserve, permit."""
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
        # As upstream: from the cycle's start (here, including the wait for the cache lock,
        # as upstream's includes its snapshot update) to a suggested host.
        self.metrics.algorithm_duration.observe(time.monotonic() - attempt.started)
        attempt.node = result.suggested_host
        if self.explaining:
            self._explained(attempt, explain(pod, framework, self.algorithm, node=attempt.node))
        self.cache.assume(pod, attempt.node)
        status = _located(framework.run_reserve(state, pod, attempt.node), "Reserve")
        if status.is_success:
            status = framework.run_permit(state, pod, attempt.node)
            if status.code == Code.WAIT:
                status = SUCCESS  # the binding cycle waits for it, off the scheduling loop
            status = _located(status, "Permit")
            if status.is_rejected:
                status = _permit_rejection(attempt, status)
        if not status.is_success:
            framework.run_unreserve(state, pod, attempt.node)
            self.cache.forget(pod)
            if status.code not in (Code.ERROR, Code.UNSCHEDULABLE_AND_UNRESOLVABLE):
                status = Status(Code.UNSCHEDULABLE, status.reasons, status.plugin)
            return status
        if log.isEnabledFor(logging.INFO):  # the why costs a pass over the scores
            attempt.why = self._why(attempt, result)
        return status

    def _abandon(self, attempt: Attempt, bug: Exception) -> Status:
        """A bug met while scheduling one pod costs that pod's attempt (an Error, retried
        with backoff), never the scheduling loop, which would otherwise stop silently."""
        log.exception("Error scheduling pod %s", fields(pod=attempt.pod.key))
        if self.cache.is_assumed(attempt.pod.key):
            self.cache.forget(attempt.pod)
        attempt.node = ""
        return Status.as_error(bug)

    def _post_filter(self, attempt: Attempt, error: FitError) -> Status:
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
            if PREEMPTION in framework.profile.enabled("postFilter"):
                self.metrics.preemption_attempts.inc()
            try:
                result, status = framework.run_post_filter(attempt.state, pod, error.diagnosis)
            except FrameworkError as failure:
                return Status.as_error(failure)
            error.diagnosis.post_filter_msg = status.message()
            if result is not None and result.nominating is not None:
                attempt.nomination = result.nominating.node_name
                self.cache.nominate(pod, attempt.nomination)
        if why is not None:
            self._explained(attempt, dataclasses.replace(why, message=str(error)))
        return Status(Code.UNSCHEDULABLE, (str(error),), "", error)

    def _explained(self, attempt: Attempt, explanation: Explanation) -> None:
        attempt.explanation = explanation
        self.explanations.add(explanation)

    # ----- the binding cycle (thread pool)

    def _binding_cycle(self, attempt: Attempt) -> None:
        pod, framework, state, node = attempt.pod, attempt.framework, attempt.state, attempt.node
        try:
            status = _located(framework.wait_on_permit(pod), "Permit")
            if status.is_rejected:
                status = _permit_rejection(attempt, status)
            if status.is_success:
                status = _located(framework.run_pre_bind(state, pod, node), "PreBind")
            if status.is_success:
                status = _located(framework.run_bind(state, pod, node), "Bind")
                if status.is_skip:
                    status = Status(Code.ERROR, ("no bind plugin bound the pod",))
        except (FrameworkError, ApiError, urllib3.exceptions.HTTPError, OSError) as error:
            status = Status.as_error(error)
        except Exception as bug:  # the pod must not stay in flight forever
            log.exception("Error binding pod %s", fields(pod=pod.key, node=node))
            status = Status.as_error(bug)
        if not status.is_success:
            framework.run_unreserve(state, pod, node)
            self.cache.forget(pod)
            attempt.node = ""
            self._fail(attempt, _binding_status(status))
            return
        self.queue.done(pod.key)
        framework.run_post_bind(state, pod, node)
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

    # ----- failures

    def _fail(self, attempt: Attempt, status: Status) -> None:
        """handleSchedulingFailure: event, condition, nominated node, back to the queue."""
        pod = attempt.pod
        error = status.code == Code.ERROR
        message = status.message()
        result = ERROR if error else UNSCHEDULABLE
        self.metrics.attempt(result, pod.scheduler_name, time.monotonic() - attempt.started)
        nominated = None if error else attempt.nomination
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
        self.queue.requeue(attempt.queued, unschedulable=not error)
        if not attempt.queued.deleted:  # nobody to tell about a pod that is gone
            self._report(self.outcomes.failed, pod, message, error=error, nominated_node=nominated)
            self._annotate(attempt)

    def _annotate(self, attempt: Attempt) -> None:
        """With --explain-annotation: the compact explanation on the pod itself."""
        if self.explain_annotation and attempt.explanation is not None:
            self._report(self._write_annotation, attempt.pod, annotation(attempt.explanation))

    def _write_annotation(self, pod: PodInfo, text: str) -> None:
        path = f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}"
        self.kube.request(
            "PATCH", path, body=annotation_patch(text), content_type=STRATEGIC_MERGE_PATCH
        )

    def _report(self, write: Any, *args: Any, **kwargs: Any) -> None:
        """Runs an API write on the reporting pool; a failure is logged, never raised."""
        self.reporting.submit(self._write, write, *args, **kwargs)

    @staticmethod
    def _write(write: Any, *args: Any, **kwargs: Any) -> None:
        try:
            write(*args, **kwargs)
        except (ApiError, urllib3.exceptions.HTTPError, OSError) as failure:
            log.warning("reporting the outcome for pod %s failed: %s", args[0].key, failure)

    def _why(self, attempt: Attempt, result: ScheduleResult) -> dict[str, Any]:
        """Why the node was chosen: how many nodes were weighed and, when several fit, the
        chosen node's total and per-plugin scores."""
        why: dict[str, Any] = {
            "evaluatedNodes": result.evaluated_nodes,
            "feasibleNodes": result.feasible_nodes,
        }
        placement = self.algorithm.last_placement
        if placement is not None and result.feasible_nodes > 1:
            slot = self.snapshot.slot(attempt.node)
            position = int((placement.slots == slot).argmax())
            why["score"] = int(placement.totals[position])
            why["scores"] = ",".join(
                f"{name}:{int(values[position])}" for name, values in placement.by_plugin.items()
            )
        return why


def _permit_rejection(attempt: Attempt, status: Status) -> Status:
    """A Permit rejection reads as upstream's: a FitError over the one suggested node."""
    diagnosis = Diagnosis(NodeToStatus(attempt.framework.handle.snapshot), {status.plugin})
    diagnosis.node_to_status.set(attempt.node, status)
    error = FitError(attempt.pod, 1, diagnosis)
    return Status(status.code, (str(error),), status.plugin, error)


def _located(status: Status, point: str) -> Status:
    """An error names the extension point and plugin, as upstream's messages do."""
    if status.code != Code.ERROR or not status.plugin:
        return status
    message = f'running {point} plugin "{status.plugin}": {status.message()}'
    return Status(Code.ERROR, (message,), status.plugin, status.error)


def _binding_status(status: Status) -> Status:
    if status.code == Code.ERROR:
        return status
    return Status(Code.UNSCHEDULABLE, status.reasons, status.plugin)
