"""The status of scheduler-plugins' PodGroups (`scheduling.x-k8s.io/v1alpha1`), kept as its
controller keeps it (pkg/controllers/podgroup_controller.go), for the groups this scheduler
places: `phase` (Pending until minMember pods exist, Scheduling, Running once minMember run or
have succeeded, Finished or Failed for good), the `running`, `succeeded` and `failed` counts,
and `occupiedBy` (the first member's owners). Kubeflow's operators, KubeRay and `kubectl get
pg` read them; a cluster that also runs scheduler-plugins' controller gets the same values
from both.

Changes to a group's members or PodGroup mark it; a thread writes the marked groups' status
while this instance leads (each write fenced), a few at a time."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from scheduler_runtime.backend.podgroups import PodGroups
from scheduler_runtime.framework.podgroups import COSCHEDULING_API, GroupKey
from scheduler_runtime.live.kube import MERGE_PATCH, ApiError, Kube
from scheduler_runtime.live.outcomes import NotLeadingError

log = logging.getLogger(__name__)

PENDING, SCHEDULING, RUNNING = "Pending", "Scheduling", "Running"
FINISHED, FAILED = "Finished", "Failed"
COUNTS = ("running", "succeeded", "failed")
COALESCE_SECONDS = 0.2  # changes arriving together are written together
NOT_FOUND, CONFLICT = 404, 409


def occupied_by(pod: Mapping[str, Any] | None) -> str:
    """fillOccupiedObj: the first member's owners, as `namespace/name`, sorted, comma-joined."""
    metadata = (pod or {}).get("metadata") or {}
    namespace = metadata.get("namespace") or "default"
    owners = sorted(
        f"{namespace}/{owner.get('name')}" for owner in metadata.get("ownerReferences") or ()
    )
    return ",".join(owners)


def coscheduling_status(
    group: Mapping[str, Any], phases: list[str], first: Mapping[str, Any] | None
) -> dict[str, Any] | None:
    """The status scheduler-plugins' controller would write for `group` whose pods have
    `phases`; None when it would leave it as it is (a Finished or Failed group stays so)."""
    status = dict(group.get("status") or {})
    phase = status.get("phase") or ""
    if phase in (FINISHED, FAILED):
        return None
    minimum = int((group.get("spec") or {}).get("minMember") or 0)
    wanted = dict(status)
    if not phase:
        wanted["phase"] = PENDING
    elif phase == PENDING:
        if len(phases) >= minimum:
            wanted["phase"] = SCHEDULING
            owners = occupied_by(first) if phases else ""
            if owners:
                wanted["occupiedBy"] = owners
    else:
        counts = {"running": "Running", "succeeded": "Succeeded", "failed": "Failed"}
        for field, pod_phase in counts.items():
            count = phases.count(pod_phase)
            if count:
                wanted[field] = count
            else:
                wanted.pop(field, None)  # omitempty: a zero count is not written
        wanted["phase"] = _phase(phases, minimum, wanted)
    return wanted if wanted != status else None


def _phase(phases: list[str], minimum: int, counts: Mapping[str, Any]) -> str:
    running, succeeded, failed = (int(counts.get(field) or 0) for field in COUNTS)
    if len(phases) < minimum:
        return PENDING
    phase = RUNNING if succeeded + running >= minimum else SCHEDULING
    if failed and failed + running + succeeded >= minimum:
        phase = FAILED
    if succeeded >= minimum:
        phase = FINISHED
    return phase


def status_patch(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, Any]:
    """A merge patch from one status to the other (null removes a field)."""
    changed: dict[str, Any] = {k: v for k, v in after.items() if before.get(k) != v}
    changed |= {k: None for k in before if k not in after}
    return {"status": changed}


class CoschedulingStatus:
    """Writes the status of the v1alpha1 PodGroups whose members this scheduler places
    (`places(pod)` says whether it places a pod)."""

    def __init__(
        self,
        groups: PodGroups,
        kube: Kube,
        places: Callable[[Mapping[str, Any]], bool],
        *,
        leading: Callable[[], bool],
        fence: Callable[[], None],
    ) -> None:
        self.groups = groups
        self.kube = kube
        self.places = places
        self.leading = leading
        self.fence = fence
        self._lock = threading.Lock()
        self._marked: dict[GroupKey, None] = {}
        self._wake = threading.Event()

    def changed(self, keys: Iterable[GroupKey]) -> None:
        """PodGroups.on_change: groups whose members or PodGroup changed."""
        marked = [key for key in keys if key.api == COSCHEDULING_API]
        if marked:
            with self._lock:
                self._marked.update(dict.fromkeys(marked))
            self._wake.set()

    def run(self, done: threading.Event) -> None:
        """Writes marked groups until `done`; while not leading, groups stay marked."""
        self.changed(self.groups.known())  # groups changed before this instance led
        while not done.is_set():
            self._wake.wait(1.0)
            if done.wait(COALESCE_SECONDS) or not self.leading():
                continue
            self._wake.clear()
            with self._lock:
                marked, self._marked = list(self._marked), {}
            for key in marked:
                self._write(key)

    def _write(self, key: GroupKey) -> None:
        group = self.groups.object(key)
        members = self.groups.member_pods(key)
        if group is None or not any(self.places(pod) for pod in members):
            return
        wanted = coscheduling_status(
            group, self.groups.phases(key), members[0] if members else None
        )
        if wanted is None:
            return
        path = (
            f"/apis/scheduling.x-k8s.io/v1alpha1/namespaces/{key.namespace}/podgroups/"
            f"{key.name}/status"
        )
        patch = status_patch(group.get("status") or {}, wanted)
        try:
            self.kube.patch(path, patch, content_type=MERGE_PATCH, before_send=self.fence)
        except ApiError as error:
            if error.code not in (NOT_FOUND, CONFLICT):  # gone, or changed: marked again
                log.warning("Failed to update PodGroup status podGroup=%s: %s", key, error)
        except NotLeadingError:
            with self._lock:
                self._marked[key] = None  # the next leader's, or ours again when we lead
        except OSError as error:
            log.warning("Failed to update PodGroup status podGroup=%s: %s", key, error)
