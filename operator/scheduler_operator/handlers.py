"""Kopf handlers. Thin by design: each one takes what kopf gives and hands it to the module that
knows what to do (reconcile, drift, reporting, claims); none of them decides anything itself.

All handlers are sync (kopf runs them in threads) because the Kubernetes client blocks.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from typing import Any, Final

import kopf

from . import credentials, drift, metrics, reporting, status
from .api import DEFAULT_NAMESPACE, GROUP, PLURAL, VERSION, scheduler_of_lease
from .apply import Cluster, api_client
from .bookkeeping import DigestDiffBaseStorage
from .claims import Claim, Claims, claimed, first_claim
from .decoding import install_in_kopf
from .desired import DesiredCache
from .reconcile import hand_over, reconciled_status
from .render import INSTANCE_LABEL, MANAGED_BY

RETRY_DELAY: Final = 15
# How often children in namespaces the operator does not watch are compared (seconds).
UNWATCHED_REPAIR_INTERVAL: Final = 30
CHILDREN: Final = (
    ("", "v1", "serviceaccounts"),
    ("", "v1", "configmaps"),
    ("apps", "v1", "deployments"),
    ("rbac.authorization.k8s.io", "v1", "roles"),
    ("rbac.authorization.k8s.io", "v1", "rolebindings"),
    ("rbac.authorization.k8s.io", "v1", "clusterrolebindings"),
    ("networking.k8s.io", "v1", "networkpolicies"),
)


@kopf.on.login()
def login(**kwargs: Any) -> kopf.ConnectionInfo | None:
    """The pod's ServiceAccount, else the kubeconfig the operator started with."""
    return credentials.connection_info(**kwargs)


def memo(namespaces: Sequence[str]) -> kopf.Memo:
    """The operator's shared state, with the namespaces schedulers may run in (globs)."""
    return kopf.Memo(namespaces=list(namespaces))


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, memo: kopf.Memo, **_: Any) -> None:
    # The status is fully declared in the CRD, so kopf keeps its bookkeeping in annotations:
    # its progress, and a digest of the last handled spec (a whole spec may not fit).
    settings.persistence.progress_storage = kopf.AnnotationsProgressStorage(prefix=GROUP)
    settings.persistence.diffbase_storage = DigestDiffBaseStorage()
    install_in_kopf()  # no object the API server stores can stop the watch
    settings.posting.level = logging.WARNING
    memo.cluster = Cluster(api_client())
    # Read once: which kube-scheduler release each scheduler runs follows the API server's minor.
    apiserver = memo.cluster.apiserver_version()
    logging.getLogger(__name__).info("the API server is %s", apiserver)
    memo.desired = DesiredCache(apiserver)
    # `kopf run -m scheduler_operator.handlers` passes no memo: the environment stands in.
    if "namespaces" not in memo:
        given = os.environ.get("SCHEDULER_OPERATOR_NAMESPACES", DEFAULT_NAMESPACE)
        memo.namespaces = [n.strip() for n in given.split(",") if n.strip()]


@kopf.index(GROUP, VERSION, PLURAL)
def claims(body: kopf.Body, **_: Any) -> dict[str, Claim]:
    """Which SchedulerProfiles claim which scheduler names (and the Lease named after them)."""
    return claimed(body)


def claims_of(kwargs: Mapping[str, Any]) -> Claims:
    """The `claims` index, which kopf passes to every handler by the index's name."""
    index: Claims = kwargs["claims"]
    return index


@kopf.on.resume(GROUP, VERSION, PLURAL)
@kopf.on.create(GROUP, VERSION, PLURAL)
@kopf.on.update(GROUP, VERSION, PLURAL)
def reconcile(body: kopf.Body, patch: kopf.Patch, memo: kopf.Memo, **kwargs: Any) -> None:
    with metrics.reconciling() as measured:
        reported = reconciled_status(
            body, memo.cluster, claims_of(kwargs), memo.desired, memo.namespaces
        )
        measured.report(reported)
    patch.status.update(reported)
    for event in status.events(body.get("status") or {}, reported):
        memo.cluster.post_event(body, event)
    ready = status.find(reported["conditions"], status.READY)
    if ready is not None and ready["reason"] == "ApplyFailed":
        raise kopf.TemporaryError(ready["message"], delay=RETRY_DELAY)


@kopf.on.event(GROUP, VERSION, PLURAL)
def hand_over_names(type: str, body: kopf.Body, memo: kopf.Memo, **kwargs: Any) -> None:
    """When a SchedulerProfile goes, the next claimant of each of its names takes over."""
    if type == "DELETED":
        hand_over(body, memo.cluster, claims_of(kwargs), memo.desired, memo.namespaces)


def child_handler(group: str, version: str, plural: str) -> None:
    """Repairs drift of one kind of child within seconds of the edit or deletion."""

    @kopf.on.event(group, version, plural, labels=MANAGED_BY, id=f"repair-{plural}")
    def repair(type: str, body: kopf.Body, memo: kopf.Memo, **kwargs: Any) -> None:
        drift.repair(memo.cluster, memo.desired, claims_of(kwargs), body, type == "DELETED")


for child in CHILDREN:
    child_handler(*child)


@kopf.timer(GROUP, VERSION, PLURAL, interval=UNWATCHED_REPAIR_INTERVAL, idle=10)
def repair_unwatched(body: kopf.Body, memo: kopf.Memo, **kwargs: Any) -> None:
    drift.repair_unwatched(memo.cluster, memo.desired, claims_of(kwargs), body, memo.namespaces)


@kopf.on.event("", "v1", "pods", labels=MANAGED_BY)
def scheduler_pod_changed(body: kopf.Body, memo: kopf.Memo, **_: Any) -> None:
    """A scheduler pod started, got ready, failed to pull its image...: Ready says so."""
    owner = (body.get("metadata", {}).get("labels") or {}).get(INSTANCE_LABEL)
    if owner:
        reporting.refresh(memo.cluster, memo.desired, owner)


def lease_owner(name: str, kwargs: Mapping[str, Any]) -> str | None:
    scheduler = scheduler_of_lease(name)
    return first_claim(claims_of(kwargs), scheduler) if scheduler else None


def is_scheduler_lease(name: str, **kwargs: Any) -> bool:
    """Only the Leases of served schedulers; nodes renew theirs every few seconds."""
    return lease_owner(name, kwargs) is not None


@kopf.on.event("coordination.k8s.io", "v1", "leases", when=is_scheduler_lease)
def leader_changed(body: kopf.Body, name: str, memo: kopf.Memo, **kwargs: Any) -> None:
    """Reports a new holder of a scheduler's Lease, and whether Ready changes with it."""
    owner = lease_owner(name, kwargs)
    holder = str((body.get("spec") or {}).get("holderIdentity") or "")
    if owner is not None:
        reporting.leader_changed(memo.cluster, memo.desired, owner, holder)
