"""DynamicResources, as far as pods without resource claims go (the only pods this scheduler
places): upstream enables it by default since DRA went GA (1.34), between InterPodAffinity
and DefaultPreemption, and its PostFilter adds "no new claims to deallocate" to every
FailedScheduling message. Pods that do reference resource claims are refused with a clear
reason, because allocating devices is not supported."""

from __future__ import annotations

from typing import ClassVar

from scheduler_runtime.framework.interface import (
    CycleState,
    PluginBase,
    PostFilterResult,
    PreFilterResult,
)
from scheduler_runtime.framework.podinfo import PodInfo
from scheduler_runtime.framework.snapshot import Snapshot
from scheduler_runtime.framework.status import SKIP, Status
from scheduler_runtime.framework.types import Diagnosis

NO_CLAIMS_TO_DEALLOCATE = "no new claims to deallocate"
CLAIMS_NOT_SUPPORTED = "pod has resource claims, which this scheduler does not allocate"
STATE_KEY = "PreFilterDynamicResources"


class DynamicResources(PluginBase[None]):
    name: ClassVar[str] = "DynamicResources"

    def pre_filter(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot
    ) -> tuple[PreFilterResult | None, Status]:
        state.write(STATE_KEY, True)
        if pod.spec.get("resourceClaims"):
            return None, Status.unresolvable(CLAIMS_NOT_SUPPORTED)
        return None, SKIP

    def post_filter(
        self, state: CycleState, pod: PodInfo, diagnosis: Diagnosis
    ) -> tuple[PostFilterResult | None, Status]:
        if state.get(STATE_KEY) is None:
            # An earlier PreFilter rejected the pod before this one ran: upstream's PostFilter
            # then fails reading its state, and its error ends the message ("... not found").
            return None, Status.as_error(LookupError("not found"))
        return None, Status.unschedulable(NO_CLAIMS_TO_DEALLOCATE)


__all__ = ["DynamicResources"]
