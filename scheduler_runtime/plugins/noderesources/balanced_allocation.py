"""NodeResourcesBalancedAllocation: prefer nodes whose resource usage fractions stay close to
each other after placing the pod. Uses real requests; best-effort pods skip it."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel

from scheduler_runtime.config.args import NodeResourcesBalancedAllocationArgs
from scheduler_runtime.framework.interface import SKIP, SUCCESS, CycleState, Handle, Status
from scheduler_runtime.framework.podinfo import PodInfo
from scheduler_runtime.framework.snapshot import Int64s, Slots, Snapshot
from scheduler_runtime.plugins.noderesources.resources import (
    allocatable_and_requested,
    pod_scoring_request,
)
from scheduler_runtime.plugins.noderesources.scorers import balanced

PRE_SCORE_KEY = "PreScoreNodeResourcesBalancedAllocation"


class BalancedAllocation:
    """Registered as NodeResourcesBalancedAllocation."""

    name: ClassVar[str] = "NodeResourcesBalancedAllocation"

    def __init__(self, args: BaseModel | None, handle: Handle) -> None:
        if not isinstance(args, NodeResourcesBalancedAllocationArgs):
            args = NodeResourcesBalancedAllocationArgs()
        self.resources = tuple(r.name for r in args.resources)

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
        pairs = []
        for name, request in zip(self.resources, requests, strict=True):
            allocatable, requested = allocatable_and_requested(
                snapshot, slots, name, request, use_requested=True
            )
            pairs.append((requested, allocatable))
        return balanced(pairs)
