"""The resource.k8s.io/v1 objects the allocator reads (DeviceClass, ResourceSlice,
ResourceClaim), parsed once from their JSON form into compact, immutable records: quantities
parsed, selectors kept as expression strings, node selectors parsed. A device's CEL variables
are built on first use and kept on the device, so every selector evaluated against it reuses
them. `ModelError` names the field and the reason when an object does not parse."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from scheduler_runtime.dra import cel, validation
from scheduler_runtime.framework.nodeselector import Term, parse_terms, terms_match
from scheduler_runtime.framework.quantity import Quantity, QuantityError
from scheduler_runtime.framework.quantity import parse as parse_quantity

# resourceapi.AllocationResultsMaxSize
ALLOCATION_RESULTS_MAX_SIZE = 32
EXACT_COUNT, ALL = "ExactCount", "All"

DeviceID = tuple[str, str, str]  # driver, pool, device


class ModelError(ValueError):
    """An object that cannot be read: the message names the field and the reason."""


_Parsed = TypeVar("_Parsed")


def _typed(kind: str) -> Callable[[Callable[[Any], _Parsed]], Callable[[Any], _Parsed]]:
    """A field of the wrong type fails the parse with a ModelError in the API server's words
    (dra.validation), never with a TypeError from inside it."""

    def wrap(parse: Callable[[Any], _Parsed]) -> Callable[[Any], _Parsed]:
        @functools.wraps(parse)
        def parsed(obj: Any) -> _Parsed:
            try:
                return parse(obj)
            except ModelError:
                raise
            except (TypeError, ValueError, AttributeError, KeyError) as error:
                obj = obj if isinstance(obj, Mapping) else {}
                errors = validation.validate(obj, kind=kind)
                reason = validation.aggregate(errors) if errors else f"cannot be read: {error}"
                raise ModelError(f"{validation.describe(obj, kind)}: {reason}") from None

        return parsed

    return wrap


@dataclass(frozen=True, slots=True)
class NodeSelector:
    """A node selector; `names` holds the node names when it only names nodes (what an
    allocation on node-local devices writes), so matching is a set lookup."""

    terms: tuple[Term, ...]
    raw: Mapping[str, Any]
    names: frozenset[str] | None = None

    def matches(self, labels: Mapping[str, str], node_name: str) -> bool:
        if self.names is not None:
            return node_name in self.names
        return terms_match(self.terms, labels, node_name)


def _only_names(raw: Mapping[str, Any]) -> frozenset[str] | None:
    terms: Sequence[Mapping[str, Any]] = raw.get("nodeSelectorTerms") or ()
    if len(terms) != 1 or set(terms[0]) != {"matchFields"}:
        return None
    fields: Sequence[Mapping[str, Any]] = terms[0]["matchFields"] or ()
    if len(fields) != 1:
        return None
    requirement = fields[0]
    if requirement.get("key") != "metadata.name" or requirement.get("operator") != "In":
        return None
    return frozenset(str(value) for value in requirement.get("values") or ())


def _node_selector(raw: Mapping[str, Any] | None) -> NodeSelector | None:
    if raw is None:
        return None
    return NodeSelector(parse_terms(raw.get("nodeSelectorTerms") or ()), raw, _only_names(raw))


@dataclass(frozen=True, slots=True)
class CapacityPolicy:
    default: Quantity | None = None
    valid_values: tuple[Quantity, ...] = ()
    min: Quantity | None = None
    max: Quantity | None = None
    step: Quantity | None = None
    has_range: bool = False


@dataclass(frozen=True, slots=True)
class DeviceCapacity:
    value: Quantity
    policy: CapacityPolicy | None = None


@dataclass(frozen=True, slots=True)
class Taint:
    key: str
    value: str
    effect: str


@dataclass(eq=False, slots=True)
class Device:
    """One device of a slice; `id` is (driver, pool, name)."""

    id: DeviceID
    name: str
    attributes: Mapping[str, Mapping[str, Any]]
    capacity: Mapping[str, DeviceCapacity]
    consumes_counters: tuple[tuple[str, Mapping[str, Quantity]], ...] = ()
    taints: tuple[Taint, ...] = ()
    binding_conditions: tuple[str, ...] | None = None
    binding_failure_conditions: tuple[str, ...] | None = None
    binds_to_node: bool = False
    allow_multiple_allocations: bool | None = None
    node_name: str | None = None
    all_nodes: bool = False
    node_selector: NodeSelector | None = None
    _cel: dict[cel.Features, cel.DeviceInput] = field(default_factory=dict)

    @property
    def plain_capacity(self) -> bool:
        """No capacity has a request policy (so a request without amounts takes it all)."""
        return all(c.policy is None for c in self.capacity.values())

    def cel_input(self, features: cel.Features) -> cel.DeviceInput:
        found = self._cel.get(features)
        if found is None:
            capacity = {name: c.value for name, c in self.capacity.items()}
            found = cel.device_input(
                self.id[0], self.allow_multiple_allocations, self.attributes, capacity, features
            )
            self._cel[features] = found
        return found


@dataclass(eq=False, slots=True)
class Slice:
    name: str
    driver: str
    pool: str
    generation: int
    slice_count: int
    node_name: str | None
    all_nodes: bool
    node_selector: NodeSelector | None
    per_device_node_selection: bool | None
    shared_counters: tuple[tuple[str, Mapping[str, Quantity]], ...]
    devices: tuple[Device, ...]


@dataclass(frozen=True, slots=True)
class DeviceClass:
    name: str
    selectors: tuple[str | None, ...]  # CEL expressions; None for a selector of unknown kind
    config: tuple[Mapping[str, Any], ...]
    extended_resource_name: str | None
    creation_timestamp: str


@dataclass(frozen=True, slots=True)
class Request:
    """An `exactly` request or one `firstAvailable` subrequest (upstream's requestAccessor)."""

    name: str
    device_class_name: str
    allocation_mode: str
    count: int
    admin_access: bool | None
    selectors: tuple[str | None, ...]
    tolerations: tuple[Mapping[str, Any], ...]
    capacity: Mapping[str, Quantity] | None  # capacity.requests; None when not set


@dataclass(frozen=True, slots=True)
class ClaimRequest:
    """A request of a claim: `exactly` set, or subrequests (`firstAvailable`), or neither."""

    name: str
    exactly: Request | None
    first_available: tuple[Request, ...]


@dataclass(frozen=True, slots=True)
class Constraint:
    requests: tuple[str, ...]
    match_attribute: str | None
    distinct_attribute: str | None


@dataclass(frozen=True, slots=True)
class Claim:
    namespace: str
    name: str
    uid: str
    requests: tuple[ClaimRequest, ...]
    constraints: tuple[Constraint, ...]
    config: tuple[Mapping[str, Any], ...]

    @property
    def key(self) -> str:
        """klog.KObj: namespace/name."""
        return f"{self.namespace}/{self.name}" if self.namespace else self.name


def _get(obj: Mapping[str, Any], key: str, where: str) -> Any:
    value = obj.get(key)
    if value is None:
        raise ModelError(f"{where}.{key}: required")
    return value


def _quantity(raw: Any, where: str) -> Quantity:
    """A quantity the allocator compares and adds: one too large for that is refused here."""
    try:
        quantity = parse_quantity(str(raw))
        _ = quantity.nanos
    except QuantityError as e:
        raise ModelError(f"{where}: {e}") from None
    return quantity


def _counters(raw: Mapping[str, Any] | None, where: str) -> Mapping[str, Quantity]:
    return {
        name: _quantity(_get(c, "value", f"{where}.{name}"), f"{where}.{name}.value")
        for name, c in (raw or {}).items()
    }


def _policy(raw: Mapping[str, Any] | None, where: str) -> CapacityPolicy | None:
    if raw is None:
        return None
    rng = raw.get("validRange")

    def q(value: Any, name: str) -> Quantity | None:
        return None if value is None else _quantity(value, f"{where}.{name}")

    return CapacityPolicy(
        default=q(raw.get("default"), "default"),
        valid_values=tuple(
            _quantity(v, f"{where}.validValues") for v in raw.get("validValues") or ()
        ),
        min=q((rng or {}).get("min"), "validRange.min"),
        max=q((rng or {}).get("max"), "validRange.max"),
        step=q((rng or {}).get("step"), "validRange.step"),
        has_range=rng is not None,
    )


def _device(raw: Mapping[str, Any], driver: str, pool: str, where: str) -> Device:
    name = str(_get(raw, "name", where))
    capacity = {
        cname: DeviceCapacity(
            _quantity(_get(c, "value", f"{where}.capacity.{cname}"), f"{where}.capacity.{cname}"),
            _policy(c.get("requestPolicy"), f"{where}.capacity.{cname}.requestPolicy"),
        )
        for cname, c in (raw.get("capacity") or {}).items()
    }
    consumes = tuple(
        (
            str(_get(c, "counterSet", f"{where}.consumesCounters")),
            _counters(c.get("counters"), f"{where}.consumesCounters.counters"),
        )
        for c in raw.get("consumesCounters") or ()
    )
    taints = tuple(
        Taint(str(t.get("key", "")), str(t.get("value", "")), str(t.get("effect", "")))
        for t in raw.get("taints") or ()
    )
    conditions = raw.get("bindingConditions")
    failures = raw.get("bindingFailureConditions")
    return Device(
        id=(driver, pool, name),
        name=name,
        attributes=dict(raw.get("attributes") or {}),
        capacity=capacity,
        consumes_counters=consumes,
        taints=taints,
        binding_conditions=None if conditions is None else tuple(conditions),
        binding_failure_conditions=None if failures is None else tuple(failures),
        binds_to_node=bool(raw.get("bindsToNode")),
        allow_multiple_allocations=raw.get("allowMultipleAllocations"),
        node_name=raw.get("nodeName") or None,
        all_nodes=bool(raw.get("allNodes")),
        node_selector=_node_selector(raw.get("nodeSelector")),
    )


@_typed("ResourceSlice")
def parse_slice(obj: Mapping[str, Any]) -> Slice:
    """A ResourceSlice (resource.k8s.io/v1) from its JSON form."""
    name = str((obj.get("metadata") or {}).get("name", ""))
    where = f"ResourceSlice {name}: spec"
    spec = obj.get("spec")
    if not isinstance(spec, Mapping):
        raise ModelError(f"ResourceSlice {name}: spec: required")
    driver = str(_get(spec, "driver", where))
    pool = _get(spec, "pool", where)
    pool_name = str(_get(pool, "name", f"{where}.pool"))
    return Slice(
        name=name,
        driver=driver,
        pool=pool_name,
        generation=int(pool.get("generation") or 0),
        slice_count=int(pool.get("resourceSliceCount") or 0),
        node_name=spec.get("nodeName") or None,
        all_nodes=bool(spec.get("allNodes")),
        node_selector=_node_selector(spec.get("nodeSelector")),
        per_device_node_selection=spec.get("perDeviceNodeSelection"),
        shared_counters=tuple(
            (
                str(_get(s, "name", f"{where}.sharedCounters")),
                _counters(s.get("counters"), f"{where}.sharedCounters.counters"),
            )
            for s in spec.get("sharedCounters") or ()
        ),
        devices=tuple(
            _device(d, driver, pool_name, f"{where}.devices[{i}]")
            for i, d in enumerate(spec.get("devices") or ())
        ),
    )


def _selectors(raw: Sequence[Mapping[str, Any]] | None) -> tuple[str | None, ...]:
    return tuple(
        (s.get("cel") or {}).get("expression") if s.get("cel") is not None else None
        for s in raw or ()
    )


@_typed("DeviceClass")
def parse_class(obj: Mapping[str, Any]) -> DeviceClass:
    """A DeviceClass (resource.k8s.io/v1) from its JSON form."""
    meta = obj.get("metadata") or {}
    spec = obj.get("spec") or {}
    return DeviceClass(
        name=str(meta.get("name", "")),
        selectors=_selectors(spec.get("selectors")),
        config=tuple(spec.get("config") or ()),
        extended_resource_name=spec.get("extendedResourceName"),
        creation_timestamp=str(meta.get("creationTimestamp") or ""),
    )


def _request(raw: Mapping[str, Any], where: str, admin: bool) -> Request:
    capacity = raw.get("capacity")
    requests = None
    if capacity is not None:
        requests = {
            n: _quantity(v, f"{where}.capacity.requests.{n}")
            for n, v in (capacity.get("requests") or {}).items()
        }
    return Request(
        name=str(raw.get("name", "")),
        device_class_name=str(raw.get("deviceClassName") or ""),
        allocation_mode=str(raw.get("allocationMode") or EXACT_COUNT),
        count=int(raw.get("count", 1) if raw.get("count") is not None else 1),
        admin_access=raw.get("adminAccess") if admin else None,
        selectors=_selectors(raw.get("selectors")),
        tolerations=tuple(raw.get("tolerations") or ()),
        capacity=requests,
    )


@_typed("ResourceClaim")
def parse_claim(obj: Mapping[str, Any]) -> Claim:
    """A ResourceClaim (resource.k8s.io/v1) from its JSON form; defaults as the API server
    sets them (allocationMode ExactCount, count 1)."""
    meta = obj.get("metadata") or {}
    name = str(meta.get("name", ""))
    devices = (obj.get("spec") or {}).get("devices") or {}
    requests = []
    for i, r in enumerate(devices.get("requests") or ()):
        where = f"ResourceClaim {name}: spec.devices.requests[{i}]"
        exactly = r.get("exactly")
        requests.append(
            ClaimRequest(
                name=str(r.get("name", "")),
                exactly=None
                if exactly is None
                else _request({**exactly, "name": r.get("name", "")}, where, admin=True),
                first_available=tuple(
                    _request(s, f"{where}.firstAvailable[{j}]", admin=False)
                    for j, s in enumerate(r.get("firstAvailable") or ())
                ),
            )
        )
    constraints = tuple(
        Constraint(
            requests=tuple(c.get("requests") or ()),
            match_attribute=c.get("matchAttribute"),
            distinct_attribute=c.get("distinctAttribute"),
        )
        for c in devices.get("constraints") or ()
    )
    return Claim(
        namespace=str(meta.get("namespace") or ""),
        name=name,
        uid=str(meta.get("uid") or ""),
        requests=tuple(requests),
        constraints=constraints,
        config=tuple(devices.get("config") or ()),
    )


__all__ = [
    "ALL",
    "ALLOCATION_RESULTS_MAX_SIZE",
    "EXACT_COUNT",
    "Claim",
    "ClaimRequest",
    "Constraint",
    "Device",
    "DeviceCapacity",
    "DeviceClass",
    "DeviceID",
    "ModelError",
    "NodeSelector",
    "Request",
    "Slice",
    "parse_claim",
    "parse_class",
    "parse_slice",
]
