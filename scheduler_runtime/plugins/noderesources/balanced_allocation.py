"""NodeResourcesBalancedAllocation: prefer nodes whose resource usage the pod makes more even.
A balance is 100 x (1 - standard deviation of the usage fractions). From 1.36 upstream scores
the change the pod makes: 50 + (50 + balance with the pod - balance without it) / 2; 1.35
scored the balance with the pod alone. Uses real requests; best-effort pods skip it."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel

from scheduler_runtime.config.args import NodeResourcesBalancedAllocationArgs
from scheduler_runtime.framework.interface import MAX_NODE_SCORE, CycleState, Handle, PluginBase
from scheduler_runtime.framework.podinfo import PodInfo
from scheduler_runtime.framework.snapshot import Int64s, Slots, Snapshot
from scheduler_runtime.framework.status import SKIP, SUCCESS, Status
from scheduler_runtime.plugins.noderesources.resources import (
    allocatable_and_requested,
    pod_scoring_request,
)
from scheduler_runtime.plugins.noderesources.scorers import balanced

PRE_SCORE_KEY = "PreScoreNodeResourcesBalancedAllocation"
HALF_SCORE = MAX_NODE_SCORE // 2


class BalancedAllocation(PluginBase[NodeResourcesBalancedAllocationArgs]):
    """Registered as NodeResourcesBalancedAllocation."""

    name: ClassVar[str] = "NodeResourcesBalancedAllocation"
    args_type = NodeResourcesBalancedAllocationArgs

    def __init__(self, args: BaseModel | None, handle: Handle) -> None:
        super().__init__(args, handle)
        self.resources = tuple(r.name for r in self.args.resources)

    def _requests(self, pod: PodInfo) -> list[int]:
        return [
            pod_scoring_request(name, pod.requests, pod.non_zero_requests, use_requested=True)
            for name in self.resources
        ]

    def pre_score(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, slots: Slots
    ) -> Status:
        requests = self._requests(pod)
        if not any(requests):
            return SKIP  # best-effort pods would all pile onto one node otherwise
        state.write(PRE_SCORE_KEY, requests)
        return SUCCESS

    def score_nodes(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, slots: Slots
    ) -> Int64s:
        requests = state.get(PRE_SCORE_KEY) or self._requests(pod)
        with_pod = []
        without_pod = []
        for name, request in zip(self.resources, requests, strict=True):
            allocatable, requested = allocatable_and_requested(
                snapshot, slots, name, request, use_requested=True
            )
            with_pod.append((requested, allocatable))
            without_pod.append((requested - request, allocatable))
        if not self.handle.features.since(1, 36):
            return balanced(with_pod)
        change = balanced(with_pod) - balanced(without_pod)
        scores: Int64s = HALF_SCORE + (HALF_SCORE + change) // 2
        return scores
