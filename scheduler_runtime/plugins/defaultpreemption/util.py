"""What per-pod and pod group preemption both read of a pod (upstream's preemption/util.go)."""

from __future__ import annotations

from scheduler_runtime.framework.podinfo import PodInfo

# A pod that has not started sorts as starting now, after every real start time.
NOT_STARTED = "9999-12-31T23:59:59Z"


def start_time(pod: PodInfo) -> str:
    """GetPodStartTime as a sortable RFC 3339 string."""
    return str((pod.pod.get("status") or {}).get("startTime") or NOT_STARTED)


def terminating_by_preemption(pod: PodInfo) -> bool:
    """PodTerminatingByPreemption: being deleted, the first DisruptionTarget condition
    saying the scheduler preempted it."""
    if not (pod.pod.get("metadata") or {}).get("deletionTimestamp"):
        return False
    for condition in (pod.pod.get("status") or {}).get("conditions") or ():
        if condition.get("type") == "DisruptionTarget":
            return bool(
                condition.get("status") == "True"
                and condition.get("reason") == "PreemptionByScheduler"
            )
    return False
