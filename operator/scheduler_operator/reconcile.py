"""One SchedulerProfile reconciled: judged, applied when valid and unclaimed, and reported."""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from typing import Any

from . import status
from .apply import ApplyError, Cluster
from .claims import Claims, claim_conflict, successors
from .desired import DesiredCache
from .errors import SpecError
from .reporting import running, update_status


def reconciled_status(
    body: Mapping[str, Any],
    cluster: Cluster,
    claims: Claims,
    desired: DesiredCache,
    namespaces: Sequence[str],
) -> dict[str, Any]:
    """Validates, applies when valid and unclaimed, and returns the status to write."""
    generation = body["metadata"].get("generation")
    previous = body.get("status") or {}
    verdict = desired.of(body)
    if isinstance(verdict, SpecError):
        # The last good Deployment keeps running untouched; only the verdict changes.
        return status.refused(previous, generation, verdict.status_reason, str(verdict))
    profile = verdict.profile
    if not managed(profile.spec.namespace, namespaces):
        why = (
            f"spec.namespace: {profile.spec.namespace!r} is not a namespace this operator runs "
            f"schedulers in ({', '.join(namespaces)})"
        )
        return status.refused(previous, generation, "NamespaceNotAllowed", why)
    conflict = claim_conflict(profile, claims)
    if conflict:
        return status.refused(previous, generation, "SchedulerNameConflict", conflict) | {
            "schedulerNames": ",".join(profile.scheduler_names())
        }
    release = verdict.release
    valid = status.accepted(
        profile.spec.engine.value, generation, verdict.warnings, release.warning
    )
    try:
        cluster.apply_all(verdict.rendered.objects)
    except ApplyError as error:
        return status.apply_failed(previous, valid, str(error), generation)
    return {
        "observedGeneration": generation,
        "schedulerNames": ",".join(profile.scheduler_names()),
        "configHash": verdict.rendered.config_hash,
        "version": release.version,
        "emulatedVersion": release.emulated,
        **status.availability(previous, valid, running(cluster, verdict, body), generation),
    }


def managed(namespace: str, namespaces: Sequence[str]) -> bool:
    """Whether the operator runs schedulers in a namespace (its --namespace, globs allowed)."""
    return any(fnmatch.fnmatchcase(namespace, pattern) for pattern in namespaces)


def hand_over(
    released: Mapping[str, Any],
    cluster: Cluster,
    claims: Claims,
    desired: DesiredCache,
    namespaces: Sequence[str],
) -> None:
    """When a SchedulerProfile goes, the next claimant of each of its names takes over."""
    desired.forget(str(released["metadata"].get("uid", "")))
    for successor in successors(claims, released):
        update_status(
            cluster,
            successor,
            lambda current: reconciled_status(current, cluster, claims, desired, namespaces),
        )
