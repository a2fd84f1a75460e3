"""PrioritySort: higher priority first, then the pod queued earlier."""

from __future__ import annotations

from typing import ClassVar

from scheduler_runtime.framework.interface import PluginBase
from scheduler_runtime.framework.types import QueuedPodInfo


class PrioritySort(PluginBase[None]):
    name: ClassVar[str] = "PrioritySort"

    def less(self, first: QueuedPodInfo, second: QueuedPodInfo) -> bool:
        p1, p2 = first.pod_info.priority, second.pod_info.priority
        return p1 > p2 or (p1 == p2 and first.timestamp < second.timestamp)

    @staticmethod
    def sort_key(queued: QueuedPodInfo) -> tuple[int, float]:
        """The order `less` gives, as a value."""
        return -queued.pod_info.priority, queued.timestamp


__all__ = ["PrioritySort"]
