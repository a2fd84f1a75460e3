"""The structured allocator of k8s.io/dynamic-resource-allocation v0.36.3 (`structured/`,
the "incubating" implementation that kube-scheduler 1.36 runs with its default gates): for one
node, find devices for every request of every claim, first fit, in upstream's order (pools by
driver and name, slices by name, devices as listed), backtracking as upstream does.

Using it (the DynamicResources plugin's view):
- `Features()` carries the DRA gates at their 1.36 defaults; switch one off to follow a
  `--feature-gates` setting.
- `SliceIndex(slices)` is built once per change of the ResourceSlices (parse them with
  `model.parse_slice`). It groups slices by node, caches each node's pools, and caches every
  selector's result per device, so a Filter over many nodes evaluates each (expression,
  device) pair once for as long as the slices stay the same.
- `AllocatedState` is what the caller knows is taken: devices of allocated claims and of
  allocations in flight (Reserve until PreBind), shared allocations by share ID, and the
  capacity they consume (upstream's `structured.AllocatedState`).
- `Allocator(features, state, classes, index, cel_cache)` is made once per pod (PreFilter);
  `allocate(node, claims)` answers for one node (Filter): the claims' `status.allocation`
  as JSON dicts, one per claim, or None when the node cannot satisfy them. It raises
  `AllocationError` for problems of the claims or classes themselves (upstream's fatal errors:
  the plugin fails the pod with the message), and `NodeAllocationError` for a node-local
  problem (`invalid resource pools were encountered`: the node is unschedulable with that
  message), and `AllocationTimeoutError` when the optional deadline (the plugin's
  filterTimeout) passes mid-search. A Filter call costs one search over the node's devices;
  selector results come from the index's cache after the first pod."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from scheduler_runtime.dra import cel
from scheduler_runtime.dra.model import (
    ALL,
    ALLOCATION_RESULTS_MAX_SIZE,
    EXACT_COUNT,
    Claim,
    Constraint,
    Device,
    DeviceCapacity,
    DeviceClass,
    DeviceID,
    Request,
    Slice,
    Taint,
)
from scheduler_runtime.framework.quantity import Quantity, QuantityError, parse

Capacity = dict[str, Quantity]


@dataclass(frozen=True, slots=True)
class Features:
    """The DRA feature gates the allocator follows, at their kube-scheduler 1.36 defaults."""

    admin_access: bool = True  # DRAAdminAccess: GA, locked on
    prioritized_list: bool = True  # DRAPrioritizedList: GA
    partitionable_devices: bool = True  # DRAPartitionableDevices: beta, on
    device_taints: bool = True  # DRADeviceTaints: beta, on
    device_binding_conditions: bool = True  # DRADeviceBindingConditions: beta, on
    resource_claim_device_status: bool = True  # DRAResourceClaimDeviceStatus: beta, on
    consumable_capacity: bool = True  # DRAConsumableCapacity: beta, on
    extended_resource: bool = True  # DRAExtendedResource: beta, on (used by the plugin)
    list_type_attributes: bool = False  # DRAListTypeAttributes: alpha, off
    # 1.37's runtime errors name the device and hint at optional chaining for a missing key.
    device_in_runtime_errors: bool = False
    # 1.37's stored-expressions CEL environment: list-valued attributes whatever the gate.
    cel_stored_list_types: bool = False
    # The CEL `includes` function, declared from 1.36.
    cel_includes: bool = True

    @property
    def binding_and_status(self) -> bool:
        """Upstream's DeviceBindingAndStatus: both gates."""
        return self.device_binding_conditions and self.resource_claim_device_status

    @property
    def cel(self) -> cel.Features:
        return cel.Features(
            self.consumable_capacity,
            self.list_type_attributes,
            self.cel_stored_list_types,
            self.cel_includes,
        )


class AllocationError(Exception):
    """A fatal allocation error (bad claim, class or selector): upstream aborts the pod."""


class NodeAllocationError(AllocationError):
    """Upstream's ErrFailedAllocationOnNode: only this node fails, with this message."""


class AllocationTimeoutError(AllocationError):
    """The deadline passed mid-search (upstream: the Filter context's deadline, which the
    plugin reports as `node <name>: timed out trying to allocate devices`)."""


@dataclass(slots=True)
class AllocatedState:
    """Devices taken by allocated or in-flight claims (structured.AllocatedState)."""

    allocated_devices: set[DeviceID] = field(default_factory=set)
    allocated_shared_device_ids: set[tuple[str, str, str, str]] = field(default_factory=set)
    aggregated_capacity: dict[DeviceID, Capacity] = field(default_factory=dict)

    def is_allocated(self, device_id: DeviceID) -> bool:
        """internal.IsDeviceAllocated."""
        if device_id in self.allocated_devices or device_id in self.aggregated_capacity:
            return True
        return any(shared[:3] == device_id for shared in self.allocated_shared_device_ids)

    def add_allocation(self, allocation: Mapping[str, Any]) -> None:
        """Record a claim's `status.allocation` as the plugin's claim tracker does."""
        for result in (allocation.get("devices") or {}).get("results") or ():
            device_id = (result["driver"], result["pool"], result["device"])
            share = result.get("shareID")
            if share is None:
                self.allocated_devices.add(device_id)
                continue
            self.allocated_shared_device_ids.add((*device_id, share))
            consumed = result.get("consumedCapacity")
            if consumed:
                insert_capacity(
                    self.aggregated_capacity, device_id, {n: parse(v) for n, v in consumed.items()}
                )


def insert_capacity(collection: dict[DeviceID, Capacity], device: DeviceID, add: Capacity) -> None:
    current = collection.get(device)
    if current is None:
        collection[device] = dict(add)
        return
    for name, value in add.items():
        current[name] = current[name].plus(value) if name in current else value


def _remove_capacity(collection: dict[DeviceID, Capacity], device: DeviceID, sub: Capacity) -> None:
    current = collection.get(device)
    if current is None:
        return
    for name, value in sub.items():
        if name in current:
            current[name] = current[name].minus(value)
    if all(v.nanos == 0 for v in current.values()):
        del collection[device]


class MatchCache:
    """Each selector's outcome per device: True/False, or the CEL runtime error message, so
    a Filter over many nodes evaluates each (expression, device) pair once while the slices
    stay the same. Bounded: outcomes go into a young generation; when it holds
    `max_bytes` (estimated), it becomes the old one and the previous old one is dropped. An
    outcome found in the old generation moves back to the young one, so the pairs in use
    stay while a claim with thousands of selectors passes through; at most 2 x `max_bytes`."""

    # Counted generously: tracemalloc measures about 70 bytes per outcome in a per-expression
    # dict keyed by device (so at most about 22 MiB in all), and an expression's string and
    # dict besides.
    ENTRY_BYTES = 100
    EXPRESSION_BYTES = 300
    MAX_BYTES = 16 * 2**20

    def __init__(self, max_bytes: int = MAX_BYTES) -> None:
        self.max_bytes = max_bytes
        self.young: dict[str, dict[int, bool | str]] = {}
        self.old: dict[str, dict[int, bool | str]] = {}
        self.young_bytes = 0

    def __len__(self) -> int:
        return sum(map(len, self.young.values())) + sum(map(len, self.old.values()))

    def get(self, expression: str, device: Device) -> bool | str | None:
        per_device = self.young.get(expression)
        if per_device is not None:
            found = per_device.get(id(device))
            if found is not None:
                return found
        per_device = self.old.get(expression)
        if per_device is None:
            return None
        found = per_device.pop(id(device), None)
        if found is not None:
            self.put(expression, device, found)
        return found

    def put(self, expression: str, device: Device, outcome: bool | str) -> None:
        per_device = self.young.get(expression)
        if per_device is None:
            self.young_bytes += self.EXPRESSION_BYTES + len(expression)
            per_device = self.young[expression] = {}
        per_device[id(device)] = outcome
        self.young_bytes += self.ENTRY_BYTES + (len(outcome) if type(outcome) is str else 0)
        if self.young_bytes > self.max_bytes:
            self.old, self.young, self.young_bytes = self.young, {}, 0


@dataclass(frozen=True, slots=True)
class Node:
    """The parts of a Node the allocator looks at."""

    name: str
    labels: Mapping[str, str] = field(default_factory=dict)


# ---------------------------------------------------------------------------------------------
# Pools (pools_incubating.go).


@dataclass(eq=False, slots=True)
class Pool:
    driver: str
    name: str
    incomplete: bool = False
    invalid: bool = False
    invalid_reason: str = ""
    slices: tuple[Slice, ...] = ()  # device slices targeting the node
    other_slices: tuple[Slice, ...] = ()  # slices of the pool not targeting the node
    counter_sets: Mapping[str, Mapping[str, Quantity]] = field(default_factory=dict)
    has_binding_conditions: bool = False

    @property
    def id(self) -> str:
        return f"{self.driver}/{self.name}"


def _node_matches(
    node: Node, name: str | None, all_nodes: bool, selector: Any, fallback: bool = False
) -> bool:
    if name:
        return node.name == name
    if all_nodes:
        return True
    if selector is not None:
        return bool(selector.matches(node.labels, node.name))
    return fallback


class SliceIndex:
    """The cluster's ResourceSlices, indexed for allocation; immutable, rebuilt on change."""

    def __init__(self, slices: Iterable[Slice]) -> None:
        self.all: tuple[Slice, ...] = tuple(slices)
        self.on_node: dict[str, list[Slice]] = {}
        self.shared: list[Slice] = []
        self.by_pool: dict[tuple[str, str], list[Slice]] = {}
        for s in self.all:
            if s.node_name and not s.shared_counters:
                self.on_node.setdefault(s.node_name, []).append(s)
            else:
                self.shared.append(s)
            self.by_pool.setdefault((s.driver, s.pool), []).append(s)
        self._pools: dict[tuple[str, tuple[tuple[str, str], ...], bool], list[Pool]] = {}
        self._searchable: dict[int, list[Pool]] = {}
        self.matches = MatchCache()
        self._built: dict[tuple[Any, ...], Pool] = {}
        self._has_labels_dependency = bool(self.shared) or any(
            s.per_device_node_selection for s in self.all
        )

    def built_pool(
        self,
        driver: str,
        name: str,
        pool_slices: list[Slice],
        features: Features,
        all_for_pool: list[Slice] | None,
    ) -> Pool:
        """buildPool, shared by every node that sees the same slices of the pool."""
        key = (
            tuple(map(id, pool_slices)),
            None if all_for_pool is None else tuple(map(id, all_for_pool)),
            features.partitionable_devices,
        )
        found = self._built.get(key)
        if found is None:
            found = _build_pool(driver, name, pool_slices, features, all_for_pool)
            self._built[key] = found
        return found

    def searchable(self, pools: list[Pool]) -> list[Pool]:
        """The pools a search can take devices from: complete, valid, with devices here."""
        found = self._searchable.get(id(pools))
        if found is None:
            found = [p for p in pools if p.slices and not p.incomplete and not p.invalid]
            self._searchable[id(pools)] = found
        return found

    def pools(self, node: Node, features: Features) -> list[Pool]:
        """GatherPools for the node, cached while the slices and the node's labels stay."""
        labels = tuple(sorted(node.labels.items())) if self._has_labels_dependency else ()
        key = (node.name, labels, features.partitionable_devices)
        found = self._pools.get(key)
        if found is None:
            found = gather_pools(self, node, features)
            self._pools[key] = found
        return found


def gather_pools(index: SliceIndex, node: Node, features: Features) -> list[Pool]:
    grouped: dict[tuple[str, str], list[Slice]] = {}
    for s in [*index.on_node.get(node.name, ()), *index.shared]:
        if not features.partitionable_devices and (
            s.per_device_node_selection is not None or s.shared_counters
        ):
            continue
        if s.shared_counters:
            relevant = True
        elif s.node_name or s.all_nodes or s.node_selector is not None:
            relevant = _node_matches(node, s.node_name, s.all_nodes, s.node_selector)
        elif s.per_device_node_selection:
            relevant = any(
                _node_matches(node, d.node_name, d.all_nodes, d.node_selector) for d in s.devices
            )
        else:
            continue  # some future way of node selection
        if relevant:
            _add_slice(grouped, s)
    result: list[Pool] = []
    with_conditions: list[Pool] = []
    for (driver, name), pool_slices in grouped.items():
        first = pool_slices[0]
        if len(pool_slices) == first.slice_count:
            pool = index.built_pool(driver, name, pool_slices, features, None)
        else:
            obsolete, all_for_pool = _slices_in_pool(index, driver, name, first.generation)
            if obsolete:
                continue
            if len(all_for_pool) != first.slice_count:
                result.append(Pool(driver, name, incomplete=True))
                continue
            pool = index.built_pool(driver, name, pool_slices, features, all_for_pool)
        (with_conditions if pool.has_binding_conditions else result).append(pool)
    result.sort(key=lambda p: (p.driver, p.name))
    with_conditions.sort(key=lambda p: (p.driver, p.name))
    return result + with_conditions


def _add_slice(grouped: dict[tuple[str, str], list[Slice]], s: Slice) -> None:
    key = (s.driver, s.pool)
    current = grouped.get(key)
    if current is None or s.generation > current[0].generation:
        grouped[key] = [s]
    elif s.generation == current[0].generation:
        current.append(s)


def _slices_in_pool(
    index: SliceIndex, driver: str, name: str, generation: int
) -> tuple[bool, list[Slice]]:
    found = []
    for s in index.by_pool.get((driver, name), ()):
        if s.generation == generation:
            found.append(s)
        elif s.generation > generation:
            return True, []
    return False, found


def _build_pool(
    driver: str,
    name: str,
    pool_slices: list[Slice],
    features: Features,
    all_for_pool: list[Slice] | None,
) -> Pool:
    ordered = sorted(pool_slices, key=lambda s: s.name)
    if features.partitionable_devices:
        device_slices = [s for s in ordered if not s.shared_counters]
        counter_slices = [s for s in ordered if s.shared_counters]
    else:
        device_slices, counter_slices = ordered, []
    invalid = _duplicate_device(device_slices)
    if invalid:
        return Pool(driver, name, invalid=True, invalid_reason=invalid)
    conditions = any(d.binding_conditions is not None for s in device_slices for d in s.devices)
    if not features.partitionable_devices:
        return Pool(driver, name, slices=tuple(device_slices), has_binding_conditions=conditions)
    counter_sets: dict[str, Mapping[str, Quantity]] = {}
    for s in counter_slices:
        for set_name, counters in s.shared_counters:
            if set_name in counter_sets:
                reason = f"duplicate counter set name {set_name}"
                return Pool(driver, name, invalid=True, invalid_reason=reason)
            counter_sets[set_name] = counters
    reason = _counter_consumption_error(counter_sets, ordered)
    others: tuple[Slice, ...] = ()
    if not reason and all_for_pool is not None and len(all_for_pool) != len(ordered):
        seen = {s.name for s in ordered}
        others = tuple(s for s in all_for_pool if s.name not in seen)
        reason = _counter_consumption_error(counter_sets, others)
    if reason:
        return Pool(driver, name, invalid=True, invalid_reason=reason)
    return Pool(
        driver,
        name,
        slices=tuple(device_slices),
        other_slices=others,
        counter_sets=counter_sets,
        has_binding_conditions=conditions,
    )


def _duplicate_device(slices: Sequence[Slice]) -> str:
    names: set[str] = set()
    for s in slices:
        for d in s.devices:
            if d.name in names:
                return f"duplicate device name {d.name}"
            names.add(d.name)
    return ""


def _counter_consumption_error(
    counter_sets: Mapping[str, Mapping[str, Quantity]], slices: Iterable[Slice]
) -> str:
    for s in slices:
        for d in s.devices:
            for set_name, counters in d.consumes_counters:
                if set_name not in counter_sets:
                    return f"counter set {set_name} not found"
                for counter in counters:
                    if counter not in counter_sets[set_name]:
                        return f"counter {counter} not found in counter set {set_name}"
    return ""


# ---------------------------------------------------------------------------------------------
# Consumable capacity (consumable_capacity.go).


def _consumed(requested: Quantity | None, cap: DeviceCapacity) -> Quantity:
    policy = cap.policy
    if requested is None:
        if policy is not None and policy.default is not None:
            return policy.default
        return cap.value
    if policy is None:
        return requested
    if policy.has_range and policy.min is not None:
        return _round_up_range(requested, policy)
    if policy.valid_values:
        for valid in policy.valid_values:
            if requested <= valid:
                return valid
    return requested


def _round_up_range(requested: Quantity, policy: Any) -> Quantity:
    if requested < policy.min:
        return policy.min  # type: ignore[no-any-return]
    if policy.step is None:
        return requested
    value, step, low = requested.value(), policy.step.value(), policy.min.value()
    n, rest = divmod(value - low, step) if step else (0, 0)
    n += 1 if rest else 0
    return Quantity.from_int(low + step * n, "BinarySI")


def _violates(value: Quantity, cap: DeviceCapacity) -> bool:
    policy = cap.policy
    if policy is None or (policy.default is not None and value == policy.default):
        return False
    if policy.has_range:
        if policy.max is not None and value > policy.max:
            return True
        if policy.step is not None and policy.min is not None:
            step = policy.step.value()
            return bool(step) and (value.value() - policy.min.value()) % step != 0
        return False
    if policy.valid_values:
        return not any(value == v for v in policy.valid_values)
    return False


def request_fits_capacity(
    consumed_before: Capacity | None,
    requested: Mapping[str, Quantity] | None,
    capacity: Mapping[str, DeviceCapacity],
    allocating: Capacity | None,
) -> bool | None:
    """CmpRequestOverCapacity: None where upstream returns an error (an unknown capacity)."""
    if requested and any(name not in capacity for name in requested):
        return None
    for name, cap in capacity.items():
        consumed = _consumed(requested.get(name) if requested else None, cap)
        if _violates(consumed, cap):
            return False
        total = consumed.nanos
        if consumed_before and name in consumed_before:
            total += consumed_before[name].nanos
        if allocating and name in allocating:
            total += allocating[name].nanos
        if total > cap.value.nanos:
            return False
    return True


def consumed_capacity(
    requested: Mapping[str, Quantity] | None, capacity: Mapping[str, DeviceCapacity]
) -> Capacity:
    return {
        name: _consumed(requested.get(name) if requested else None, cap)
        for name, cap in capacity.items()
    }


# ---------------------------------------------------------------------------------------------
# Taints and tolerations (resourceclaim.ToleratesTaint).


def tolerates(toleration: Mapping[str, Any], taint: Taint) -> bool:
    effect = toleration.get("effect") or ""
    if effect and effect != taint.effect:
        return False
    key = toleration.get("key") or ""
    if key and key != taint.key:
        return False
    operator = toleration.get("operator") or "Equal"
    if operator == "Exists":
        return True
    if operator == "Equal":
        return bool((toleration.get("value") or "") == taint.value)
    return False


def _taint_prevents(device: Device, request: Request) -> bool:
    for taint in device.taints:
        if taint.effect in ("NoExecute", "NoSchedule") and not any(
            tolerates(t, taint) for t in request.tolerations
        ):
            return True
    return False


# ---------------------------------------------------------------------------------------------
# Constraints (matchAttribute, distinctAttribute).


def lookup_attribute(device: Device, name: str) -> Mapping[str, Any] | None:
    attr = device.attributes.get(name)
    if attr is not None:
        return attr
    domain, sep, ident = name.partition("/")
    if not sep or domain != device.id[0]:
        return None
    return device.attributes.get(ident)


_VALUE_KEYS = ("string", "int", "bool", "version")


def _attr_value(attr: Mapping[str, Any]) -> tuple[str, Any] | None:
    for key in _VALUE_KEYS:
        if attr.get(key) is not None:
            return key, attr[key]
    return None


class _MatchConstraint:
    def __init__(self, constraint: Constraint, attribute: str) -> None:
        self.requests = set(constraint.requests)
        self.attribute = attribute
        self.value: tuple[str, Any] | None = None
        self.count = 0

    def applies(self, request: str, sub: str) -> bool:
        if not self.requests:
            return True
        if not sub:
            return request in self.requests
        return request in self.requests or f"{request}/{sub}" in self.requests

    def add(self, request: str, sub: str, device: Device) -> bool:
        if not self.applies(request, sub):
            return True
        attr = lookup_attribute(device, self.attribute)
        if attr is None:
            return False
        value = _attr_value(attr)
        if self.count == 0:
            self.value = value
            self.count = 1
            return True
        if value is None or value != self.value:
            return False
        self.count += 1
        return True

    def remove(self, request: str, sub: str, device: Device) -> None:
        if self.applies(request, sub):
            self.count -= 1


class _DistinctConstraint(_MatchConstraint):
    def __init__(self, constraint: Constraint, attribute: str) -> None:
        super().__init__(constraint, attribute)
        self.values: dict[str, tuple[str, Any] | None] = {}

    def add(self, request: str, sub: str, device: Device) -> bool:
        if not self.applies(request, sub):
            return True
        attr = lookup_attribute(device, self.attribute)
        if attr is None:
            return False
        value = _attr_value(attr)
        if self.count and (value is None or value in self.values.values()):
            return False
        self.values[request] = value
        self.count += 1
        return True

    def remove(self, request: str, sub: str, device: Device) -> None:
        if self.applies(request, sub):
            self.values.pop(request, None)
            self.count -= 1


# ---------------------------------------------------------------------------------------------
# The allocator.


@dataclass(slots=True)
class _RequestData:
    request: Request
    parent: str | None  # name of the request holding this subrequest
    cls: DeviceClass | None
    num_devices: int
    all_devices: list[tuple[Device, Slice, Pool]] | None = None
    selected_sub: int = 0

    @property
    def full_name(self) -> str:
        return f"{self.parent}/{self.request.name}" if self.parent else self.request.name


@dataclass(slots=True)
class _Result:
    device: Device
    slice: Slice
    request: Request
    parent: str | None
    share_id: str | None
    consumed: Capacity | None


class _MaxSizeExceededError(Exception):
    pass


class Allocator:
    """Allocates one pod's claims, node by node (structured.Allocator). Thread-safe for
    concurrent `allocate` calls: per-call state lives in `_Attempt`."""

    def __init__(
        self,
        features: Features,
        state: AllocatedState,
        classes: Mapping[str, DeviceClass],
        index: SliceIndex,
        cel_cache: cel.Cache,
    ) -> None:
        self.features = features
        self.state = state
        self.classes = classes
        self.index = index
        self.cel_cache = cel_cache
        self.cel_features = features.cel
        self._available_counters: dict[str, dict[str, dict[str, int]]] = {}

    def allocate(
        self, node: Node, claims: Sequence[Claim], deadline: float | None = None
    ) -> list[dict[str, Any]] | None:
        """The claims' allocations on the node, or None; `deadline` is a `time.monotonic()`
        instant after which the search stops with AllocationTimeoutError."""
        return _Attempt(self, node, claims, deadline).run()

    def available_counters(self, pool: Pool) -> dict[str, dict[str, int]]:
        """Counters of the pool left by allocated devices (nanos), computed once per pool."""
        found = self._available_counters.get(pool.name)
        if found is not None:
            return found
        available = {n: {c: q.nanos for c, q in cs.items()} for n, cs in pool.counter_sets.items()}
        for s in (*pool.slices, *pool.other_slices):
            for device in s.devices:
                if not self.state.is_allocated(device.id):
                    continue
                for set_name, counters in device.consumes_counters:
                    current = available.get(set_name)
                    if current is None:
                        continue
                    for counter, value in counters.items():
                        if counter in current:
                            current[counter] -= value.nanos
        self._available_counters[pool.name] = available
        return available


class _Attempt:
    """One Allocate call (upstream's `allocator`): the search and its bookkeeping."""

    def __init__(
        self, owner: Allocator, node: Node, claims: Sequence[Claim], deadline: float | None
    ) -> None:
        self.a = owner
        self.deadline = deadline
        self.features = owner.features
        self.node = node
        self.claims = claims
        self.request_data: dict[tuple[int, int, int], _RequestData] = {}
        self.constraints: list[list[_MatchConstraint]] = []
        self.results: list[list[_Result]] = [[] for _ in claims]
        self.allocating: dict[DeviceID, set[int]] = {}
        self.allocating_capacity: dict[DeviceID, Capacity] = {}
        self.consumed_counters: dict[str, dict[str, dict[str, int]]] = {}
        self.pools: list[Pool] = []
        self.search_pools: list[Pool] = []

    # -- setup ----------------------------------------------------------------------------

    def run(self) -> list[dict[str, Any]] | None:
        self.pools = self.a.index.pools(self.node, self.features)
        self.search_pools = self.a.index.searchable(self.pools)
        for claim_index, claim in enumerate(self.claims):
            self._prepare_claim(claim_index, claim)
        try:
            done = self._search_all()
        except _MaxSizeExceededError:
            raise AllocationError("allocation max size exceeded") from None
        if not done:
            if any(p.invalid for p in self.pools):
                raise NodeAllocationError("invalid resource pools were encountered")
            return None
        return [self._allocation(i, claim) for i, claim in enumerate(self.claims)]

    def _prepare_claim(self, claim_index: int, claim: Claim) -> None:  # noqa: PLR0912 (upstream's checks, in its order)
        features = self.features
        min_devices = 0
        for request_index, request in enumerate(claim.requests):
            if request.first_available and not features.prioritized_list:
                raise AllocationError(
                    f"claim {claim.key}, request {request.name}: has subrequests, "
                    "but the DRAPrioritizedList feature is disabled"
                )
            if not features.consumable_capacity:
                if request.exactly is not None and request.exactly.capacity is not None:
                    raise AllocationError(
                        f"claim {claim.key}, request {request.name}: has capacity requests, "
                        "but the DRAConsumableCapacity feature is disabled"
                    )
                for sub in request.first_available:
                    if sub.capacity is not None:
                        raise AllocationError(
                            f"claim {claim.key}, subrequest {sub.name}: has capacity requests, "
                            "but the DRAConsumableCapacity feature is disabled"
                        )
            if request.first_available:
                fewest = None
                for sub_index, sub in enumerate(request.first_available):
                    data = self._validate(
                        claim, sub, request.name, (claim_index, request_index, sub_index)
                    )
                    self.request_data[(claim_index, request_index, sub_index)] = data
                    fewest = data.num_devices if fewest is None else min(fewest, data.num_devices)
                min_devices += fewest or 0
            else:
                exact = request.exactly or Request(
                    request.name, "", EXACT_COUNT, 0, None, (), (), None
                )
                data = self._validate(claim, exact, None, (claim_index, request_index, 0))
                self.request_data[(claim_index, request_index, 0)] = data
                min_devices += data.num_devices
        if min_devices > ALLOCATION_RESULTS_MAX_SIZE:
            raise AllocationError(
                f"claim {claim.key}: number of requested devices {min_devices} exceeds "
                f"the claim limit of {ALLOCATION_RESULTS_MAX_SIZE}"
            )
        constraints: list[_MatchConstraint] = []
        for i, c in enumerate(claim.constraints):
            if c.match_attribute is not None:
                constraints.append(_MatchConstraint(c, c.match_attribute))
            elif c.distinct_attribute is not None:
                constraints.append(_DistinctConstraint(c, c.distinct_attribute))
            else:
                raise AllocationError(
                    f"claim {claim.key}, constraint #{i}: empty constraint "
                    "(unsupported constraint type?)"
                )
        self.constraints.append(constraints)

    def _validate(
        self, claim: Claim, request: Request, parent: str | None, key: tuple[int, int, int]
    ) -> _RequestData:
        for i, selector in enumerate(request.selectors):
            if selector is None:
                raise AllocationError(
                    f"claim {claim.key}, request {request.name}, selector #{i}: "
                    "CEL expression empty (unsupported selector type?)"
                )
        if not self.features.admin_access and request.admin_access is not None:
            raise AllocationError(
                f"claim {claim.key}, request {request.name}: admin access is requested, "
                "but the feature is disabled"
            )
        if not request.device_class_name:
            raise AllocationError(
                f"claim {claim.key}, request {request.name}: missing device class name "
                "(unsupported request type?)"
            )
        cls = self.a.classes.get(request.device_class_name)
        if cls is None:
            raise AllocationError(
                f"claim {claim.key}, request {request.name}: could not retrieve device class "
                f'{request.device_class_name}: deviceclass.resource.k8s.io "'
                f'{request.device_class_name}" not found'
            )
        data = _RequestData(request, parent, cls, 0)
        if request.allocation_mode == EXACT_COUNT:
            data.num_devices = request.count
        elif request.allocation_mode == ALL:
            data.all_devices = self._all_devices(claim, data, key)
            data.num_devices = len(data.all_devices)
        else:
            raise AllocationError(
                f"claim {claim.key}, request {request.name}: unsupported count mode "
                f"{request.allocation_mode}"
            )
        return data

    def _all_devices(
        self, claim: Claim, data: _RequestData, key: tuple[int, int, int]
    ) -> list[tuple[Device, Slice, Pool]]:
        found = []
        for pool in self.pools:
            if pool.incomplete:
                raise AllocationError(
                    f"claim {claim.key}, request {data.request.name}: asks for all devices, "
                    f"but resource pool {pool.id} is currently being updated"
                )
            if pool.invalid:
                raise AllocationError(
                    f"claim {claim.key}, request {data.request.name}: asks for all devices, "
                    f"but resource pool {pool.id} is currently invalid"
                )
            for s in pool.slices:
                for device in s.devices:
                    self._check_deadline()
                    if not self._selectable(key[0], data, s, device):
                        continue
                    if self.features.consumable_capacity and not self._fits_capacity(
                        data.request, device
                    ):
                        continue
                    found.append((device, s, pool))
        return found

    # -- selectors ------------------------------------------------------------------------

    def _selectable(self, claim_index: int, data: _RequestData, s: Slice, device: Device) -> bool:
        if not self.features.binding_and_status and device.binding_conditions:
            return False
        if data.cls is not None and not self._selectors_match(
            claim_index, device, data.cls, data.cls.selectors
        ):
            return False
        if not self._selectors_match(claim_index, device, None, data.request.selectors):
            return False
        if s.per_device_node_selection:
            return _node_matches(
                self.node, device.node_name, device.all_nodes, device.node_selector
            )
        return True

    def _selectors_match(
        self,
        claim_index: int,
        device: Device,
        cls: DeviceClass | None,
        selectors: Sequence[str | None],
    ) -> bool:
        cache = self.a.index.matches
        young = cache.young
        for i, expression in enumerate(selectors):
            assert expression is not None  # checked in _validate
            per_device = young.get(expression)  # the common case, without a call
            outcome = per_device.get(id(device)) if per_device is not None else None
            if outcome is None:
                outcome = cache.get(expression, device)
            if outcome is None:
                outcome = self._evaluate(expression, device, cls, claim_index, i)
                if outcome is not None:
                    cache.put(expression, device, outcome)
            if type(outcome) is str:
                raise AllocationError(self._runtime_error(claim_index, device, cls, i, outcome))
            if not outcome:
                return False
        return True

    def _runtime_error(
        self, claim_index: int, device: Device, cls: DeviceClass | None, i: int, error: str
    ) -> str:
        """Upstream's words for selector #i failing on a device (1.37 names the device)."""
        owner = f"class {cls.name}" if cls else f"claim {self.claims[claim_index].key}"
        if not self.features.device_in_runtime_errors:
            return f"{owner}: selector #{i}: CEL runtime error: {error}"
        if "no such key:" in error:  # cel.EnhanceRuntimeError
            error += (
                ". consider using CEL optional chaining (.? followed by orValue()) or guarding "
                "the check with has() for optional fields"
            )
        where = "/".join(device.id)
        return f"{owner}: selector #{i} on device {where}: CEL runtime error: {error}"

    def _evaluate(
        self, expression: str, device: Device, cls: DeviceClass | None, claim_index: int, i: int
    ) -> bool | str | None:
        compiled = self.a.cel_cache.get_or_compile(expression)
        if compiled.error is not None:
            owner = f"class {cls.name}" if cls else f"claim {self.claims[claim_index].key}"
            raise AllocationError(f"{owner}: selector #{i}: CEL compile error: {compiled.error}")
        try:
            return compiled.device_matches(
                device.cel_input(self.a.cel_features), deadline=self.deadline
            )
        except (cel.CelRuntimeError, QuantityError) as e:
            # CEL does not say why it was interrupted: the deadline passing says it (as
            # upstream's DeviceMatches deduces it), and the outcome is not the device's.
            self._check_deadline()
            return str(e)

    def _fits_capacity(self, request: Request, device: Device) -> bool:
        before = self.a.state.aggregated_capacity.get(device.id)
        allocating = self.allocating_capacity.get(device.id)
        # Nothing consumed yet and nothing asked for: each capacity consumes its whole value,
        # which fits unless a policy says otherwise.
        if not request.capacity and before is None and allocating is None and device.plain_capacity:
            return True
        fits = request_fits_capacity(before, request.capacity, device.capacity, allocating)
        return bool(fits)

    # -- the search -----------------------------------------------------------------------

    def _search_all(self) -> bool:
        """allocateOne from the first claim, its recursion run on an explicit stack (as deep
        as the devices being allocated: a pod's claims may ask for hundreds). Each frame waits
        for the answer of the call it made: True, False, or _EXCEEDED (upstream's
        errAllocationResultMaxSizeExceeded); other errors abandon the search."""
        stack: list[_Frame] = []
        step: _Call | bool | object = (0, 0, 0, 0, False, _ORIGIN)
        try:
            while True:
                if type(step) is tuple:
                    step = self._enter(step, stack)
                elif stack:
                    step = stack[-1].resume(step, stack)
                elif step is _EXCEEDED:
                    raise _MaxSizeExceededError
                else:
                    return bool(step)
        except BaseException:
            for frame in reversed(stack):
                frame.abandon()
            raise

    def _enter(self, call: _Call, stack: list[_Frame]) -> _Call | bool | object:  # noqa: PLR0911 (upstream's allocateOne, step by step)
        """allocateOne up to its first device: an answer, or the call after the device taken
        (with a frame pushed to see that call's answer). Moving on to the next request or
        claim is a loop here, not a call."""
        claim_index, request_index, sub, device_index, in_sub, _ = call
        claims = self.claims
        deadline = self.deadline
        while True:
            if deadline is not None and time.monotonic() > deadline:
                self._check_deadline()
            if claim_index >= len(claims):
                return True
            if request_index >= len(claims[claim_index].requests):
                if claim_index + 1 >= len(claims):
                    return True
                stack.append(_NEXT_CLAIM)
                claim_index, request_index, sub, device_index, in_sub = (
                    claim_index + 1,
                    0,
                    0,
                    0,
                    False,
                )
                continue
            data = self.request_data[(claim_index, request_index, sub)]
            if not in_sub and data.parent is not None:
                subrequests = _Subrequests(self, claim_index, request_index, device_index)
                stack.append(subrequests)
                return subrequests.next_call(stack)
            if data.request.allocation_mode == ALL and not data.all_devices:
                return False
            if device_index >= data.num_devices:
                request_index, sub, device_index, in_sub = request_index + 1, 0, 0, False
                continue
            break
        if len(self.results[claim_index]) + data.num_devices - device_index > (
            ALLOCATION_RESULTS_MAX_SIZE
        ):
            return _EXCEEDED
        if data.all_devices is not None and data.request.allocation_mode == ALL:
            device, s, pool = data.all_devices[device_index]
            undo = self._allocate_device(claim_index, data, device, s, pool, must=True)
            if undo is None:
                return False
            stack.append(_AllDevices(undo))
            return (claim_index, request_index, sub, device_index + 1, in_sub, _ORIGIN)
        if call[0] != claim_index or call[1] != request_index:  # moved on: from the start
            call = (claim_index, request_index, sub, device_index, in_sub, _ORIGIN)
        frame = _Search(self, call, data)
        stack.append(frame)
        return frame.scan(stack)

    def _check_deadline(self) -> None:
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise AllocationTimeoutError("filter operation aborted: context deadline exceeded")

    def _allocate_device(  # noqa: PLR0911, PLR0912, PLR0917 (upstream's allocateDevice)
        self,
        claim_index: int,
        data: _RequestData,
        device: Device,
        s: Slice,
        pool: Pool,
        must: bool,
    ) -> Callable[[], None] | None:
        """allocateDevice: take the device for the request, or None; returns the undo."""
        request = data.request
        features = self.features
        device_id = device.id
        admin = bool(request.admin_access)
        multi = features.consumable_capacity and bool(device.allow_multiple_allocations)
        using = self.allocating.get(device_id)
        if not multi and admin and using and claim_index in using:
            return None
        if not admin and (using or device_id in self.a.state.allocated_devices):
            return None
        if not features.partitionable_devices and device.consumes_counters:
            return None
        skip_counters = multi and (
            device_id in self.a.state.aggregated_capacity or device_id in self.allocating_capacity
        )
        undo: list[Callable[[], None]] = []

        def rollback() -> None:
            for step in reversed(undo):
                step()

        if not skip_counters and device.consumes_counters:
            if not self._take_counters(device, pool):
                return None
            undo.append(lambda: self._release_counters(device, pool))
        base = data.parent or request.name
        sub_name = request.name if data.parent else ""
        if features.device_taints and _taint_prevents(device, request):
            rollback()
            return None
        for constraint in self.constraints[claim_index]:
            if not constraint.add(base, sub_name, device):
                rollback()
                if must:
                    claim = self.claims[claim_index]
                    raise AllocationError(
                        f"claim {claim.key}, request {request.name}: cannot add device "
                        f"{'/'.join(device_id)} because a claim constraint would not be satisfied"
                    )
                return None
            undo.append(lambda c=constraint: c.remove(base, sub_name, device))  # type: ignore[misc]
        if not multi:
            self.allocating.setdefault(device_id, set()).add(claim_index)
            undo.append(lambda: self.allocating[device_id].discard(claim_index))
        consumed: Capacity | None = None
        share_id: str | None = None
        if features.consumable_capacity:
            if not self._fits_capacity(request, device):
                rollback()
                return None
            if multi:
                consumed = consumed_capacity(request.capacity, device.capacity)
                share_id = str(uuid.uuid4())
                existed = device_id in self.allocating_capacity
                insert_capacity(self.allocating_capacity, device_id, consumed)

                def release(taken: Capacity = consumed, existed: bool = existed) -> None:
                    _remove_capacity(self.allocating_capacity, device_id, taken)
                    if existed and device_id not in self.allocating_capacity:
                        self.allocating_capacity[device_id] = {}

                undo.append(release)
        results = self.results[claim_index]
        results.append(_Result(device, s, request, data.parent, share_id, consumed or None))
        undo.append(lambda: _drop_last(results))
        return rollback

    def _take_counters(self, device: Device, pool: Pool) -> bool:
        available = self.a.available_counters(pool)
        consumed = self.consumed_counters.setdefault(pool.name, {})
        for set_name, counters in device.consumes_counters:
            current = consumed.setdefault(set_name, {})
            for name, value in counters.items():
                current[name] = current.get(name, 0) + value.nanos
        for set_name, left in available.items():
            used = consumed.get(set_name, {})
            for name, nanos in left.items():
                if nanos < used.get(name, 0):
                    self._release_counters(device, pool)
                    return False
        return True

    def _release_counters(self, device: Device, pool: Pool) -> None:
        consumed = self.consumed_counters[pool.name]
        for set_name, counters in device.consumes_counters:
            current = consumed[set_name]
            for name, value in counters.items():
                current[name] -= value.nanos

    # -- the result -----------------------------------------------------------------------

    def _allocation(self, claim_index: int, claim: Claim) -> dict[str, Any]:
        results = []
        for r in self.results[claim_index]:
            entry: dict[str, Any] = {
                "request": f"{r.parent}/{r.request.name}" if r.parent else r.request.name,
                "driver": r.device.id[0],
                "pool": r.device.id[1],
                "device": r.device.name,
            }
            if r.request.admin_access:
                entry["adminAccess"] = True
            if r.request.tolerations:
                entry["tolerations"] = [dict(t) for t in r.request.tolerations]
            if self.features.binding_and_status:
                if r.device.binding_conditions:
                    entry["bindingConditions"] = list(r.device.binding_conditions)
                if r.device.binding_failure_conditions:
                    entry["bindingFailureConditions"] = list(r.device.binding_failure_conditions)
            if r.share_id is not None:
                entry["shareID"] = r.share_id
            if r.consumed:
                entry["consumedCapacity"] = {n: str(q) for n, q in r.consumed.items()}
            results.append(entry)
        allocation: dict[str, Any] = {"devices": {"results": results}}
        config = self._config(claim_index, claim)
        if config:
            allocation["devices"]["config"] = config
        selector = self._node_selector(self.results[claim_index], claim.name)
        if selector is not None:
            allocation["nodeSelector"] = selector
        return allocation

    def _config(self, claim_index: int, claim: Claim) -> list[dict[str, Any]]:
        config: list[dict[str, Any]] = []
        by_class: dict[str, tuple[int, int]] = {}
        for request_index in range(len(claim.requests)):
            data = self.request_data[(claim_index, request_index, 0)]
            if data.parent is not None:
                data = self.request_data[(claim_index, request_index, data.selected_sub)]
            cls = data.cls
            if cls is None:
                continue
            if cls.name in by_class:
                first, end = by_class[cls.name]
                for i in range(first, end):
                    config[i]["requests"].append(data.full_name)
                continue
            first = len(config)
            for c in cls.config:
                config.append({"source": "FromClass", "requests": [data.full_name], **_opaque(c)})
            by_class[cls.name] = (first, len(config))
        for c in claim.config:
            requests = list(c.get("requests") or ())
            if not requests:
                config.append({"source": "FromClaim", **_opaque(c)})
                continue
            for request_index, request in enumerate(claim.requests):
                if request.name in requests:
                    config.append({"source": "FromClaim", "requests": requests, **_opaque(c)})
                    continue
                data = self.request_data[(claim_index, request_index, 0)]
                if data.parent is None:
                    continue
                chosen = request.first_available[data.selected_sub]
                if f"{request.name}/{chosen.name}" in requests:
                    config.append({"source": "FromClaim", "requests": requests, **_opaque(c)})
        return config

    def _node_selector(self, results: Sequence[_Result], claim: str) -> dict[str, Any] | None:
        fields: list[dict[str, Any]] = []
        expressions: list[dict[str, Any]] = []
        for r in results:
            if r.slice.per_device_node_selection:
                name, selector = r.device.node_name, r.device.node_selector
            else:
                name, selector = r.slice.node_name, r.slice.node_selector
            if name or r.device.binds_to_node:
                field_ = {"key": "metadata.name", "operator": "In", "values": [self.node.name]}
                return {"nodeSelectorTerms": [{"matchFields": [field_]}]}
            if selector is None:
                continue
            terms = selector.raw.get("nodeSelectorTerms") or []
            if len(terms) == 1:
                _add_requirements(terms[0].get("matchFields") or [], fields)
                _add_requirements(terms[0].get("matchExpressions") or [], expressions)
            elif len(terms) > 1:
                raise AllocationError(
                    f"create NodeSelector for claim {claim}: unsupported ResourceSlice."
                    f"NodeSelector with {len(terms)} terms"
                )
        if not fields and not expressions:
            return None
        term: dict[str, Any] = {}
        if expressions:
            term["matchExpressions"] = expressions
        if fields:
            term["matchFields"] = fields
        return {"nodeSelectorTerms": [term]}


# ---------------------------------------------------------------------------------------------
# The search's frames: allocateOne's recursion, one frame per call still waiting for an answer.


# allocateOne's arguments: claim, request and subrequest index, the device to find, whether
# a subrequest is being tried, and where the search for the device starts (pool, slice,
# device).
_Call = tuple[int, int, int, int, bool, tuple[int, int, int]]
_ORIGIN = (0, 0, 0)
_EXCEEDED = object()  # errAllocationResultMaxSizeExceeded, as an answer


class _Frame:
    """A call waiting for the answer of the call it made."""

    __slots__ = ()

    def resume(self, answer: object, stack: list[_Frame]) -> _Call | bool | object:
        """Go on with the answer: the next call, or (popped) this call's own answer."""
        raise NotImplementedError

    def abandon(self) -> None:
        """The search stops with an error: undo what this call took."""


class _NextClaim(_Frame):
    """Done with a claim: a later claim exceeding the size limit is only a failure here."""

    __slots__ = ()

    def resume(self, answer: object, stack: list[_Frame]) -> _Call | bool | object:
        stack.pop()
        return False if answer is _EXCEEDED else answer


_NEXT_CLAIM = _NextClaim()


class _Subrequests(_Frame):
    """A request with subrequests: the first one that can be allocated."""

    __slots__ = ("all_exceeded", "attempt", "claim_index", "device_index", "request_index", "sub")

    def __init__(
        self, attempt: _Attempt, claim_index: int, request_index: int, device_index: int
    ) -> None:
        self.attempt = attempt
        self.claim_index = claim_index
        self.request_index = request_index
        self.device_index = device_index
        self.sub = 0
        self.all_exceeded = True

    def next_call(self, stack: list[_Frame]) -> _Call | bool | object:
        key = (self.claim_index, self.request_index, self.sub)
        if key not in self.attempt.request_data:
            stack.pop()
            return _EXCEEDED if self.all_exceeded else False
        return (self.claim_index, self.request_index, self.sub, self.device_index, True, _ORIGIN)

    def resume(self, answer: object, stack: list[_Frame]) -> _Call | bool | object:
        if answer is not _EXCEEDED:
            self.all_exceeded = False
            if answer:
                key = (self.claim_index, self.request_index, 0)
                self.attempt.request_data[key].selected_sub = self.sub
                stack.pop()
                return True
        self.sub += 1
        return self.next_call(stack)


class _AllDevices(_Frame):
    """allocationMode All: the device taken, and the rest of the request after it."""

    __slots__ = ("undo",)

    def __init__(self, undo: Callable[[], None]) -> None:
        self.undo = undo

    def resume(self, answer: object, stack: list[_Frame]) -> _Call | bool | object:
        stack.pop()
        if answer is not True:
            self.undo()
        return answer

    def abandon(self) -> None:
        self.undo()


class _Search(_Frame):
    """allocationMode ExactCount: the devices in upstream's order, from the start location,
    each taken in turn while the rest of the search is tried after it."""

    __slots__ = ("attempt", "call", "data", "device", "pool", "slice", "undo")

    def __init__(self, attempt: _Attempt, call: _Call, data: _RequestData) -> None:
        self.attempt = attempt
        self.call = call
        self.data = data
        self.pool, self.slice, self.device = call[5]
        self.undo: Callable[[], None] | None = None

    def resume(self, answer: object, stack: list[_Frame]) -> _Call | bool | object:
        if answer is True:
            stack.pop()
            return True
        assert self.undo is not None
        self.undo()
        self.undo = None
        if answer is _EXCEEDED:
            stack.pop()
            return _EXCEEDED
        self.device += 1
        return self.scan(stack)

    def abandon(self) -> None:
        if self.undo is not None:
            self.undo()

    def scan(self, stack: list[_Frame]) -> _Call | bool | object:
        """From the current location on: the call after the next device taken, or False."""
        attempt, data, call = self.attempt, self.data, self.call
        claim_index = call[0]
        request = data.request
        admin = bool(request.admin_access)
        allocated = attempt.a.state.allocated_devices
        allocating = attempt.allocating
        consumable = attempt.features.consumable_capacity
        deadline = attempt.deadline
        pools = attempt.search_pools
        while self.pool < len(pools):
            pool = pools[self.pool]
            while self.slice < len(pool.slices):
                s = pool.slices[self.slice]
                devices = s.devices
                while self.device < len(devices):
                    if deadline is not None and time.monotonic() > deadline:
                        attempt._check_deadline()
                    device = devices[self.device]
                    device_id = device.id
                    using = allocating.get(device_id)
                    if admin:
                        taken = bool(using) and claim_index in using  # type: ignore[operator]
                    else:
                        taken = bool(using) or device_id in allocated
                    if taken:
                        self.device += 1
                        continue
                    if not attempt._selectable(claim_index, data, s, device) or (
                        consumable and not attempt._fits_capacity(request, device)
                    ):
                        self.device += 1
                        continue
                    undo = attempt._allocate_device(claim_index, data, device, s, pool, False)
                    if undo is None:
                        self.device += 1
                        continue
                    self.undo = undo
                    location = (self.pool, self.slice, self.device + 1)
                    return (claim_index, call[1], call[2], call[3] + 1, call[4], location)
                self.slice += 1
                self.device = 0
            self.pool += 1
            self.slice = 0
        stack.pop()
        return False


def _drop_last(results: list[_Result]) -> None:
    results.pop()


def _opaque(config: Mapping[str, Any]) -> dict[str, Any]:
    """The DeviceConfiguration part of a class or claim config entry."""
    return {k: v for k, v in config.items() if k not in ("requests", "source")}


def _add_requirements(source: Iterable[Mapping[str, Any]], target: list[dict[str, Any]]) -> None:
    for requirement in source:
        values = set(requirement.get("values") or ())
        if not any(
            t.get("key") == requirement.get("key")
            and t.get("operator") == requirement.get("operator")
            and set(t.get("values") or ()) == values
            for t in target
        ):
            target.append(dict(requirement))


__all__ = [
    "AllocatedState",
    "AllocationError",
    "AllocationTimeoutError",
    "Allocator",
    "Capacity",
    "Features",
    "MatchCache",
    "Node",
    "NodeAllocationError",
    "Pool",
    "SliceIndex",
    "gather_pools",
    "insert_capacity",
    "lookup_attribute",
    "request_fits_capacity",
    "tolerates",
]
