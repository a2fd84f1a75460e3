"""Bounds on what a SchedulerProfile may hold, checked before the spec is validated: hostile
input (nested deeper than any validator survives, larger than any real spec) is refused by
field, without recursion, and with no more work than one walk over the value."""

from __future__ import annotations

import datetime
import json
import math
from typing import Any, Final

from .errors import SpecError

# How deep a free-form value (plugin args, affinity) may nest: far beyond any real one, and far
# below what recursion in a decoder or validator survives.
MAX_DEPTH: Final = 32
# How large a free-form value, and the whole spec, may be as compact JSON: far beyond any real
# one, and far below what an object may hold (etcd takes 1.5 MiB).
MAX_VALUE_BYTES: Final = 64 * 1024
MAX_SPEC_BYTES: Final = 256 * 1024
JSON_SCALARS: Final = (str, int, float, bool, type(None))


def check_value(value: Any, path: str) -> None:
    """Refuses, naming the field, what no API object can hold: a value nested deeper than
    MAX_DEPTH, and one JSON has no type for (a YAML date, set or binary, a key that is not a
    string, a float that is not finite). Without recursion: a hostile value may be nested
    deeper than Python's recursion limit."""
    pending: list[tuple[Any, str, int]] = [(value, path, 1)]
    while pending:
        item, where, depth = pending.pop()
        if isinstance(item, dict | list):
            if depth > MAX_DEPTH:
                raise SpecError(where, f"nested deeper than {MAX_DEPTH} levels")
            if isinstance(item, list):
                pending.extend((child, f"{where}[{i}]", depth + 1) for i, child in enumerate(item))
                continue
            for key, child in item.items():
                if not isinstance(key, str):
                    raise SpecError(where, f"key {key!r} is not a string: quote it")
                pending.append((child, f"{where}.{key}", depth + 1))
        elif isinstance(item, float) and not math.isfinite(item):
            raise SpecError(where, f"{item} is not a JSON number")
        elif not isinstance(item, JSON_SCALARS):
            raise SpecError(where, f"{_described(item)} is not a JSON value: quote it")


def _described(value: Any) -> str:
    """How YAML wrote a value JSON has no type for."""
    if isinstance(value, datetime.date):
        return f"a date ({value.isoformat()})"
    if isinstance(value, bytes):
        return "binary data (!!binary)"
    if isinstance(value, set | frozenset):
        return "a set (!!set)"
    return f"a {type(value).__name__}"


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
