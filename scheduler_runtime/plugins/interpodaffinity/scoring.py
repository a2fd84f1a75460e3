"""InterPodAffinity's scoring half (upstream's scoring.go): preferred terms of the incoming
pod and of existing pods, and existing pods' required affinity weighted by
hardPodAffinityWeight, summed per topology domain in PreScore; Score reads each node's
domain; NormalizeScore scales min-max to 0-100."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

import numpy as np

from scheduler_runtime.config.args import InterPodAffinityArgs
from scheduler_runtime.framework.interface import MAX_NODE_SCORE, CycleState
from scheduler_runtime.framework.nodeinfo import NodeInfo
from scheduler_runtime.framework.podinfo import PodInfo
from scheduler_runtime.framework.snapshot import ABSENT, Int64s, Slots, Snapshot
from scheduler_runtime.framework.status import SKIP, SUCCESS, Status
from scheduler_runtime.plugins.interpodaffinity.index import INDEX_NAME, ExistingTerms, TermDomains
from scheduler_runtime.plugins.interpodaffinity.terms import (
    NamespaceLabels,
    WeightedTerm,
    namespace_labels_of,
    parse_pod_terms,
)

PRE_SCORE_KEY = "PreScoreInterPodAffinity"


class Scoring:
    """PreScore, Score and NormalizeScore of InterPodAffinity."""

    args: InterPodAffinityArgs

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
