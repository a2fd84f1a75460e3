"""Server-side apply of rendered objects, as the operator's own field manager."""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, cast

import kubernetes
from kubernetes.dynamic import DynamicClient
from kubernetes.dynamic.exceptions import DynamicApiError, NotFoundError

from .api import API_VERSION, GROUP, KIND, PLURAL, VERSION
from .render import MANAGER
from .status import Event

CONFLICT = 409
log = logging.getLogger(__name__)


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


class ClusterUnreachableError(RuntimeError):
    """The operator cannot talk to the cluster; the message is one line saying why."""


def connect(timeout: float = 10.0) -> kubernetes.client.ApiClient:
    """A client that has been answered once (GET /version), or ClusterUnreachableError."""
    try:
        client = api_client()
    except (kubernetes.config.ConfigException, OSError, ValueError) as error:
        where = (
            "the pod's service account"
            if os.environ.get("KUBERNETES_SERVICE_HOST")
            else f"kubeconfig {os.environ.get('KUBECONFIG') or '~/.kube/config'}"
        )
        raise ClusterUnreachableError(f"no cluster configuration in {where}: {error}") from None
    server = client.configuration.host
    try:
        kubernetes.client.VersionApi(client).get_code(_request_timeout=timeout)
    except kubernetes.client.ApiException as error:
        answer = f"{error.status} {error.reason}".strip()
        raise ClusterUnreachableError(f"the API server at {server} answered {answer}") from None
    except Exception as error:  # urllib3's connection errors, TLS, DNS: all one line
        cause: object = getattr(error, "reason", None) or error
        raise ClusterUnreachableError(
            f"cannot reach the API server at {server}: {_last_cause(cause)}"
        ) from None
    return client


def _last_cause(error: object) -> str:
    """The innermost reason of a urllib3 error chain, without its object addresses."""
    text = str(error)
    for marker in ("Failed to establish a new connection: ", "] "):
        if marker in text:
            text = text.rsplit(marker, 1)[-1]
    return text.rstrip("')\"") or type(error).__name__


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
        self.core = kubernetes.client.CoreV1Api(api)
        self.version = kubernetes.client.VersionApi(api)

    def apiserver_version(self) -> str:
        """The API server's gitVersion (GET /version: v1.36.3, v1.36.3+k3s1)."""
        return str(self.version.get_code().git_version)

    def resource(self, api_version: str, kind: str) -> Any:
        return self.dynamic.resources.get(api_version=api_version, kind=kind)

    def apply_all(self, children: Sequence[Mapping[str, Any]]) -> None:
        """All of a SchedulerProfile's children or none: every name is checked, and the
        Deployment, which carries what the spec says of the pods, is validated by the API server
        (a dry run), before anything is written."""
        found = [self.get_like(child) for child in children]
        for child, existing in zip(children, found, strict=True):
            if existing is not None and not owned_alike(existing, child):
                raise ApplyError(
                    f"{where(child)} already exists and does not belong to this SchedulerProfile"
                )
        # Only the Deployment: a dry run persists nothing, so a RoleBinding's dry run could not
        # find the Role created just before it.
        for child, existing in zip(children, found, strict=True):
            if child["kind"] == "Deployment":
                self.write(dry_run_form(child, existing), existing, dry_run=True)
        for child, existing in zip(children, found, strict=True):
            self.write(child, existing)

    def apply(self, desired: Mapping[str, Any]) -> None:
        """One child again (drift repair): applied as rendered, unless something else owns
        the name."""
        existing = self.get_like(desired)
        if existing is not None and not owned_alike(existing, desired):
            raise ApplyError(
                f"{where(desired)} already exists and does not belong to this SchedulerProfile"
            )
        self.write(desired, existing)

    def write(
        self, desired: Mapping[str, Any], existing: Mapping[str, Any] | None, dry_run: bool = False
    ) -> None:
        """Creates a child that does not exist (never adopting one made meanwhile: the create
        fails), or applies it with force: the operator owns every field it renders."""
        metadata = desired["metadata"]
        resource = self.resource(desired["apiVersion"], desired["kind"])
        dry = {"dry_run": "All"} if dry_run else {}
        try:
            if existing is None:
                resource.create(
                    body=dict(desired),
                    namespace=metadata.get("namespace"),
                    field_manager=MANAGER,
                    **dry,
                )
                return
            if not dry_run and (clearing := stale_rolling_update(existing, desired)):
                resource.patch(
                    body=clearing,
                    name=metadata["name"],
                    namespace=metadata.get("namespace"),
                    content_type="application/merge-patch+json",
                    field_manager=MANAGER,
                    **dry,
                )
            resource.server_side_apply(
                body=dict(desired), field_manager=MANAGER, force_conflicts=True, **dry
            )
        except DynamicApiError as error:
            summary = error.summary()  # type: ignore[no-untyped-call]
            verb = "would refuse" if dry_run else "refused"
            raise ApplyError(f"the API server {verb} {where(desired)}: {summary}") from None

    def get_like(self, desired: Mapping[str, Any]) -> dict[str, Any] | None:
        """The live object of a rendered one's kind, name and namespace."""
        metadata = desired["metadata"]
        try:
            return self.get(
                desired["apiVersion"], desired["kind"], metadata["name"], metadata.get("namespace")
            )
        except DynamicApiError as error:
            summary = error.summary()  # type: ignore[no-untyped-call]
            raise ApplyError(f"cannot read {where(desired)}: {summary}") from None

    def get(
        self, api_version: str, kind: str, name: str, namespace: str | None = None
    ) -> dict[str, Any] | None:
        try:
            found = self.resource(api_version, kind).get(name=name, namespace=namespace)
        except NotFoundError:
            return None
        as_dict: dict[str, Any] = found.to_dict()
        return as_dict

    def post_event(self, profile: Mapping[str, Any], event: Event) -> None:
        """An Event about a SchedulerProfile, where `kubectl describe` looks for it: in
        `default`, naming the object without a namespace (it has none). Best effort: an Event
        that cannot be written is logged, never a failed reconcile."""
        metadata = profile["metadata"]
        now = datetime.now(UTC).isoformat()
        body = {
            "metadata": {"generateName": f"{metadata['name']}.", "namespace": "default"},
            "involvedObject": {
                "apiVersion": API_VERSION,
                "kind": KIND,
                "name": metadata["name"],
                "uid": metadata.get("uid"),
            },
            "type": event.type,
            "reason": event.reason,
            "message": event.message[:1024],
            "source": {"component": MANAGER},
            "reportingComponent": MANAGER,
            "reportingInstance": socket.gethostname(),
            "firstTimestamp": now,
            "lastTimestamp": now,
            "count": 1,
        }
        try:
            # The client takes the object as a dict too, which its annotations do not say.
            self.core.create_namespaced_event("default", cast(Any, body))
        except kubernetes.client.ApiException as error:
            log.warning("cannot post event %s on %s: %s", event.reason, metadata["name"], error)

    def list(
        self, api_version: str, kind: str, namespace: str, label_selector: str
    ) -> list[dict[str, Any]]:
        found = self.resource(api_version, kind).get(
            namespace=namespace, label_selector=label_selector
        )
        items: list[dict[str, Any]] = found.to_dict()["items"]
        return items

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


def where(obj: Mapping[str, Any]) -> str:
    metadata = obj["metadata"]
    path = "/".join(filter(None, (metadata.get("namespace"), metadata["name"])))
    return f"{obj['kind']} {path}"


def owned_alike(existing: Mapping[str, Any], desired: Mapping[str, Any]) -> bool:
    """Whether an existing object's controller is the one the desired object names."""
    wanted = {ref["uid"] for ref in desired["metadata"].get("ownerReferences", [])}
    return any(
        ref.get("uid") in wanted and ref.get("controller")
        for ref in existing["metadata"].get("ownerReferences") or []
    )


def dry_run_form(desired: Mapping[str, Any], existing: Mapping[str, Any] | None) -> dict[str, Any]:
    """What a dry run can check of a child: a Deployment turning to Recreate keeps its live
    strategy, since the merge patch that clears `rollingUpdate` first persists nothing in a dry
    run."""
    if existing is None or stale_rolling_update(existing, desired) is None:
        return dict(desired)
    return {**desired, "spec": {**desired["spec"], "strategy": existing["spec"]["strategy"]}}


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
