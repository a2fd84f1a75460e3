"""Conditions, and the statuses assembled from them that the printer columns read. Pure: no API
calls (reporting.py and reconcile.py write them)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

CONFIG_VALID = "ConfigValid"
AVAILABLE = "Available"
READY = "Ready"


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def condition(
    kind: str, ok: bool, reason: str, message: str, generation: int | None
) -> dict[str, Any]:
    """A metav1.Condition without its transition time (merge_conditions fills that in)."""
    return {
        "type": kind,
        "status": "True" if ok else "False",
        "observedGeneration": generation,
        "reason": reason,
        "message": message,
    }


def merge_conditions(
    previous: Sequence[Mapping[str, Any]], updates: Sequence[Mapping[str, Any]], at: str
) -> list[dict[str, Any]]:
    """Replaces conditions by type; lastTransitionTime moves only when the status changes."""
    merged = {c["type"]: dict(c) for c in previous}
    for update in updates:
        before = merged.get(update["type"])
        moved = before is None or before.get("status") != update["status"]
        since = at if moved or before is None else before.get("lastTransitionTime", at)
        merged[update["type"]] = {**update, "lastTransitionTime": since}
    return list(merged.values())


def find(conditions: Sequence[Mapping[str, Any]], kind: str) -> Mapping[str, Any] | None:
    return next((c for c in conditions if c.get("type") == kind), None)


def available(deployment: Mapping[str, Any] | None, generation: int | None) -> dict[str, Any]:
    """Available mirrors the Deployment's own Available condition."""
    if deployment is None:
        return condition(
            AVAILABLE, False, "DeploymentMissing", "the Deployment does not exist yet", generation
        )
    own = find(deployment.get("status", {}).get("conditions") or [], "Available")
    if own is None:
        return condition(
            AVAILABLE, False, "Deploying", "the Deployment reports no availability yet", generation
        )
    return condition(
        AVAILABLE,
        own.get("status") == "True",
        own.get("reason") or "Unknown",
        own.get("message") or "",
        generation,
    )


def ready(
    config_valid: Mapping[str, Any],
    available_now: Mapping[str, Any],
    deployment: Mapping[str, Any] | None,
    generation: int | None,
) -> dict[str, Any]:
    """The summary: valid configuration, available Deployment, rollout finished."""
    if config_valid["status"] != "True":
        return condition(READY, False, config_valid["reason"], config_valid["message"], generation)
    if available_now["status"] != "True" or deployment is None:
        return condition(READY, False, "Unavailable", available_now["message"], generation)
    wanted = deployment.get("spec", {}).get("replicas", 1)
    state = deployment.get("status", {})
    settled = deployment["metadata"].get("generation") == state.get("observedGeneration")
    counts = [
        state.get(key, 0) for key in ("updatedReplicas", "readyReplicas", "availableReplicas")
    ]
    if not settled or any(count < wanted for count in counts) or state.get("replicas", 0) > wanted:
        updated, ready_now = state.get("updatedReplicas", 0), state.get("readyReplicas", 0)
        message = f"rolling out: {updated}/{wanted} updated, {ready_now} ready"
        return condition(READY, False, "RollingOut", message, generation)
    return condition(READY, True, "SchedulerReady", f"{wanted}/{wanted} replicas ready", generation)


def deployment_summary(deployment: Mapping[str, Any] | None) -> dict[str, Any]:
    state = (deployment or {}).get("status", {})
    return {"replicas": state.get("replicas", 0), "readyReplicas": state.get("readyReplicas", 0)}


def merged(
    previous: Mapping[str, Any], updates: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """The previous status's conditions with the updates merged in, as of now."""
    return merge_conditions(previous.get("conditions") or [], updates, now())


def accepted(engine: str, generation: int | None) -> dict[str, Any]:
    """ConfigValid=True: the chosen engine takes the configuration."""
    message = f"the configuration is valid for engine {engine}"
    return condition(CONFIG_VALID, True, "ConfigAccepted", message, generation)


def refused(
    previous: Mapping[str, Any], generation: int | None, reason: str, message: str
) -> dict[str, Any]:
    """ConfigValid=False and a Ready that says why; Available keeps describing what runs."""
    verdict = condition(CONFIG_VALID, False, reason, message, generation)
    summary = ready(verdict, verdict, None, generation)
    updates = [verdict, summary]
    if find(previous.get("conditions") or [], AVAILABLE) is None:
        updates.append(available(None, generation))  # every condition from the start
    return {"observedGeneration": generation, "conditions": merged(previous, updates)}


def apply_failed(
    previous: Mapping[str, Any],
    config_valid: Mapping[str, Any],
    message: str,
    generation: int | None,
) -> dict[str, Any]:
    """A valid configuration the API server refused a child of (the message says which)."""
    failed = condition(READY, False, "ApplyFailed", message, generation)
    return {
        "observedGeneration": generation,
        "conditions": merged(previous, [config_valid, failed]),
    }


def availability(
    previous: Mapping[str, Any],
    config_valid: Mapping[str, Any],
    deployment: Mapping[str, Any] | None,
    generation: int | None,
) -> dict[str, Any]:
    """Available and Ready as the Deployment stands, beside the given configuration verdict."""
    now_available = available(deployment, generation)
    summary = ready(config_valid, now_available, deployment, generation)
    return {
        **deployment_summary(deployment),
        "conditions": merged(previous, [config_valid, now_available, summary]),
    }
