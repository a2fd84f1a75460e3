"""Kubernetes quantities as the scheduler counts them: milli-CPU and whole units (bytes),
rounded up like Go's `Quantity.MilliValue()` / `Quantity.Value()`.

Within what the API server takes: a negative quantity is refused (as the API server refuses it
in a pod or a node), and so is an exponent beyond int32 (Go wraps it, and the API server never
answers a request holding one). The API server stores quantities far beyond int64 (1e999, say),
which upstream's kube-scheduler reads as meaningless int64 values; here anything above
MAX_AMOUNT counts as MAX_AMOUNT, computed without ever building the huge number."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from decimal import Decimal
from functools import lru_cache
from typing import Final, cast

from kubernetes.utils import parse_quantity as _parse_quantity

parse_quantity = cast(Callable[[str], Decimal], _parse_quantity)

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"

# 8 PiB of memory, 9 billion CPUs: more than any node has, and small enough that the requests
# of a node's pods summed stay far within int64.
MAX_AMOUNT: Final = 2**53
# Past this decimal exponent a quantity exceeds MAX_AMOUNT in any unit; below its negative, a
# positive one rounds up to 1.
_LARGEST_EXPONENT: Final = 20
_SMALLEST_EXPONENT: Final = -30
_EXPONENT: Final = re.compile(r"[eE]([+-]?[0-9]+)$")
_INT32: Final = range(-(2**31), 2**31)


class QuantityError(ValueError):
    """A resource quantity that Kubernetes would not accept."""


@lru_cache(maxsize=4096)
def _parsed(text: str) -> Decimal:
    exponent = _EXPONENT.search(text)
    if exponent is not None and int(exponent[1]) not in _INT32:
        raise QuantityError(f'Invalid value: "{text}": the exponent is out of range')
    try:
        value = parse_quantity(text)
    except ValueError as error:
        raise QuantityError(f"invalid quantity {text!r}: {error}") from None
    if value < 0:
        raise QuantityError(f'Invalid value: "{text}": must be greater than or equal to 0')
    return value


def amount(resource: str, quantity: str | int | float) -> int:
    """The scheduler's integer amount of `resource`: milli-units for cpu, units otherwise, at
    most MAX_AMOUNT."""
    value = _parsed(str(quantity))
    if not value:
        return 0
    if value.adjusted() > _LARGEST_EXPONENT:
        return MAX_AMOUNT
    if value.adjusted() < _SMALLEST_EXPONENT:
        return 1
    if resource == CPU:
        value *= 1000
    return min(math.ceil(value), MAX_AMOUNT)


def resource_list(quantities: dict[str, str | int | float] | None) -> dict[str, int]:
    """A core/v1 ResourceList as integer amounts."""
    if not quantities:
        return {}
    return {name: amount(name, quantity) for name, quantity in quantities.items()}
