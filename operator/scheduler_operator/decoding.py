"""JSON from the API server, decoded so that no object can stop the operator.

The API server stores what a CRD's schema lets through: free-form fields (plugin args, the
pods' affinity) nested thousands of levels deep, if nothing at admission bounds them (the
limits policy does, but not for objects stored before it). Python's decoder recurses once per
level and fails at about a thousand, and kopf decodes every watch event and list itself: one
such object ended the operator's watch, and the operator, on every restart.

So every value nested deeper than MAX_DEPTH is replaced by null before decoding: the object
still arrives, deep enough for `parsing.parse` to refuse it by name (its limit is far lower), and
everything else keeps being reconciled. `install_in_kopf` puts this decoder where kopf decodes
responses and watch streams."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from typing import Any, Final

# From the document's root (a watch event or a list adds two or three levels above a spec):
# far deeper than guards.MAX_DEPTH lets a valid spec go, far below the decoder's recursion limit.
MAX_DEPTH: Final = 64
# A JSON string (escapes included), or a bracket outside strings.
_TOKENS: Final = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')
_OPENING: Final = frozenset(b"[{")
_QUOTE: Final = ord('"')


def bounded(text: bytes, max_depth: int = MAX_DEPTH) -> bytes:
    """The JSON text with every array or object nested deeper than `max_depth` replaced by
    null. Text that cannot nest that deep (fewer opening brackets than that, in strings or
    not) is returned as it is, unscanned."""
    if text.count(b"[") + text.count(b"{") <= max_depth:
        return text
    pieces: list[bytes] = []
    depth, kept, cut_at = 0, 0, -1
    for token in _TOKENS.finditer(text):
        first = text[token.start()]
        if first == _QUOTE:
            continue
        if first in _OPENING:
            depth += 1
            if depth == max_depth + 1:
                cut_at = token.start()
            continue
        if depth == max_depth + 1:
            pieces += (text[kept:cut_at], b"null")
            kept = token.end()
        depth -= 1
    if not pieces:
        return text
    pieces.append(text[kept:])
    return b"".join(pieces)


def loads(text: str | bytes | bytearray) -> Any:
    """json.loads, with values nested deeper than MAX_DEPTH replaced by null."""
    raw = text.encode() if isinstance(text, str) else bytes(text)
    return json.loads(bounded(raw))


class _Json:
    """What kopf's API module uses of the json module: `loads` (watch streams)."""

    loads = staticmethod(loads)

    @staticmethod
    def dumps(value: Any, **kwargs: Any) -> str:
        return json.dumps(value, **kwargs)


def install_in_kopf() -> None:
    """Makes kopf decode responses and watch streams with `loads` (idempotent).

    kopf has no setting for its decoder: its API module decodes watch lines with `json.loads`
    and responses with aiohttp's `response.json()`. The module's `json` is replaced, and each
    response it requests decodes with `loads`. A unit test holds kopf to this shape."""
    from kopf._cogs.clients import api  # noqa: PLC0415 - kopf's internals, only when installing

    if getattr(api.request, "bounded_decoding", False):
        return
    api.json = _Json()  # type: ignore[attr-defined,assignment]
    api.request = _decoding_with_loads(api.request)


def _decoding_with_loads(request: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(request)
    async def decoding(*args: Any, **kwargs: Any) -> Any:
        response = await request(*args, **kwargs)
        response.json = functools.partial(response.json, loads=loads)
        return response

    decoding.bounded_decoding = True  # type: ignore[attr-defined]
    return decoding
