"""SchedulingGates: a pod with scheduling gates waits outside the active queue."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel

from scheduler_runtime.framework.interface import SUCCESS, Handle, Status
from scheduler_runtime.framework.podinfo import PodInfo


class SchedulingGates:
    name: ClassVar[str] = "SchedulingGates"

    def __init__(self, args: BaseModel | None, handle: Handle) -> None:
        del args, handle

    def pre_enqueue(self, pod: PodInfo) -> Status:
        if not pod.scheduling_gates:
            return SUCCESS
        gates = " ".join(pod.scheduling_gates)
        return Status.unresolvable(f"waiting for scheduling gates: [{gates}]")


__all__ = ["SchedulingGates"]
