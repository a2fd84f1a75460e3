"""Coscheduling's minResources check (scheduler-plugins' CheckClusterResource): the nodes'
free resources, leaving out what the group's own pods take, must add up to what the group
asks for. Quantities are kept as apimachinery keeps them (an int64 amount at a decimal scale,
and a format) because the check's message prints the missing amounts as Go's `%v` prints a
map of resource.Quantity values: `resource gap: map[cpu:{{6000 -3} {<nil>}  DecimalSI}]`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from scheduler_runtime.framework import quantity
from scheduler_runtime.framework.nodeinfo import NodeInfo
from scheduler_runtime.framework.quantity import CPU, EPHEMERAL_STORAGE, MEMORY, PODS

DECIMAL_SI, BINARY_SI, DECIMAL_EXPONENT = "DecimalSI", "BinarySI", "DecimalExponent"


@dataclass(frozen=True, slots=True)
class Quantity:
    """resource.Quantity in its int64Amount form: `value` x 10^`scale`, and its format. The
    string Go caches with a canonical quantity is never printed here: Sub drops it."""

    value: int
    scale: int
    format: str

    def sub(self, other: Quantity) -> Quantity:
        """Quantity.Sub: the difference at the smaller scale; the cached form is dropped."""
        fmt = other.format if self.value == 0 else self.format
        if other.value == 0:
            return Quantity(self.value, self.scale, fmt)
        if self.value == 0:
            return Quantity(-other.value, other.scale, fmt)
        scale = min(self.scale, other.scale)
        value = self.value * 10 ** (self.scale - scale) - other.value * 10 ** (other.scale - scale)
        return Quantity(value, scale, fmt)

    def go(self) -> str:
        """How Go's %v prints the struct."""
        return f"{{{{{self.value} {self.scale}}} {{<nil>}}  {self.format}}}"


def parse(text: str) -> Quantity:
    """resource.ParseQuantity through the runtime's one parser (framework.quantity), kept in
    the form Go prints. QuantityError (a ValueError) for what Kubernetes refuses, and for a
    quantity too large to compute with (1e999999999): the gap's subtraction would build it."""
    text = str(text).strip()
    parsed = quantity.parse(text)
    nanos = parsed.nanos  # QuantityError past MAX_DIGITS digits, before any arithmetic
    fast = quantity.int64_amount(text)
    if fast is not None:
        value, scale = fast
    else:  # Go keeps an inf.Dec: the exact value, in nano-units, with no trailing zero
        value, scale = nanos, -9
        while value and value % 10 == 0 and scale < 0:
            value, scale = value // 10, scale + 1
    return Quantity(value, scale, parsed.format)


def _free(node: NodeInfo, members: frozenset[str]) -> dict[str, Quantity]:
    """getNodeResource: what the node has left with the group's own pods taken off it."""
    requested = dict(node.requested)
    pods = 0
    for key, pod in node.pods.items():
        if key in members:
            for name, value in pod.requests.items():
                requested[name] = requested.get(name, 0) - value
        else:
            pods += 1
    allocatable = node.allocatable

    def left(name: str) -> int:
        return allocatable.get(name, 0) - requested.get(name, 0)

    free = {
        CPU: Quantity(left(CPU), -3, DECIMAL_SI),
        MEMORY: Quantity(left(MEMORY), 0, BINARY_SI),
        PODS: Quantity(allocatable.get(PODS, 0) - pods, 0, BINARY_SI),
        EPHEMERAL_STORAGE: Quantity(left(EPHEMERAL_STORAGE), 0, BINARY_SI),
    }
    for name in allocatable:
        if name not in free:
            binary = name.startswith("hugepages-")
            free[name] = Quantity(left(name), 0, BINARY_SI if binary else DECIMAL_SI)
    return free


def resource_gap(
    nodes: Iterable[NodeInfo], wanted: Mapping[str, Quantity], members: frozenset[str]
) -> str:
    """CheckClusterResource: "" when the nodes' free resources cover `wanted`, else Go's
    print of what is still missing after every node."""
    missing = dict(wanted)
    zero = Quantity(0, 0, "")
    for node in nodes:
        free = _free(node, members)
        for name, amount in list(missing.items()):
            rest = amount.sub(free.get(name, zero))
            if rest.value <= 0:
                del missing[name]
            else:
                missing[name] = rest
        if not missing:
            return ""
    items = " ".join(f"{name}:{missing[name].go()}" for name in sorted(missing))
    return f"map[{items}]"
