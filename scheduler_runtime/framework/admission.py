"""What the API server refuses of a Pod or a Node, for objects that did not come through it (a
state file for `simulate`): quantities it would not store (framework.quantity) and weights of
preferred affinity terms outside 1-100 (or not an int32 at all). Each is refused naming the
object and the field, in the API server's words."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Final

from scheduler_runtime.framework.quantity import QuantityError, amount

_PREFERRED: Final = "preferredDuringSchedulingIgnoredDuringExecution"
_RESOURCE_FIELDS: Final = ("requests", "limits")


class RefusedObjectError(ValueError):
    """An object the API server would refuse; the message names it and the field."""


def check_object(obj: Mapping[str, Any]) -> None:
    """Refuses a Pod or Node the API server would not store; other kinds pass."""
    kind = obj.get("kind")
    if kind not in ("Pod", "Node"):
        return
    try:
        for path, quantities in _quantities(obj):
            for name, quantity in (quantities or {}).items():
                try:
                    amount(name, quantity)
                except QuantityError as error:
                    raise RefusedObjectError(f"{path}[{name}]: {error}") from None
        if kind == "Pod":
            _check_weights(obj.get("spec") or {})
    except RefusedObjectError as error:
        raise RefusedObjectError(f"{_describe(obj)}: {error}") from None


def _quantities(obj: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    """Every resource list of the object, with its path."""
    status = obj.get("status") or {}
    if obj.get("kind") == "Node":
        yield "status.allocatable", status.get("allocatable")
        yield "status.capacity", status.get("capacity")
        return
    spec = obj.get("spec") or {}
    for group in ("containers", "initContainers"):
        for index, container in enumerate(spec.get(group) or ()):
            resources = container.get("resources") or {}
            for field in _RESOURCE_FIELDS:
                yield f"spec.{group}[{index}].resources.{field}", resources.get(field)
    yield "spec.overhead", spec.get("overhead")
    for field in _RESOURCE_FIELDS:
        yield f"spec.resources.{field}", (spec.get("resources") or {}).get(field)
    for group in ("containerStatuses", "initContainerStatuses"):
        for index, container in enumerate(status.get(group) or ()):
            yield f"status.{group}[{index}].allocatedResources", container.get("allocatedResources")
            resources = container.get("resources") or {}
            for field in _RESOURCE_FIELDS:
                yield f"status.{group}[{index}].resources.{field}", resources.get(field)


def _check_weights(spec: Mapping[str, Any]) -> None:
    affinity = spec.get("affinity") or {}
    for kind in ("nodeAffinity", "podAffinity", "podAntiAffinity"):
        for index, term in enumerate((affinity.get(kind) or {}).get(_PREFERRED) or ()):
            weight = term.get("weight") if isinstance(term, Mapping) else None
            if type(weight) is not int or not 1 <= weight <= 100:
                raise RefusedObjectError(
                    f"spec.affinity.{kind}.{_PREFERRED}[{index}].weight: Invalid value: "
                    f"{weight!r}: must be an integer in the range 1-100"
                )


def _describe(obj: Mapping[str, Any]) -> str:
    metadata = obj.get("metadata") or {}
    namespace = metadata.get("namespace")
    name = metadata.get("name") or "<unnamed>"
    return f"{obj.get('kind')} {namespace + '/' if namespace else ''}{name}"
