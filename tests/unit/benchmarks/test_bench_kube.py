"""The benchmark's API client against a small local HTTP server: retries and conflicts."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Awaitable, Callable

import pytest
from aiohttp import web

from benchmarks.kube import Api, ApiError, Endpoint

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def serve_and_post(handler: Handler) -> object:
    """Posts once to a server whose only route is `handler`; returns what the client got."""

    async def scenario() -> object:
        app = web.Application()
        app.router.add_post("/api/v1/pods", handler)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        endpoint = Endpoint(f"http://127.0.0.1:{port}", ssl.create_default_context(), {})
        try:
            async with Api.open(endpoint) as api:
                return await api.post("/api/v1/pods", {"metadata": {"name": "p"}})
        finally:
            await runner.cleanup()

    return asyncio.run(scenario())


def test_a_dropped_call_is_retried_and_its_conflict_means_done() -> None:
    calls: list[int] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        calls.append(1)
        if len(calls) == 1:
            assert request.transport is not None
            request.transport.close()  # the server drops the first call
            return web.Response()
        return web.json_response({"message": "already exists"}, status=409)

    assert serve_and_post(handler) is None
    assert len(calls) == 2


def test_a_conflict_on_the_first_call_is_an_error_naming_the_call() -> None:
    async def handler(request: web.Request) -> web.StreamResponse:
        return web.json_response({"message": 'pods "p" already exists'}, status=409)

    with pytest.raises(ApiError, match=r'POST /api/v1/pods: 409 pods "p" already exists'):
        serve_and_post(handler)


def test_a_created_object_is_returned() -> None:
    async def handler(request: web.Request) -> web.StreamResponse:
        return web.json_response(await request.json(), status=201)

    assert serve_and_post(handler) == {"metadata": {"name": "p"}}
