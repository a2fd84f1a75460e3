"""NodeVolumeLimits (upstream's CSILimits): the CSI volumes of the pods on a node, per driver,
may not exceed what the node's CSINode says the driver can attach. With VolumeLimitScaling
(beta, on from 1.37), a driver whose CSIDriver sets `preventPodSchedulingIfMissing` must also
be registered in the node's CSINode."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from scheduler_runtime.framework.events import (
    CSI_NODE,
    PERSISTENT_VOLUME_CLAIM,
    POD,
    ActionType,
    ClusterEventWithHint,
    on,
)
from scheduler_runtime.framework.interface import CycleState, PluginBase, PreFilterResult
from scheduler_runtime.framework.nodeinfo import NodeInfo
from scheduler_runtime.framework.podinfo import PodInfo
from scheduler_runtime.framework.snapshot import Snapshot
from scheduler_runtime.framework.status import SKIP, SUCCESS, Status
from scheduler_runtime.framework.volumes import Volumes, claim_class, claim_refs, not_found

REASON = "node(s) exceed max volume count"
CSI_LIMIT_PREFIX = "attachable-volumes-csi-"
RESOURCE_NAME_LIMIT = 63
STATE_KEY = "PreFilterNodeVolumeLimits"


def attach_limit_key(driver: str) -> str:
    """volumeutil.GetCSIAttachLimitKey: long driver names are shortened with a hash."""
    if len(CSI_LIMIT_PREFIX) + len(driver) < RESOURCE_NAME_LIMIT:
        return CSI_LIMIT_PREFIX + driver
    digest = hashlib.sha1(driver.encode(), usedforsecurity=False).hexdigest()
    return CSI_LIMIT_PREFIX + driver[:23] + digest[:16]


def volume_limits(csi_node: Mapping[str, Any] | None) -> dict[str, int]:
    """The attach limit of each driver the node's CSINode reports a count for."""
    limits: dict[str, int] = {}
    for driver in ((csi_node or {}).get("spec") or {}).get("drivers") or ():
        count = (driver.get("allocatable") or {}).get("count")
        if count is not None:
            limits[attach_limit_key(driver.get("name") or "")] = int(count)
    return limits


class MissingClaimError(LookupError):
    """A pod being scheduled names a claim that does not exist."""


class NodeVolumeLimits(PluginBase[None]):
    name: ClassVar[str] = "NodeVolumeLimits"
    cluster_events: ClassVar[Sequence[ClusterEventWithHint]] = (
        on(CSI_NODE, ActionType.ADD | ActionType.UPDATE),
        on(POD, ActionType.DELETE),
        on(PERSISTENT_VOLUME_CLAIM, ActionType.ADD),
    )

    def pre_filter(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot
    ) -> tuple[PreFilterResult | None, Status]:
        if not claim_refs(pod):
            return None, SKIP
        try:
            state.write(STATE_KEY, self.attachable(pod, new=True))
        except MissingClaimError as error:
            state.write(STATE_KEY, error)  # each node reports it, as upstream's filter does
        return None, SUCCESS

    def attachable(self, pod: PodInfo, *, new: bool) -> dict[str, str]:
        """filterAttachableVolumes: unique volume name -> driver name, for the pod's CSI
        volumes (bound: the PV's driver and handle; unbound: the class's provisioner)."""
        volumes = Volumes(self.handle.snapshot, pod.namespace)
        found: dict[str, str] = {}
        for ref in claim_refs(pod):
            claim = volumes.claim(ref.claim)
            if claim is None:
                if new:
                    raise MissingClaimError(
                        f"looking up PVC {pod.namespace}/{ref.claim}: "
                        + not_found("PersistentVolumeClaim", ref.claim)
                    )
                continue
            driver, handle = self._driver_and_handle(volumes, claim, pod.namespace, ref.claim)
            if driver and handle:
                found[f"{driver}/{handle}"] = driver
        return found

    @staticmethod
    def _driver_and_handle(
        volumes: Volumes, claim: Mapping[str, Any], namespace: str, name: str
    ) -> tuple[str, str]:
        bound_to = (claim.get("spec") or {}).get("volumeName")
        if not bound_to:
            storage_class = volumes.storage_class(claim_class(claim))
            provisioner = (storage_class or {}).get("provisioner") or ""
            return provisioner, f"unbound-{namespace}/{name}"
        csi = ((volumes.volume(bound_to) or {}).get("spec") or {}).get("csi") or {}
        return csi.get("driver") or "", csi.get("volumeHandle") or ""

    def _computed(self, state: CycleState, pod: PodInfo) -> dict[str, str] | MissingClaimError:
        """PreFilter's answer, or (preFilter disabled) the same worked out here, as
        upstream's filter does without a state."""
        computed: dict[str, str] | MissingClaimError | None = state.get(STATE_KEY)
        if computed is not None:
            return computed
        if not claim_refs(pod):
            return {}
        try:
            return self.attachable(pod, new=True)
        except MissingClaimError as error:
            return error

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        computed = self._computed(state, pod)
        if isinstance(computed, MissingClaimError):
            return Status.unresolvable(str(computed))
        wanted = dict(computed)
        if not wanted:
            return SUCCESS
        csi_node = self.handle.snapshot.objects.get("CSINode", node.name)
        if self.handle.features.volume_limit_scaling:
            for driver in wanted.values():
                if not self._driver_on_node(driver, csi_node):
                    return Status.unschedulable(f"{driver} CSI driver is not installed on the node")
        limits = volume_limits(csi_node)
        if not limits:
            return SUCCESS
        attached: dict[str, str] = {}
        for existing in node.pods.values():
            attached.update(self.attachable(existing, new=False))
        attached_count: dict[str, int] = {}
        for unique, driver in attached.items():
            wanted.pop(unique, None)  # a volume several pods share counts once
            key = attach_limit_key(driver)
            attached_count[key] = attached_count.get(key, 0) + 1
        new_count: dict[str, int] = {}
        for driver in wanted.values():
            key = attach_limit_key(driver)
            new_count[key] = new_count.get(key, 0) + 1
        for key, count in new_count.items():
            if key in limits and attached_count.get(key, 0) + count > limits[key]:
                return Status.unschedulable(REASON)
        return SUCCESS

    def _driver_on_node(self, driver: str, csi_node: Mapping[str, Any] | None) -> bool:
        """checkCSIDriverOnNode: a driver without a CSIDriver, or whose CSIDriver does not opt
        in with preventPodSchedulingIfMissing, counts as installed."""
        csi_driver = self.handle.snapshot.objects.get("CSIDriver", driver)
        if ((csi_driver or {}).get("spec") or {}).get("preventPodSchedulingIfMissing") is not True:
            return True
        drivers = ((csi_node or {}).get("spec") or {}).get("drivers") or ()
        return any(entry.get("name") == driver for entry in drivers)


__all__ = ["NodeVolumeLimits"]
