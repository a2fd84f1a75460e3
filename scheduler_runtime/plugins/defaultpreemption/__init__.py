"""DefaultPreemption (postFilter): when no node fits, find nodes where evicting lower-priority
pods would make room, keep as many of those pods as still allows the pod to fit (sparing pods
whose eviction would violate a PodDisruptionBudget first), pick one node by upstream's
ordering, evict its victims and nominate the pod to it.

Victims are evicted through the handle's `delete_pod` service; nominations of lower-priority
pods to that node are withdrawn through `clear_nomination`. Both lists also come back in the
PostFilterResult."""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from prometheus_client import CollectorRegistry, Counter

from scheduler_runtime.config.args import DefaultPreemptionArgs
from scheduler_runtime.framework.events import ClusterEventWithHint
from scheduler_runtime.framework.interface import (
    CycleState,
    NominatingInfo,
    PluginBase,
    PodGroupCycleState,
    PodGroupPostFilterResult,
    PodGroupSchedulingFunc,
    PostFilterResult,
    Preemptor,
)
from scheduler_runtime.framework.nodeinfo import NodeInfo
from scheduler_runtime.framework.podgroups import GroupPolicy, scheduling_group
from scheduler_runtime.framework.podinfo import PodInfo
from scheduler_runtime.framework.status import SUCCESS, Code, Status
from scheduler_runtime.framework.types import Diagnosis, FitError, NodeToStatus
from scheduler_runtime.plugins.defaultpreemption.pdb import Budgets, split_by_pdb_violation
from scheduler_runtime.plugins.defaultpreemption.podgroup import PodGroupEvaluator
from scheduler_runtime.plugins.defaultpreemption.util import start_time, terminating_by_preemption

NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_VICTIMS = "No preemption victims found for incoming pod"
NEVER = "not eligible due to preemptionPolicy=Never."
TERMINATING = "not eligible due to a terminating pod on the nominated node."
WORKLOAD_AWARE = "not eligible due to workload aware preemption enabled"
PREFIX = "preemption: "
# Pod group preemption's prefix (1.37).
GROUP_PREFIX = "pod group preemption: "
MAX_INT32 = 2**31 - 1


def importance(pod: PodInfo) -> tuple[int, str]:
    """MoreImportantPod as a sort key: higher priority first, then earlier start."""
    return (-pod.priority, start_time(pod))


@dataclass(frozen=True, slots=True)
class Candidate:
    """A node and the pods to evict there, most important first."""

    node: str
    victims: tuple[PodInfo, ...]
    pdb_violations: int


def _earliest_start_of_most_important(victims: Sequence[PodInfo]) -> str:
    """GetEarliestPodStartTime: the earliest start among the highest-priority victims."""
    top = max(p.priority for p in victims)
    return min(start_time(p) for p in victims if p.priority == top)


# pickOneNodeForPreemption: each rule keeps the candidates with the best value; the first
# rule that leaves one candidate decides, else the first remaining candidate wins.
RULES: tuple[Callable[[Candidate], Any], ...] = (
    lambda c: -c.pdb_violations,
    lambda c: -c.victims[0].priority,
    lambda c: -sum(p.priority + MAX_INT32 + 1 for p in c.victims),
    lambda c: -len(c.victims),
    lambda c: _earliest_start_of_most_important(c.victims),
)


def pick_one_node(candidates: Sequence[Candidate]) -> Candidate:
    remaining = list(candidates)
    for rule in RULES:
        best = max(rule(c) for c in remaining)
        remaining = [c for c in remaining if rule(c) == best]
        if len(remaining) == 1:
            break
    return remaining[0]


_ATTEMPTS: weakref.WeakKeyDictionary[CollectorRegistry, Counter] = weakref.WeakKeyDictionary()
_ATTEMPTS_LOCK = threading.Lock()


def workload_preemption_attempts(registry: CollectorRegistry) -> Counter:
    """Upstream's scheduler_workload_preemption_attempts_total{result}, one per registry
    (every profile's DefaultPreemption counts into it)."""
    with _ATTEMPTS_LOCK:
        counter = _ATTEMPTS.get(registry)
        if counter is None:
            counter = Counter(
                "scheduler_workload_preemption_attempts",
                "Total preemption attempts initiated by workload (including pod groups) in the "
                "cluster till now.",
                ["result"],
                registry=registry,
            )
            _ATTEMPTS[registry] = counter
        return counter


class DefaultPreemption(PluginBase[DefaultPreemptionArgs]):
    name: ClassVar[str] = "DefaultPreemption"
    # A PostFilter plugin: it rejects no pod that an event could help.
    cluster_events: ClassVar[Sequence[ClusterEventWithHint]] = ()
    args_type = DefaultPreemptionArgs

    def post_filter(
        self, state: CycleState, pod: PodInfo, diagnosis: Diagnosis
    ) -> tuple[PostFilterResult | None, Status]:
        placed_by_topology = self._placed_by_topology(pod)
        if placed_by_topology is not None:
            return None, Status.unschedulable(placed_by_topology)
        if scheduling_group(pod.pod) is not None and self.handle.features.workload_aware_preemption:
            # 1.36's WorkloadAwarePreemption: the group preempts as one after its cycle, never
            # a member for itself within it.
            return None, Status.unschedulable(PREFIX + WORKLOAD_AWARE)
        result, status = self.preempt(state, pod, diagnosis.node_to_status)
        if status.reasons and status.message():
            return result, Status(status.code, (PREFIX + status.message(),), self.name)
        return result, status

    def pod_group_post_filter(
        self,
        state: PodGroupCycleState,
        group: GroupPolicy | None,
        unscheduled: Sequence[PodInfo],
        schedule: PodGroupSchedulingFunc,
    ) -> tuple[PodGroupPostFilterResult | None, Status]:
        """PodGroupPostFilter, after a group's cycle found no room: the group as one preemptor
        (podgroup.py). From 1.37 its message is prefixed and counted, as upstream's; 1.36's
        (WorkloadAwarePreemption) returns the evaluator's status as it is."""
        evaluator = PodGroupEvaluator(self.handle, self._evict_one)
        result, status = evaluator.preempt(group, unscheduled, schedule)
        if not self.handle.features.since(1, 37):
            return result, status
        message = status.message()
        if message:
            status = Status(status.code, (GROUP_PREFIX + message,))
        registry = self.handle.services.metrics_registry
        if registry is not None:
            workload_preemption_attempts(registry).labels(status.code.upstream_name).inc()
        return result, status

    def _placed_by_topology(self, pod: PodInfo) -> str | None:
        """With TopologyAwareWorkloadScheduling, a member of a PodGroup with a topology
        constraint is not preempted for pod by pod (its group is tried in each placement):
        upstream's words for why, or None."""
        key = scheduling_group(pod.pod)
        if key is None or not self.handle.features.topology_aware_workload_scheduling:
            return None
        groups = self.handle.pod_groups
        policy = groups.policy(key) if groups is not None else None
        if policy is None:
            return PREFIX + "pod group for pod not found"
        if policy.topology_key is not None:
            return PREFIX + "not eligible due to placement-based pod group scheduling limitation"
        return None

    # ----- Evaluator.Preempt

    def preempt(
        self, state: CycleState, pod: PodInfo, statuses: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status]:
        eligible, reason = self.eligible_to_preempt(pod, statuses)
        if not eligible:
            return None, Status.unschedulable(reason)
        snapshot = self.handle.snapshot
        potential = self.potential_nodes(statuses)
        if not potential:
            self._clear_nominations((pod,))
            return self._no_candidates(pod, NodeToStatus(snapshot))
        candidates, failures = self.dry_run(state, pod, potential)
        if not candidates:
            return self._no_candidates(pod, failures)
        best = pick_one_node(candidates)
        cleared = self._lower_priority_nominated(pod, best.node)
        self._evict(best, pod)
        self._clear_nominations(cleared)
        result = PostFilterResult(NominatingInfo(best.node), best.victims, cleared)
        if not self.handle.features.since(1, 37):
            return result, SUCCESS
        # 1.37 says where it made room, and the pod's FailedScheduling message carries it.
        placed = f"found a potential placement for pod on node {best.node}, preempting"
        return result, Status(Code.SUCCESS, (f"{placed} {len(best.victims)} victims",))

    def _no_candidates(
        self, pod: PodInfo, failures: NodeToStatus
    ) -> tuple[PostFilterResult, Status]:
        failures.absent = Status.unresolvable(NOT_HELPFUL)
        error = FitError(pod, len(self.handle.snapshot), Diagnosis(failures))
        return PostFilterResult(NominatingInfo("")), Status.unschedulable(str(error))

    def eligible_to_preempt(self, pod: PodInfo, statuses: NodeToStatus) -> tuple[bool, str]:
        """PodEligibleToPreemptOthers."""
        if pod.preemption_policy == "Never":
            return False, NEVER
        nominated = pod.nominated_node_name
        if not nominated:
            return True, ""
        if statuses.get(nominated).code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
            return True, ""
        node = self.handle.snapshot.get(nominated)
        if node is not None and any(
            p.priority < pod.priority and terminating_by_preemption(p) for p in node.pods.values()
        ):
            return False, TERMINATING
        return True, ""

    def potential_nodes(self, statuses: NodeToStatus) -> list[NodeInfo]:
        """Nodes whose filters said Unschedulable (not UnschedulableAndUnresolvable), in
        node-tree order; nodes never evaluated have the status of absent nodes."""
        codes = {name: status.code for name, status in statuses.items()}
        absent = statuses.absent.code
        return [
            node
            for node in self.handle.snapshot.node_infos()
            if codes.get(node.name, absent) == Code.UNSCHEDULABLE
        ]

    def candidates_to_find(self, potential: int) -> int:
        """calculateNumCandidates: a percentage of the nodes, at least the absolute number,
        at most all of them."""
        wanted = potential * self.args.min_candidate_nodes_percentage // 100
        wanted = max(wanted, self.args.min_candidate_nodes_absolute)
        return min(wanted, potential)

    def dry_run(
        self, state: CycleState, pod: PodInfo, potential: list[NodeInfo]
    ) -> tuple[list[Candidate], NodeToStatus]:
        """DryRunPreemption: nodes from a random offset until enough candidates (at least
        one without PDB violations) are found; candidates without violations come first."""
        wanted = self.candidates_to_find(len(potential))
        offset = self.handle.rng.randrange(len(potential))
        budgets = Budgets.of(self.handle.snapshot)
        clean: list[Candidate] = []
        violating: list[Candidate] = []
        failures = NodeToStatus(self.handle.snapshot)
        for index in range(len(potential)):
            node = potential[(offset + index) % len(potential)]
            victims, violations, status = self.select_victims_on_node(
                state.clone(), pod, node.clone(), budgets
            )
            if status.is_success:
                found = Candidate(node.name, tuple(victims), violations)
                target = violating if violations else clean
                if len(target) < wanted:
                    target.append(found)
                if clean and len(clean) + len(violating) >= wanted:
                    break
            else:
                failures.set(node.name, status)
        return clean + violating, failures

    def select_victims_on_node(
        self, state: CycleState, pod: PodInfo, node: NodeInfo, budgets: Budgets
    ) -> tuple[list[PodInfo], int, Status]:
        """SelectVictimsOnNode on a copy of the node and the cycle state."""
        framework = self.handle.framework
        assert framework is not None, "DefaultPreemption runs inside a profile's framework"
        lower = [p for p in node.pods.values() if p.priority < pod.priority]
        if not lower:
            return [], 0, Status.unresolvable(NO_VICTIMS)
        for victim in lower:
            node.remove_pod(victim.id)
            framework.run_pre_filter_extension_remove_pod(state, pod, victim, node)
        status: Status = framework.run_filters_with_nominated_pods(state, pod, node)
        if not status.is_success:
            return [], 0, status
        lower.sort(key=importance)
        violating, sparing = split_by_pdb_violation(lower, budgets)
        victims: list[PodInfo] = []
        violations = 0
        violating_ids = {p.id for p in violating}
        for candidate in violating + sparing:
            node.add_pod(candidate)
            framework.run_pre_filter_extension_add_pod(state, pod, candidate, node)
            if framework.run_filters_with_nominated_pods(state, pod, node).is_success:
                continue
            node.remove_pod(candidate.id)
            framework.run_pre_filter_extension_remove_pod(state, pod, candidate, node)
            victims.append(candidate)
            violations += candidate.id in violating_ids
        if violating and sparing:
            victims.sort(key=importance)
        return victims, violations, SUCCESS

    # ----- prepareCandidate

    def _lower_priority_nominated(self, pod: PodInfo, node_name: str) -> tuple[PodInfo, ...]:
        nominator = self.handle.nominator
        if nominator is None:
            return ()
        return tuple(
            p for p in nominator.pods_on(node_name) if p.priority < pod.priority and p.id != pod.id
        )

    def _evict(self, best: Candidate, preemptor: PodInfo) -> None:
        for victim in best.victims:
            self._evict_one(victim, Preemptor.of_pod(preemptor, best.node))

    def _evict_one(self, victim: PodInfo, preemptor: Preemptor) -> None:
        """Evicts one victim through the scheduler's delete_pod service (when it has one)."""
        delete = self.handle.services.delete_pod
        if delete is not None:
            delete(victim, preemptor)

    def _clear_nominations(self, pods: Sequence[PodInfo]) -> None:
        clear = self.handle.services.clear_nomination
        if clear is None:
            return
        for pod in pods:
            if pod.nominated_node_name:
                clear(pod)


__all__ = ["DefaultPreemption"]
