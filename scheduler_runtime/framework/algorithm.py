"""The scheduling algorithm of upstream's pkg/scheduler/schedule_one.go: find the nodes that
fit (searching only as many as percentageOfNodesToScore asks for, starting where the last
cycle stopped), score them, pick the best with a uniformly random tie-break."""

from __future__ import annotations

import random
from collections.abc import Collection
from dataclasses import dataclass

import numpy as np

from scheduler_runtime.framework.interface import CycleState
from scheduler_runtime.framework.podinfo import PodInfo
from scheduler_runtime.framework.runtime import Framework, FrameworkError, verdicts_from_statuses
from scheduler_runtime.framework.snapshot import Int64s, Slots, Snapshot
from scheduler_runtime.framework.status import Code, Status
from scheduler_runtime.framework.types import (
    Diagnosis,
    FitError,
    NodeToStatus,
    NoNodesAvailableError,
    Rejection,
    ScheduleResult,
)

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
# Filters run over this many nodes at a time; the search stops once enough nodes fit.
MIN_FILTER_CHUNK = 1024


def num_feasible_nodes_to_find(percentage: int, num_all_nodes: int) -> int:
    """numFeasibleNodesToFind: all nodes below 100; else the configured percentage, or
    adaptively `50 - nodes/125` (at least 5%), and never fewer than 100."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    if percentage == 0:
        percentage = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    return max(num_all_nodes * percentage // 100, MIN_FEASIBLE_NODES_TO_FIND)


@dataclass
class Placement:
    """The scores behind a choice, for logs and tests."""

    slots: Slots
    totals: Int64s
    by_plugin: dict[str, Int64s]


class SchedulingAlgorithm:
    """Finds a node for one pod at a time; remembers where the node search stopped."""

    def __init__(self, snapshot: Snapshot, percentage_of_nodes_to_score: int, rng: random.Random):
        self.snapshot = snapshot
        self.percentage_of_nodes_to_score = percentage_of_nodes_to_score
        self.rng = rng
        self.next_start_node_index = 0
        self.last_placement: Placement | None = None
        # What the last cycle found, for explanations: the nodes that fit and why others not.
        self.last_feasible: Slots = np.zeros(0, dtype=np.intp)
        self.last_diagnosis: Diagnosis | None = None
        # The nodes a pod group's cycle tries its members within (None: all nodes).
        self.placement: Slots | None = None

    def nodes(self) -> Slots:
        """The candidate nodes in node-tree order: all, or the placement's
        (upstream's ListNodesInPlacement)."""
        order = self.snapshot.order()
        if self.placement is None:
            return order
        within: Slots = order[self._membership(self.placement)[order]]
        return within

    def schedule_pod(self, fwk: Framework, state: CycleState, pod: PodInfo) -> ScheduleResult:
        """Raises FitError when no node fits, NoNodesAvailableError without nodes, and
        FrameworkError when a plugin fails."""
        self.last_placement = None
        self.last_feasible, self.last_diagnosis = np.zeros(0, dtype=np.intp), None
        count = len(self.snapshot) if self.placement is None else len(self.nodes())
        if count == 0:
            raise NoNodesAvailableError
        feasible, diagnosis = self.find_nodes_that_fit(fwk, state, pod)
        self.last_feasible, self.last_diagnosis = feasible, diagnosis
        if len(feasible) == 0:
            raise FitError(pod, count, diagnosis)
        evaluated = len(feasible) + len(diagnosis.node_to_status)
        if len(feasible) == 1:
            host = self.snapshot.name(int(feasible[0]))
            return ScheduleResult(host, evaluated, 1)
        totals, by_plugin = self.prioritize(fwk, state, pod, feasible)
        self.last_placement = Placement(feasible, totals, by_plugin)
        host = self.snapshot.name(self.select_host(feasible, totals))
        return ScheduleResult(host, evaluated, len(feasible))

    def find_nodes_that_fit(
        self, fwk: Framework, state: CycleState, pod: PodInfo
    ) -> tuple[Slots, Diagnosis]:
        diagnosis = Diagnosis(NodeToStatus(self.snapshot))
        all_nodes = self.nodes()
        result, status, with_nodes = fwk.run_pre_filter(state, pod)
        diagnosis.unschedulable_plugins = set(with_nodes)
        if not status.is_success:
            diagnosis.node_to_status.absent = status
            diagnosis.pre_filter_msg = status.message()
            if status.plugin:
                diagnosis.unschedulable_plugins.add(status.plugin)
            return np.zeros(0, dtype=np.intp), diagnosis
        if pod.nominated_node_name:
            nominated = self._evaluate_nominated_node(fwk, state, pod)
            if len(nominated):
                return nominated, diagnosis
        nodes = all_nodes
        if result is not None and result.node_names is not None:
            wanted = [self.snapshot.slot(name) for name in result.node_names]
            chosen = {slot for slot in wanted if slot is not None}
            nodes = np.array([s for s in all_nodes if int(s) in chosen], dtype=np.intp)
            plugins = " ".join(sorted(with_nodes))
            diagnosis.node_to_status.absent = Status.unresolvable(
                f"node(s) didn't satisfy plugin(s) [{plugins}]"
            )
        feasible = self.find_nodes_that_pass_filters(fwk, state, pod, diagnosis, nodes)
        processed = len(feasible) + len(diagnosis.node_to_status)
        self.next_start_node_index = (self.next_start_node_index + processed) % len(all_nodes)
        return feasible, diagnosis

    def _evaluate_nominated_node(self, fwk: Framework, state: CycleState, pod: PodInfo) -> Slots:
        slot = self.snapshot.slot(pod.nominated_node_name)
        outside = self.placement is not None and slot not in set(self.placement.tolist())
        if slot is None or outside:
            return np.zeros(0, dtype=np.intp)
        scratch = Diagnosis(NodeToStatus(self.snapshot))
        nodes = np.array([slot], dtype=np.intp)
        saved = self.next_start_node_index
        self.next_start_node_index = 0
        try:
            return self.find_nodes_that_pass_filters(fwk, state, pod, scratch, nodes)
        finally:
            self.next_start_node_index = saved

    def find_nodes_that_pass_filters(
        self, fwk: Framework, state: CycleState, pod: PodInfo, diagnosis: Diagnosis, nodes: Slots
    ) -> Slots:
        """Checks nodes in order from the round-robin start index and stops once enough fit
        (as upstream would, run one node after another). Timed as upstream's Filter point."""
        return fwk.timed("Filter", lambda: self._pass_filters(fwk, state, pod, diagnosis, nodes))

    def _pass_filters(
        self, fwk: Framework, state: CycleState, pod: PodInfo, diagnosis: Diagnosis, nodes: Slots
    ) -> Slots:
        count = len(nodes)
        if count == 0:
            return nodes
        percentage = fwk.percentage_of_nodes_to_score
        if percentage is None:
            percentage = self.percentage_of_nodes_to_score
        wanted = num_feasible_nodes_to_find(percentage, count)
        if not fwk.has("score"):
            wanted = 1
        start = self.next_start_node_index % count
        rotated = np.concatenate([nodes[start:], nodes[:start]])
        if not fwk.has("filter"):
            return rotated[:wanted]
        # A filter that costs much per node (DynamicResources') is asked about as few nodes
        # as upstream's search asks: only as many as are still needed at a time.
        costly = fwk.costly_filter(state)
        found: list[Slots] = []
        found_count = 0
        begin = 0
        while begin < count:
            chunk = wanted - found_count if costly else max(2 * wanted, MIN_FILTER_CHUNK)
            batch = rotated[begin : begin + chunk]
            begin += chunk
            passed, rejections = self._filter_batch(fwk, state, pod, batch)
            needed = wanted - found_count
            if len(passed) >= needed:
                # Nodes after the last one needed were never looked at, as upstream stops there.
                last = int((batch == passed[needed - 1]).nonzero()[0][0])
                kept = self._membership(batch[: last + 1])
                passed = passed[:needed]
                rejections = [r.truncated(kept[r.slots]) for r in rejections]
                self._record(diagnosis, rejections)
                found.append(passed)
                break
            self._record(diagnosis, rejections)
            found.append(passed)
            found_count += len(passed)
        return np.concatenate(found) if found else np.zeros(0, dtype=np.intp)

    def _filter_batch(
        self, fwk: Framework, state: CycleState, pod: PodInfo, batch: Slots
    ) -> tuple[Slots, list[Rejection]]:
        passed, rejections = fwk.run_filters(state, pod, batch)
        if fwk.handle.nominator is None:
            return passed, rejections
        return self._with_nominated_pods(fwk, state, pod, passed, rejections)

    def _with_nominated_pods(
        self,
        fwk: Framework,
        state: CycleState,
        pod: PodInfo,
        passed: Slots,
        rejections: list[Rejection],
    ) -> tuple[Slots, list[Rejection]]:
        """RunFilterPluginsWithNominatedPods: a node that fits must also fit once the pods
        nominated to it with at least this pod's priority are counted."""
        nominator = fwk.handle.nominator
        assert nominator is not None
        nominated = nominator.nodes()
        if not nominated:  # usually: no pod waits for a node
            return passed, rejections
        failed: list[Rejection] = []
        for slot in self._with_nominations(nominated, passed):
            node = self.snapshot.info(int(slot))
            others = [
                p
                for p in nominator.pods_on(node.name)
                if p.priority >= pod.priority and p.id != pod.id
            ]
            if not others:
                continue
            copy = node.clone()
            scratch = state.clone()
            for other in others:
                copy.add_pod(other)
                fwk.run_pre_filter_extension_add_pod(scratch, pod, other, copy)
            status = fwk.run_filters_on_node(scratch, pod, copy)
            if not status.is_success:
                one = np.array([slot], dtype=np.intp)
                verdicts = verdicts_from_statuses(status.plugin, [status])
                failed.append(Rejection.from_verdicts(status.plugin, one, verdicts))
        if not failed:
            return passed, rejections
        failed_slots = np.concatenate([r.slots for r in failed])
        return passed[~self._membership(failed_slots)[passed]], [*rejections, *failed]

    def _with_nominations(self, nominated: Collection[str], passed: Slots) -> Slots:
        """The nodes among `passed` that have nominated pods (on the `nominated` nodes)."""
        slots = [self.snapshot.slot(name) for name in nominated]
        known = np.array([slot for slot in slots if slot is not None], dtype=np.intp)
        result: Slots = passed[self._membership(known)[passed]]
        return result

    def _membership(self, slots: Slots) -> np.ndarray:
        """A mask over every slot of the snapshot, True for `slots`."""
        mask = np.zeros(self.snapshot.capacity, dtype=np.bool_)
        mask[slots] = True
        return mask

    @staticmethod
    def _record(diagnosis: Diagnosis, rejections: list[Rejection]) -> None:
        for rejection in rejections:
            if len(rejection.slots):
                diagnosis.node_to_status.rejections.append(rejection)
                if rejection.plugin:
                    diagnosis.unschedulable_plugins.add(rejection.plugin)

    def prioritize(
        self, fwk: Framework, state: CycleState, pod: PodInfo, feasible: Slots
    ) -> tuple[Int64s, dict[str, Int64s]]:
        if not fwk.has("score"):
            return np.ones(len(feasible), dtype=np.int64), {}
        status = fwk.run_pre_score(state, pod, feasible)
        if status.code == Code.ERROR:
            raise FrameworkError(f'running PreScore plugin "{status.plugin}": {status.message()}')
        return fwk.run_score(state, pod, feasible)

    def select_host(self, slots: Slots, totals: Int64s) -> int:
        """The highest total wins; ties are broken uniformly at random."""
        best = (totals == totals.max()).nonzero()[0]
        return int(slots[best[self.rng.randrange(len(best))]])
