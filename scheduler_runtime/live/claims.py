"""DynamicResources' API calls in the live scheduler (its `resource_claims` service):
ResourceClaims read, created, updated, patched and deleted through resource.k8s.io/v1, the
pod's status patched, an event recorded. Every write is fenced as the scheduler's other
writes are; a refusal, a failed connection or a lost lease is a ClaimAPIError, which the
plugin reports in upstream's words."""

from __future__ import annotations

import datetime
import time
from collections.abc import Callable, Mapping
from typing import Any

from scheduler_runtime.framework.dra import ClaimAPIError, Object
from scheduler_runtime.framework.podinfo import pod_info
from scheduler_runtime.live.kube import ApiError, Kube
from scheduler_runtime.live.outcomes import NotLeadingError, Outcomes

GROUP = "/apis/resource.k8s.io/v1"


def claims_path(namespace: str, name: str = "") -> str:
    base = f"{GROUP}/namespaces/{namespace}/resourceclaims"
    return f"{base}/{name}" if name else base


def _where(claim: Object) -> tuple[str, str]:
    metadata = claim.get("metadata") or {}
    return str(metadata.get("namespace") or ""), str(metadata.get("name") or "")


def _now(write: Callable[..., None], *args: Any) -> None:
    write(*args)


class LiveClaimAPI:
    """A ResourceClaimClient over the API server."""

    def __init__(
        self, kube: Kube, outcomes: Outcomes, record: Callable[..., None] | None = None
    ) -> None:
        self.kube = kube
        self.outcomes = outcomes
        # How an event is written: off the plugin's thread in the scheduler, so a failed
        # event never fails the binding it is about.
        self.record = record or _now

    def _call(self, call: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        try:
            return call()
        except ApiError as error:
            raise ClaimAPIError(error.code, error.message) from error
        except (OSError, NotLeadingError) as error:
            raise ClaimAPIError(0, str(error)) from error

    def _write(self, method: str, path: str, body: Any) -> dict[str, Any]:
        fence = self.outcomes.fence
        return self._call(lambda: self.kube.request(method, path, body=body, before_send=fence))

    def get_claim(self, namespace: str, name: str) -> dict[str, Any]:
        return self._call(lambda: self.kube.get(claims_path(namespace, name)))

    def create_claim(self, claim: Object) -> dict[str, Any]:
        namespace, _ = _where(claim)
        return self._write("POST", claims_path(namespace), dict(claim))

    def update_claim(self, claim: Object) -> dict[str, Any]:
        return self._write("PUT", claims_path(*_where(claim)), dict(claim))

    def update_claim_status(self, claim: Object) -> dict[str, Any]:
        return self._write("PUT", claims_path(*_where(claim)) + "/status", dict(claim))

    def patch_claim_status(self, namespace: str, name: str, patch: Object) -> dict[str, Any]:
        path = claims_path(namespace, name) + "/status"
        fence = self.outcomes.fence
        return self._call(lambda: self.kube.patch(path, patch, before_send=fence))

    def delete_claim(self, namespace: str, name: str) -> None:
        self._write("DELETE", claims_path(namespace, name), None)

    def patch_pod_status(self, namespace: str, name: str, patch: Object) -> None:
        path = f"/api/v1/namespaces/{namespace}/pods/{name}/status"
        fence = self.outcomes.fence
        self._call(lambda: self.kube.patch(path, patch, before_send=fence))

    def event(self, pod: Mapping[str, Any], kind: str, reason: str, action: str, note: str) -> None:
        self.record(self.outcomes.pod_event, pod_info(dict(pod)), kind, reason, action, note)

    def now(self) -> datetime.datetime:
        return datetime.datetime.now(datetime.UTC)

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


__all__ = ["LiveClaimAPI", "claims_path"]
