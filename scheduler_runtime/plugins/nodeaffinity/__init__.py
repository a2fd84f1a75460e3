"""NodeAffinity: nodeSelector and required node affinity (filter), preferred node affinity
(score, normalized), plus the profile's `addedAffinity`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from pydantic import BaseModel

from scheduler_runtime.config.args import NodeAffinityArgs
from scheduler_runtime.framework.events import NODE, ActionType, ClusterEventWithHint, on
from scheduler_runtime.framework.interface import (
    CycleState,
    Handle,
    PluginBase,
    PreFilterResult,
    default_normalize_score,
)
from scheduler_runtime.framework.nodeinfo import NodeInfo
from scheduler_runtime.framework.nodeselector import (
    NAME_FIELD,
    Term,
    WeightedTerm,
    parse_preferred,
    parse_terms,
    selector_mask,
    selector_matches,
    term_mask,
    term_matches,
    terms_mask,
    terms_match,
)
from scheduler_runtime.framework.podinfo import PodInfo
from scheduler_runtime.framework.snapshot import Int64s, Slots, Snapshot
from scheduler_runtime.framework.status import SKIP, SUCCESS, NodeVerdicts, Status

REASON_POD = "node(s) didn't match Pod's node affinity/selector"
REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
REASON_CONFLICT = "pod affinity terms conflict"
PRE_SCORE_KEY = "PreScoreNodeAffinity"


@dataclass(frozen=True, slots=True)
class RequiredAffinity:
    """nodeaffinity.GetRequiredNodeAffinity: the nodeSelector AND the required terms."""

    selector: Mapping[str, str]
    terms: tuple[Term, ...] | None

    def matches(self, node: NodeInfo) -> bool:
        if not selector_matches(self.selector, node.labels):
            return False
        return self.terms is None or terms_match(self.terms, node.labels, node.name)

    def mask(self, snapshot: Snapshot) -> np.ndarray:
        mask = selector_mask(self.selector, snapshot)
        if self.terms is not None:
            mask &= terms_mask(self.terms, snapshot)
        return mask


def _node_affinity(pod: PodInfo) -> Mapping[str, Any]:
    return pod.affinity.get("nodeAffinity") or {}


def required_affinity(pod: PodInfo) -> RequiredAffinity:
    """Parsed once per pod and kept on the PodInfo."""
    cached = pod.parsed.get("NodeAffinity.required")
    if cached is None:
        required = _node_affinity(pod).get("requiredDuringSchedulingIgnoredDuringExecution")
        terms = None if required is None else parse_terms(required.get("nodeSelectorTerms"))
        cached = pod.parsed["NodeAffinity.required"] = RequiredAffinity(pod.node_selector, terms)
    return cached


def preferred_terms(pod: PodInfo) -> tuple[WeightedTerm, ...]:
    cached = pod.parsed.get("NodeAffinity.preferred")
    if cached is None:
        raw = _node_affinity(pod).get("preferredDuringSchedulingIgnoredDuringExecution")
        cached = pod.parsed["NodeAffinity.preferred"] = parse_preferred(raw)
    return cached


def _names_from_fields(raw_terms: list[dict[str, Any]]) -> set[str] | None:
    """The node names the required terms pin the pod to (`metadata.name In`), if every term
    pins it; None when some term allows any node."""
    names: set[str] = set()
    for raw in raw_terms:
        pinned: set[str] | None = None
        for field in raw.get("matchFields") or ():
            if field.get("key") == NAME_FIELD and field.get("operator") == "In":
                values = set(field.get("values") or ())
                pinned = values if pinned is None else pinned & values
        if pinned is None:
            return None
        names |= pinned
    return names


class NodeAffinity(PluginBase[NodeAffinityArgs]):
    name: ClassVar[str] = "NodeAffinity"
    cluster_events: ClassVar[Sequence[ClusterEventWithHint]] = (
        on(NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
    )
    args_type = NodeAffinityArgs

    def __init__(self, args: BaseModel | None, handle: Handle) -> None:
        super().__init__(args, handle)
        added = self.args.added_affinity or {}
        enforced = added.get("requiredDuringSchedulingIgnoredDuringExecution")
        self.enforced: tuple[Term, ...] | None = (
            None if enforced is None else parse_terms(enforced.get("nodeSelectorTerms"))
        )
        self.added_preferred = parse_preferred(
            added.get("preferredDuringSchedulingIgnoredDuringExecution")
        )

    def pre_filter(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot
    ) -> tuple[PreFilterResult | None, Status]:
        required = _node_affinity(pod).get("requiredDuringSchedulingIgnoredDuringExecution")
        if required is None and self.enforced is None and not pod.node_selector:
            return None, SKIP
        raw_terms = (required or {}).get("nodeSelectorTerms") or []
        if not raw_terms:
            return None, SUCCESS
        names = _names_from_fields(raw_terms)
        if names is None:
            return None, SUCCESS
        if not names:
            return None, Status.unresolvable(REASON_CONFLICT)
        return PreFilterResult(frozenset(names)), SUCCESS

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        if self.enforced is not None and not terms_match(self.enforced, node.labels, node.name):
            return Status.unresolvable(REASON_ENFORCED)
        if not required_affinity(pod).matches(node):
            return Status.unresolvable(REASON_POD)
        return SUCCESS

    def filter_nodes(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, slots: Slots
    ) -> NodeVerdicts:
        rejected = np.zeros(len(slots), dtype=np.bool_)
        reasons = []
        if self.enforced is not None:
            enforced = ~terms_mask(self.enforced, snapshot)[slots]
            rejected |= enforced
            reasons.append((REASON_ENFORCED, enforced))
        pod_rejects = ~required_affinity(pod).mask(snapshot)[slots] & ~rejected
        rejected |= pod_rejects
        reasons.append((REASON_POD, pod_rejects))
        return NodeVerdicts(rejected, rejected, reasons)

    def _preferred(self, pod: PodInfo) -> tuple[WeightedTerm, ...]:
        return (*self.added_preferred, *preferred_terms(pod))

    def pre_score(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, slots: Slots
    ) -> Status:
        terms = self._preferred(pod)
        if not terms:
            return SKIP
        state.write(PRE_SCORE_KEY, terms)
        return SUCCESS

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status]:
        terms = state.get(PRE_SCORE_KEY) or self._preferred(pod)
        total = sum(t.weight for t in terms if term_matches(t.term, node.labels, node.name))
        return total, SUCCESS

    def score_nodes(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, slots: Slots
    ) -> Int64s:
        terms = state.get(PRE_SCORE_KEY) or self._preferred(pod)
        scores = np.zeros(len(slots), dtype=np.int64)
        for weighted in terms:
            scores += weighted.weight * term_mask(weighted.term, snapshot)[slots]
        return scores

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: Int64s) -> Status:
        default_normalize_score(scores, reverse=False)
        return SUCCESS


__all__ = ["NodeAffinity"]
