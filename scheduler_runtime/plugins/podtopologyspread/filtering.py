"""PodTopologySpread's filtering half (upstream's filtering.go): DoNotSchedule constraints
bound the skew of matching pods across topology domains. PreFilter counts matching pods per
eligible domain and keeps each constraint's critical paths; Filter checks every node's skew."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from scheduler_runtime.framework.interface import CycleState, PreFilterResult
from scheduler_runtime.framework.nodeinfo import NodeInfo
from scheduler_runtime.framework.podinfo import PodInfo
from scheduler_runtime.framework.snapshot import Slots, Snapshot
from scheduler_runtime.framework.status import SKIP, SUCCESS, NodeVerdicts, Status
from scheduler_runtime.plugins.helper import CountsPodsInPreFilter
from scheduler_runtime.plugins.podtopologyspread.common import (
    DO_NOT_SCHEDULE,
    Constraint,
    Inclusion,
    Spreading,
    all_keys_mask,
    domain_counts,
    has_all_keys,
    matching_pods_per_slot,
    per_code,
)

REASON = "node(s) didn't match pod topology spread constraints"
REASON_MISSING_LABEL = f"{REASON} (missing required label)"
PRE_FILTER_KEY = "PreFilterPodTopologySpread"
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


class Filtering(Spreading, CountsPodsInPreFilter[FilterState]):
    """PreFilter (with AddPod/RemovePod) and Filter of PodTopologySpread."""

    pre_filter_key = PRE_FILTER_KEY

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
            found = domain_counts(snapshot, constraint.topology_key, eligible, counts)
            critical = CriticalPaths()
            for value, count in found.items():
                critical.update(value, count)
            domains.append(found)
            paths.append(critical)
        state.write(PRE_FILTER_KEY, FilterState(constraints, domains, paths, inclusion))
        return None, SUCCESS

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        found = self.pre_filter_state(state)
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
        found = self.pre_filter_state(state)
        missing = np.zeros(len(slots), dtype=np.bool_)
        skewed = np.zeros(len(slots), dtype=np.bool_)
        for index, constraint in enumerate(found.constraints):
            decided = missing | skewed
            has_key = snapshot.label_exists(constraint.topology_key)[slots]
            missing |= ~has_key & ~decided
            codes, by_code = per_code(snapshot, constraint.topology_key, found.domains[index])
            self_match = 1 if constraint.selector.matches(pod.labels) else 0
            skew = by_code[codes[slots]] + self_match - found.min_match(index)
            skewed |= has_key & (skew > constraint.max_skew) & ~decided
        return NodeVerdicts(
            rejected=missing | skewed,
            unresolvable=missing,
            reasons=[(REASON_MISSING_LABEL, missing), (REASON, skewed)],
        )
