"""The live scheduler: upstream's scheduleOne (framework/schedule_one.py) with the cluster as
its outcome sink. One scheduling cycle at a time over the frozen cache; each binding cycle
(preBind, bind, postBind) runs on a thread of its own so the next pod is scheduled meanwhile.
Failures are reported as upstream reports them and the pod goes back to the queue.

The writes about a pod (its binding, its status) and a PodGroup's condition go through the API
dispatcher, one ordered queue per object where a newer call supersedes an older pending one;
events and evictions go through a pool of their own, and a failed one fails nothing else.

With leader election, the outcomes' `leading()` is asked before every cycle (and by the outcomes
right before every binding): once it fails, the loop stops without scheduling and `on_fenced`
is told.
Stopping ends the loop first, then the bindings, then the writes, each after the one that
feeds it."""

from __future__ import annotations

import logging
import random
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from scheduler_runtime.backend import Backend
from scheduler_runtime.backend.api_dispatcher import (
    APIDispatcher,
    CallOverwrittenError,
    CallSkippedError,
)
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
    Preemptor,
    Services,
)
from scheduler_runtime.framework.podgroups import (
    WORKLOAD_API,
    GroupKey,
    GroupPolicy,
)
from scheduler_runtime.framework.podinfo import PodInfo
from scheduler_runtime.framework.status import Code, Status
from scheduler_runtime.framework.types import ScheduleResult
from scheduler_runtime.live.api_calls import (
    RELEVANCES,
    PodBindingCall,
    PodGroupStatusPatchCall,
    PodStatusPatchCall,
)
from scheduler_runtime.live.bindings import Bindings, BindingsClosedError
from scheduler_runtime.live.claims import LiveClaimAPI
from scheduler_runtime.live.explanations import ExplanationStore
from scheduler_runtime.live.kube import ApiError, Kube
from scheduler_runtime.live.metrics import (
    ERROR,
    SCHEDULED,
    UNSCHEDULABLE,
    WAITING_ON_PREEMPTION,
    SchedulerMetrics,
)
from scheduler_runtime.live.outcomes import (
    SCHEDULER_ERROR_REASON,
    UNSCHEDULABLE_REASON,
    NotLeadingError,
    Outcomes,
)
from scheduler_runtime.live.volumes import VolumeBinder

log = logging.getLogger("scheduler_runtime.scheduler")

# A binding cycle waits on the API server or on other components, not on Python: each runs on
# a thread of its own (upstream starts a goroutine per pod), at most this many at once.
MAX_BINDINGS_IN_FLIGHT = 4096
# The dispatcher's API calls under way at once (bindings and status patches), and the pool
# for events and evictions, so neither the loop nor the bindings wait for those.
DISPATCH_WORKERS = 64
REPORTING_WORKERS = 8
# Past this many requests waiting for the API client (calls queued in the dispatcher, callers
# waiting for the rate limiter) the loop waits (at most BACKLOG_WAIT seconds per pod) before
# its next cycle. When the API server is the bottleneck, a loop that runs ahead only
# lengthens the wait between a pod's Reserve and its PreBind: what it holds (a claim's
# allocation in flight, which makes every other pod sharing the claim unschedulable until
# written; the cycle's state) is held that much longer, for nothing. Pods parked at Permit or
# in a PreBind wait send nothing meanwhile, so they do not slow the loop.
BINDING_BACKLOG = 64
BACKLOG_WAIT_SECONDS = 1.0
BACKLOG_POLL_SECONDS = 0.005
PREEMPTION = "DefaultPreemption"
GROUPS_KEPT = 10_000  # the pod groups whose last cycle /explain can tell
VICTIMS_KEPT = 10_000  # the victims (by uid) whose eviction was sent, not sent again
# The PodGroupScheduled condition's reasons when a group is not placed.
UNSCHEDULABLE_GROUP, SCHEDULER_ERROR = "Unschedulable", "SchedulerError"
# Failures of a binding's API calls: the pod's Error, not a bug.
API_ERRORS = (ApiError, OSError)
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
        self.backend = Backend(config)
        metrics.watch_pending(self.backend.queue.pending)
        # The workload API version watched and written, the emulated minor's.
        self.workload_api = self.backend.workload_api
        self.backend.build_frameworks(self._handle(config, plugin_time_budget))
        self.algorithm = SchedulingAlgorithm(
            self.backend.snapshot, config.percentage_of_nodes_to_score, self.rng
        )
        self.bindings = Bindings(MAX_BINDINGS_IN_FLIGHT, self._binding_thread_failed)
        self.dispatcher = APIDispatcher(
            RELEVANCES,
            DISPATCH_WORKERS,
            observe=metrics.async_api_call,
            pending=metrics.pending_async_api_call,
        )
        self.reporting = ThreadPoolExecutor(REPORTING_WORKERS, thread_name_prefix="reporting")
        self.stopping = threading.Event()
        self._scheduled_groups: set[tuple[GroupKey, str]] = set()  # PodGroups (by uid) set True
        # How each group's last cycle ended, for /explain (the newest GROUPS_KEPT groups).
        self._group_messages: OrderedDict[GroupKey, str] = OrderedDict()
        self._evicted: OrderedDict[str, None] = OrderedDict()  # the newest VICTIMS_KEPT
        self._explaining = threading.Lock()
        self.backend.groups.watch_deletions(self._group_deleted)
        self._loop_idle = threading.Event()  # set while no scheduling loop runs
        self._loop_idle.set()
        self.sequence = PodGroupSequence(
            self.backend,
            self.algorithm,
            self,
            explaining=explaining,
            start_binding=self._start_binding,
            binding_errors=(*API_ERRORS, NotLeadingError, CallSkippedError, CallOverwrittenError),
            contains_bugs=True,
            on_bug=metrics.unexpected_error,
        )
        metrics.watch_state(self.state_sizes)

    def state_sizes(self) -> dict[str, int]:
        """The backend's sizes, the pods with writes waiting to be reported, and the
        workload API PodGroups remembered as scheduled (scheduler_runtime_state_objects)."""
        return {
            **self.backend.sizes(),
            "pending_api_calls": self.dispatcher.pending(),
            "scheduled_pod_groups": len(self._scheduled_groups),
        }

    @property
    def queue(self) -> SchedulingQueue:
        return self.backend.queue

    def _handle(self, config: SchedulerConfiguration, plugin_time_budget: float) -> Handle:
        return Handle(
            snapshot=self.backend.snapshot,
            plugin_time_budget=plugin_time_budget,
            binder=self._bind,
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
                resource_claims=LiveClaimAPI(self.kube, self.outcomes, record=self._record),
            ),
        )

    def _evict(self, victim: PodInfo, preemptor: Preemptor) -> None:
        """The delete_pod service of preemption; runs off the scheduling loop. The victim
        stops counting when its deletion arrives through the watch, as upstream's does.
        Upstream skips a victim whose deletion has begun, as the pod it holds says; within a
        pod group's cycle (whose snapshot stays as it was) two members may choose the same
        victim, which is evicted, and told, once."""
        if victim.uid in self._evicted:
            return
        self._evicted[victim.uid] = None
        if len(self._evicted) > VICTIMS_KEPT:
            self._evicted.popitem(last=False)
        self._record(self.outcomes.preempt, victim, preemptor)

    def _clear_nomination(self, pod: PodInfo) -> None:
        """clearNominatedNodeName: the pod no longer waits for that node."""
        self.backend.nominator.delete(pod.id)
        nominated = pod.nominated_node_name or None  # maybe not in the pod object at hand yet
        clear = PodStatusPatchCall(
            self.outcomes, pod, nominated_node="", written_nomination=nominated
        )
        self._dispatch(clear)

    def _bind(self, pod: PodInfo, node_name: str) -> Future[None]:
        """DefaultBinder's binding, through the dispatcher (as with SchedulerAsyncAPICalls):
        it supersedes the pod's pending status patch and is sent after one under way."""
        return self.dispatcher.add(PodBindingCall(self.outcomes, pod, node_name))

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
                try:
                    self.schedule_one(queued)
                except Exception:  # the loop must go on; the pod's own cleanup already ran
                    log.exception(
                        "Unexpected error in the scheduling loop %s", fields(pod=queued.key)
                    )
                    self.metrics.unexpected_error("scheduling_loop")
        finally:
            self._loop_idle.set()

    def _fenced(self, queued: QueuedPod) -> None:
        """The lease was not renewed within renewDeadline: no further cycle starts."""
        self.stopping.set()
        self.queue.done(queued.id)
        log.error(
            "Not scheduling pod %s: the lease was not renewed within renewDeadline",
            queued.key,
        )
        self.on_fenced()

    def stop(self, *, finish_bindings: bool = True) -> None:
        """Stops scheduling; bindings already under way finish (after losing the lease,
        `finish_bindings` False, their writes are fenced: they fail at once).

        The order matters: the cycle under way ends first (it may still start a binding),
        then the bindings (they report their outcomes), then the writes."""
        self.stopping.set()
        self.queue.close()
        if not self._loop_idle.wait(CYCLE_STOP_SECONDS):
            log.warning("the scheduling cycle under way did not end within %ss", CYCLE_STOP_SECONDS)
        self.bindings.close()
        self.dispatcher.close()
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
        """A binding cycle that may wait (at Permit, in PreBind) runs on a thread of its own;
        one with nothing to wait for but the binding's answer is sent from here and ends on
        the dispatcher's worker that receives the answer. Both count among the bindings."""
        self._wait_for_backlog()
        try:
            if attempt.binds_at_once:
                attempt.ended = self.bindings.begin()
                binding_cycle(attempt)
            else:
                self.bindings.start(lambda: binding_cycle(attempt))
        except BindingsClosedError:  # only after a cycle outlived stop()'s wait
            if not self.stopping.is_set():
                raise
            log.warning("Not binding pod %s: the scheduler is stopping", attempt.pod.key)

    def backlog(self) -> int:
        """Requests waiting for the API client: calls queued in the dispatcher, callers
        waiting for the rate limiter."""
        return self.dispatcher.pending() + self.kube.limiter.backlog()

    def _wait_for_backlog(self) -> None:
        """Past BINDING_BACKLOG requests waiting, the loop waits (BACKLOG_WAIT at most)."""
        deadline = 0.0
        while self.backlog() > BINDING_BACKLOG:
            now = time.monotonic()
            deadline = deadline or now + BACKLOG_WAIT_SECONDS
            if now >= deadline:
                return
            time.sleep(BACKLOG_POLL_SECONDS)

    def _binding_thread_failed(self, bug: BaseException) -> None:
        """Last resort: whatever escaped a binding cycle is logged and counted."""
        log.error("Unexpected error in a binding thread", exc_info=bug)
        self.metrics.unexpected_error("binding_thread")

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
        self._record(self.outcomes.scheduled, pod, node)
        text = self._annotation(attempt)
        if text is not None:
            self._dispatch(PodStatusPatchCall(self.outcomes, pod, annotation=text))

    def expecting(self, attempt: Attempt) -> None:
        """Before the pod waits at Permit or in PreBind, its nominated node tells other
        components (the cluster autoscaler) where it is about to be bound; the binding goes
        on whatever becomes of the patch."""
        self._dispatch(PodStatusPatchCall(self.outcomes, attempt.pod, nominated_node=attempt.node))

    def group_decided(self, outcome: GroupOutcome) -> None:
        """The pod group's log line and, for a workload API PodGroup, its scheduled condition
        (PodGroupScheduled; PodGroupInitiallyScheduled from 1.37)."""
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
        self._dispatch(PodGroupStatusPatchCall(self.outcomes, group, condition, self.workload_api))

    def _group_deleted(self, policy: GroupPolicy) -> None:
        """A PodGroup is gone: nothing of it stays, and one re-created under its name
        starts afresh."""
        self._scheduled_groups.discard((policy.key, policy.uid))
        with self._explaining:
            self._group_messages.pop(policy.key, None)

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
        pod_id = groups.named(key)
        member = groups.member(pod_id) if pod_id is not None else None
        if pod_id is None or member is None:
            return found
        group = groups.groups_of(pod_id)[0]
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
                "message": held(pod_id) or "not tried yet: it is tried with its pod group",
                "evaluatedNodes": 0,
                "feasibleNodes": 0,
                "filtered": [],
                "candidates": [],
            }
        return {**found, "podGroup": standing}

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
            self._record(self.outcomes.failed, pod, message)
            reason = SCHEDULER_ERROR_REASON if error else UNSCHEDULABLE_REASON
            patch = PodStatusPatchCall(
                self.outcomes,
                pod,
                reason,
                message,
                nominated_node=nominated,
                written_nomination=attempt.expected or None,
                annotation=self._annotation(attempt),
            )
            self._dispatch(patch)

    def _annotation(self, attempt: Attempt) -> str | None:
        """With --explain-annotation: the compact explanation to put on the pod itself."""
        if self.explain_annotation and attempt.explanation is not None:
            return annotation(attempt.explanation)
        return None

    # ----- writing

    def _dispatch(self, call: PodStatusPatchCall | PodGroupStatusPatchCall) -> None:
        """A write about a pod or PodGroup, after those about it under way, in place of
        those about it still pending that it makes irrelevant; a failure is logged."""
        self.dispatcher.add(call).add_done_callback(lambda done: self._written(call, done))

    def _written(
        self, call: PodStatusPatchCall | PodGroupStatusPatchCall, done: Future[None]
    ) -> None:
        failure = done.exception()
        if failure is None or isinstance(failure, (CallSkippedError, CallOverwrittenError)):
            return
        what = f"{call.call_type} of {call.key}"
        if isinstance(failure, NotLeadingError):
            log.info("Not sending %s: no longer leading", what)
        elif isinstance(failure, API_ERRORS):
            log.warning("Sending %s failed: %s", what, failure)
        else:
            log.error("Unexpected error sending %s", what, exc_info=failure)
            self.metrics.unexpected_error("api_call")

    def _record(self, write: Callable[..., None], *args: Any) -> None:
        """An event or an eviction about the pod `args[0]`, written off the caller's
        thread; a failure is logged, never raised."""
        try:
            self.reporting.submit(self._write, write, *args)
        except RuntimeError:  # the pool shut down: only after a cycle outlived stop()'s wait
            if not self.stopping.is_set():
                raise
            log.warning("Not reporting the outcome for pod %s: stopping", args[0].key)

    def _write(self, write: Callable[..., None], *args: Any) -> None:
        try:
            write(*args)
        except NotLeadingError:
            log.info("Not reporting the outcome for pod %s: no longer leading", args[0].key)
        except API_ERRORS as failure:
            log.warning("reporting the outcome for pod %s failed: %s", args[0].key, failure)
        except Exception:
            log.exception("reporting the outcome for pod %s failed", args[0].key)
            self.metrics.unexpected_error("event")

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
