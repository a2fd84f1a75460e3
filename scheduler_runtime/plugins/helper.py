"""What several in-tree plugins share (upstream's plugins/helper)."""

from __future__ import annotations

from typing import ClassVar, Generic, Protocol, TypeVar

from scheduler_runtime.framework.interface import CycleState
from scheduler_runtime.framework.nodeinfo import NodeInfo
from scheduler_runtime.framework.podinfo import PodInfo
from scheduler_runtime.framework.status import SUCCESS, Status


class PodCounts(Protocol):
    """A PreFilter state that counts pods, kept right as preemption adds or removes them."""

    def update_with_pod(self, pod: PodInfo, other: PodInfo, node: NodeInfo, delta: int) -> None:
        """`other` joins (delta 1) or leaves (delta -1) `node`."""


StateT = TypeVar("StateT", bound=PodCounts)


class CountsPodsInPreFilter(Generic[StateT]):
    """PreFilterExtensions for a plugin whose PreFilter state (under `pre_filter_key`)
    counts pods: AddPod and RemovePod update it in place."""

    pre_filter_key: ClassVar[str]

    def add_pod(
        self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node: NodeInfo
    ) -> Status:
        self.pre_filter_state(state).update_with_pod(pod, pod_to_add, node, 1)
        return SUCCESS

    def remove_pod(
        self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node: NodeInfo
    ) -> Status:
        self.pre_filter_state(state).update_with_pod(pod, pod_to_remove, node, -1)
        return SUCCESS

    def pre_filter_state(self, state: CycleState) -> StateT:
        found: StateT = state.read(self.pre_filter_key)
        return found
