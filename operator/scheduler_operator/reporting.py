"""Status written outside a reconcile: after a fresh read, and only onto what was read.

Conditions are written whole, so a status computed from a stale read must never win; the
availability that follows the Deployment and the holder of the scheduler's Lease go through here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from . import status
from .apply import Cluster
from .model import API_VERSION, KIND

STATUS_ATTEMPTS: Final = 5


def update_status(
    cluster: Cluster, name: str, compute: Callable[[Mapping[str, Any]], dict[str, Any] | None]
) -> None:
    """Reads a SchedulerProfile, computes its status and writes it unless the object changed
    in between (then reads it again, a few times at most); None from `compute` writes nothing."""
    for _ in range(STATUS_ATTEMPTS):
        current = cluster.get(API_VERSION, KIND, name)
        reported = compute(current) if current is not None else None
        if current is None or reported is None:
            return
        if cluster.patch_profile_status(name, reported, current["metadata"]["resourceVersion"]):
            return


def refresh_availability(cluster: Cluster, name: str, deployment: Mapping[str, Any] | None) -> None:
    """Status follows the Deployment; the configuration verdict stays as reconcile left it
    (a refused change leaves the last good Deployment running, and that is still reported)."""

    def followed(profile_body: Mapping[str, Any]) -> dict[str, Any] | None:
        previous = profile_body.get("status") or {}
        config_valid = status.find(previous.get("conditions") or [], status.CONFIG_VALID)
        if config_valid is None:
            return None
        generation = profile_body["metadata"].get("generation")
        return status.availability(previous, config_valid, deployment, generation)

    update_status(cluster, name, followed)


def report_leader(
    cluster: Cluster, owner: str, namespace: str | None, lease: Mapping[str, Any]
) -> None:
    """Reports the holder of a scheduler's Lease on the SchedulerProfile that serves it, when
    the Lease is in that SchedulerProfile's namespace and the holder changed."""
    profile_body = cluster.get(API_VERSION, KIND, owner)
    if profile_body is None or profile_body.get("spec", {}).get("namespace") != namespace:
        return
    holder = lease.get("spec", {}).get("holderIdentity") or ""
    if (profile_body.get("status") or {}).get("leader") != holder:
        cluster.patch_profile_status(owner, {"leader": holder})
