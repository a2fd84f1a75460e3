"""Kubernetes quantities as the scheduler counts them: milli-CPU and whole units (bytes),
rounded up like Go's `Quantity.MilliValue()` / `Quantity.Value()`."""

from __future__ import annotations

import math
from collections.abc import Callable
from decimal import Decimal
from functools import lru_cache
from typing import cast

from kubernetes.utils import parse_quantity as _parse_quantity

parse_quantity = cast(Callable[[str], Decimal], _parse_quantity)

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"


class QuantityError(ValueError):
    """A resource quantity that Kubernetes would not accept."""


@lru_cache(maxsize=4096)
def _parsed(text: str) -> Decimal:
    try:
        value = parse_quantity(text)
    except ValueError as error:
        raise QuantityError(f"invalid quantity {text!r}: {error}") from None
    return value


def amount(resource: str, quantity: str | int | float) -> int:
    """The scheduler's integer amount of `resource`: milli-units for cpu, units otherwise."""
    value = _parsed(str(quantity))
    if resource == CPU:
        value *= 1000
    return math.ceil(value)


def resource_list(quantities: dict[str, str | int | float] | None) -> dict[str, int]:
    """A core/v1 ResourceList as integer amounts."""
    if not quantities:
        return {}
    return {name: amount(name, quantity) for name, quantity in quantities.items()}
