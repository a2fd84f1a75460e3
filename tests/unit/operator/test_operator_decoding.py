"""Decoding what the API server sends, whatever it stores: values nested deeper than the
operator's bound become null, shallower JSON decodes exactly as json.loads decodes it, and kopf
(whose decoding this replaces) reads lists, responses and watch streams through it."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import kopf
from aiohttp import web
from hypothesis import given
from hypothesis import strategies as st
from kopf._cogs.clients import api, auth
from kopf._cogs.structs import credentials
from scheduler_operator.decoding import MAX_DEPTH, bounded, install_in_kopf, loads


def nested(depth: int, kind: str = "map") -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = {"a": value} if kind == "map" else [value]
    return value


def deep_text(depth: int, kind: str = "map") -> bytes:
    """JSON nested `depth` containers deep, written without recursion."""
    opening, closing = ('{"a":', "}") if kind == "map" else ("[", "]")
    return (opening * depth + '"leaf"' + closing * depth).encode()


def depth_of(value: Any) -> int:
    deepest, pending = 0, [(value, 0)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, depth + 1)
            children = item.values() if isinstance(item, dict) else item
            pending.extend((child, depth + 1) for child in children)
    return deepest


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=40,
)


@given(JSON)
def test_json_within_the_bound_decodes_as_json_loads_does(value: Any) -> None:
    text = json.dumps(value)
    assert loads(text) == json.loads(text)
    assert loads(text.encode()) == json.loads(text)


def test_brackets_and_quotes_inside_strings_do_not_count() -> None:
    value = {"k[{": ['"]}' * 100, "\\", '\\"[[[[', "{" * (MAX_DEPTH * 2)]}
    text = json.dumps(value).encode()
    assert bounded(text) is text or bounded(text) == text
    assert loads(text) == value


def test_deeper_values_become_null_at_the_bound() -> None:
    for kind in ("map", "list"):
        for depth in (MAX_DEPTH, MAX_DEPTH + 1, 1000, 3000, 9000):
            decoded = loads(deep_text(depth, kind))
            assert depth_of(decoded) == min(depth, MAX_DEPTH), (kind, depth)
    assert loads(deep_text(MAX_DEPTH)) == nested(MAX_DEPTH)
    cut = loads(deep_text(MAX_DEPTH + 5))
    for _ in range(MAX_DEPTH - 1):
        cut = cut["a"]
    assert cut == {"a": None}


def test_each_deep_value_is_cut_and_the_rest_kept() -> None:
    """A list of objects (as the API server lists them): only the deep ones lose their depth."""
    shallow = {"metadata": {"name": "fine"}, "spec": {"x": [1, {"y": "z"}]}}
    text = (
        b'{"items":['
        + json.dumps(shallow).encode()
        + b',{"metadata":{"name":"deep"},"spec":{"args":'
        + deep_text(3000)
        + b',"after":"kept"}},'
        + json.dumps(shallow).encode()
        + b"]}"
    )
    items = loads(text)["items"]
    assert items[0] == items[2] == shallow
    assert items[1]["metadata"] == {"name": "deep"}
    assert items[1]["spec"]["after"] == "kept"
    assert depth_of(items[1]) == MAX_DEPTH - 2  # the list and its object are two levels


DEEP_OBJECT = (
    b'{"kind":"SchedulerProfile","metadata":{"name":"deep","resourceVersion":"2"},'
    b'"spec":{"args":' + deep_text(3000) + b"}}"
)


async def serve() -> AsyncIterator[str]:
    async def one(_: web.Request) -> web.Response:
        return web.Response(body=DEEP_OBJECT, content_type="application/json")

    async def watch(_: web.Request) -> web.StreamResponse:
        response = web.StreamResponse()
        response.content_type = "application/json"
        await response.prepare(_)
        await response.write(b'{"type":"ADDED","object":' + DEEP_OBJECT + b"}\n")
        await response.write_eof()
        return response

    app = web.Application()
    app.router.add_get("/one", one)
    app.router.add_get("/watch", watch)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


def test_kopf_decodes_responses_and_watch_streams_through_the_bound() -> None:
    install_in_kopf()
    install_in_kopf()  # twice changes nothing

    async def scenario() -> tuple[Any, list[Any]]:
        async for url in serve():
            vault = credentials.Vault()
            await vault.populate({"test": credentials.ConnectionInfo(server=url)})
            auth.vault_var.set(vault)
            settings, logger = kopf.OperatorSettings(), logging.getLogger("test")
            one = await api.get("/one", settings=settings, logger=logger)
            events = [e async for e in api.stream("/watch", settings=settings, logger=logger)]
            await vault.close()
            return one, events
        raise AssertionError("the server did not start")

    one, events = asyncio.run(scenario())
    assert one["metadata"]["name"] == "deep"
    assert depth_of(one) == MAX_DEPTH
    assert [event["type"] for event in events] == ["ADDED"]
    assert depth_of(events[0]["object"]) == MAX_DEPTH - 1
