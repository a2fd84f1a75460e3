"""DynamicResources' PreBind (bindClaim and the binding conditions of dynamicresources.go):
write each claim's allocation and the pod's reservation (the finalizer first, in a normal
update), retried on conflicts as upstream's retry.DefaultRetry does; keep the written claim
in the assume cache; then, for devices with binding conditions (DRADeviceBindingConditions),
wait until their driver reports them met, failed, or bindingTimeout passes.

Past upstream: pods sharing a claim bind concurrently, and upstream's writes of their
reservations race from the same resourceVersion, so all but one conflict, read the claim
again and retry (five tries, then the pod goes back to the queue). Here the scheduler's writes
of one claim go one at a time, each from the newest claim the assume cache holds (the one the
write before it returned), so they do not conflict with one another; a change made by someone
else is still a conflict, handled as upstream handles it.

And members of a pod group that shared one allocation in flight (their group's cycle reserved
it once for all of them): the first to bind writes it, the others find it written and only add
their reservation. Upstream's intent (its claim tracker keeps the allocation in flight for all
of them "and the allocation will be written for the first pod that succeeds"), not what its
bindClaim does: there every member but the first fails PreBind with "got allocated elsewhere
in the meantime", goes back to the queue and is placed by a later cycle."""

from __future__ import annotations

import datetime
import json
from collections.abc import Callable, Mapping
from typing import Any

from scheduler_runtime.framework.dra import ClaimAPIError, ClaimCacheError, Object, copied
from scheduler_runtime.framework.podinfo import PodInfo
from scheduler_runtime.framework.status import SUCCESS, Status
from scheduler_runtime.plugins.dynamicresources import extendedclaim
from scheduler_runtime.plugins.dynamicresources import resourceclaim as rc
from scheduler_runtime.plugins.dynamicresources.claims import PluginContext, StateData

# retry.DefaultRetry: five tries, 10 ms apart; binding conditions are checked every 5 s.
RETRY_STEPS = 5
RETRY_SECONDS = 0.01
POLL_SECONDS = 5.0


class BindError(Exception):
    """PreBind could not write a claim; `conflict` says whether another try may succeed."""

    def __init__(self, message: str, *, conflict: bool = False) -> None:
        super().__init__(message)
        self.conflict = conflict


class BindingFailedError(BindError):
    """A device's binding failure condition is true (ErrDeviceBindingFailed)."""


class BindingTimeoutError(BindError):
    """Binding conditions were not met within bindingTimeout (ErrDeviceBindingTimeout)."""


def go_quote(text: str) -> str:
    """Go's %q for the plain text a condition's message holds."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    escaped = escaped.replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\r")
    return f'"{escaped}"'


def rfc3339(moment: datetime.datetime) -> str:
    """metav1.Time as JSON: RFC 3339 in UTC, whole seconds."""
    return moment.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _parse_time(text: str) -> datetime.datetime | None:
    try:
        return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def _results(claim: Object) -> list[Mapping[str, Any]]:
    allocation = rc.allocation(claim) or {}
    return list((allocation.get("devices") or {}).get("results") or ())


def _device_status(claim: Object, result: Mapping[str, Any]) -> Mapping[str, Any] | None:
    for device in (claim.get("status") or {}).get("devices") or ():
        if (device.get("device"), device.get("driver"), device.get("pool")) == (
            result.get("device"),
            result.get("driver"),
            result.get("pool"),
        ):
            return device  # type: ignore[no-any-return]
    return None


def _condition(status: Mapping[str, Any], kind: str) -> Mapping[str, Any] | None:
    for condition in status.get("conditions") or ():
        if condition.get("type") == kind:
            return condition  # type: ignore[no-any-return]
    return None


def claim_ready(claim: Object) -> bool:
    """isClaimReadyForBinding: every binding condition true; BindingFailedError once a
    failure condition is."""
    if rc.allocation(claim) is None:
        return False
    name = (claim.get("metadata") or {}).get("name", "")
    for result in _results(claim):
        if not result.get("bindingConditions"):
            continue
        status = _device_status(claim, result)
        if status is None:
            return False
        for kind in result.get("bindingFailureConditions") or ():
            failed = _condition(status, kind)
            if failed is not None and failed.get("status") == "True":
                raise BindingFailedError(
                    f"device binding failed: claim={name}, reason={failed.get('reason', '')}, "
                    f"message={go_quote(str(failed.get('message', '')))}"
                )
        for kind in result.get("bindingConditions") or ():
            met = _condition(status, kind)
            if met is None or met.get("status") != "True":
                return False
    return True


def timed_out(claim: Object, timeout: float, now: Callable[[], datetime.datetime]) -> bool:
    """isClaimTimeout: a device with binding conditions, allocated longer ago than timeout."""
    stamp = (rc.allocation(claim) or {}).get("allocationTimestamp")
    allocated = _parse_time(str(stamp)) if stamp else None
    if allocated is None:
        return False
    expired = allocated + datetime.timedelta(seconds=timeout) < now()
    return expired and any(result.get("bindingConditions") for result in _results(claim))


def has_binding_conditions(data: StateData) -> bool:
    return any(
        result.get("bindingConditions")
        for _, claim in data.claims.all()
        for result in _results(claim)
    )


def bind_claim(
    plugin: PluginContext, data: StateData, index: int, pod: PodInfo, node_name: str
) -> Object:
    """bindClaim: the claim's allocation (from Reserve) and the pod's reservation written;
    the claim as the API server returned it."""
    claim = data.claims.get(index)
    allocation = data.infos[index].allocation
    extended = claim is data.claims.extended_claim()
    if extended and allocation is None and extendedclaim.requests(claim) is None:
        return claim  # extended resources met by a device plugin: nothing to write
    claim_uid = rc.uid(claim)
    client = plugin.client
    modified = False
    try:
        if extended and extendedclaim.in_memory(claim):
            try:
                claim = extendedclaim.create_in_api(client, data, pod, node_name)
            except extendedclaim.ExtendedClaimError as error:
                raise BindError(str(error)) from error
            modified = True
            data.claims.update_extended_claim(claim)
        claim = _write(plugin, claim, allocation, pod)
        modified = True
    finally:
        _after_write(plugin, claim, claim_uid, allocation, modified=modified, extended=extended)
    if extended:
        try:
            extendedclaim.patch_pod_status(client, data, pod, claim, node_name)
        except extendedclaim.ExtendedClaimError as error:
            raise BindError(str(error)) from error
    return claim


def _after_write(
    plugin: PluginContext,
    claim: Object,
    claim_uid: str,
    allocation: Mapping[str, Any] | None,
    *,
    modified: bool,
    extended: bool,
) -> None:
    """The written claim into the assume cache (its allocation no longer in flight then);
    the pod's share of the allocation in flight released either way."""
    force = False
    if modified:
        if extended:
            extendedclaim.wait_in_cache(plugin, claim)
        else:
            try:
                plugin.dra.claims.assume_after_api_call(claim)
                force = True
            except ClaimCacheError:
                pass  # only a concurrent update or deletion; the informer has the truth
    if allocation is not None:
        plugin.dra.claims.maybe_remove_pending_allocation(claim_uid, force)


def _write(
    plugin: PluginContext, claim: Object, allocation: Mapping[str, Any] | None, pod: PodInfo
) -> Object:
    """retry.RetryOnConflict around the finalizer and status updates, one writer per claim."""
    with plugin.claim_writes.one_at_a_time(rc.key(claim)):
        return _write_retried(plugin, _newest(plugin, claim), allocation, pod)


def _newest(plugin: PluginContext, claim: Object) -> Object:
    """The assume cache's claim when it is the same one: at least as new as the pod's copy."""
    cached = plugin.dra.claims.get(*rc.where(claim))
    return cached if cached is not None and rc.uid(cached) == rc.uid(claim) else claim


def _write_retried(
    plugin: PluginContext, claim: Object, allocation: Mapping[str, Any] | None, pod: PodInfo
) -> Object:
    client = plugin.client
    namespace, name = rc.where(claim)
    current: Object = claim
    for step in range(RETRY_STEPS):
        if step:
            client.sleep(RETRY_SECONDS)
            try:
                current = client.get_claim(namespace, name)
            except ClaimAPIError as error:
                raise BindError(
                    f"get updated claim {rc.key(claim)} after conflict: {error}",
                    conflict=error.conflict,
                ) from error
        try:
            return _write_once(plugin, current, allocation, pod)
        except BindError as error:
            if not error.conflict or step == RETRY_STEPS - 1:
                raise
    raise AssertionError("unreachable")


def _write_once(
    plugin: PluginContext, claim: Object, allocation: Mapping[str, Any] | None, pod: PodInfo
) -> Object:
    client = plugin.client
    key = rc.key(claim)
    updated = copied(claim)
    metadata = updated.setdefault("metadata", {})
    if metadata.get("deletionTimestamp"):
        raise BindError(f"claim {key} got deleted in the meantime")
    status = updated.setdefault("status", {})
    if allocation is not None and _written_by_a_sharer(status.get("allocation"), allocation):
        allocation = None  # a sibling sharing it wrote it: only the reservation is left
    if allocation is not None:
        if status.get("allocation") is not None:
            raise BindError(f"claim {key} got allocated elsewhere in the meantime")
        finalizers = list(metadata.get("finalizers") or ())
        if rc.FINALIZER not in finalizers:
            metadata["finalizers"] = [*finalizers, rc.FINALIZER]
            try:
                updated = copied(client.update_claim(updated))
            except ClaimAPIError as error:
                raise BindError(
                    f"add finalizer to claim {key}: {error}", conflict=error.conflict
                ) from error
            status = updated.setdefault("status", {})
        status["allocation"] = copied(allocation)
    status["reservedFor"] = [*(status.get("reservedFor") or ()), rc.pod_reference(pod)]
    if plugin.features.binding_and_status:
        if status.get("allocation") is None:
            raise BindError(f"claim {key} got deallocated elsewhere in the meantime")
        if not status["allocation"].get("allocationTimestamp"):
            status["allocation"]["allocationTimestamp"] = rfc3339(client.now())
    try:
        return client.update_claim_status(updated)
    except ClaimAPIError as error:
        what = "allocation and reservation" if allocation is not None else "reservation"
        raise BindError(f"add {what} to claim {key}: {error}", conflict=error.conflict) from error


def _written_by_a_sharer(written: Mapping[str, Any] | None, ours: Mapping[str, Any]) -> bool:
    """Whether the claim holds the very allocation this pod shares: the same devices on the
    same nodes, as JSON (the allocator's tuples are the API's lists); PreBind only adds when
    it was written."""
    if written is None:
        return False

    def as_json(allocation: Mapping[str, Any]) -> str:
        kept = {k: v for k, v in allocation.items() if k != "allocationTimestamp"}
        return json.dumps(kept, sort_keys=True, default=str)

    return as_json(written) == as_json(ours)


def _pod_ready(plugin: PluginContext, data: StateData) -> bool:
    """isPodReadyForBinding: the claims as the cache holds them now, every one ready."""
    for index, claim in data.claims.all():
        namespace, name = rc.where(claim)
        current = plugin.dra.claims.get(namespace, name)
        if current is None:
            raise BindError(f'could not find ResourceClaim "{namespace}/{name}"')
        data.claims.set(index, current)
        if not claim_ready(current):
            if timed_out(current, plugin.binding_timeout, plugin.client.now):
                raise BindingTimeoutError(f"device binding timeout: claim={name}")
            return False
    return True


def wait_for_binding_conditions(
    plugin: PluginContext, data: StateData, pod: PodInfo, node_name: str
) -> Status:
    """Waits, checking at once and then every 5 s, until the devices' binding conditions
    are met, one fails, or bindingTimeout passes; the two last are the pod's Error, and its
    next attempt's PreFilter and PostFilter deal with the claim."""
    client = plugin.client
    client.event(
        pod.pod,
        "Normal",
        "BindingConditionsPending",
        "Scheduling",
        f"waiting for binding conditions for device on node {node_name}",
    )
    deadline = client.now() + datetime.timedelta(seconds=plugin.binding_timeout)
    try:
        while not _pod_ready(plugin, data):
            remaining = (deadline - client.now()).total_seconds()
            if remaining <= 0:
                raise BindingTimeoutError("device binding timeout: context deadline exceeded")
            client.sleep(min(POLL_SECONDS, remaining))
    except BindError as error:
        return Status.as_error(error)
    return SUCCESS


__all__ = [
    "BindError",
    "BindingFailedError",
    "BindingTimeoutError",
    "bind_claim",
    "claim_ready",
    "has_binding_conditions",
    "timed_out",
    "wait_for_binding_conditions",
]
