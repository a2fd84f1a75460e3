"""SchedulingGates: a pod with scheduling gates waits outside the active queue."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from scheduler_runtime.framework.events import POD, ActionType, ClusterEventWithHint, on
from scheduler_runtime.framework.interface import PluginBase
from scheduler_runtime.framework.podinfo import PodInfo
from scheduler_runtime.framework.status import SUCCESS, Status


class SchedulingGates(PluginBase[None]):
    name: ClassVar[str] = "SchedulingGates"
    cluster_events: ClassVar[Sequence[ClusterEventWithHint]] = (
        on(POD, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED),
    )

    def pre_enqueue(self, pod: PodInfo) -> Status:
        if not pod.scheduling_gates:
            return SUCCESS
        gates = " ".join(pod.scheduling_gates)
        return Status.unresolvable(f"waiting for scheduling gates: [{gates}]")


__all__ = ["SchedulingGates"]
