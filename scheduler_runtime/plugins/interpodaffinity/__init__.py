"""InterPodAffinity: required pod affinity and anti-affinity of the incoming pod and the
required anti-affinity of existing pods (filter, filtering.py); preferred terms of both, and
existing pods' required affinity weighted by hardPodAffinityWeight (score, min-max
normalized, scoring.py)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

from scheduler_runtime.config.args import InterPodAffinityArgs
from scheduler_runtime.framework.events import (
    NAMESPACE,
    NODE,
    POD,
    ActionType,
    ClusterEventWithHint,
    on,
)
from scheduler_runtime.framework.interface import PluginBase, StateNeed
from scheduler_runtime.plugins.interpodaffinity.filtering import Filtering
from scheduler_runtime.plugins.interpodaffinity.scoring import Scoring


class InterPodAffinity(Filtering, Scoring, PluginBase[InterPodAffinityArgs]):
    name: ClassVar[str] = "InterPodAffinity"
    cluster_events: ClassVar[Sequence[ClusterEventWithHint]] = (
        on(POD, ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE),
        on(NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
        # Beyond upstream: a namespace's labels can satisfy a term's namespaceSelector.
        on(NAMESPACE, ActionType.ADD | ActionType.UPDATE),
    )
    state_needs: ClassVar[Mapping[str, StateNeed]] = {
        "filter": StateNeed(
            "preFilter", 'error reading "PreFilterInterPodAffinity" from cycleState: not found'
        ),
        "score": StateNeed(
            "preScore", 'failed to read "PreScoreInterPodAffinity" from cycleState: not found'
        ),
    }
    args_type = InterPodAffinityArgs


__all__ = ["InterPodAffinity"]
