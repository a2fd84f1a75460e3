"""Spread constraints as upstream's podtopologyspread/common.go sees them: parsed with their
defaults, the nodes each one counts (node inclusion policies), and matching pods per node."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from scheduler_runtime.config.args import TopologySpreadConstraint
from scheduler_runtime.framework.interface import Handle
from scheduler_runtime.framework.labelselector import (
    LabelSelector,
    parse_selector,
    selector_from_labels,
)
from scheduler_runtime.framework.nodeinfo import NodeInfo
from scheduler_runtime.framework.podinfo import PodInfo
from scheduler_runtime.framework.snapshot import ABSENT, Int64s, Mask, Snapshot
from scheduler_runtime.plugins.nodeaffinity import required_affinity
from scheduler_runtime.plugins.tainttoleration import untolerated_taint

DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
HONOR = "Honor"
HOSTNAME = "kubernetes.io/hostname"


@dataclass(frozen=True, slots=True)
class Constraint:
    """topologySpreadConstraint: minDomains defaults to 1, nodeAffinityPolicy to Honor,
    nodeTaintsPolicy to Ignore."""

    max_skew: int
    topology_key: str
    selector: LabelSelector
    min_domains: int = 1
    honor_node_affinity: bool = True
    honor_node_taints: bool = False


def _with_match_label_keys(
    selector: LabelSelector, keys: Sequence[str], labels: Mapping[str, str]
) -> LabelSelector:
    """mergeLabelSetWithSelector: the pod's values of matchLabelKeys narrow the selector
    (a missing selector stays one that matches nothing)."""
    values = {key: labels[key] for key in keys if key in labels}
    if not values or selector.nothing:
        return selector
    return LabelSelector(selector_from_labels(values).requirements + selector.requirements)


def pod_constraints(pod: PodInfo, action: str) -> tuple[Constraint, ...]:
    """The pod's own constraints with whenUnsatisfiable == `action`; raises SelectorError
    naming the field when a selector does not parse."""
    found = []
    for index, raw in enumerate(pod.spec.get("topologySpreadConstraints") or ()):
        if raw.get("whenUnsatisfiable") != action:
            continue
        where = f"topologySpreadConstraints[{index}].labelSelector"
        selector = parse_selector(raw.get("labelSelector"), where)
        selector = _with_match_label_keys(selector, raw.get("matchLabelKeys") or (), pod.labels)
        found.append(_constraint(raw, selector))
    return tuple(found)


def _constraint(raw: Mapping[str, Any], selector: LabelSelector) -> Constraint:
    return Constraint(
        max_skew=int(raw.get("maxSkew") or 0),
        topology_key=raw.get("topologyKey") or "",
        selector=selector,
        min_domains=int(raw.get("minDomains") or 1),
        honor_node_affinity=(raw.get("nodeAffinityPolicy") or HONOR) == HONOR,
        honor_node_taints=(raw.get("nodeTaintsPolicy") or "Ignore") == HONOR,
    )


def default_constraints(
    defaults: Sequence[TopologySpreadConstraint],
    pod: PodInfo,
    action: str,
    snapshot: Snapshot,
) -> tuple[Constraint, ...]:
    """buildDefaultConstraints: the profile's defaults for `action`, all selecting what the
    Services and controllers owning the pod select; none when that selector is empty."""
    chosen = [c for c in defaults if c.when_unsatisfiable == action]
    if not chosen:
        return ()
    selector = snapshot.objects.default_selector(pod.pod)
    if selector.everything:
        return ()
    return tuple(
        Constraint(
            max_skew=c.max_skew,
            topology_key=c.topology_key,
            selector=selector,
            min_domains=c.min_domains or 1,
            honor_node_affinity=(c.node_affinity_policy or HONOR) == HONOR,
            honor_node_taints=(c.node_taints_policy or "Ignore") == HONOR,
        )
        for c in chosen
    )


def has_all_keys(labels: Mapping[str, str], constraints: Sequence[Constraint]) -> bool:
    """nodeLabelsMatchSpreadConstraints."""
    return all(c.topology_key in labels for c in constraints)


def all_keys_mask(snapshot: Snapshot, constraints: Sequence[Constraint]) -> Mask:
    mask = snapshot.alive.copy()
    for constraint in constraints:
        mask &= snapshot.label_exists(constraint.topology_key)
    return mask


class Inclusion:
    """matchNodeInclusionPolicies for one pod, over all nodes (masks) or one node."""

    def __init__(self, pod: PodInfo, snapshot: Snapshot) -> None:
        self.pod = pod
        self.snapshot = snapshot
        self._affinity: Mask | None = None
        self._taints: Mask | None = None

    def mask(self, constraint: Constraint) -> Mask:
        mask = self.snapshot.alive.copy()
        if constraint.honor_node_affinity:
            if self._affinity is None:
                self._affinity = required_affinity(self.pod).mask(self.snapshot)
            mask &= self._affinity
        if constraint.honor_node_taints:
            if self._taints is None:
                tolerated = np.array(
                    [
                        untolerated_taint(taints, self.pod.tolerations) is None
                        for taints in self.snapshot.taint_sets
                    ],
                    dtype=np.bool_,
                )
                self._taints = tolerated[self.snapshot.taint_set]
            mask &= self._taints
        return mask

    def includes(self, constraint: Constraint, node: NodeInfo) -> bool:
        if constraint.honor_node_affinity and not required_affinity(self.pod).matches(node):
            return False
        return not (
            constraint.honor_node_taints
            and untolerated_taint(node.taints, self.pod.tolerations) is not None
        )


def _counted(pod: PodInfo, namespace: str) -> bool:
    """countPodsMatchSelector skips terminating pods and other namespaces."""
    return pod.namespace == namespace and not (pod.pod.get("metadata") or {}).get(
        "deletionTimestamp"
    )


def matches(selector: LabelSelector, pod: PodInfo) -> bool:
    """A selector counts pods only when it is not empty (selector.Empty() counts none)."""
    return not selector.everything and selector.matches(pod.labels)


def count_on_node(node: NodeInfo, selector: LabelSelector, namespace: str) -> int:
    return sum(1 for p in node.pods.values() if _counted(p, namespace) and matches(selector, p))


def matching_pods_per_slot(
    snapshot: Snapshot, selectors: Sequence[LabelSelector], namespace: str
) -> list[Int64s]:
    """For each selector, the number of matching pods on each slot (through the snapshot's
    label index, so only the pods a selector can match are visited)."""
    counts = []
    for selector in selectors:
        per_slot = np.zeros(snapshot.capacity, dtype=np.int64)
        if not selector.everything:
            slots = [
                snapshot.slot(pod.node_name)
                for pod in snapshot.pods_matching(selector)
                if _counted(pod, namespace)
            ]
            found = np.array([s for s in slots if s is not None], dtype=np.intp)
            per_slot += np.bincount(found, minlength=snapshot.capacity)
        counts.append(per_slot)
    return counts


__all__ = [
    "DO_NOT_SCHEDULE",
    "HOSTNAME",
    "SCHEDULE_ANYWAY",
    "Constraint",
    "Inclusion",
    "all_keys_mask",
    "count_on_node",
    "default_constraints",
    "has_all_keys",
    "matches",
    "matching_pods_per_slot",
    "pod_constraints",
]


def domain_counts(snapshot: Snapshot, key: str, eligible: Mask, per_slot: Int64s) -> dict[str, int]:
    """Matching pods summed per domain (label value) over the eligible nodes; every domain
    of an eligible node appears, with 0 when no pod matches."""
    column = snapshot.label(key)
    if column is None:
        return {}
    codes = column.codes[eligible]
    totals = np.bincount(codes, weights=per_slot[eligible], minlength=len(column.values))
    present = np.bincount(codes, minlength=len(column.values)).nonzero()[0]  # np.unique's
    return {column.values[int(code)]: int(totals[code]) for code in present}


def per_code(snapshot: Snapshot, key: str, domains: dict[str, int]) -> tuple[Int64s, Int64s]:
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


class Spreading:
    """What PodTopologySpread's filtering and scoring share: the constraints a pod spreads
    by, its own or the profile's defaults."""

    defaults: tuple[TopologySpreadConstraint, ...]
    system_defaulted: bool
    handle: Handle

    def _constraints(self, pod: PodInfo, action: str, snapshot: Snapshot) -> tuple[Constraint, ...]:
        if pod.spec.get("topologySpreadConstraints"):
            return pod_constraints(pod, action)
        return default_constraints(self.defaults, pod, action, snapshot)
