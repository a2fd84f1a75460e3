"""Kopf handlers. Thin by design: parse, render, apply, report; the logic lives elsewhere.

All handlers are sync (kopf runs them in threads) because the Kubernetes client blocks.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final, TypeGuard

import kopf
import kubernetes

from . import engines, status
from .apply import ApplyError, Cluster
from .model import GROUP, KIND, PLURAL, VERSION, SchedulerProfile, SpecError, parse
from .render import MANAGED_BY, render

API_VERSION: Final = f"{GROUP}/{VERSION}"
DEFAULT_SCHEDULER: Final = "default-scheduler"
# The default scheduler's Lease; a scheduler's Lease is named after the scheduler.
DEFAULT_LEASE: Final = "kube-scheduler"
RETRY_DELAY: Final = 15
STATUS_ATTEMPTS: Final = 5
CHILDREN: Final = (
    ("", "v1", "serviceaccounts"),
    ("", "v1", "configmaps"),
    ("apps", "v1", "deployments"),
    ("rbac.authorization.k8s.io", "v1", "roles"),
    ("rbac.authorization.k8s.io", "v1", "rolebindings"),
    ("rbac.authorization.k8s.io", "v1", "clusterrolebindings"),
    ("networking.k8s.io", "v1", "networkpolicies"),
)
Claim = tuple[str, str]  # (creationTimestamp, SchedulerProfile name): the earliest claim wins.


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


@kopf.on.login()
def login(**kwargs: Any) -> kopf.ConnectionInfo | None:
    """The pod's ServiceAccount, else $KUBECONFIG as it is when the operator starts."""
    info: kopf.ConnectionInfo | None = kopf.login_with_service_account(**kwargs)
    if info is not None:
        return dataclasses.replace(info, server=in_cluster_server(info.server))
    from_kubeconfig: kopf.ConnectionInfo | None = kopf.login_with_kubeconfig(**kwargs)
    return from_kubeconfig


def in_cluster_server(default: str) -> str:
    """The API server as the pod's environment names it, as client libraries dial it: a
    cluster need not run DNS for `kubernetes.default.svc` to resolve."""
    host = os.environ.get("KUBERNETES_SERVICE_HOST")
    port = os.environ.get("KUBERNETES_SERVICE_PORT", "443")
    if not host:
        return default
    return f"https://[{host}]:{port}" if ":" in host else f"https://{host}:{port}"


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, memo: kopf.Memo, **_: Any) -> None:
    # The status is fully declared in the CRD, so kopf keeps its bookkeeping in annotations.
    settings.persistence.progress_storage = kopf.AnnotationsProgressStorage(prefix=GROUP)
    settings.persistence.diffbase_storage = kopf.AnnotationsDiffBaseStorage(
        prefix=GROUP, key="last-handled-configuration"
    )
    settings.posting.level = logging.WARNING
    memo.cluster = Cluster(api_client())


@kopf.index(GROUP, VERSION, PLURAL)
def claims(body: kopf.Body, meta: kopf.Meta, name: str, **_: Any) -> dict[str, Claim]:
    """Which SchedulerProfiles claim which scheduler names (and the Lease named after them)."""
    try:
        profile = parse(body)
    except SpecError:
        return {}
    created = str(meta.get("creationTimestamp", ""))
    return dict.fromkeys(profile.scheduler_names(), (created, name))


@kopf.on.resume(GROUP, VERSION, PLURAL)
@kopf.on.create(GROUP, VERSION, PLURAL)
@kopf.on.update(GROUP, VERSION, PLURAL)
def reconcile(body: kopf.Body, patch: kopf.Patch, memo: kopf.Memo, **kwargs: Any) -> None:
    reported = reconciled_status(body, memo.cluster, claims_of(kwargs))
    patch.status.update(reported)
    ready = status.find(reported["conditions"], status.READY)
    if ready is not None and ready["reason"] == "ApplyFailed":
        raise kopf.TemporaryError(ready["message"], delay=RETRY_DELAY)


@kopf.on.event(GROUP, VERSION, PLURAL)
def hand_over_names(type: str, body: kopf.Body, memo: kopf.Memo, **kwargs: Any) -> None:
    """When a SchedulerProfile goes, the next claimant of each of its names takes over."""
    if type != "DELETED":
        return
    claims = claims_of(kwargs)
    try:
        released = parse(body).scheduler_names()
    except SpecError:
        return
    for successor in {owner for name in released if (owner := first_claim(claims, name))}:
        update_status(
            memo.cluster,
            successor,
            lambda current: reconciled_status(current, memo.cluster, claims),
        )


def update_status(
    cluster: Cluster, name: str, compute: Callable[[Mapping[str, Any]], dict[str, Any] | None]
) -> None:
    """Reads a SchedulerProfile, computes its status and writes it unless the object changed
    in between; conditions are written whole, so a stale read must never win."""
    for _ in range(STATUS_ATTEMPTS):
        current = cluster.get(API_VERSION, KIND, name)
        reported = compute(current) if current is not None else None
        if current is None or reported is None:
            return
        if cluster.patch_profile_status(name, reported, current["metadata"]["resourceVersion"]):
            return


def reconciled_status(
    body: Mapping[str, Any], cluster: Cluster, claims: kopf.Index[str, Claim]
) -> dict[str, Any]:
    """Validates, applies when valid and unclaimed, and returns the status to write."""
    generation = body["metadata"].get("generation")
    previous = body.get("status") or {}
    try:
        profile = parse(body)
        engines.validate(profile)
        rendered = render(profile)
    except SpecError as error:
        # The last good Deployment keeps running untouched; only the verdict changes.
        return refused(previous, generation, "InvalidSpec", str(error))
    conflict = claim_conflict(profile, claims)
    if conflict:
        return refused(previous, generation, "SchedulerNameConflict", conflict) | {
            "schedulerNames": ",".join(profile.scheduler_names())
        }
    message = f"the configuration is valid for engine {profile.spec.engine.value}"
    valid = status.condition(status.CONFIG_VALID, True, "ConfigAccepted", message, generation)
    try:
        for desired in rendered.objects:
            cluster.apply(desired)
    except ApplyError as error:
        failed = status.condition(status.READY, False, "ApplyFailed", str(error), generation)
        return {"observedGeneration": generation, "conditions": merged(previous, [valid, failed])}
    deployment = cluster.get("apps/v1", "Deployment", profile.name, profile.spec.namespace)
    return {
        "observedGeneration": generation,
        "schedulerNames": ",".join(profile.scheduler_names()),
        "configHash": rendered.config_hash,
        **availability(previous, valid, deployment, generation),
    }


def refused(
    previous: Mapping[str, Any], generation: int | None, reason: str, message: str
) -> dict[str, Any]:
    """ConfigValid=False and a Ready that says why; Available keeps describing what runs."""
    verdict = status.condition(status.CONFIG_VALID, False, reason, message, generation)
    summary = status.ready(verdict, verdict, None, generation)
    updates = [verdict, summary]
    if status.find(previous.get("conditions") or [], status.AVAILABLE) is None:
        updates.append(status.available(None, generation))  # every condition from the start
    return {"observedGeneration": generation, "conditions": merged(previous, updates)}


def claims_of(kwargs: Mapping[str, Any]) -> kopf.Index[str, Claim]:
    """The `claims` index, which kopf passes to every handler by the index's name."""
    index: kopf.Index[str, Claim] = kwargs["claims"]
    return index


def availability(
    previous: Mapping[str, Any],
    config_valid: Mapping[str, Any],
    deployment: Mapping[str, Any] | None,
    generation: int | None,
) -> dict[str, Any]:
    now_available = status.available(deployment, generation)
    summary = status.ready(config_valid, now_available, deployment, generation)
    return {
        **status.deployment_summary(deployment),
        "conditions": merged(previous, [config_valid, now_available, summary]),
    }


def merged(
    previous: Mapping[str, Any], updates: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    return status.merge_conditions(previous.get("conditions") or [], updates, status.now())


def first_claim(claims: kopf.Index[str, Claim], scheduler_name: str) -> str | None:
    claimants: Iterable[Claim] = claims.get(scheduler_name, [])
    earliest = min(claimants, default=None)
    return earliest[1] if earliest else None


def claim_conflict(profile: SchedulerProfile, claims: kopf.Index[str, Claim]) -> str | None:
    """Why this SchedulerProfile may not serve its names, or None when it may."""
    if profile.scheduler_name == DEFAULT_LEASE:
        return f"schedulerName {DEFAULT_LEASE!r} names the default scheduler's Lease"
    for name in profile.scheduler_names():
        if name == DEFAULT_SCHEDULER:
            return f"schedulerName {name!r} belongs to the cluster's default scheduler"
        owner = first_claim(claims, name)
        if owner is not None and owner != profile.name:
            return f"schedulerName {name!r} is already served by SchedulerProfile {owner!r}"
    return None


def child_handler(group: str, version: str, plural: str) -> None:
    """Repairs drift of one kind of child within seconds of the edit or deletion."""

    @kopf.on.event(group, version, plural, labels=MANAGED_BY, id=f"repair-{plural}")
    def repair(type: str, body: kopf.Body, memo: kopf.Memo, **kwargs: Any) -> None:
        owner = controller_of(body)
        if owner is None:
            return
        cluster: Cluster = memo.cluster
        profile_body = cluster.get(API_VERSION, KIND, owner["name"])
        if not is_live_owner(profile_body, owner["uid"]):
            return
        desired = desired_twin(profile_body, body, claims_of(kwargs))
        if desired is not None and (type == "DELETED" or not contains(body, desired)):
            cluster.apply(desired)
        if plural == "deployments":
            refresh_availability(cluster, owner["name"], None if type == "DELETED" else body)


for child in CHILDREN:
    child_handler(*child)


def is_scheduler_lease(name: str, **kwargs: Any) -> bool:
    """Only the Leases named after a served scheduler; nodes renew theirs every few seconds."""
    return first_claim(claims_of(kwargs), name) is not None


@kopf.on.event("coordination.k8s.io", "v1", "leases", when=is_scheduler_lease)
def leader_changed(
    body: kopf.Body,
    name: str,
    namespace: str | None,
    memo: kopf.Memo,
    **kwargs: Any,
) -> None:
    """Reports the holder of a scheduler's Lease (named after its scheduler name)."""
    owner = first_claim(claims_of(kwargs), name)
    if owner is None:
        return
    cluster: Cluster = memo.cluster
    profile_body = cluster.get(API_VERSION, KIND, owner)
    if profile_body is None or profile_body.get("spec", {}).get("namespace") != namespace:
        return
    holder = body.get("spec", {}).get("holderIdentity") or ""
    if (profile_body.get("status") or {}).get("leader") != holder:
        cluster.patch_profile_status(owner, {"leader": holder})


def controller_of(body: Mapping[str, Any]) -> Mapping[str, Any] | None:
    references = body.get("metadata", {}).get("ownerReferences") or []
    return next(
        (r for r in references if r.get("kind") == KIND and r.get("apiVersion") == API_VERSION),
        None,
    )


def is_live_owner(profile_body: Mapping[str, Any] | None, uid: str) -> TypeGuard[Mapping[str, Any]]:
    """The owner still exists, is the same object, and is not being deleted."""
    if profile_body is None:
        return False
    metadata = profile_body["metadata"]
    return bool(metadata.get("uid") == uid and not metadata.get("deletionTimestamp"))


def desired_twin(
    profile_body: Mapping[str, Any], actual: Mapping[str, Any], claims: kopf.Index[str, Claim]
) -> dict[str, Any] | None:
    """The rendered object matching an actual child; None when the profile may not apply."""
    try:
        profile = parse(profile_body)
        engines.validate(profile)
    except SpecError:
        return None
    if claim_conflict(profile, claims):
        return None
    key = identity(actual)
    return next((o for o in render(profile).objects if identity(o) == key), None)


def identity(obj: Mapping[str, Any]) -> tuple[str, str, str | None]:
    metadata = obj["metadata"]
    return obj["kind"], metadata["name"], metadata.get("namespace")


def contains(actual: Any, desired: Any) -> bool:
    """Whether every field the operator renders is present, unchanged, in the live object."""
    if isinstance(desired, Mapping):
        return isinstance(actual, Mapping) and all(
            key in actual and contains(actual[key], value) for key, value in desired.items()
        )
    if isinstance(desired, list):
        return (
            isinstance(actual, list)
            and len(actual) == len(desired)
            and all(contains(a, d) for a, d in zip(actual, desired, strict=True))
        )
    return bool(actual == desired)


def refresh_availability(cluster: Cluster, name: str, deployment: Mapping[str, Any] | None) -> None:
    """Status follows the Deployment; the configuration verdict stays as reconcile left it
    (a refused change leaves the last good Deployment running, and that is still reported)."""

    def followed(profile_body: Mapping[str, Any]) -> dict[str, Any] | None:
        previous = profile_body.get("status") or {}
        config_valid = status.find(previous.get("conditions") or [], status.CONFIG_VALID)
        if config_valid is None:
            return None
        generation = profile_body["metadata"].get("generation")
        return availability(previous, config_valid, deployment, generation)

    update_status(cluster, name, followed)
