"""The scheduler's DRA objects as the allocator reads them, parsed once per change: the
DeviceClasses by name, the ResourceSlices indexed (`SliceIndex`, rebuilt only when a slice
changes, and then from the slices already parsed but the changed ones), and the devices taken
(`AllocatedState`, upstream's GatherAllocatedState with its quantities parsed)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping, Sequence

from scheduler_runtime.dra.allocator import (
    AllocatedState,
    Capacity,
    SliceIndex,
    insert_capacity,
)
from scheduler_runtime.dra.model import (
    DeviceClass,
    ModelError,
    Slice,
    parse_class,
    parse_slice,
)
from scheduler_runtime.framework.dra import (
    AllocatedDevices,
    ClaimCacheError,
    Object,
    SharedDRAManager,
)
from scheduler_runtime.framework.quantity import QuantityError
from scheduler_runtime.framework.quantity import parse as parse_quantity

log = logging.getLogger(__name__)


def _version_key(obj: Object) -> tuple[str, str, str]:
    metadata = obj.get("metadata") or {}
    return (
        str(metadata.get("name") or ""),
        str(metadata.get("uid") or ""),
        str(metadata.get("resourceVersion") or ""),
    )


class NoDRA:
    """The DRA state of a framework built without a scheduler around it (a replay, a test):
    no claims, slices or classes, and nothing to track."""

    @property
    def claims(self) -> NoDRA:
        return self

    def slices(self) -> tuple[int, Sequence[Object]]:
        return 0, ()

    def device_class(self, name: str) -> Object | None:
        return None

    def device_classes(self) -> tuple[int, Mapping[str, Object]]:
        return 0, {}

    def extended_resource_class(self, resource_name: str) -> Object | None:
        return None

    def get(self, namespace: str, name: str) -> Object | None:
        return None

    def wait_known(self, namespace: str, name: str, timeout: float) -> bool:
        return False

    def owned_by(self, pod_uid: str) -> Sequence[Object]:
        return ()

    def allocated_devices(self) -> AllocatedDevices:
        return AllocatedDevices(set(), set(), (), (0, 0))

    def pending_allocation(self, uid: str) -> Object | None:
        return None

    def signal_pending_allocation(self, uid: str, claim: Object) -> None:
        return None

    def maybe_remove_pending_allocation(self, uid: str, force: bool) -> bool:
        return False

    def assume_after_api_call(self, claim: Object) -> None:
        raise ClaimCacheError("no claims are kept")

    def restore(self, namespace: str, name: str) -> None:
        return None


class ParsedDRA:
    """What the DynamicResources plugin reads of the scheduler's DRA state, parsed and kept
    for as long as the state's revisions stay. Thread-safe."""

    def __init__(self, dra: SharedDRAManager) -> None:
        self.dra = dra
        self._lock = threading.Lock()
        self._class_revision = -1
        self._classes: dict[str, DeviceClass] = {}
        self._slice_revision = -1
        self._index = SliceIndex(())
        self._slices: dict[tuple[str, str, str], Slice] = {}

    def classes(self) -> Mapping[str, DeviceClass]:
        revision, raw = self.dra.device_classes()
        with self._lock:
            if revision != self._class_revision:
                self._classes = {name: parse_class(obj) for name, obj in raw.items()}
                self._class_revision = revision
            return self._classes

    def device_class(self, name: str) -> DeviceClass | None:
        return self.classes().get(name)

    def slice_index(self) -> SliceIndex:
        """The index of every ResourceSlice; a slice that does not parse is left out (the API
        server validates slices, so only a hand-written state file holds such a one)."""
        revision, raw = self.dra.slices()
        with self._lock:
            if revision == self._slice_revision:
                return self._index
            parsed: dict[tuple[str, str, str], Slice] = {}
            for obj in raw:
                key = _version_key(obj)
                found = self._slices.get(key)
                if found is None:
                    try:
                        found = parse_slice(obj)
                    except ModelError as error:
                        log.warning("ignoring a ResourceSlice that does not parse: %s", error)
                        continue
                parsed[key] = found
            self._slices = parsed
            self._index = SliceIndex(sorted(parsed.values(), key=lambda s: s.name))
            self._slice_revision = revision
            return self._index

    def allocated_state(self) -> tuple[AllocatedState, Mapping[tuple[str, str], int]]:
        """The devices allocated claims and allocations in flight take, and when what is
        taken of each pool last changed."""
        taken = self.dra.claims.allocated_devices()
        capacity: dict[tuple[str, str, str], Capacity] = {}
        for device, consumed in taken.consumed:
            try:
                amounts = {name: parse_quantity(str(v)) for name, v in consumed.items()}
            except QuantityError:
                continue  # the API server refuses such an allocation; nothing to count
            insert_capacity(capacity, device, amounts)
        return AllocatedState(taken.devices, taken.shared, capacity), taken.pool_stamps


__all__ = ["NoDRA", "ParsedDRA"]
