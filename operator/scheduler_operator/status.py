"""Conditions, and the statuses assembled from them that the printer columns read. Pure: no API
calls (reporting.py and reconcile.py write them)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

from .status_model import MAX_MESSAGE

CONFIG_VALID = "ConfigValid"
# ConfigValid=True, but the scheduler runs an older minor than the API server's: an Event too.
NEWER_API_SERVER = "NewerAPIServer"
AVAILABLE = "Available"
READY = "Ready"
# A container waiting for one of these reasons will not start by itself; Ready says which and why,
# in the words `kubectl get pods` uses.
STUCK: Final = frozenset(
    {
        "ErrImagePull",
        "ImagePullBackOff",
        "InvalidImageName",
        "ErrImageNeverPull",
        "CrashLoopBackOff",
        "CreateContainerConfigError",
        "CreateContainerError",
        "RunContainerError",
    }
)


@dataclass(frozen=True)
class Running:
    """What runs for a SchedulerProfile, as last read: its Deployment, the Deployment's pods, and
    its Lease (lease_name None: no leader election)."""

    deployment: Mapping[str, Any] | None
    pods: Sequence[Mapping[str, Any]] = ()
    lease_name: str | None = None
    lease: Mapping[str, Any] | None = None

    def holder(self) -> str:
        return str(((self.lease or {}).get("spec") or {}).get("holderIdentity") or "")

    def leading_pod(self) -> str | None:
        """The pod holding the Lease: client-go's identity is `<hostname>_<uuid>`, and a pod's
        hostname is its name."""
        holder = self.holder()
        names = (p["metadata"]["name"] for p in self.pods if ready_pod(p))
        return next((n for n in names if holder == n or holder.startswith(f"{n}_")), None)


def ready_pod(pod: Mapping[str, Any]) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return not pod["metadata"].get("deletionTimestamp") and any(
        c.get("type") == "Ready" and c.get("status") == "True" for c in conditions
    )


def stuck_pod(pods: Sequence[Mapping[str, Any]]) -> tuple[str, str] | None:
    """(reason, message) for the first pod that cannot start or cannot be placed, if any."""
    for pod in sorted(pods, key=lambda p: str(p["metadata"]["name"])):
        name, state = pod["metadata"]["name"], pod.get("status") or {}
        statuses = (state.get("initContainerStatuses") or []) + (
            state.get("containerStatuses") or []
        )
        for container in statuses:
            waiting = (container.get("state") or {}).get("waiting") or {}
            if waiting.get("reason") in STUCK:
                why = waiting.get("message") or waiting["reason"]
                return waiting["reason"], f"pod {name}: {why}"
        placed = find(state.get("conditions") or [], "PodScheduled")
        if placed is not None and placed.get("reason") == "Unschedulable":
            return "Unschedulable", f"pod {name}: {placed.get('message') or 'cannot be placed'}"
    return None


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def condition(
    kind: str, ok: bool, reason: str, message: str, generation: int | None
) -> dict[str, Any]:
    """A metav1.Condition without its transition time (merge_conditions fills that in); a
    message longer than the API takes is cut, so the status is never refused for it."""
    return {
        "type": kind,
        "status": "True" if ok else "False",
        "observedGeneration": generation,
        "reason": reason,
        "message": truncated(message),
    }


def truncated(message: str, limit: int = MAX_MESSAGE) -> str:
    return message if len(message) <= limit else message[: limit - 3] + "..."


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
    running: Running,
    generation: int | None,
) -> dict[str, Any]:
    """The summary: valid configuration, no pod stuck, available Deployment, rollout finished,
    and with leader election, a ready pod of this scheduler holding the Lease."""
    if config_valid["status"] != "True":
        return condition(READY, False, config_valid["reason"], config_valid["message"], generation)
    stuck = stuck_pod(running.pods)
    if stuck is not None:
        return condition(READY, False, *stuck, generation)
    deployment = running.deployment
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
    return leadership(running, f"{wanted}/{wanted} replicas ready", generation)


def leadership(running: Running, replicas: str, generation: int | None) -> dict[str, Any]:
    """Ready once the pods are: with leader election, once one of them holds the Lease."""
    if running.lease_name is None:
        return condition(READY, True, "SchedulerReady", replicas, generation)
    leader = running.leading_pod()
    if leader is None:
        held = f"held by {running.holder()}" if running.holder() else "not held"
        message = f"{replicas}, but none leads: the Lease {running.lease_name} is {held}"
        return condition(READY, False, "NotLeading", message, generation)
    return condition(READY, True, "SchedulerReady", f"{replicas}, {leader} leads", generation)


def running_summary(running: Running) -> dict[str, Any]:
    state = (running.deployment or {}).get("status", {})
    return {
        "replicas": state.get("replicas", 0),
        "readyReplicas": state.get("readyReplicas", 0),
        "leader": running.holder(),
    }


def merged(
    previous: Mapping[str, Any], updates: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """The previous status's conditions with the updates merged in, as of now."""
    return merge_conditions(previous.get("conditions") or [], updates, now())


def accepted(
    engine: str, generation: int | None, warnings: Sequence[str] = (), skew: str = ""
) -> dict[str, Any]:
    """ConfigValid=True: the chosen engine takes the configuration; with warnings (a plugin
    whose feature gate is off, which the engine takes and never runs), they are the message.
    `skew` says why the release run is older than the API server (one newer than every minor
    known): that warning comes first, and is the reason."""
    message = f"the configuration is valid for engine {engine}"
    if skew:
        message = f"{message}, but: " + "; ".join((skew, *warnings))
        return condition(CONFIG_VALID, True, NEWER_API_SERVER, message, generation)
    if warnings:
        message = f"{message}, but: " + "; ".join(warnings)
        return condition(CONFIG_VALID, True, "PluginGateOff", message, generation)
    return condition(CONFIG_VALID, True, "ConfigAccepted", message, generation)


def refused(
    previous: Mapping[str, Any], generation: int | None, reason: str, message: str
) -> dict[str, Any]:
    """ConfigValid=False and a Ready that says why; Available keeps describing what runs."""
    verdict = condition(CONFIG_VALID, False, reason, message, generation)
    summary = ready(verdict, verdict, Running(None), generation)
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
    running: Running,
    generation: int | None,
) -> dict[str, Any]:
    """Available and Ready as what runs stands, beside the given configuration verdict."""
    now_available = available(running.deployment, generation)
    summary = ready(config_valid, now_available, running, generation)
    return {
        **running_summary(running),
        "conditions": merged(previous, [config_valid, now_available, summary]),
    }


def warns(new: Mapping[str, Any]) -> bool:
    """Whether a condition deserves a Warning Event: a refused configuration, a failed apply,
    a scheduler that runs an older minor than the API server's."""
    refused, reason = new["status"] == "False", str(new["reason"])
    if new["type"] == CONFIG_VALID:
        return refused or reason == NEWER_API_SERVER
    return refused and reason == "ApplyFailed"


@dataclass(frozen=True)
class Event:
    """A Kubernetes Event about a SchedulerProfile: what `kubectl describe` shows."""

    type: str  # Normal or Warning
    reason: str
    message: str


def events(previous: Mapping[str, Any], reported: Mapping[str, Any]) -> list[Event]:
    """The Events a status change deserves: a refusal, a failed apply or a scheduler older
    than the API server when it is new (not on every retry), and a new configuration starting
    to roll out."""
    found: list[Event] = []
    before = previous.get("conditions") or []
    after = reported.get("conditions") or []
    for kind in (CONFIG_VALID, READY):
        new, old = find(after, kind), find(before, kind)
        if new is None or not warns(new):
            continue
        if old is None or (old["status"], old["reason"], old["message"]) != (
            new["status"],
            new["reason"],
            new["message"],
        ):
            found.append(Event("Warning", new["reason"], new["message"]))
    old_hash, new_hash = previous.get("configHash"), reported.get("configHash")
    if old_hash and new_hash and old_hash != new_hash:
        message = f"configuration {new_hash} is rolling out (was {old_hash})"
        found.append(Event("Normal", "RollingOut", message))
    return found
