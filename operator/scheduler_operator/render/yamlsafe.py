"""The one way a value reaches a rendered YAML document: as a JSON scalar or flow collection,
so a hostile string can never add keys or documents; the templates refuse anything else."""

from __future__ import annotations

import json
import re
from typing import Final

import jinja2

# A JSON surrogate-pair escape, preceded by an even number of backslashes (so it is an escape).
_SURROGATE_PAIR: Final = re.compile(
    r"(?<!\\)((?:\\\\)*)\\u(d[89ab][0-9a-f]{2})\\u(d[c-f][0-9a-f]{2})"
)


class Encoded(str):
    """Template output that went through the `json` filter."""

    __slots__ = ()


def to_json(value: object) -> Encoded:
    """Any value as one JSON (so YAML) scalar or flow collection, in ASCII.

    Characters beyond the BMP become YAML's `\\U` escapes: YAML loaders do not join JSON's
    surrogate pairs back into one character."""
    return Encoded(_SURROGATE_PAIR.sub(_join_pair, _flow(value)))


# YAML limits a plain ("simple") mapping key to 1024 characters; a longer one needs the
# explicit `? key` form, which JSON lacks.
SIMPLE_KEY_LIMIT: Final = 1024


def _flow(value: object) -> str:
    """JSON, except that a mapping with a key too long for YAML writes its keys explicitly."""
    encoded = json.dumps(value, ensure_ascii=True)
    if len(encoded) <= SIMPLE_KEY_LIMIT:
        return encoded  # no key inside can be too long
    if isinstance(value, dict):
        items = [(json.dumps(str(key), ensure_ascii=True), _flow(v)) for key, v in value.items()]
        explicit = "? " if any(len(key) > SIMPLE_KEY_LIMIT for key, _ in items) else ""
        return "{" + ", ".join(f"{explicit}{key}: {v}" for key, v in items) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_flow(item) for item in value) + "]"
    return encoded


def _join_pair(pair: re.Match[str]) -> str:
    high, low = int(pair[2], 16), int(pair[3], 16)
    code_point = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
    return f"{pair[1]}\\U{code_point:08x}"


def require_json(value: object) -> object:
    """Refuses any template output that skipped the `json` filter: no raw user string in YAML."""
    if isinstance(value, Encoded):
        return value
    raise jinja2.TemplateError(f"template value {value!r} was not passed through json")
