"""Existing pods' affinity terms, aggregated by distinct term: for each term, how many pods
(or how much preferred weight) stand in each of its topology domains.

Upstream walks every pod with affinity for each incoming pod. Pods created by one controller
share their terms, so the distinct terms are far fewer than the pods: matching each distinct
term once against the incoming pod gives the same counts at a fraction of the cost. The
snapshot keeps the index current as pods and nodes come and go (Snapshot.pod_index)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

from scheduler_runtime.framework.podinfo import PodInfo
from scheduler_runtime.plugins.interpodaffinity.terms import AffinityTerm, WeightedTerm, pod_terms

INDEX_NAME = "InterPodAffinity"

# Per distinct term: its topology values and, for each, a pod count or a weight sum.
TermDomains = dict[AffinityTerm, Counter[str]]


def _change(
    domains: TermDomains, term: AffinityTerm, labels: Mapping[str, str], amount: int
) -> None:
    value = labels.get(term.topology_key)
    if value is None:
        return
    by_value = domains.setdefault(term, Counter())
    by_value[value] += amount
    if by_value[value] == 0:
        del by_value[value]
        if not by_value:
            del domains[term]


def _change_weighted(
    domains: TermDomains, terms: Iterable[WeightedTerm], labels: Mapping[str, str], sign: int
) -> None:
    for weighted in terms:
        _change(domains, weighted.term, labels, sign * weighted.weight)


class ExistingTerms:
    """The terms of the pods on known nodes, as InterPodAffinity's PreFilter and PreScore
    read them: required anti-affinity and required affinity as pod counts per domain,
    preferred affinity and anti-affinity as weight sums per domain (kept apart, so a sum is
    never a difference and empty domains drop out)."""

    def __init__(self) -> None:
        self.required_anti_affinity: TermDomains = {}
        self.required_affinity: TermDomains = {}
        self.preferred_affinity: TermDomains = {}
        self.preferred_anti_affinity: TermDomains = {}

    def add(self, pod: PodInfo, node_labels: Mapping[str, str]) -> None:
        self._account(pod, node_labels, 1)

    def remove(self, pod: PodInfo, node_labels: Mapping[str, str]) -> None:
        self._account(pod, node_labels, -1)

    def _account(self, pod: PodInfo, labels: Mapping[str, str], sign: int) -> None:
        if not pod.has_pod_affinity or not labels:
            return
        terms = pod_terms(pod)
        for term in terms.required_anti_affinity:
            _change(self.required_anti_affinity, term, labels, sign)
        for term in terms.required_affinity:
            _change(self.required_affinity, term, labels, sign)
        _change_weighted(self.preferred_affinity, terms.preferred_affinity, labels, sign)
        _change_weighted(self.preferred_anti_affinity, terms.preferred_anti_affinity, labels, sign)
