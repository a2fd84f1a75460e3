"""Status written outside a reconcile: after a fresh read, and only onto what was read.

Conditions are written whole, so a status computed from a stale read must never win; the
availability that follows the Deployment and the holder of the scheduler's Lease go through here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from . import status
from .api import API_VERSION, DEFAULT_NAMESPACE, KIND
from .apply import Cluster
from .desired import DesiredCache, Verdict
from .errors import SpecError
from .render import INSTANCE_LABEL

STATUS_ATTEMPTS: Final = 5


def update_status(
    cluster: Cluster, name: str, compute: Callable[[Mapping[str, Any]], dict[str, Any] | None]
) -> None:
    """Reads a SchedulerProfile, computes its status and writes it unless the object changed
    in between (then reads it again, a few times at most); None from `compute` writes nothing."""
    for _ in range(STATUS_ATTEMPTS):
        current = cluster.get(API_VERSION, KIND, name)
        reported = compute(current) if current is not None else None
        if current is None or reported is None or unchanged(current, reported):
            return
        if cluster.patch_profile_status(name, reported, current["metadata"]["resourceVersion"]):
            return


def unchanged(current: Mapping[str, Any], reported: Mapping[str, Any]) -> bool:
    """Whether writing the status would change nothing (pods and Leases change often)."""
    shown = current.get("status") or {}
    return all(shown.get(key) == value for key, value in reported.items())


def observe(cluster: Cluster, profile: str, namespace: str, lease: str | None) -> status.Running:
    """Reads what runs for a SchedulerProfile: its Deployment, the Deployment's pods and, when
    it elects a leader, its Lease."""
    return status.Running(
        deployment=cluster.get("apps/v1", "Deployment", profile, namespace),
        pods=cluster.list("v1", "Pod", namespace, f"{INSTANCE_LABEL}={profile}"),
        lease_name=lease,
        lease=cluster.get("coordination.k8s.io/v1", "Lease", lease, namespace) if lease else None,
    )


def running(cluster: Cluster, verdict: Verdict, body: Mapping[str, Any]) -> status.Running:
    """What runs for a SchedulerProfile. With a spec it refuses, the Deployment and pods of its
    last good generation still run (and are reported), but no Lease is looked for."""
    if isinstance(verdict, SpecError):
        namespace = (body.get("spec") or {}).get("namespace") or DEFAULT_NAMESPACE
        return observe(cluster, body["metadata"]["name"], str(namespace), None)
    profile = verdict.profile
    lease = profile.lease_name if profile.spec.leader_elect() else None
    return observe(cluster, profile.name, profile.spec.namespace, lease)


def refresh(cluster: Cluster, desired: DesiredCache, name: str) -> None:
    """Status follows what runs; the configuration verdict stays as reconcile left it (a refused
    change leaves the last good Deployment running, and that is still reported)."""

    def followed(profile_body: Mapping[str, Any]) -> dict[str, Any] | None:
        previous = profile_body.get("status") or {}
        config_valid = status.find(previous.get("conditions") or [], status.CONFIG_VALID)
        if config_valid is None:
            return None  # not reconciled yet: reconcile reports first
        now = running(cluster, desired.of(profile_body), profile_body)
        generation = profile_body["metadata"].get("generation")
        return status.availability(previous, config_valid, now, generation)

    update_status(cluster, name, followed)


def leader_changed(cluster: Cluster, desired: DesiredCache, owner: str, holder: str) -> None:
    """A Lease changed hands (or was renewed, which changes nothing to report)."""
    profile_body = cluster.get(API_VERSION, KIND, owner)
    if profile_body is not None and (profile_body.get("status") or {}).get("leader") != holder:
        refresh(cluster, desired, owner)
