"""Who may serve a scheduler name: the earliest SchedulerProfile to claim it, never the default
scheduler's name (Leases cannot collide: theirs are prefixed). Pure: the claims come from the
operator's index of SchedulerProfiles."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from .errors import SpecError
from .model import SchedulerProfile
from .parsing import parse

DEFAULT_SCHEDULER: Final = "default-scheduler"

Claim = tuple[str, str]  # (creationTimestamp, SchedulerProfile name): the earliest claim wins.
# Every claim on each scheduler name (kopf's index of SchedulerProfiles has this shape).
Claims = Mapping[str, Iterable[Claim]]


def claimed(body: Mapping[str, Any]) -> dict[str, Claim]:
    """The names a SchedulerProfile claims (none while its spec is invalid), with its claim."""
    try:
        profile = parse(body)
    except SpecError:
        return {}
    metadata = body["metadata"]
    claim = (str(metadata.get("creationTimestamp", "")), str(metadata["name"]))
    return dict.fromkeys(profile.scheduler_names(), claim)


def first_claim(claims: Claims, scheduler_name: str) -> str | None:
    """The SchedulerProfile that serves a name: the one that claimed it first."""
    earliest = min(claims.get(scheduler_name, []), default=None)
    return earliest[1] if earliest else None


def claim_conflict(profile: SchedulerProfile, claims: Claims) -> str | None:
    """Why this SchedulerProfile may not serve its names, or None when it may."""
    for name in profile.scheduler_names():
        if name == DEFAULT_SCHEDULER:
            return f"schedulerName {name!r} belongs to the cluster's default scheduler"
        owner = first_claim(claims, name)
        if owner is not None and owner != profile.name:
            return f"schedulerName {name!r} is already served by SchedulerProfile {owner!r}"
    return None


def successors(claims: Claims, released: Mapping[str, Any]) -> set[str]:
    """The SchedulerProfiles that serve the names a deleted SchedulerProfile held."""
    return {owner for name in claimed(released) if (owner := first_claim(claims, name))}
