"""Prometheus metrics under kube-scheduler's own names (pkg/scheduler/metrics), so existing
dashboards and alerts work unchanged. Each runtime has its own registry."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, disable_created_metrics
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from scheduler_runtime.framework.status import Code

SCHEDULED, UNSCHEDULABLE, ERROR = "scheduled", "unschedulable", "error"
WAITING_ON_PREEMPTION = "waiting_on_preemption"
STATE_OBJECTS = "scheduler_runtime_state_objects"


class StateCollector(Collector):
    """scheduler_runtime_state_objects{kind}: how many objects each of the scheduler's
    internal structures holds, asked of `source` at scrape time only."""

    def __init__(self, source: Callable[[], Mapping[str, int]]) -> None:
        self.source = source

    def collect(self) -> Iterator[GaugeMetricFamily]:
        family = GaugeMetricFamily(
            STATE_OBJECTS,
            "Number of objects the scheduler holds in its internal state, by kind (queued "
            "pods, assumed pods, claims with allocations in flight, pod groups, pending "
            "reports, ...): once work drains, what the cluster's objects justify.",
            labels=["kind"],
        )
        for kind, count in sorted(self.source().items()):
            family.add_metric([kind], count)
        yield family


class PendingCollector(Collector):
    """scheduler_pending_pods{queue}: the queue's sizes, asked of `source` at scrape time
    only, so no watch event pays for the gauge."""

    def __init__(self, source: Callable[[], Mapping[str, int]]) -> None:
        self.source = source

    def collect(self) -> Iterator[GaugeMetricFamily]:
        family = GaugeMetricFamily(
            "scheduler_pending_pods",
            "Number of pending pods, by the queue type. 'active' means number of pods in "
            "activeQ; 'backoff' means number of pods in backoffQ; 'unschedulable' means number "
            "of pods in unschedulablePods that the scheduler attempted to schedule and failed; "
            "'gated' is the number of unschedulable pods that the scheduler never attempted to "
            "schedule because they are gated.",
            labels=["queue"],
        )
        for queue, count in self.source().items():
            family.add_metric([queue], count)
        yield family


def _exponential(start: float, factor: float, count: int) -> list[float]:
    return [start * factor**i for i in range(count)]


class SchedulerMetrics:
    """The metrics a scheduler exports on /metrics."""

    def __init__(self) -> None:
        disable_created_metrics()  # type: ignore[no-untyped-call]  # upstream has no `_created`
        self.registry = CollectorRegistry()
        r = self.registry
        self.schedule_attempts = Counter(
            "scheduler_schedule_attempts",
            "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod "
            "could not be scheduled, while 'error' means an internal scheduler problem.",
            ["result", "profile"],
            registry=r,
        )
        self.attempt_duration = Histogram(
            "scheduler_scheduling_attempt_duration_seconds",
            "Scheduling attempt latency in seconds (scheduling algorithm + binding)",
            ["result", "profile"],
            buckets=_exponential(0.001, 2, 15),
            registry=r,
        )
        self.algorithm_duration = Histogram(
            "scheduler_scheduling_algorithm_duration_seconds",
            "Scheduling algorithm latency in seconds",
            buckets=_exponential(0.001, 2, 15),
            registry=r,
        )
        self.extension_point_duration = Histogram(
            "scheduler_framework_extension_point_duration_seconds",
            "Latency for running all plugins of a specific extension point.",
            ["extension_point", "status", "profile"],
            buckets=_exponential(0.0001, 2, 12),
            registry=r,
        )
        self._pending = PendingCollector(dict)
        r.register(self._pending)
        self.preemption_attempts = Counter(
            "scheduler_preemption_attempts",
            "Total preemption attempts in the cluster till now",
            registry=r,
        )
        self.sli_duration = Histogram(
            "scheduler_pod_scheduling_sli_duration_seconds",
            "E2e latency for a pod being scheduled, from the time the pod enters the "
            "scheduling queue and might involve multiple scheduling attempts.",
            ["attempts"],
            buckets=_exponential(0.01, 2, 20),
            registry=r,
        )
        self.pod_attempts = Histogram(
            "scheduler_pod_scheduling_attempts",
            "Number of attempts to successfully schedule a pod.",
            buckets=_exponential(1, 2, 5),
            registry=r,
        )
        # Upstream's pod group metrics (with GenericWorkload on): one attempt per group cycle.
        self.pod_group_attempts = Counter(
            "scheduler_podgroup_schedule_attempts",
            "Number of attempts to schedule pod group, by the result. 'unschedulable' means a "
            "pod group could not be scheduled, while 'error' means an internal scheduler "
            "problem.",
            ["result", "profile"],
            registry=r,
        )
        self.pod_group_attempt_duration = Histogram(
            "scheduler_podgroup_scheduling_attempt_duration_seconds",
            "Pod group scheduling attempt latency in seconds (scheduling algorithm + binding)",
            ["result", "profile"],
            buckets=_exponential(0.001, 2, 15),
            registry=r,
        )
        self.pod_group_algorithm_duration = Histogram(
            "scheduler_podgroup_scheduling_algorithm_duration_seconds",
            "Pod group scheduling algorithm latency in seconds",
            buckets=_exponential(0.001, 2, 15),
            registry=r,
        )
        # Upstream's metrics of the API dispatcher (SchedulerAsyncAPICalls).
        self.async_api_calls = Counter(
            "scheduler_async_api_call_execution_total",
            "Total number of API calls executed by the async dispatcher.",
            ["call_type", "result"],
            registry=r,
        )
        self.async_api_call_duration = Histogram(
            "scheduler_async_api_call_execution_duration_seconds",
            "Duration in seconds for executing API call in the async dispatcher.",
            ["call_type", "result"],
            buckets=_exponential(0.001, 2, 15),
            registry=r,
        )
        self.pending_async_api_calls = Gauge(
            "scheduler_pending_async_api_calls",
            "Number of API calls currently pending in the async queue.",
            ["call_type"],
            registry=r,
        )
        # The runtime's own (no upstream counterpart): exceptions nothing expected, by where
        # they were met; each cost one pod's attempt, or one write, not the scheduler.
        self.unexpected_errors = Counter(
            "scheduler_runtime_unexpected_errors",
            "Number of unexpected errors (bugs) met, by where: scheduling_cycle, "
            "pod_group_cycle, binding_start, binding_cycle, binding_cleanup, api_call, event.",
            ["where"],
            registry=r,
        )
        self.leader = Gauge(
            "leader_election_master_status",
            "Gauge of if the reporting system is master of the relevant lease, 0 indicates "
            "backup, 1 indicates master. 'name' is the string used to identify the lease.",
            ["name"],
            registry=r,
        )
        # The runtime's own: which Kubernetes minor it schedules as, and the API server's
        # version it chose it by ("" when --emulated-version chose without reading it).
        self.emulated_version = Gauge(
            "scheduler_runtime_emulated_version_info",
            "The Kubernetes minor whose kube-scheduler the runtime emulates (gate defaults, "
            "default plugins), and the API server's gitVersion. Always 1.",
            ["emulated", "apiserver"],
            registry=r,
        )
        self._state = StateCollector(dict)
        r.register(self._state)

    def watch_state(self, source: Callable[[], Mapping[str, int]]) -> None:
        """Exports `source`'s sizes as scheduler_runtime_state_objects (the latest given)."""
        self._state.source = source

    def emulating(self, version: str, apiserver: str) -> None:
        """Which minor the runtime schedules as, and the API server's version ("" unread)."""
        self.emulated_version.labels(emulated=version, apiserver=apiserver).set(1)

    def watch_pending(self, source: Callable[[], Mapping[str, int]]) -> None:
        """Exports `source`'s queue sizes as scheduler_pending_pods (the latest given)."""
        self._pending.source = source

    def attempt(self, result: str, profile: str, seconds: float) -> None:
        counter, histogram = self._attempt_children(result, profile)
        counter.inc()
        histogram.observe(seconds)

    def pod_group_attempt(
        self, result: str, profile: str, seconds: float, algorithm_seconds: float
    ) -> None:
        self.pod_group_attempts.labels(result=result, profile=profile).inc()
        self.pod_group_attempt_duration.labels(result=result, profile=profile).observe(seconds)
        self.pod_group_algorithm_duration.observe(algorithm_seconds)

    def async_api_call(self, call_type: str, result: str, seconds: float) -> None:
        """The API dispatcher ran a call."""
        counter, histogram = self._async_api_call_children(call_type, result)
        counter.inc()
        histogram.observe(seconds)

    def pending_async_api_call(self, call_type: str, change: int) -> None:
        self._pending_async_api_call_child(call_type).inc(change)

    def unexpected_error(self, where: str) -> None:
        self.unexpected_errors.labels(where=where).inc()

    def extension_point(self, point: str, code: Code, profile: str, seconds: float) -> None:
        """The framework's ExtensionPointRecorder."""
        self._extension_point_child(point, code, profile).observe(seconds)

    def scheduled(self, attempts: int, seconds_since_queued: float) -> None:
        self._sli_child(attempts).observe(seconds_since_queued)
        self.pod_attempts.observe(attempts)

    # labels() validates and locks on every call; a pod's outcome takes the cached child.
    @functools.cache  # noqa: B019 - one SchedulerMetrics per process, kept for its lifetime
    def _attempt_children(self, result: str, profile: str) -> tuple[Counter, Histogram]:
        return (
            self.schedule_attempts.labels(result=result, profile=profile),
            self.attempt_duration.labels(result=result, profile=profile),
        )

    @functools.cache  # noqa: B019 - as above (a call's types and results are few)
    def _async_api_call_children(self, call_type: str, result: str) -> tuple[Counter, Histogram]:
        return (
            self.async_api_calls.labels(call_type=call_type, result=result),
            self.async_api_call_duration.labels(call_type=call_type, result=result),
        )

    @functools.cache  # noqa: B019 - as above
    def _pending_async_api_call_child(self, call_type: str) -> Gauge:
        return self.pending_async_api_calls.labels(call_type=call_type)

    @functools.cache  # noqa: B019 - as above
    def _sli_child(self, attempts: int) -> Histogram:
        return self.sli_duration.labels(attempts=str(attempts))

    @functools.cache  # noqa: B019 - as above
    def _extension_point_child(self, point: str, code: Code, profile: str) -> Histogram:
        return self.extension_point_duration.labels(
            extension_point=point, status=code.upstream_name, profile=profile
        )
