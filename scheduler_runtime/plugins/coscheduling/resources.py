"""Coscheduling's minResources check (scheduler-plugins' CheckClusterResource): the nodes'
free resources, leaving out what the group's own pods take, must add up to what the group
asks for. Quantities are kept as apimachinery keeps them (an int64 amount at a decimal scale,
and a format) because the check's message prints the missing amounts as Go's `%v` prints a
map of resource.Quantity values: `resource gap: map[cpu:{{6000 -3} {<nil>}  DecimalSI}]`."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from scheduler_runtime.framework.nodeinfo import NodeInfo
from scheduler_runtime.framework.quantity import CPU, EPHEMERAL_STORAGE, MEMORY, PODS

DECIMAL_SI, BINARY_SI, DECIMAL_EXPONENT = "DecimalSI", "BinarySI", "DecimalExponent"
_DECIMAL_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12}
_DECIMAL_SUFFIXES |= {"P": 15, "E": 18}
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_NUMBER = re.compile(r"([+-]?)(\d*)(?:\.(\d*))?(.*)")
_MAX_INT64_FACTORS = 18
# A scale past this would make Sub build numbers of up to 10**|scale| digits (Go's inf.Dec
# path, which never ends for 1e999999999): such a minResources is refused instead.
_MAX_SCALE = 18


@dataclass(frozen=True, slots=True)
class Quantity:
    """resource.Quantity in its int64Amount form: `value` x 10^`scale`, and its format."""

    value: int
    scale: int
    format: str
    text: str = ""  # the cached string form Go keeps for canonical quantities

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
        return f"{{{{{self.value} {self.scale}}} {{<nil>}} {self.text} {self.format}}}"


def parse(text: str) -> Quantity:
    """resource.ParseQuantity for the forms written in PodGroups (integers, fractions,
    SI and binary suffixes, exponents). Raises ValueError for anything else."""
    text = str(text).strip()
    if text == "0":
        return Quantity(0, 0, DECIMAL_SI, "0")
    match = _NUMBER.fullmatch(text)
    if match is None or not (match.group(2) or match.group(3)):
        raise ValueError(f"quantities must match the regular expression: {text!r}")
    sign, whole, fraction, suffix = (
        match.group(1),
        match.group(2),
        match.group(3) or "",
        match.group(4),
    )
    negative = sign == "-"
    if suffix in _BINARY_SUFFIXES:
        if fraction:
            raise ValueError(f"{text!r}: fractional binary quantities are not supported here")
        value = int(whole or "0") << _BINARY_SUFFIXES[suffix]
        canonical = _BINARY_SUFFIXES[suffix] % 10 == 0 and value & 0x07 != 0
        return Quantity(-value if negative else value, 0, BINARY_SI, text if canonical else "")
    if suffix in _DECIMAL_SUFFIXES:
        exponent, fmt = _DECIMAL_SUFFIXES[suffix], DECIMAL_SI
    elif suffix[:1] in ("e", "E") and re.fullmatch(r"[+-]?\d+", suffix[1:]):
        exponent, fmt = int(suffix[1:]), DECIMAL_EXPONENT
    else:
        raise ValueError(f"unable to parse quantity's suffix: {text!r}")
    if _MAX_INT64_FACTORS - len(whole) - len(fraction) < 0:
        raise ValueError(f"{text!r}: too many digits")
    shifted = whole + fraction
    value = int(shifted)
    scale = exponent - len(fraction)
    if abs(scale) > _MAX_SCALE:
        raise ValueError(f"{text!r}: the exponent is out of range")
    canonical = scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0"
    return Quantity(-value if negative else value, scale, fmt, text if canonical else "")


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
