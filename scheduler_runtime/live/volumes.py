"""VolumeBinding's PreBind in the live scheduler (upstream's BindPodVolumes): write the chosen
PersistentVolume bindings and the claims' selected node, then wait until the PV controller
reports every claim of the pod bound."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from scheduler_runtime.framework.podinfo import PodInfo
from scheduler_runtime.framework.status import Status
from scheduler_runtime.framework.volumes import ChosenVolumes
from scheduler_runtime.live.kube import ApiError, Kube
from scheduler_runtime.live.outcomes import NotLeadingError

SELECTED_NODE = "volume.kubernetes.io/selected-node"
BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
POLL_SECONDS = 1.0


def _claim_path(claim: Mapping[str, Any]) -> str:
    metadata = claim.get("metadata") or {}
    return (
        f"/api/v1/namespaces/{metadata.get('namespace')}/persistentvolumeclaims/"
        f"{metadata.get('name')}"
    )


def claim_ref(claim: Mapping[str, Any]) -> dict[str, Any]:
    metadata = claim.get("metadata") or {}
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "namespace": metadata.get("namespace"),
        "name": metadata.get("name"),
        "uid": metadata.get("uid"),
        "resourceVersion": metadata.get("resourceVersion"),
    }


def is_bound(claim: Mapping[str, Any]) -> bool:
    """The PV controller has finished binding the claim."""
    annotations = (claim.get("metadata") or {}).get("annotations") or {}
    return (claim.get("status") or {}).get("phase") == "Bound" and BIND_COMPLETED in annotations


class VolumeBinder:
    """The `bind_pod_volumes` service the VolumeBinding plugin calls from PreBind."""

    def __init__(self, kube: Kube, before_send: Callable[[], None] | None = None) -> None:
        self.kube = kube
        self.before_send = before_send  # the scheduler's fence, asked before each write

    def __call__(
        self, pod: PodInfo, node_name: str, volumes: ChosenVolumes, timeout_seconds: float
    ) -> Status:
        try:
            claims = self._write(node_name, volumes)
            return self._wait(claims, timeout_seconds)
        except (ApiError, OSError, NotLeadingError) as error:
            return Status.as_error(RuntimeError(f"binding volumes: {error}"))

    def _write(self, node_name: str, volumes: ChosenVolumes) -> list[str]:
        claims = []
        for volume, claim in volumes.bindings:
            name = (volume.get("metadata") or {}).get("name")
            patch = {"spec": {"claimRef": claim_ref(claim)}}
            self.kube.patch(
                f"/api/v1/persistentvolumes/{name}", patch, before_send=self.before_send
            )
            claims.append(_claim_path(claim))
        for claim in volumes.provisions:
            patch = {"metadata": {"annotations": {SELECTED_NODE: node_name}}}
            self.kube.patch(_claim_path(claim), patch, before_send=self.before_send)
            claims.append(_claim_path(claim))
        return claims

    def _wait(self, claims: list[str], timeout_seconds: float) -> Status:
        deadline = time.monotonic() + timeout_seconds
        waiting = list(claims)
        while waiting:
            waiting = [path for path in waiting if not is_bound(self.kube.get(path))]
            if not waiting:
                break
            if time.monotonic() >= deadline:
                names = ", ".join(path.rsplit("/", 1)[1] for path in waiting)
                message = f"binding volumes: timed out waiting for claims {names} to be bound"
                return Status.as_error(TimeoutError(message))
            time.sleep(POLL_SECONDS)
        return Status()
