"""Every field path of a JSON value, for tests that mutate one field of an object."""

from __future__ import annotations

from typing import Any

FieldPath = tuple[str | int, ...]


def field_paths(value: Any, prefix: FieldPath = ()) -> list[FieldPath]:
    """Every field path of `value`, as steps (keys and list indexes), parents first."""
    found: list[FieldPath] = []
    children: list[tuple[str | int, Any]] = []
    if isinstance(value, dict):
        children = list(value.items())
    elif isinstance(value, list):
        children = list(enumerate(value))
    for step, child in children:
        found += [(*prefix, step), *field_paths(child, (*prefix, step))]
    return found
