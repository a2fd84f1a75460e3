"""InterPodAffinity: required pod affinity and anti-affinity of the incoming pod and the
required anti-affinity of existing pods (filter); preferred terms of both, and existing pods'
required affinity weighted by hardPodAffinityWeight (score, min-max normalized).

Counts are kept per topology pair (key, value) as upstream does; filters and scores then look
up each node's value through the snapshot's label columns, for all nodes at once."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from scheduler_runtime.config.args import InterPodAffinityArgs
from scheduler_runtime.framework.interface import (
    MAX_NODE_SCORE,
    SKIP,
    SUCCESS,
    CycleState,
    NodeVerdicts,
    PluginBase,
    PreFilterResult,
    Status,
)
from scheduler_runtime.framework.nodeinfo import NodeInfo
from scheduler_runtime.framework.podinfo import PodInfo
from scheduler_runtime.framework.snapshot import ABSENT, Int64s, Mask, Slots, Snapshot
from scheduler_runtime.plugins.interpodaffinity.index import INDEX_NAME, ExistingTerms, TermDomains
from scheduler_runtime.plugins.interpodaffinity.terms import (
    AffinityTerm,
    PodTerms,
    WeightedTerm,
    matches_all,
    parse_pod_terms,
    pod_terms,
)

REASON_AFFINITY = "node(s) didn't match pod affinity rules"
REASON_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
REASON_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
PRE_FILTER_KEY = "PreFilterInterPodAffinity"
PRE_SCORE_KEY = "PreScoreInterPodAffinity"

TopologyPair = tuple[str, str]
NamespaceLabels = Callable[[str], "Mapping[str, str] | None"]


def namespace_labels_of(snapshot: Snapshot) -> NamespaceLabels:
    """Namespace labels with a per-cycle cache."""
    cache: dict[str, Mapping[str, str] | None] = {}

    def lookup(namespace: str) -> Mapping[str, str] | None:
        if namespace not in cache:
            cache[namespace] = snapshot.objects.namespace_labels(namespace)
        return cache[namespace]

    return lookup


def _update(counts: Counter[TopologyPair], pair: TopologyPair, value: int) -> None:
    counts[pair] += value
    if counts[pair] == 0:
        del counts[pair]


def add_affinity_matches(
    counts: Counter[TopologyPair],
    terms: tuple[AffinityTerm, ...],
    pod: PodInfo,
    *,
    namespace_labels: Mapping[str, str] | None,
    node_labels: Mapping[str, str],
    value: int,
) -> None:
    """updateWithAffinityTerms: counts every term's domain when the pod matches all terms."""
    if matches_all(terms, pod, namespace_labels):
        for term in terms:
            if term.topology_key in node_labels:
                _update(counts, (term.topology_key, node_labels[term.topology_key]), value)


def add_anti_affinity_matches(
    counts: Counter[TopologyPair],
    terms: tuple[AffinityTerm, ...],
    pod: PodInfo,
    *,
    namespace_labels: Mapping[str, str] | None,
    node_labels: Mapping[str, str],
    value: int,
) -> None:
    """updateWithAntiAffinityTerms: counts the domain of each term the pod matches."""
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
        labels = node.labels
        add_anti_affinity_matches(
            self.existing_anti_affinity,
            pod_terms(other).required_anti_affinity,
            pod,
            namespace_labels=self.namespace_labels or {},
            node_labels=labels,
            value=value,
        )
        other_namespace = lookup(other.namespace)
        add_affinity_matches(
            self.affinity,
            self.terms.required_affinity,
            other,
            namespace_labels=other_namespace,
            node_labels=labels,
            value=value,
        )
        add_anti_affinity_matches(
            self.anti_affinity,
            self.terms.required_anti_affinity,
            other,
            namespace_labels=other_namespace,
            node_labels=labels,
            value=value,
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


class InterPodAffinity(PluginBase[InterPodAffinityArgs]):
    name: ClassVar[str] = "InterPodAffinity"
    args_type = InterPodAffinityArgs

    # ----- filtering

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
                    add_affinity_matches(
                        result.affinity,
                        terms.required_affinity,
                        existing,
                        namespace_labels=namespaces(existing.namespace),
                        node_labels=node.labels,
                        value=1,
                    )
        for term in terms.required_anti_affinity:
            for existing in snapshot.pods_matching(term.selector):
                if not term.in_namespace(existing, namespaces(existing.namespace)):
                    continue
                node = snapshot.get(existing.node_name)
                value = None if node is None else node.labels.get(term.topology_key)
                if value is not None:
                    _update(result.anti_affinity, (term.topology_key, value), 1)

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

    @staticmethod
    def _state(state: CycleState) -> PreFilterState:
        found: PreFilterState = state.read(PRE_FILTER_KEY)
        return found

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        found = self._state(state)
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
        found = self._state(state)
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

    # ----- scoring

    def pre_score(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, slots: Slots
    ) -> Status:
        if len(slots) == 0:
            return SUCCESS
        try:
            terms = parse_pod_terms(pod)
        except ValueError as error:
            return Status.as_error(error)
        if self.args.ignore_preferred_terms_of_existing_pods and not terms.has_preferred:
            return SKIP
        namespaces = namespace_labels_of(snapshot)
        scores: dict[str, Counter[str]] = {}
        for weighted_terms, sign in (
            (terms.preferred_affinity, 1),
            (terms.preferred_anti_affinity, -1),
        ):
            for weighted in weighted_terms:
                self._score_incoming_term(scores, weighted, sign, snapshot, namespaces)
        own_labels = namespaces(pod.namespace) or {}
        existing = snapshot.pod_index(INDEX_NAME, ExistingTerms)
        hard_weight = self.args.hard_pod_affinity_weight
        for domains, factor in (
            (existing.required_affinity, max(hard_weight, 0)),
            (existing.preferred_affinity, 1),
            (existing.preferred_anti_affinity, -1),
        ):
            if factor:
                _add_domains(scores, domains, pod, own_labels, factor)
        if not scores:
            return SKIP
        state.write(PRE_SCORE_KEY, scores)
        return SUCCESS

    @staticmethod
    def _score_incoming_term(
        scores: dict[str, Counter[str]],
        weighted: WeightedTerm,
        sign: int,
        snapshot: Snapshot,
        namespaces: NamespaceLabels,
    ) -> None:
        """processExistingPod, the incoming pod's preferred terms: each existing pod a term
        matches adds (anti-affinity: subtracts) the weight to its node's domain."""
        for existing in snapshot.pods_matching(weighted.term.selector):
            node = snapshot.get(existing.node_name)
            if node is not None and node.labels:
                _add_weights(
                    scores,
                    (weighted,),
                    existing,
                    namespace_labels=namespaces(existing.namespace),
                    node_labels=node.labels,
                    sign=sign,
                )

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status]:
        scores: dict[str, Counter[str]] = state.read(PRE_SCORE_KEY)
        total = sum(
            by_value.get(node.labels[key], 0)
            for key, by_value in scores.items()
            if key in node.labels
        )
        return total, SUCCESS

    def score_nodes(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, slots: Slots
    ) -> Int64s:
        scores: dict[str, Counter[str]] = state.read(PRE_SCORE_KEY)
        totals = np.zeros(len(slots), dtype=np.int64)
        for key, by_value in scores.items():
            column = snapshot.label(key)
            if column is None:
                continue
            # One weight per value code; the trailing 0 is picked by ABSENT (-1).
            weights = np.zeros(len(column.values) + 1, dtype=np.int64)
            for value, weight in by_value.items():
                code = column.ids.get(value)
                if code is not None:
                    weights[code] = weight
            codes = column.codes[slots]
            totals += weights[np.where(codes == ABSENT, len(column.values), codes)]
        return totals

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: Int64s) -> Status:
        """Min-max scaling to 0-100, in float64 and truncated, as upstream."""
        if len(scores) == 0:
            return SUCCESS
        lowest = int(scores.min())
        spread = int(scores.max()) - lowest
        if spread <= 0:
            scores[:] = 0
            return SUCCESS
        scaled = float(MAX_NODE_SCORE) * ((scores - lowest).astype(np.float64) / float(spread))
        scores[:] = scaled.astype(np.int64)
        return SUCCESS


def _add_domains(
    scores: dict[str, Counter[str]],
    domains: TermDomains,
    pod: PodInfo,
    namespace_labels: Mapping[str, str],
    factor: int,
) -> None:
    """processExistingPod for all existing pods at once: each distinct term of theirs that
    matches the incoming pod adds its domains' counts (or weight sums) times `factor`."""
    for term, by_value in domains.items():
        if term.matches(pod, namespace_labels):
            into = scores.setdefault(term.topology_key, Counter())
            for value, amount in by_value.items():
                into[value] += amount * factor


def _add_weights(
    scores: dict[str, Counter[str]],
    terms: tuple[WeightedTerm, ...],
    pod: PodInfo,
    *,
    namespace_labels: Mapping[str, str] | None,
    node_labels: Mapping[str, str],
    sign: int,
) -> None:
    for weighted in terms:
        term = weighted.term
        value = node_labels.get(term.topology_key)
        if value is not None and term.matches(pod, namespace_labels):
            scores.setdefault(term.topology_key, Counter())[value] += weighted.weight * sign


__all__ = ["InterPodAffinity"]
