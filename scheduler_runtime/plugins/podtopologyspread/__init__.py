"""PodTopologySpread: DoNotSchedule constraints bound the skew of matching pods across
topology domains (filter); ScheduleAnyway constraints prefer the emptier domains (score,
normalized in reverse). Pods without constraints get the profile's default constraints when
a Service, ReplicationController, ReplicaSet or StatefulSet selects them."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from pydantic import BaseModel

from scheduler_runtime.config.args import PodTopologySpreadArgs
from scheduler_runtime.framework.interface import (
    MAX_NODE_SCORE,
    SKIP,
    SUCCESS,
    CycleState,
    Handle,
    NodeVerdicts,
    PluginBase,
    PreFilterResult,
    Status,
)
from scheduler_runtime.framework.nodeinfo import NodeInfo
from scheduler_runtime.framework.podinfo import PodInfo
from scheduler_runtime.framework.snapshot import ABSENT, Int64s, Mask, Slots, Snapshot
from scheduler_runtime.plugins.podtopologyspread.common import (
    DO_NOT_SCHEDULE,
    HOSTNAME,
    SCHEDULE_ANYWAY,
    Constraint,
    Inclusion,
    all_keys_mask,
    count_on_node,
    default_constraints,
    has_all_keys,
    matching_pods_per_slot,
    pod_constraints,
)

REASON = "node(s) didn't match pod topology spread constraints"
REASON_MISSING_LABEL = f"{REASON} (missing required label)"
PRE_FILTER_KEY = "PreFilterPodTopologySpread"
PRE_SCORE_KEY = "PreScorePodTopologySpread"
IGNORED_KEY = "ScorePodTopologySpread.ignored"  # aligned with the scored nodes
MAX_INT32 = 2**31 - 1


class CriticalPaths:
    """The two domains with the fewest matching pods; the first is always the minimum
    (upstream's criticalPaths, whose second entry is not always the second minimum)."""

    __slots__ = ("nums", "values")

    def __init__(self) -> None:
        self.values = ["", ""]
        self.nums = [MAX_INT32, MAX_INT32]

    def copy(self) -> CriticalPaths:
        other = CriticalPaths()
        other.values = list(self.values)
        other.nums = list(self.nums)
        return other

    def update(self, value: str, num: int) -> None:
        index = 0 if value == self.values[0] else 1 if value == self.values[1] else -1
        if index >= 0:
            self.nums[index] = num
            if self.nums[0] > self.nums[1]:
                self.values.reverse()
                self.nums.reverse()
        elif num < self.nums[0]:
            self.values = [value, self.values[0]]
            self.nums = [num, self.nums[0]]
        elif num < self.nums[1]:
            self.values[1] = value
            self.nums[1] = num


@dataclass
class FilterState:
    """Per constraint: matching pods per eligible domain, and its critical paths."""

    constraints: tuple[Constraint, ...]
    domains: list[dict[str, int]]
    paths: list[CriticalPaths]
    inclusion: Inclusion

    def clone(self) -> FilterState:
        return FilterState(
            self.constraints,
            [dict(d) for d in self.domains],
            [p.copy() for p in self.paths],
            self.inclusion,
        )

    def min_match(self, index: int) -> int:
        """The global minimum, 0 while there are fewer eligible domains than minDomains."""
        if len(self.domains[index]) < self.constraints[index].min_domains:
            return 0
        return self.paths[index].nums[0]

    def update_with_pod(self, pod: PodInfo, other: PodInfo, node: NodeInfo, delta: int) -> None:
        """AddPod/RemovePod (preemption): `other` joins or leaves `node`."""
        if other.namespace != pod.namespace or not has_all_keys(node.labels, self.constraints):
            return
        for index, constraint in enumerate(self.constraints):
            if not constraint.selector.matches(other.labels):
                continue
            if not self.inclusion.includes(constraint, node):
                continue
            value = node.labels[constraint.topology_key]
            domains = self.domains[index]
            domains[value] = domains.get(value, 0) + delta
            self.paths[index].update(value, domains[value])


def _domain_counts(
    snapshot: Snapshot, key: str, eligible: Mask, per_slot: Int64s
) -> dict[str, int]:
    """Matching pods summed per domain (label value) over the eligible nodes; every domain
    of an eligible node appears, with 0 when no pod matches."""
    column = snapshot.label(key)
    if column is None:
        return {}
    codes = column.codes[eligible]
    totals = np.bincount(codes, weights=per_slot[eligible], minlength=len(column.values))
    return {column.values[int(code)]: int(totals[code]) for code in np.unique(codes)}


def _per_code(snapshot: Snapshot, key: str, domains: dict[str, int]) -> tuple[Int64s, Int64s]:
    """(value code of each slot, count of each code), so counts index by code; absent
    labels map to a trailing 0."""
    column = snapshot.label(key)
    if column is None:
        return np.full(snapshot.capacity, 0, dtype=np.int64), np.zeros(1, dtype=np.int64)
    by_code = np.zeros(len(column.values) + 1, dtype=np.int64)
    for value, count in domains.items():
        code = column.ids.get(value)
        if code is not None:
            by_code[code] = count
    codes = np.where(column.codes == ABSENT, len(column.values), column.codes)
    return codes.astype(np.int64), by_code


def _round(values: np.ndarray) -> Int64s:
    """Go's math.Round for non-negative values: halves round up."""
    whole = np.trunc(values)
    rounded: Int64s = (whole + (values - whole >= 0.5)).astype(np.int64)
    return rounded


@dataclass
class ScoreState:
    constraints: tuple[Constraint, ...]
    ignored: Mask  # over all slots: nodes missing a topology key (when required)
    domains: list[dict[str, int]]
    weights: list[float]
    namespace: str


class PodTopologySpread(PluginBase[PodTopologySpreadArgs]):
    name: ClassVar[str] = "PodTopologySpread"
    args_type = PodTopologySpreadArgs

    def __init__(self, args: BaseModel | None, handle: Handle) -> None:
        super().__init__(args, handle)
        self.defaults = self.args.effective_constraints
        self.system_defaulted = self.args.defaulting_type == "System"

    def _constraints(self, pod: PodInfo, action: str, snapshot: Snapshot) -> tuple[Constraint, ...]:
        if pod.spec.get("topologySpreadConstraints"):
            return pod_constraints(pod, action)
        return default_constraints(self.defaults, pod, action, snapshot)

    # ----- filtering

    def pre_filter(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot
    ) -> tuple[PreFilterResult | None, Status]:
        try:
            constraints = self._constraints(pod, DO_NOT_SCHEDULE, snapshot)
        except ValueError as error:
            return None, Status.unresolvable(f"parsing pod: {error}")
        if not constraints:
            return None, SKIP
        inclusion = Inclusion(pod, snapshot)
        with_keys = all_keys_mask(snapshot, constraints)
        per_slot = matching_pods_per_slot(
            snapshot, [c.selector for c in constraints], pod.namespace
        )
        domains = []
        paths = []
        for constraint, counts in zip(constraints, per_slot, strict=True):
            eligible = with_keys & inclusion.mask(constraint)
            found = _domain_counts(snapshot, constraint.topology_key, eligible, counts)
            critical = CriticalPaths()
            for value, count in found.items():
                critical.update(value, count)
            domains.append(found)
            paths.append(critical)
        state.write(PRE_FILTER_KEY, FilterState(constraints, domains, paths, inclusion))
        return None, SUCCESS

    @staticmethod
    def _state(state: CycleState) -> FilterState:
        found: FilterState = state.read(PRE_FILTER_KEY)
        return found

    def add_pod(
        self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node: NodeInfo
    ) -> Status:
        self._state(state).update_with_pod(pod, pod_to_add, node, 1)
        return SUCCESS

    def remove_pod(
        self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node: NodeInfo
    ) -> Status:
        self._state(state).update_with_pod(pod, pod_to_remove, node, -1)
        return SUCCESS

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        found = self._state(state)
        for index, constraint in enumerate(found.constraints):
            value = node.labels.get(constraint.topology_key)
            if value is None:
                return Status.unresolvable(REASON_MISSING_LABEL)
            self_match = 1 if constraint.selector.matches(pod.labels) else 0
            matched = found.domains[index].get(value, 0)
            if matched + self_match - found.min_match(index) > constraint.max_skew:
                return Status.unschedulable(REASON)
        return SUCCESS

    def filter_nodes(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, slots: Slots
    ) -> NodeVerdicts:
        found = self._state(state)
        missing = np.zeros(len(slots), dtype=np.bool_)
        skewed = np.zeros(len(slots), dtype=np.bool_)
        for index, constraint in enumerate(found.constraints):
            decided = missing | skewed
            has_key = snapshot.label_exists(constraint.topology_key)[slots]
            missing |= ~has_key & ~decided
            codes, by_code = _per_code(snapshot, constraint.topology_key, found.domains[index])
            self_match = 1 if constraint.selector.matches(pod.labels) else 0
            skew = by_code[codes[slots]] + self_match - found.min_match(index)
            skewed |= has_key & (skew > constraint.max_skew) & ~decided
        return NodeVerdicts(
            rejected=missing | skewed,
            unresolvable=missing,
            reasons=[(REASON_MISSING_LABEL, missing), (REASON, skewed)],
        )

    # ----- scoring

    def pre_score(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, slots: Slots
    ) -> Status:
        if len(snapshot) == 0:
            return SKIP
        try:
            constraints = self._constraints(pod, SCHEDULE_ANYWAY, snapshot)
        except ValueError as error:
            return Status.as_error(error)
        if not constraints:
            return SKIP
        # Only user-given (or listed default) constraints require every topology key, so
        # nodes without a zone still spread by hostname under the system defaults.
        require_all = bool(pod.spec.get("topologySpreadConstraints")) or not self.system_defaulted
        ignored = np.zeros(snapshot.capacity, dtype=np.bool_)
        with_keys = all_keys_mask(snapshot, constraints) if require_all else snapshot.alive
        if require_all:
            ignored[slots] = ~with_keys[slots]
        scored = slots[~ignored[slots]]
        inclusion = Inclusion(pod, snapshot)
        per_slot = matching_pods_per_slot(
            snapshot, [c.selector for c in constraints], pod.namespace
        )
        domains: list[dict[str, int]] = []
        weights: list[float] = []
        for constraint, counts in zip(constraints, per_slot, strict=True):
            if constraint.topology_key == HOSTNAME:
                domains.append({})
                weights.append(math.log(len(scored) + 2))
                continue
            wanted = self._domains_of(snapshot, constraint.topology_key, scored)
            eligible = with_keys & inclusion.mask(constraint)
            totals = self._totals(snapshot, constraint.topology_key, eligible, counts)
            domains.append({value: totals.get(value, 0) for value in wanted})
            weights.append(math.log(len(wanted) + 2))
        state.write(
            PRE_SCORE_KEY, ScoreState(constraints, ignored, domains, weights, pod.namespace)
        )
        return SUCCESS

    @staticmethod
    def _domains_of(snapshot: Snapshot, key: str, slots: Slots) -> list[str]:
        """The distinct values of `key` over `slots` ("" for nodes without it)."""
        column = snapshot.label(key)
        if column is None:
            return [""] if len(slots) else []
        codes = np.unique(column.codes[slots])
        return ["" if code == ABSENT else column.values[int(code)] for code in codes]

    @staticmethod
    def _totals(snapshot: Snapshot, key: str, eligible: Mask, per_slot: Int64s) -> dict[str, int]:
        """Matching pods per value of `key` over eligible nodes ("" for nodes without it)."""
        totals = _domain_counts(snapshot, key, eligible & snapshot.label_exists(key), per_slot)
        without = eligible & ~snapshot.label_exists(key)
        if without.any():
            totals[""] = totals.get("", 0) + int(per_slot[without].sum())
        return totals

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status]:
        found: ScoreState = state.read(PRE_SCORE_KEY)
        slot = self.handle.snapshot.slot(node.name)
        if slot is not None and found.ignored[slot]:
            return 0, SUCCESS
        total = 0.0
        for index, constraint in enumerate(found.constraints):
            value = node.labels.get(constraint.topology_key)
            if value is None:
                continue
            if constraint.topology_key == HOSTNAME:
                count = count_on_node(node, constraint.selector, found.namespace)
            else:
                count = found.domains[index].get(value, 0)
            total += float(count) * found.weights[index] + float(constraint.max_skew - 1)
        return int(_round(np.array([total]))[0]), SUCCESS

    def score_nodes(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, slots: Slots
    ) -> Int64s:
        found: ScoreState = state.read(PRE_SCORE_KEY)
        hostname_selectors = [c.selector for c in found.constraints if c.topology_key == HOSTNAME]
        on_node = iter(matching_pods_per_slot(snapshot, hostname_selectors, found.namespace))
        totals = np.zeros(len(slots), dtype=np.float64)
        for index, constraint in enumerate(found.constraints):
            has_key = snapshot.label_exists(constraint.topology_key)[slots]
            if constraint.topology_key == HOSTNAME:
                counts = next(on_node)[slots]
            else:
                codes, by_code = _per_code(snapshot, constraint.topology_key, found.domains[index])
                counts = by_code[codes[slots]]
            term = counts.astype(np.float64) * found.weights[index] + float(constraint.max_skew - 1)
            totals += np.where(has_key, term, 0.0)
        scores = _round(totals)
        ignored = found.ignored[slots]
        scores[ignored] = 0
        state.write(IGNORED_KEY, ignored)
        return scores

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: Int64s) -> Status:
        """Fewer matching pods score higher: 100 * (max + min - s) / max over the nodes not
        ignored; ignored nodes get 0."""
        ignored: Mask = state.read(IGNORED_KEY)
        valid = scores[~ignored]
        if len(valid) == 0:
            scores[:] = 0
            return SUCCESS
        lowest = int(valid.min())
        highest = max(int(valid.max()), 0)
        if highest == 0:
            scores[:] = MAX_NODE_SCORE
        else:
            scores[:] = MAX_NODE_SCORE * (highest + lowest - scores) // highest
        scores[ignored] = 0
        return SUCCESS


__all__ = ["PodTopologySpread"]
