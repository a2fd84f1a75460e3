"""PrioritySort: higher priority first, then the pod queued earlier."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel

from scheduler_runtime.framework.interface import Handle
from scheduler_runtime.framework.types import QueuedPodInfo


class PrioritySort:
    name: ClassVar[str] = "PrioritySort"

    def __init__(self, args: BaseModel | None, handle: Handle) -> None:
        del args, handle

    def less(self, first: QueuedPodInfo, second: QueuedPodInfo) -> bool:
        p1, p2 = first.pod_info.priority, second.pod_info.priority
        return p1 > p2 or (p1 == p2 and first.timestamp < second.timestamp)


__all__ = ["PrioritySort"]
