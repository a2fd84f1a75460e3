"""Server-side apply of rendered objects, as the operator's own field manager."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import kubernetes
from kubernetes.dynamic import DynamicClient
from kubernetes.dynamic.exceptions import DynamicApiError, NotFoundError

from .model import GROUP, PLURAL, VERSION
from .render import MANAGER

CONFLICT = 409


def api_client() -> kubernetes.client.ApiClient:
    """In a pod: the ServiceAccount; elsewhere: $KUBECONFIG or ~/.kube/config."""
    if os.environ.get("KUBERNETES_SERVICE_HOST"):
        configuration = kubernetes.client.Configuration()
        kubernetes.config.load_incluster_config(client_configuration=configuration)  # type: ignore[no-untyped-call]
        return kubernetes.client.ApiClient(configuration)
    # The client library reads $KUBECONFIG once, at import; read it now.
    config_file = os.environ.get("KUBECONFIG")
    client: kubernetes.client.ApiClient = kubernetes.config.new_client_from_config(config_file)  # type: ignore[no-untyped-call]
    return client


def in_cluster_server(default: str) -> str:
    """The API server as the pod's environment names it, as client libraries dial it: a
    cluster need not run DNS for `kubernetes.default.svc` to resolve."""
    host = os.environ.get("KUBERNETES_SERVICE_HOST")
    port = os.environ.get("KUBERNETES_SERVICE_PORT", "443")
    if not host:
        return default
    return f"https://[{host}]:{port}" if ":" in host else f"https://{host}:{port}"


class ApplyError(RuntimeError):
    """The API server refused a child; the message says which and why."""


class Cluster:
    """The few API calls the handlers make; blocking, so call it from sync handlers only."""

    def __init__(self, api: kubernetes.client.ApiClient) -> None:
        self.dynamic = DynamicClient(api)  # type: ignore[no-untyped-call]
        self.custom = kubernetes.client.CustomObjectsApi(api)

    def resource(self, api_version: str, kind: str) -> Any:
        return self.dynamic.resources.get(api_version=api_version, kind=kind)

    def apply(self, desired: Mapping[str, Any]) -> None:
        """Applies with force: the operator owns every field it renders. An object of the same
        name that some other owner (or nobody) made is left alone: adopting it would let garbage
        collection delete it with the SchedulerProfile."""
        metadata = desired["metadata"]
        path = "/".join(filter(None, (metadata.get("namespace"), metadata["name"])))
        where = f"{desired['kind']} {path}"
        existing = self.get(
            desired["apiVersion"], desired["kind"], metadata["name"], metadata.get("namespace")
        )
        if existing is not None and not owned_alike(existing, desired):
            raise ApplyError(f"{where} already exists and does not belong to this SchedulerProfile")
        resource = self.resource(desired["apiVersion"], desired["kind"])
        try:
            if existing is not None and (clearing := stale_rolling_update(existing, desired)):
                resource.patch(
                    body=clearing,
                    name=metadata["name"],
                    namespace=metadata.get("namespace"),
                    content_type="application/merge-patch+json",
                    field_manager=MANAGER,
                )
            resource.server_side_apply(
                body=dict(desired), field_manager=MANAGER, force_conflicts=True
            )
        except DynamicApiError as error:
            summary = error.summary()  # type: ignore[no-untyped-call]
            raise ApplyError(f"cannot apply {where}: {summary}") from None

    def get(
        self, api_version: str, kind: str, name: str, namespace: str | None = None
    ) -> dict[str, Any] | None:
        try:
            found = self.resource(api_version, kind).get(name=name, namespace=namespace)
        except NotFoundError:
            return None
        as_dict: dict[str, Any] = found.to_dict()
        return as_dict

    def patch_profile_status(
        self, name: str, status: Mapping[str, Any], resource_version: str | None = None
    ) -> bool:
        """Merges into a SchedulerProfile's status; with resource_version, only if the object
        is unchanged since (False when it changed: read it again and recompute)."""
        body: dict[str, Any] = {"status": dict(status)}
        if resource_version is not None:
            body["metadata"] = {"resourceVersion": resource_version}
        try:
            self.custom.patch_cluster_custom_object_status(GROUP, VERSION, PLURAL, name, body)
        except kubernetes.client.ApiException as error:
            if error.status == CONFLICT:
                return False
            raise
        return True


def owned_alike(existing: Mapping[str, Any], desired: Mapping[str, Any]) -> bool:
    """Whether an existing object's controller is the one the desired object names."""
    wanted = {ref["uid"] for ref in desired["metadata"].get("ownerReferences", [])}
    return any(
        ref.get("uid") in wanted and ref.get("controller")
        for ref in existing["metadata"].get("ownerReferences") or []
    )


def stale_rolling_update(
    existing: Mapping[str, Any], desired: Mapping[str, Any]
) -> dict[str, Any] | None:
    """The merge patch that turns a Deployment to Recreate when the API server's defaults
    left `rollingUpdate` behind: applying cannot remove a field no manager owns, and the
    server refuses the two together."""
    if desired["kind"] != "Deployment":
        return None
    wanted = desired["spec"].get("strategy", {})
    live = existing.get("spec", {}).get("strategy", {})
    if wanted.get("type") != "Recreate" or "rollingUpdate" not in live:
        return None
    return {"spec": {"strategy": {"type": "Recreate", "rollingUpdate": None}}}
