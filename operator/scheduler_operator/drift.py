"""Drift repair: a child edited or deleted by hand is applied again as rendered, within seconds.

A child's events (a Deployment's status during a rollout among them) reuse the verdict on its
owner's generation, so they cost a read of the owner and a comparison, not a new judgement."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeGuard

from .api import API_VERSION, KIND
from .apply import Cluster
from .claims import Claims, claim_conflict
from .desired import DesiredCache, Verdict
from .errors import SpecError
from .reconcile import managed
from .reporting import refresh


def repair(
    cluster: Cluster, desired: DesiredCache, claims: Claims, child: Mapping[str, Any], deleted: bool
) -> None:
    """Applies a child again when it was deleted or a rendered field of it changed; the
    Deployment's changes also refresh its owner's availability."""
    owner = controller_of(child)
    if owner is None:
        return
    profile_body = cluster.get(API_VERSION, KIND, owner["name"])
    if not is_live_owner(profile_body, owner["uid"]):
        return
    twin = desired_twin(desired.of(profile_body), child, claims)
    if twin is not None and (deleted or not contains(child, twin)):
        cluster.apply(twin)
    if child.get("kind") == "Deployment":
        refresh(cluster, desired, owner["name"])


def repair_unwatched(
    cluster: Cluster,
    desired: DesiredCache,
    claims: Claims,
    profile_body: Mapping[str, Any],
    namespaces: Sequence[str],
) -> None:
    """The children outside the watched namespaces (a scheduler's RoleBinding in kube-system)
    raise no events here: they are compared and applied again on a timer instead."""
    verdict = desired.of(profile_body)
    if isinstance(verdict, SpecError) or claim_conflict(verdict.profile, claims):
        return
    for child in verdict.rendered.objects:
        namespace = child["metadata"].get("namespace")
        if namespace is None or managed(namespace, namespaces):
            continue
        live = cluster.get_like(child)
        if live is None or not contains(live, child):
            cluster.apply(child)


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
    verdict: Verdict, actual: Mapping[str, Any], claims: Claims
) -> dict[str, Any] | None:
    """The rendered object matching an actual child; None when the profile may not apply."""
    if isinstance(verdict, SpecError) or claim_conflict(verdict.profile, claims):
        return None
    key = identity(actual)
    return next((o for o in verdict.rendered.objects if identity(o) == key), None)


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
