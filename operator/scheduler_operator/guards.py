"""Bounds on what a SchedulerProfile may hold, checked before the spec is validated: hostile
input (nested deeper than any validator survives, larger than any real spec) is refused by
field, without recursion, and with no more work than one walk over the value."""

from __future__ import annotations

import json
from typing import Any, Final

from .errors import SpecError

# How deep a free-form value (plugin args, affinity) may nest: far beyond any real one, and far
# below what recursion in a decoder or validator survives.
MAX_DEPTH: Final = 32
# How large a free-form value, and the whole spec, may be as compact JSON: far beyond any real
# one, and far below what an object may hold (etcd takes 1.5 MiB).
MAX_VALUE_BYTES: Final = 64 * 1024
MAX_SPEC_BYTES: Final = 256 * 1024


def check_depth(value: Any, path: str) -> None:
    """Refuses a value nested deeper than MAX_DEPTH, without recursion (a hostile value may be
    nested deeper than Python's recursion limit)."""
    pending: list[tuple[Any, str, int]] = [(value, path, 1)]
    while pending:
        item, where, depth = pending.pop()
        if not isinstance(item, dict | list):
            continue
        if depth > MAX_DEPTH:
            raise SpecError(where, f"nested deeper than {MAX_DEPTH} levels")
        children = item.items() if isinstance(item, dict) else enumerate(item)
        for key, child in children:
            step = f"[{key}]" if isinstance(item, list) else f".{key}"
            pending.append((child, where + step, depth + 1))


def free_form_values(spec: Any) -> list[tuple[str, Any]]:
    """The values of a raw spec the schema leaves free-form, with their paths: each profile's
    plugin args, and the affinity of the scheduler's pods."""
    if not isinstance(spec, dict):
        return []
    found: list[tuple[str, Any]] = []
    if "affinity" in spec:
        found.append(("spec.affinity", spec["affinity"]))
    profiles = spec.get("profiles")
    for i, profile in enumerate(profiles if isinstance(profiles, list) else []):
        configs = profile.get("pluginConfig") if isinstance(profile, dict) else None
        for j, config in enumerate(configs if isinstance(configs, list) else []):
            if isinstance(config, dict) and "args" in config:
                found.append((f"spec.profiles[{i}].pluginConfig[{j}].args", config["args"]))
    return found


def json_size(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


def check_sizes(spec: Any) -> None:
    """Refuses a spec, or a free-form value in it, larger than the API's limits allow (as the
    limits policy does at admission, for objects stored before it)."""
    size = json_size(spec)
    if size > MAX_SPEC_BYTES:
        raise SpecError("spec", f"is {size} bytes as JSON, more than {MAX_SPEC_BYTES}")
    for path, value in free_form_values(spec):
        size = json_size(value)
        if size > MAX_VALUE_BYTES:
            raise SpecError(path, f"is {size} bytes as JSON, more than {MAX_VALUE_BYTES}")
