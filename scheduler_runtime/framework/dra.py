"""What Dynamic Resource Allocation needs from the scheduler around the framework (upstream's
fwk.SharedDRAManager and the clientset calls of the DynamicResources plugin), declared here so
that the backend implements it and plugins use it without either importing the other.

Objects are the API's JSON dicts (resource.k8s.io/v1 ResourceClaims, ResourceSlices and
DeviceClasses): the plugin parses what it reads, and caches the parsed form by the revisions
the manager reports, so nothing is parsed again until it changes.

`ExtendedResourceClasses` (k8s.io/dynamic-resource-allocation's extendedresourcecache) lives
here because the manager feeds it DeviceClass events in the order they come, and the plugins
(DynamicResources, NodeResourcesFit) ask it which class backs an extended resource."""

from __future__ import annotations

import datetime
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import orjson

Object = Mapping[str, Any]
DeviceID = tuple[str, str, str]  # driver, pool, device
SharedDeviceID = tuple[str, str, str, str]  # driver, pool, device, share ID

# resourceapi.ResourceDeviceClassPrefix: every class's implicit extended resource name.
DEVICE_CLASS_PREFIX = "deviceclass.resource.kubernetes.io/"


def copied(obj: Any) -> Any:
    """A deep copy of a JSON object (dicts, lists, strings, numbers), many times faster than
    copy.deepcopy: API objects are copied before they are changed."""
    return orjson.loads(orjson.dumps(obj))


@dataclass(frozen=True, slots=True)
class AllocatedDevices:
    """What allocated claims and allocations in flight take (upstream's GatherAllocatedState
    before the quantities are parsed): whole devices, shares of devices, and the capacity
    each share consumes as the allocation result wrote it; the sets are the caller's own.
    `revision` changes whenever any of it does; `pool_stamps` says, per pool (driver, pool
    name), when what is taken of it last changed (stamps only grow), so a result computed
    from a pool's devices stays valid while its stamp does."""

    devices: set[DeviceID]
    shared: set[SharedDeviceID]
    consumed: tuple[tuple[DeviceID, Mapping[str, str]], ...]
    revision: tuple[int, int]
    pool_stamps: Mapping[tuple[str, str], int] = field(default_factory=dict)


class ClaimCacheError(LookupError):
    """The assume cache cannot take a claim: unknown, or older than what it holds."""


class ResourceClaimTracker(Protocol):
    """ResourceClaims as the informer and the scheduler's own writes know them (upstream's
    fwk.ResourceClaimTracker over the assume cache and the allocations in flight)."""

    def get(self, namespace: str, name: str) -> Object | None:
        """The claim, as last assumed or reported; None when unknown."""

    def wait_known(self, namespace: str, name: str, timeout: float) -> bool:
        """Waits up to `timeout` seconds for the informer to report the claim; whether it has."""

    def owned_by(self, pod_uid: str) -> Sequence[Object]:
        """The claims for extended resources the pod controls (upstream scans every claim)."""

    def allocated_devices(self) -> AllocatedDevices:
        """Devices of allocated claims and of allocations in flight."""

    def pending_allocation(self, uid: str) -> Object | None:
        """The allocation Reserve made for the claim and PreBind has not written yet."""

    def signal_pending_allocation(self, uid: str, claim: Object) -> None:
        """Reserve chose `claim`'s allocation; another pod sharing it adds a sharer."""

    def maybe_remove_pending_allocation(self, uid: str, force: bool) -> bool:
        """One sharer is done with it (all of them when `force`); True once it is gone."""

    def assume_after_api_call(self, claim: Object) -> None:
        """The API server took `claim`: show it until the informer reports it (or newer);
        ClaimCacheError when the claim is unknown or older than the one held."""

    def restore(self, namespace: str, name: str) -> None:
        """Forget what was assumed of the claim: back to the informer's version."""


class SharedDRAManager(Protocol):
    """The DRA objects a scheduler keeps between cycles (upstream's fwk.SharedDRAManager)."""

    @property
    def claims(self) -> ResourceClaimTracker: ...

    def slices(self) -> tuple[int, Sequence[Object]]:
        """Every ResourceSlice, and a revision that changes whenever any of them does."""

    def device_class(self, name: str) -> Object | None: ...

    def device_classes(self) -> tuple[int, Mapping[str, Object]]:
        """Every DeviceClass by name, and a revision that changes with any of them."""

    def extended_resource_class(self, resource_name: str) -> Object | None:
        """The DeviceClass backing an extended resource (DRAExtendedResource), if any."""


class ClaimAPIError(Exception):
    """The API server refused a call: `code` is the HTTP status, `str()` the Status message
    (what Go's StatusError.Error() says)."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code

    @property
    def conflict(self) -> bool:
        return self.code == 409

    @property
    def not_found(self) -> bool:
        return self.code == 404


class ResourceClaimClient(Protocol):
    """The API calls the DynamicResources plugin makes (upstream's clientset, event recorder
    and clock). The live scheduler makes them against the API server; simulate applies them
    to its memory and reports them to the backend as the watch would. Calls raise
    ClaimAPIError when refused."""

    def get_claim(self, namespace: str, name: str) -> dict[str, Any]: ...

    def create_claim(self, claim: Object) -> dict[str, Any]: ...

    def update_claim(self, claim: Object) -> dict[str, Any]: ...

    def update_claim_status(self, claim: Object) -> dict[str, Any]: ...

    def patch_claim_status(self, namespace: str, name: str, patch: Object) -> dict[str, Any]:
        """A strategic-merge patch of the claim's status subresource."""

    def delete_claim(self, namespace: str, name: str) -> None: ...

    def patch_pod_status(self, namespace: str, name: str, patch: Object) -> None:
        """A strategic-merge patch of the pod's status subresource."""

    def event(self, pod: Object, kind: str, reason: str, action: str, note: str) -> None: ...

    def now(self) -> datetime.datetime:
        """The wall clock the claims' timestamps are written and compared with."""

    def sleep(self, seconds: float) -> None: ...


def _created(cls: Object) -> float:
    stamp = str((cls.get("metadata") or {}).get("creationTimestamp") or "")
    try:
        return datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0


def _name(cls: Object) -> str:
    return str((cls.get("metadata") or {}).get("name") or "")


def explicit_resource_name(cls: Object) -> str | None:
    name = (cls.get("spec") or {}).get("extendedResourceName")
    return None if name is None else str(name)


class ExtendedResourceClasses:
    """extendedresourcecache.ExtendedResourceCache: extended resource name -> DeviceClass,
    kept from DeviceClass events in the order they come (its tie-breaks depend on it)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_resource: dict[str, Object] = {}

    def device_class(self, resource_name: str) -> Object | None:
        with self._lock:
            return self._by_resource.get(resource_name)

    def on_add(self, cls: Object) -> None:
        self._update(cls, None)

    def on_update(self, old: Object, new: Object) -> None:
        self._update(new, old)

    def on_delete(self, cls: Object) -> None:
        with self._lock:
            self._by_resource.pop(DEVICE_CLASS_PREFIX + _name(cls), None)
            explicit = explicit_resource_name(cls)
            if explicit is not None:
                self._by_resource.pop(explicit, None)

    def _update(self, new: Object, old: Object | None) -> None:
        with self._lock:
            name = explicit_resource_name(new)
            current = self._by_resource.get(name) if name is not None else None
            if current is not None:
                # Two classes claim the same name: the newer wins, then the lower name. Like
                # upstream, a class that loses keeps no mapping at all, not even its implicit one.
                newer, older = _created(new), _created(current)
                if newer < older or (newer == older and _name(new) >= _name(current)):
                    return
            if old is not None:
                self._by_resource.pop(DEVICE_CLASS_PREFIX + _name(old), None)
                explicit = explicit_resource_name(old)
                if explicit is not None:
                    self._by_resource.pop(explicit, None)
            if name is not None:
                self._by_resource[name] = new
            self._by_resource[DEVICE_CLASS_PREFIX + _name(new)] = new


__all__ = [
    "DEVICE_CLASS_PREFIX",
    "AllocatedDevices",
    "ClaimAPIError",
    "ClaimCacheError",
    "DeviceID",
    "ExtendedResourceClasses",
    "Object",
    "ResourceClaimClient",
    "ResourceClaimTracker",
    "SharedDRAManager",
    "SharedDeviceID",
    "copied",
    "explicit_resource_name",
]
