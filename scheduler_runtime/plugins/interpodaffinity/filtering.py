"""InterPodAffinity's filtering half (upstream's filtering.go): required pod affinity and
anti-affinity of the incoming pod and the required anti-affinity of existing pods, counted per
topology pair (key, value) in PreFilter; Filter looks up each node's value through the
snapshot's label columns, for all nodes at once."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np

from scheduler_runtime.framework.interface import CycleState, PreFilterResult
from scheduler_runtime.framework.nodeinfo import NodeInfo
from scheduler_runtime.framework.podinfo import PodInfo
from scheduler_runtime.framework.snapshot import Mask, Slots, Snapshot
from scheduler_runtime.framework.status import SKIP, SUCCESS, NodeVerdicts, Status
from scheduler_runtime.plugins.helper import CountsPodsInPreFilter
from scheduler_runtime.plugins.interpodaffinity.index import INDEX_NAME, ExistingTerms
from scheduler_runtime.plugins.interpodaffinity.terms import (
    AffinityTerm,
    NamespaceLabels,
    PodTerms,
    matches_all,
    namespace_labels_of,
    parse_pod_terms,
    pod_terms,
)

REASON_AFFINITY = "node(s) didn't match pod affinity rules"
REASON_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
REASON_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
PRE_FILTER_KEY = "PreFilterInterPodAffinity"

TopologyPair = tuple[str, str]
# Where a pod is counted: its namespace's labels, its node's labels, and +1 or -1.
Where = tuple["Mapping[str, str] | None", "Mapping[str, str]", int]


def _update(counts: Counter[TopologyPair], pair: TopologyPair, value: int) -> None:
    counts[pair] += value
    if counts[pair] == 0:
        del counts[pair]


def count_affinity(
    counts: Counter[TopologyPair], terms: tuple[AffinityTerm, ...], pod: PodInfo, where: Where
) -> None:
    """updateWithAffinityTerms: counts every term's domain when the pod matches all terms."""
    namespace_labels, node_labels, value = where
    if matches_all(terms, pod, namespace_labels):
        for term in terms:
            if term.topology_key in node_labels:
                _update(counts, (term.topology_key, node_labels[term.topology_key]), value)


def count_anti_affinity(
    counts: Counter[TopologyPair], terms: tuple[AffinityTerm, ...], pod: PodInfo, where: Where
) -> None:
    """updateWithAntiAffinityTerms: counts the domain of each term the pod matches."""
    namespace_labels, node_labels, value = where
    for term in terms:
        if term.topology_key in node_labels and term.matches(pod, namespace_labels):
            _update(counts, (term.topology_key, node_labels[term.topology_key]), value)


@dataclass
class PreFilterState:
    terms: PodTerms
    namespace_labels: Mapping[str, str] | None  # of the incoming pod's namespace
    existing_anti_affinity: Counter[TopologyPair] = field(default_factory=Counter)
    affinity: Counter[TopologyPair] = field(default_factory=Counter)
    anti_affinity: Counter[TopologyPair] = field(default_factory=Counter)
    namespaces: NamespaceLabels | None = None

    def clone(self) -> PreFilterState:
        return PreFilterState(
            self.terms,
            self.namespace_labels,
            Counter(self.existing_anti_affinity),
            Counter(self.affinity),
            Counter(self.anti_affinity),
            self.namespaces,
        )

    def update_with_pod(self, pod: PodInfo, other: PodInfo, node: NodeInfo, value: int) -> None:
        """AddPod/RemovePod: `other` is added to (or removed from) `node`."""
        lookup = self.namespaces or (lambda _: None)
        labels, other_namespace = node.labels, lookup(other.namespace)
        count_anti_affinity(
            self.existing_anti_affinity,
            pod_terms(other).required_anti_affinity,
            pod,
            (self.namespace_labels or {}, labels, value),
        )
        count_affinity(
            self.affinity, self.terms.required_affinity, other, (other_namespace, labels, value)
        )
        count_anti_affinity(
            self.anti_affinity,
            self.terms.required_anti_affinity,
            other,
            (other_namespace, labels, value),
        )


def _positive_domains(counts: Counter[TopologyPair]) -> dict[str, set[str]]:
    domains: dict[str, set[str]] = {}
    for (key, value), count in counts.items():
        if count > 0:
            domains.setdefault(key, set()).add(value)
    return domains


def _in_domains(snapshot: Snapshot, key: str, values: Iterable[str], slots: Slots) -> Mask:
    """Which of `slots` have label `key` with one of `values`."""
    return snapshot.label_in(key, values)[slots]


class Filtering(CountsPodsInPreFilter["PreFilterState"]):
    """PreFilter (with AddPod/RemovePod) and Filter of InterPodAffinity."""

    pre_filter_key = PRE_FILTER_KEY

    def pre_filter(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot
    ) -> tuple[PreFilterResult | None, Status]:
        try:
            terms = parse_pod_terms(pod)
        except ValueError as error:
            return None, Status.unresolvable(f"parsing pod: {error}")
        namespaces = namespace_labels_of(snapshot)
        own_labels = namespaces(pod.namespace)
        result = PreFilterState(terms, own_labels, namespaces=namespaces)
        counts = result.existing_anti_affinity
        existing = snapshot.pod_index(INDEX_NAME, ExistingTerms)
        for term, by_value in existing.required_anti_affinity.items():
            if term.matches(pod, own_labels or {}):
                for value, count in by_value.items():
                    counts[(term.topology_key, value)] += count
        if terms.required_affinity or terms.required_anti_affinity:
            self._count_incoming(result, snapshot, namespaces)
        if not (
            result.existing_anti_affinity or terms.required_affinity or terms.required_anti_affinity
        ):
            return None, SKIP
        state.write(PRE_FILTER_KEY, result)
        return None, SUCCESS

    @staticmethod
    def _count_incoming(
        result: PreFilterState, snapshot: Snapshot, namespaces: NamespaceLabels
    ) -> None:
        """getIncomingAffinityAntiAffinityCounts, visiting only the pods a term's selector
        can match (through the snapshot's label index)."""
        terms = result.terms
        if terms.required_affinity:
            for existing in snapshot.pods_matching(terms.required_affinity[0].selector):
                node = snapshot.get(existing.node_name)
                if node is not None:
                    where = (namespaces(existing.namespace), node.labels, 1)
                    count_affinity(result.affinity, terms.required_affinity, existing, where)
        for term in terms.required_anti_affinity:
            for existing in snapshot.pods_matching(term.selector):
                if not term.in_namespace(existing, namespaces(existing.namespace)):
                    continue
                node = snapshot.get(existing.node_name)
                value = None if node is None else node.labels.get(term.topology_key)
                if value is not None:
                    _update(result.anti_affinity, (term.topology_key, value), 1)

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        found = self.pre_filter_state(state)
        if not self._satisfies_affinity(found, pod, node.labels):
            return Status.unresolvable(REASON_AFFINITY)
        for term in found.terms.required_anti_affinity:
            value = node.labels.get(term.topology_key)
            if value is not None and found.anti_affinity[(term.topology_key, value)] > 0:
                return Status.unschedulable(REASON_ANTI_AFFINITY)
        for key, value in node.labels.items():
            if found.existing_anti_affinity.get((key, value), 0) > 0:
                return Status.unschedulable(REASON_EXISTING_ANTI_AFFINITY)
        return SUCCESS

    @staticmethod
    def _first_of_group(found: PreFilterState, pod: PodInfo) -> bool:
        """A pod whose affinity no existing pod matches may still go where it matches its
        own terms, so the first pod of a self-affine group is not pending forever."""
        return not found.affinity and matches_all(
            found.terms.required_affinity, pod, found.namespace_labels
        )

    def _satisfies_affinity(
        self, found: PreFilterState, pod: PodInfo, labels: Mapping[str, str]
    ) -> bool:
        pods_exist = True
        for term in found.terms.required_affinity:
            value = labels.get(term.topology_key)
            if value is None:
                return False
            if found.affinity[(term.topology_key, value)] <= 0:
                pods_exist = False
        return pods_exist or self._first_of_group(found, pod)

    def filter_nodes(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, slots: Slots
    ) -> NodeVerdicts:
        found = self.pre_filter_state(state)
        affinity = ~self._affinity_mask(found, pod, snapshot, slots)
        anti = np.zeros(len(slots), dtype=np.bool_)
        domains = _positive_domains(found.anti_affinity)
        for term in found.terms.required_anti_affinity:
            values = domains.get(term.topology_key)
            if values:
                anti |= _in_domains(snapshot, term.topology_key, values, slots)
        anti &= ~affinity
        existing = np.zeros(len(slots), dtype=np.bool_)
        for key, values in _positive_domains(found.existing_anti_affinity).items():
            existing |= _in_domains(snapshot, key, values, slots)
        existing &= ~(affinity | anti)
        rejected = affinity | anti | existing
        return NodeVerdicts(
            rejected=rejected,
            unresolvable=affinity,
            reasons=[
                (REASON_AFFINITY, affinity),
                (REASON_ANTI_AFFINITY, anti),
                (REASON_EXISTING_ANTI_AFFINITY, existing),
            ],
        )

    def _affinity_mask(
        self, found: PreFilterState, pod: PodInfo, snapshot: Snapshot, slots: Slots
    ) -> Mask:
        """Nodes that satisfy the incoming pod's required affinity."""
        has_keys = np.ones(len(slots), dtype=np.bool_)
        pods_exist = np.ones(len(slots), dtype=np.bool_)
        domains = _positive_domains(found.affinity)
        for term in found.terms.required_affinity:
            has_keys &= snapshot.label_exists(term.topology_key)[slots]
            pods_exist &= _in_domains(
                snapshot, term.topology_key, domains.get(term.topology_key, ()), slots
            )
        if self._first_of_group(found, pod):
            return has_keys
        return has_keys & pods_exist
