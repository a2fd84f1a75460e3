"""Server-side apply of rendered objects, as the operator's own field manager."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import kubernetes
from kubernetes.dynamic import DynamicClient
from kubernetes.dynamic.exceptions import DynamicApiError, NotFoundError

from .model import GROUP, PLURAL, VERSION
from .render import MANAGER


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
        """Applies with force: the operator owns every field it renders."""
        try:
            self.resource(desired["apiVersion"], desired["kind"]).server_side_apply(
                body=dict(desired), field_manager=MANAGER, force_conflicts=True
            )
        except DynamicApiError as error:
            metadata = desired["metadata"]
            where = "/".join(filter(None, (metadata.get("namespace"), metadata["name"])))
            summary = error.summary()  # type: ignore[no-untyped-call]
            raise ApplyError(f"cannot apply {desired['kind']} {where}: {summary}") from None

    def get(
        self, api_version: str, kind: str, name: str, namespace: str | None = None
    ) -> dict[str, Any] | None:
        try:
            found = self.resource(api_version, kind).get(name=name, namespace=namespace)
        except NotFoundError:
            return None
        as_dict: dict[str, Any] = found.to_dict()
        return as_dict

    def patch_profile_status(self, name: str, status: Mapping[str, Any]) -> None:
        self.custom.patch_cluster_custom_object_status(
            GROUP, VERSION, PLURAL, name, {"status": dict(status)}
        )
