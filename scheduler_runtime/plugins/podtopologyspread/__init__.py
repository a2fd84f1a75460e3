"""PodTopologySpread: DoNotSchedule constraints bound the skew of matching pods across
topology domains (filter, filtering.py); ScheduleAnyway constraints prefer the emptier
domains (score, normalized in reverse, scoring.py). Pods without constraints get the
profile's default constraints when a Service, ReplicationController, ReplicaSet or
StatefulSet selects them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

from pydantic import BaseModel

from scheduler_runtime.config.args import PodTopologySpreadArgs
from scheduler_runtime.framework.events import NODE, POD, ActionType, ClusterEventWithHint, on
from scheduler_runtime.framework.interface import Handle, PluginBase, StateNeed
from scheduler_runtime.plugins.podtopologyspread.filtering import Filtering
from scheduler_runtime.plugins.podtopologyspread.scoring import Scoring


class PodTopologySpread(Filtering, Scoring, PluginBase[PodTopologySpreadArgs]):
    name: ClassVar[str] = "PodTopologySpread"
    cluster_events: ClassVar[Sequence[ClusterEventWithHint]] = (
        on(
            POD,
            ActionType.ADD
            | ActionType.UPDATE_POD_LABEL
            | ActionType.UPDATE_POD_TOLERATION
            | ActionType.DELETE,
        ),
        on(
            NODE,
            ActionType.ADD
            | ActionType.DELETE
            | ActionType.UPDATE_NODE_LABEL
            | ActionType.UPDATE_NODE_TAINT,
        ),
    )
    state_needs: ClassVar[Mapping[str, StateNeed]] = {
        "filter": StateNeed(
            "preFilter", 'reading "PreFilterPodTopologySpread" from cycleState: not found'
        ),
        "score": StateNeed(
            "preScore", 'error reading "PreScorePodTopologySpread" from cycleState: not found'
        ),
    }
    args_type = PodTopologySpreadArgs

    def __init__(self, args: BaseModel | None, handle: Handle) -> None:
        super().__init__(args, handle)
        self.defaults = self.args.effective_constraints
        self.system_defaulted = self.args.defaulting_type == "System"


__all__ = ["PodTopologySpread"]
