"""Two sample plugins written against `scheduler_runtime.plugin_api`.

TeamAffinity: a pod labelled `team: X` prefers (or, with `strict`, only accepts) nodes
labelled `<nodeLabel>: X`.

PairUp (Permit): pods sharing a `sample.example.com/pair` label are bound together or not at
all, a gang of two: the first waits at Permit until its partner arrives, or times out.

Misbehaving: fine for every pod except those labelled `sample.example.com/misbehave`, whose
value says how it fails: `raise`, `hang` or `wrong-type`. It shows that a broken plugin costs
those pods an Error, not the scheduler its life. Enabled at preFilter, `slow` makes each cycle
last 5 ms longer, as a cluster of a few thousand nodes would.
"""

from __future__ import annotations

import threading
import time
from typing import Any, ClassVar

from pydantic import Field

from scheduler_runtime.plugin_api import (
    MAX_NODE_SCORE,
    SUCCESS,
    Code,
    CycleState,
    NodeInfo,
    PluginArgs,
    PluginBase,
    PodInfo,
    PreFilterResult,
    Snapshot,
    Status,
    WaitingPod,
)

MISBEHAVE_LABEL = "sample.example.com/misbehave"
SLOW_CYCLE_SECONDS = 0.005


class TeamAffinityArgs(PluginArgs):
    node_label: str = Field(default="example.com/team", min_length=1)
    pod_label: str = Field(default="team", min_length=1)
    strict: bool = False


class TeamAffinity(PluginBase[TeamAffinityArgs]):
    name: ClassVar[str] = "TeamAffinity"
    args_type = TeamAffinityArgs

    def _team(self, pod: PodInfo) -> str | None:
        return pod.labels.get(self.args.pod_label)

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        team = self._team(pod)
        if not self.args.strict or team is None or node.labels.get(self.args.node_label) == team:
            return SUCCESS
        return Status.unschedulable("node(s) belong to another team")

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status]:
        team = self._team(pod)
        matches = team is not None and node.labels.get(self.args.node_label) == team
        return (MAX_NODE_SCORE if matches else 0), SUCCESS


class MisbehavingArgs(PluginArgs):
    pass


class Misbehaving(PluginBase[MisbehavingArgs]):
    name: ClassVar[str] = "Misbehaving"
    args_type = MisbehavingArgs
    time_budget: ClassVar[float] = 0.5
    _never = threading.Event()

    def pre_filter(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot
    ) -> tuple[PreFilterResult | None, Status]:
        if pod.labels.get(MISBEHAVE_LABEL) == "slow":
            time.sleep(SLOW_CYCLE_SECONDS)
        return None, SUCCESS

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Any:
        mode = pod.labels.get(MISBEHAVE_LABEL)
        if mode == "raise":
            raise ZeroDivisionError("division by zero")
        if mode == "hang":
            self._never.wait()
        if mode == "wrong-type":
            return True
        return SUCCESS


class PairUpArgs(PluginArgs):
    label: str = Field(default="sample.example.com/pair", min_length=1)
    timeout_seconds: float = Field(default=10.0, gt=0)


class PairUp(PluginBase[PairUpArgs]):
    name: ClassVar[str] = "PairUp"
    args_type = PairUpArgs

    def permit(self, state: CycleState, pod: PodInfo, node_name: str) -> tuple[Status, float]:
        pair = pod.labels.get(self.args.label)
        if pair is None:
            return SUCCESS, 0.0
        partners: list[WaitingPod] = []
        self.handle.framework.iterate_over_waiting_pods(
            lambda waiting: (
                partners.append(waiting)
                if waiting.pod.labels.get(self.args.label) == pair and waiting.pod.uid != pod.uid
                else None
            )
        )
        if partners:
            partners[0].allow(self.name)
            return SUCCESS, 0.0
        return Status(Code.WAIT), self.args.timeout_seconds
