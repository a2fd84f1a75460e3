"""The one error a configuration can raise: where it is wrong, and why."""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic import ValidationError


class ConfigError(ValueError):
    """Invalid scheduler configuration; `path` names the field (`profiles[0].plugins...`)."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


def field_path(location: Sequence[str | int], prefix: str = "") -> str:
    """Renders a location like `("profiles", 0, "schedulerName")` as `profiles[0].schedulerName`."""
    path = prefix
    for part in location:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path += f".{part}" if path else part
    return path or "<root>"


def from_validation_error(error: ValidationError, prefix: str = "") -> ConfigError:
    """The first pydantic error as a ConfigError, worded for people writing YAML."""
    first = error.errors()[0]
    location: list[str | int] = [part for part in first["loc"] if not _is_union_tag(part)]
    reason = _reason(first["type"], first["msg"])
    # Model validators report a nested field as "sub.path: reason"; fold it into the path.
    nested = _NESTED.match(reason) if first["type"] == "value_error" else None
    path = field_path(location, prefix)
    if nested:
        path = f"{path}.{nested['path']}"
        reason = nested["reason"]
    return ConfigError(path, reason)


_NESTED = re.compile(r"^(?P<path>[A-Za-z][\w.\[\]]*): (?P<reason>.+)$", re.DOTALL)


def _is_union_tag(part: str | int) -> bool:
    # pydantic names union members and function validators inside `loc`; they are not fields.
    return isinstance(part, str) and ("[" in part or part.startswith("function-"))


def _reason(kind: str, message: str) -> str:
    if kind == "extra_forbidden":
        return "unknown field"
    if kind == "missing":
        return "required field is missing"
    if kind == "value_error":
        return message.removeprefix("Value error, ")
    return message[0].lower() + message[1:] if message else kind
