"""The scheduler's Dynamic Resource Allocation state between cycles (upstream's
DefaultDRAManager, dra_manager.go and allocateddevices.go, with util/assumecache): the
ResourceClaims in an assume cache, the allocations Reserve made that PreBind has not written
yet (in flight), the devices both take, the ResourceSlices and the DeviceClasses.

Claims: the informer's version of each claim is kept beside the latest one the scheduler
assumed after an API call (PreBind's write shows at once, until the informer reports it or
something newer), and Restore goes back to the informer's. Like upstream's assume cache,
every change (the informer's, an assumption, a restore) is a ResourceClaim event for the
queue, and keeps the set of allocated devices current. Allocations in flight (shared by the
pods of a group, counted) are taken too, so two pods in flight never get the same device.

Events reach the queue after the lock is released, as upstream's assume cache emits them:
the queue's hints read this state back."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from scheduler_runtime.framework import events
from scheduler_runtime.framework.dra import (
    AllocatedDevices,
    ClaimCacheError,
    DeviceID,
    ExtendedResourceClasses,
    Object,
    SharedDeviceID,
)
from scheduler_runtime.framework.events import ActionType, ClusterEvent

CLAIMS, SLICES, CLASSES = "ResourceClaim", "ResourceSlice", "DeviceClass"
RULES = "DeviceTaintRule"
KINDS = (CLAIMS, SLICES, CLASSES, RULES)
EXTENDED_RESOURCE_CLAIM = "resource.kubernetes.io/extended-resource-claim"

EventSink = Callable[[ClusterEvent, Any, Any], None]
Pending = list[tuple[ClusterEvent, Any, Any]]


def object_key(obj: Object) -> str:
    """cache.MetaNamespaceKeyFunc: namespace/name, or the name of a cluster-scoped object."""
    metadata = obj.get("metadata") or {}
    namespace = metadata.get("namespace") or ""
    name = metadata.get("name") or ""
    return f"{namespace}/{name}" if namespace else str(name)


def _version(obj: Object) -> int:
    """The resourceVersion as the assume cache compares it (0 when absent or not a number)."""
    try:
        return int((obj.get("metadata") or {}).get("resourceVersion") or 0)
    except ValueError:
        return 0


def _allocation(claim: Object | None) -> Mapping[str, Any] | None:
    return None if claim is None else (claim.get("status") or {}).get("allocation")


def _uid(claim: Object) -> str:
    return str((claim.get("metadata") or {}).get("uid") or "")


def _extended_owner(claim: Object) -> str | None:
    """The UID of the pod controlling a claim made for its extended resources."""
    metadata = claim.get("metadata") or {}
    if (metadata.get("annotations") or {}).get(EXTENDED_RESOURCE_CLAIM) != "true":
        return None
    for owner in metadata.get("ownerReferences") or ():
        if owner.get("controller"):
            return str(owner.get("uid") or "")
    return None


def allocated_devices_of(
    claim: Object, consumable_capacity: bool
) -> tuple[list[DeviceID], list[SharedDeviceID], list[tuple[DeviceID, Mapping[str, str]]]]:
    """foreachAllocatedDevice: the devices a claim's allocation takes exclusively, its shares
    of devices and what each share consumes; devices with admin access take nothing."""
    devices: list[DeviceID] = []
    shared: list[SharedDeviceID] = []
    consumed: list[tuple[DeviceID, Mapping[str, str]]] = []
    allocation = _allocation(claim)
    if allocation is None:
        return devices, shared, consumed
    for result in (allocation.get("devices") or {}).get("results") or ():
        if result.get("adminAccess"):
            continue
        device = (str(result["driver"]), str(result["pool"]), str(result["device"]))
        share = result.get("shareID")
        if consumable_capacity and share is not None:
            shared.append((*device, str(share)))
            if result.get("consumedCapacity") is not None:
                consumed.append((device, result["consumedCapacity"]))
            continue
        devices.append(device)
    return devices, shared, consumed


class _Entry:
    """A claim in the assume cache: the latest version known, and the informer's."""

    __slots__ = ("api", "latest")

    def __init__(self, obj: Object) -> None:
        self.latest = obj
        self.api = obj


class _InFlight:
    """An allocation Reserve made and PreBind has not written: the claim holding it, the pods
    sharing it, and what it takes (worked out once: every cycle gathers all of them)."""

    __slots__ = ("claim", "sharers", "takes")

    def __init__(self, claim: Object, consumable_capacity: bool) -> None:
        self.claim = claim
        self.sharers = 1
        self.takes = allocated_devices_of(claim, consumable_capacity)


class ClaimTracker:
    """The ResourceClaims: the assume cache, the allocated devices and the in-flight
    allocations (upstream's claimTracker)."""

    def __init__(self, emit: Callable[[Pending], None], consumable_capacity: bool) -> None:
        self._emit = emit
        self.consumable_capacity = consumable_capacity
        self._lock = threading.RLock()
        self._arrived = threading.Condition(self._lock)  # a claim the cache did not know
        self._entries: dict[str, _Entry] = {}
        self._owned: dict[str, dict[str, Object]] = {}  # pod UID -> its extended claims
        # Devices of allocated claims as the cache holds them; a revision per change.
        self._devices: set[DeviceID] = set()
        self._shared: set[SharedDeviceID] = set()
        self._consumed: dict[str, list[tuple[DeviceID, Mapping[str, str]]]] = {}
        self._revision = 0
        # (driver, pool) -> when what is taken of it last changed (a counter, never reused).
        self._pool_stamps: dict[tuple[str, str], int] = {}
        self._stamp = 0
        self._in_flight: dict[str, _InFlight] = {}  # by claim UID
        self._in_flight_revision = 0

    # ----- the informer's side (upstream's assume cache add/update/delete)

    def upsert(self, claim: Object) -> None:
        pending: Pending = []
        with self._lock:
            key = object_key(claim)
            entry = self._entries.get(key)
            old = None
            if entry is not None:
                if _version(claim) <= _version(entry.latest):
                    return
                old = entry.latest
            else:
                self._arrived.notify_all()
            self._entries[key] = _Entry(claim)
            self._changed(key, old, claim, pending)
        self._emit(pending)

    def delete(self, claim: Object) -> None:
        pending: Pending = []
        with self._lock:
            key = object_key(claim)
            entry = self._entries.pop(key, None)
            self._changed(key, None if entry is None else entry.latest, None, pending)
        self._emit(pending)

    def replace(self, claims: Sequence[Object]) -> None:
        listed = {object_key(claim) for claim in claims}
        with self._lock:
            gone = [entry.latest for key, entry in self._entries.items() if key not in listed]
        for claim in gone:
            self.delete(claim)
        for claim in claims:
            self.upsert(claim)

    def _changed(self, key: str, old: Object | None, new: Object | None, pending: Pending) -> None:
        """Keeps the indexes current and queues the event (lock held)."""
        self._index_owner(key, old, new)
        if new is not None and _allocation(new) is not None and _allocation(old) is None:
            self._account(key, new, add=True)
        elif old is not None and _allocation(old) is not None and _allocation(new) is None:
            self._account(key, old, add=False)
        if old is None and new is not None:
            action = ActionType.ADD
        elif new is None:
            if old is None:
                return
            action = ActionType.DELETE
        else:
            action = ActionType.UPDATE_OTHER
        pending.append((ClusterEvent(events.RESOURCE_CLAIM, action), old, new))

    def _index_owner(self, key: str, old: Object | None, new: Object | None) -> None:
        if old is not None and (owner := _extended_owner(old)) is not None:
            self._owned.get(owner, {}).pop(key, None)
            if not self._owned.get(owner):
                self._owned.pop(owner, None)
        if new is not None and (owner := _extended_owner(new)) is not None:
            self._owned.setdefault(owner, {})[key] = new

    def _account(self, key: str, claim: Object, *, add: bool) -> None:
        """allocatedDevices.addDevices / removeDevices."""
        devices, shared, consumed = allocated_devices_of(claim, self.consumable_capacity)
        if not devices and not shared and not consumed:
            return
        self._revision += 1
        self._touch(claim)
        if add:
            self._devices.update(devices)
            self._shared.update(shared)
            if consumed:
                self._consumed[key] = consumed
        else:
            self._devices.difference_update(devices)
            self._shared.difference_update(shared)
            self._consumed.pop(key, None)

    def _touch(self, claim: Object) -> None:
        """A new stamp for every pool the claim's allocation takes from (lock held)."""
        allocation = _allocation(claim) or {}
        self._stamp += 1
        for result in (allocation.get("devices") or {}).get("results") or ():
            self._pool_stamps[(str(result.get("driver")), str(result.get("pool")))] = self._stamp

    # ----- the plugin's side (fwk.ResourceClaimTracker)

    def get(self, namespace: str, name: str) -> Object | None:
        with self._lock:
            entry = self._entries.get(f"{namespace}/{name}")
            return None if entry is None else entry.latest

    def wait_known(self, namespace: str, name: str, timeout: float) -> bool:
        key = f"{namespace}/{name}"
        with self._arrived:
            return self._arrived.wait_for(lambda: key in self._entries, timeout)

    def owned_by(self, pod_uid: str) -> Sequence[Object]:
        with self._lock:
            return list(self._owned.get(pod_uid, {}).values())

    def allocated_devices(self) -> AllocatedDevices:
        """GatherAllocatedState: with consumable capacity off, shares count as whole devices."""
        with self._lock:
            devices = set(self._devices)
            shared = set(self._shared)
            consumed = [c for per_claim in self._consumed.values() for c in per_claim]
            for flying in self._in_flight.values():
                more, more_shared, more_consumed = flying.takes
                devices.update(more)
                shared.update(more_shared)
                consumed.extend(more_consumed)
            revision = (self._revision, self._in_flight_revision)
            stamps = dict(self._pool_stamps)
        if not self.consumable_capacity:
            devices.update((s[0], s[1], s[2]) for s in shared)
            shared.clear()
            consumed.clear()
        return AllocatedDevices(devices, shared, tuple(consumed), revision, stamps)

    def pending_allocation(self, uid: str) -> Object | None:
        with self._lock:
            flying = self._in_flight.get(uid)
            return None if flying is None else _allocation(flying.claim)

    def signal_pending_allocation(self, uid: str, claim: Object) -> None:
        with self._lock:
            flying = self._in_flight.get(uid)
            if flying is not None:
                flying.sharers += 1
                return
            self._in_flight[uid] = _InFlight(claim, self.consumable_capacity)
            self._in_flight_revision += 1
            self._touch(claim)

    def maybe_remove_pending_allocation(self, uid: str, force: bool) -> bool:
        with self._lock:
            flying = self._in_flight.get(uid)
            if flying is None:
                return False
            if force or flying.sharers == 1:
                del self._in_flight[uid]
                self._in_flight_revision += 1
                self._touch(flying.claim)
                return True
            flying.sharers -= 1
            return False

    def assume_after_api_call(self, claim: Object) -> None:
        """AssumeCache.Assume: refused for an unknown claim or one older than the cache's."""
        pending: Pending = []
        with self._lock:
            key = object_key(claim)
            entry = self._entries.get(key)
            if entry is None:
                raise ClaimCacheError(f'could not find ResourceClaim "{key}"')
            stored, assumed = _version(entry.latest), _version(claim)
            if assumed < stored:
                raise ClaimCacheError(
                    f'ResourceClaim "{key}" is out of sync (stored: {stored}, assume: {assumed})'
                )
            old = entry.latest
            entry.latest = claim
            self._changed(key, old, claim, pending)
        self._emit(pending)

    def restore(self, namespace: str, name: str) -> None:
        pending: Pending = []
        with self._lock:
            key = f"{namespace}/{name}"
            entry = self._entries.get(key)
            if entry is None or entry.latest is entry.api:
                return
            old = entry.latest
            entry.latest = entry.api
            self._changed(key, old, entry.api, pending)
        self._emit(pending)

    def uids_in_flight(self) -> set[str]:
        with self._lock:
            return set(self._in_flight)

    def sizes(self) -> dict[str, int]:
        """How many claims, allocations in flight, allocated devices (and shares) and owners
        of extended-resource claims it holds (for /metrics)."""
        with self._lock:
            return {
                "resource_claims": len(self._entries),
                "claim_allocations_in_flight": len(self._in_flight),
                "allocated_devices": len(self._devices) + len(self._shared),
                "extended_claim_owners": len(self._owned),
            }


def _rule_selects(rule: Object, spec: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """A DeviceTaintRule's selector when it matches the slice's driver and pool (no selector
    matches nothing)."""
    selector = (rule.get("spec") or {}).get("deviceSelector")
    if not isinstance(selector, Mapping):
        return None
    if selector.get("driver") is not None and selector["driver"] != spec.get("driver"):
        return None
    pool = (spec.get("pool") or {}).get("name")
    if selector.get("pool") is not None and selector["pool"] != pool:
        return None
    return selector


def patched_slice(resource_slice: Object, rules: Iterable[Object]) -> Object:
    """The ResourceSlice tracker's applyPatches: each DeviceTaintRule appends its taint to
    the devices it selects; the slice itself when none does."""
    spec = resource_slice.get("spec") or {}
    devices = spec.get("devices") or ()
    patched: list[dict[str, Any]] | None = None
    for rule in rules:
        selector = _rule_selects(rule, spec)
        if selector is None:
            continue
        wanted = selector.get("device")
        taint = (rule.get("spec") or {}).get("taint")
        for index, device in enumerate(devices):
            if wanted is not None and wanted != device.get("name"):
                continue
            if patched is None:
                patched = [dict(d) for d in devices]
            patched[index]["taints"] = [*(patched[index].get("taints") or ()), taint]
    if patched is None:
        return resource_slice
    return {**resource_slice, "spec": {**spec, "devices": patched}}


def _taints(resource_slice: Object) -> list[Any]:
    return [d.get("taints") for d in (resource_slice.get("spec") or {}).get("devices") or ()]


class DRAState:
    """The DRA objects of one scheduler (upstream's DefaultDRAManager): the claim tracker,
    the ResourceSlices, the DeviceClasses and the extended resources they back. Fed by the
    event handlers (`upsert`, `delete`, `replace` by kind); events go to `on_event`."""

    def __init__(
        self,
        on_event: EventSink,
        *,
        consumable_capacity: bool = True,
        device_taint_rules: bool = False,
    ) -> None:
        self._on_event = on_event
        self._claims = ClaimTracker(self._emit, consumable_capacity)
        self._lock = threading.Lock()
        self._slices: dict[str, Object] = {}
        # DRADeviceTaintRules: the rules whose taints the slices are seen with (none: off).
        self._device_taint_rules = device_taint_rules
        self._rules: dict[str, Object] = {}
        self._slice_revision = 0
        self._slice_list: tuple[Object, ...] | None = ()
        self._classes: dict[str, Object] = {}
        self._class_revision = 0
        self.extended_resources = ExtendedResourceClasses()

    def _emit(self, pending: Pending) -> None:
        for event, old, new in pending:
            self._on_event(event, old, new)

    # ----- fwk.SharedDRAManager

    @property
    def claims(self) -> ClaimTracker:
        return self._claims

    def slices(self) -> tuple[int, Sequence[Object]]:
        with self._lock:
            if self._slice_list is None:
                rules = tuple(self._rules.values())
                self._slice_list = tuple(
                    patched_slice(obj, rules) if rules else obj for obj in self._slices.values()
                )
            return self._slice_revision, self._slice_list

    def device_class(self, name: str) -> Object | None:
        with self._lock:
            return self._classes.get(name)

    def device_classes(self) -> tuple[int, Mapping[str, Object]]:
        with self._lock:
            return self._class_revision, dict(self._classes)

    def extended_resource_class(self, resource_name: str) -> Object | None:
        return self.extended_resources.device_class(resource_name)

    # ----- the event handlers' side

    def upsert(self, kind: str, obj: Object) -> None:
        if kind == CLAIMS:
            self._claims.upsert(obj)
        elif kind == RULES:
            self._change_rule(obj, gone=False)
        elif kind == SLICES:
            self._upsert_slice(obj)
        else:
            self._upsert_class(obj)

    def delete(self, kind: str, obj: Object) -> None:
        if kind == CLAIMS:
            self._claims.delete(obj)
            return
        if kind == RULES:
            self._change_rule(obj, gone=True)
            return
        with self._lock:
            store = self._slices if kind == SLICES else self._classes
            old = store.pop(object_key(obj), None)
            if old is None:
                return
            self._bump(kind)
        if kind == CLASSES:
            self.extended_resources.on_delete(old)
        resource = events.RESOURCE_SLICE if kind == SLICES else events.DEVICE_CLASS
        self._on_event(ClusterEvent(resource, ActionType.DELETE), old, None)

    def replace(self, kind: str, items: Sequence[Object]) -> None:
        if kind == CLAIMS:
            self._claims.replace(items)
            return
        listed = {object_key(item) for item in items}
        with self._lock:
            store = {SLICES: self._slices, RULES: self._rules}.get(kind, self._classes)
            gone = [obj for key, obj in store.items() if key not in listed]
        for obj in gone:
            self.delete(kind, obj)
        for item in items:
            self.upsert(kind, item)

    def sizes(self) -> dict[str, int]:
        """The claim tracker's sizes, and how many slices and classes it holds (for /metrics)."""
        with self._lock:
            held = {
                "resource_slices": len(self._slices),
                "device_classes": len(self._classes),
                "device_taint_rules": len(self._rules),
            }
        return {**self._claims.sizes(), **held}

    def _upsert_slice(self, obj: Object) -> None:
        with self._lock:
            key = object_key(obj)
            old = self._slices.get(key)
            if old is not None and _version(old) == _version(obj) and old == obj:
                return
            self._slices[key] = obj
            self._bump(SLICES)
            rules = tuple(self._rules.values())
        if rules:  # the events carry the slices as the scheduler sees them
            old = None if old is None else patched_slice(old, rules)
            obj = patched_slice(obj, rules)
        action = ActionType.ADD if old is None else ActionType.UPDATE_OTHER
        self._on_event(ClusterEvent(events.RESOURCE_SLICE, action), old, obj)

    def _change_rule(self, rule: Object, *, gone: bool) -> None:
        """A DeviceTaintRule added, changed or deleted (ignored with DRADeviceTaintRules
        off): every slice whose devices' taints change is seen updated, as the tracker
        reports it."""
        if not self._device_taint_rules:
            return
        key = object_key(rule)
        with self._lock:
            before = tuple(self._rules.values())
            if gone:
                if self._rules.pop(key, None) is None:
                    return
            else:
                if self._rules.get(key) == rule:
                    return
                self._rules[key] = rule
            after = tuple(self._rules.values())
            self._bump(SLICES)
            slices = list(self._slices.values())
        for obj in slices:
            old, new = patched_slice(obj, before), patched_slice(obj, after)
            if _taints(old) != _taints(new):
                self._on_event(
                    ClusterEvent(events.RESOURCE_SLICE, ActionType.UPDATE_OTHER), old, new
                )

    def _upsert_class(self, obj: Object) -> None:
        with self._lock:
            key = object_key(obj)
            old = self._classes.get(key)
            if old is not None and old == obj:
                return
            self._classes[key] = obj
            self._bump(CLASSES)
        # The cache of extended resources learns of the class before the queue does.
        if old is None:
            self.extended_resources.on_add(obj)
        else:
            self.extended_resources.on_update(old, obj)
        action = ActionType.ADD if old is None else ActionType.UPDATE_OTHER
        self._on_event(ClusterEvent(events.DEVICE_CLASS, action), old, obj)

    def _bump(self, kind: str) -> None:
        if kind == SLICES:
            self._slice_revision += 1
            self._slice_list = None
        else:
            self._class_revision += 1


__all__ = [
    "CLAIMS",
    "CLASSES",
    "KINDS",
    "RULES",
    "SLICES",
    "ClaimTracker",
    "DRAState",
    "object_key",
    "patched_slice",
]
