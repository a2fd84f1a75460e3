"""PodTopologySpread's scoring half (upstream's scoring.go): ScheduleAnyway constraints
prefer the domains with fewer matching pods. PreScore counts them per domain (hostname
constraints per node) with each constraint's weight; NormalizeScore reverses the scale."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from scheduler_runtime.framework.interface import MAX_NODE_SCORE, CycleState
from scheduler_runtime.framework.nodeinfo import NodeInfo
from scheduler_runtime.framework.podinfo import PodInfo
from scheduler_runtime.framework.snapshot import ABSENT, Int64s, Mask, Slots, Snapshot
from scheduler_runtime.framework.status import SKIP, SUCCESS, Status
from scheduler_runtime.plugins.podtopologyspread.common import (
    HOSTNAME,
    SCHEDULE_ANYWAY,
    Constraint,
    Inclusion,
    Spreading,
    all_keys_mask,
    count_on_node,
    domain_counts,
    matching_pods_per_slot,
    per_code,
)

PRE_SCORE_KEY = "PreScorePodTopologySpread"
IGNORED_KEY = "ScorePodTopologySpread.ignored"  # aligned with the scored nodes


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


class Scoring(Spreading):
    """PreScore, Score and NormalizeScore of PodTopologySpread."""

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
        # The distinct codes in order (np.unique's), ABSENT (-1) first, counted from 0.
        seen = np.bincount(column.codes[slots] + 1, minlength=len(column.values) + 1)
        codes = seen.nonzero()[0] - 1
        return ["" if code == ABSENT else column.values[int(code)] for code in codes]

    @staticmethod
    def _totals(snapshot: Snapshot, key: str, eligible: Mask, per_slot: Int64s) -> dict[str, int]:
        """Matching pods per value of `key` over eligible nodes ("" for nodes without it)."""
        totals = domain_counts(snapshot, key, eligible & snapshot.label_exists(key), per_slot)
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
                codes, by_code = per_code(snapshot, constraint.topology_key, found.domains[index])
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
