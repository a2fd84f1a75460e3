"""A pod's pod-affinity terms, parsed once per pod (upstream framework.PodInfo's
Required/Preferred(Anti)AffinityTerms) and kept on the PodInfo."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scheduler_runtime.framework.labelselector import LabelSelector, parse_selector
from scheduler_runtime.framework.podinfo import PodInfo
from scheduler_runtime.framework.snapshot import Snapshot

PARSED_KEY = "InterPodAffinity"
REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"

NamespaceLabels = Callable[[str], "Mapping[str, str] | None"]


@dataclass(frozen=True, slots=True)
class AffinityTerm:
    """A PodAffinityTerm: which pods it selects, and the topology domain it spans."""

    namespaces: frozenset[str]
    namespace_selector: LabelSelector
    selector: LabelSelector
    topology_key: str

    def matches(self, pod: PodInfo, namespace_labels: Mapping[str, str] | None) -> bool:
        """AffinityTerm.Matches; `namespace_labels` are those of the pod's namespace (None
        when the namespace is unknown: only an empty namespaceSelector then matches)."""
        return self.in_namespace(pod, namespace_labels) and self.selector.matches(pod.labels)

    def in_namespace(self, pod: PodInfo, namespace_labels: Mapping[str, str] | None) -> bool:
        """The namespace half of Matches (for pods already known to match the selector)."""
        if pod.namespace in self.namespaces:
            return True
        if namespace_labels is None:
            return self.namespace_selector.everything
        return self.namespace_selector.matches(namespace_labels)


@dataclass(frozen=True, slots=True)
class WeightedTerm:
    weight: int
    term: AffinityTerm


@dataclass(frozen=True, slots=True)
class PodTerms:
    required_affinity: tuple[AffinityTerm, ...]
    required_anti_affinity: tuple[AffinityTerm, ...]
    preferred_affinity: tuple[WeightedTerm, ...]
    preferred_anti_affinity: tuple[WeightedTerm, ...]

    @property
    def has_preferred(self) -> bool:
        return bool(self.preferred_affinity or self.preferred_anti_affinity)


def _term(namespace: str, raw: Mapping[str, Any], where: str) -> AffinityTerm:
    names = raw.get("namespaces") or ()
    namespace_selector = raw.get("namespaceSelector")
    namespaces = frozenset(names) if names or namespace_selector is not None else {namespace}
    return AffinityTerm(
        namespaces=frozenset(namespaces),
        namespace_selector=parse_selector(namespace_selector, f"{where}.namespaceSelector"),
        selector=parse_selector(raw.get("labelSelector"), f"{where}.labelSelector"),
        topology_key=raw.get("topologyKey") or "",
    )


def _required(
    namespace: str, raw: Sequence[Mapping[str, Any]], where: str
) -> tuple[AffinityTerm, ...]:
    return tuple(_term(namespace, item, f"{where}[{i}]") for i, item in enumerate(raw))


def _preferred(
    namespace: str, raw: Sequence[Mapping[str, Any]], where: str
) -> tuple[WeightedTerm, ...]:
    return tuple(
        WeightedTerm(
            int(item.get("weight") or 0),
            _term(namespace, item.get("podAffinityTerm") or {}, f"{where}[{i}].podAffinityTerm"),
        )
        for i, item in enumerate(raw)
    )


def parse_pod_terms(pod: PodInfo) -> PodTerms:
    """Raises SelectorError, naming the field, for a selector the API server would reject."""
    affinity = pod.affinity.get("podAffinity") or {}
    anti = pod.affinity.get("podAntiAffinity") or {}
    ns = pod.namespace
    return PodTerms(
        required_affinity=_required(ns, affinity.get(REQUIRED) or (), f"podAffinity.{REQUIRED}"),
        required_anti_affinity=_required(
            ns, anti.get(REQUIRED) or (), f"podAntiAffinity.{REQUIRED}"
        ),
        preferred_affinity=_preferred(
            ns, affinity.get(PREFERRED) or (), f"podAffinity.{PREFERRED}"
        ),
        preferred_anti_affinity=_preferred(
            ns, anti.get(PREFERRED) or (), f"podAntiAffinity.{PREFERRED}"
        ),
    )


NO_TERMS = PodTerms((), (), (), ())


def pod_terms(pod: PodInfo) -> PodTerms:
    """The pod's terms, parsed on first use; a pod whose terms do not parse has none here
    (the incoming pod is checked with `parse_pod_terms` so it gets the error)."""
    cached: PodTerms | None = pod.parsed.get(PARSED_KEY)
    if cached is None:
        if not pod.has_pod_affinity:
            cached = NO_TERMS
        else:
            try:
                cached = parse_pod_terms(pod)
            except ValueError:
                cached = NO_TERMS
        pod.parsed[PARSED_KEY] = cached
    return cached


def matches_all(
    terms: tuple[AffinityTerm, ...], pod: PodInfo, namespace_labels: Mapping[str, str] | None
) -> bool:
    """podMatchesAllAffinityTerms: false without terms."""
    return bool(terms) and all(term.matches(pod, namespace_labels) for term in terms)


def namespace_labels_of(snapshot: Snapshot) -> NamespaceLabels:
    """Namespace labels with a per-cycle cache."""
    cache: dict[str, Mapping[str, str] | None] = {}

    def lookup(namespace: str) -> Mapping[str, str] | None:
        if namespace not in cache:
            cache[namespace] = snapshot.objects.namespace_labels(namespace)
        return cache[namespace]

    return lookup
