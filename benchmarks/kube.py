"""A small asyncio client for the calls the benchmark makes thousands of at once (create,
bind, delete, watch), with raw JSON: the official client's model objects would make the
benchmark's own process the bottleneck."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator, Awaitable, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import aiohttp
import kubernetes
import orjson

T = TypeVar("T")
RETRIES = 3


class ApiError(RuntimeError):
    """A request the API server refused, with its status and message."""

    def __init__(self, method: str, path: str, status: int, body: bytes) -> None:
        try:
            message = str(orjson.loads(body).get("message", ""))
        except (orjson.JSONDecodeError, AttributeError):
            message = body[:300].decode(errors="replace")
        super().__init__(f"{method} {path}: {status} {message}")
        self.status = status


@dataclass(frozen=True)
class Endpoint:
    """Where the API server is and how to authenticate, read from a kubeconfig."""

    server: str
    ssl_context: ssl.SSLContext
    headers: dict[str, str]

    @classmethod
    def from_kubeconfig(cls, path: Path) -> Endpoint:
        configuration = kubernetes.client.Configuration()
        kubernetes.config.load_kube_config(  # type: ignore[no-untyped-call]
            config_file=str(path), client_configuration=configuration
        )
        context = ssl.create_default_context(cafile=configuration.ssl_ca_cert)
        if configuration.cert_file:
            context.load_cert_chain(configuration.cert_file, configuration.key_file)
        token = configuration.api_key.get("authorization", "")
        return cls(configuration.host, context, {"Authorization": token} if token else {})


class Api:
    """JSON requests over one pooled connection set; `connections` bounds the concurrency."""

    def __init__(self, endpoint: Endpoint, session: aiohttp.ClientSession) -> None:
        self.endpoint = endpoint
        self.session = session

    @classmethod
    @asynccontextmanager
    async def open(cls, endpoint: Endpoint, connections: int = 64) -> AsyncIterator[Api]:
        connector = aiohttp.TCPConnector(limit=connections, ssl=endpoint.ssl_context)
        timeout = aiohttp.ClientTimeout(total=None, sock_connect=10)
        async with aiohttp.ClientSession(
            connector=connector, headers=endpoint.headers, timeout=timeout
        ) as session:
            yield cls(endpoint, session)

    async def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        ok: Iterable[int] = (200, 201, 202),
    ) -> Any:
        """One call; a dropped connection is retried, after which 409 means the lost attempt
        had already done the work (created the pod, bound it)."""
        data = None if body is None else orjson.dumps(body)
        headers = {"Content-Type": "application/json"} if data is not None else {}
        accepted = set(ok)
        retries = 0
        while True:
            try:
                async with self.session.request(
                    method, self.endpoint.server + path, data=data, headers=headers
                ) as response:
                    payload = await response.read()
            except (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError):
                retries += 1
                if retries > RETRIES:
                    raise
                accepted.add(409)
                continue
            if response.status not in accepted:
                raise ApiError(method, path, response.status, payload)
            return orjson.loads(payload) if payload and response.status != 409 else None

    async def get(self, path: str) -> Any:
        return await self.request("GET", path)

    async def post(self, path: str, body: Any) -> Any:
        return await self.request("POST", path, body)

    async def delete(self, path: str, body: Any = None) -> Any:
        return await self.request("DELETE", path, body, ok=(200, 202, 404))

    async def merge_patch(self, path: str, body: Any) -> Any:
        """A JSON merge patch; a missing object is no error (it was deleted meanwhile)."""
        data = orjson.dumps(body)
        headers = {"Content-Type": "application/merge-patch+json"}
        url = self.endpoint.server + path
        async with self.session.patch(url, data=data, headers=headers) as response:
            payload = await response.read()
            if response.status not in (200, 404):
                raise ApiError("PATCH", path, response.status, payload)
        return orjson.loads(payload) if response.status == 200 else None

    async def watch(self, path: str, resource_version: str) -> AsyncIterator[dict[str, Any]]:
        """Watch events of a collection from resource_version on, resuming after disconnects."""
        version = resource_version
        while True:
            separator = "&" if "?" in path else "?"
            url = (
                f"{self.endpoint.server}{path}{separator}watch=1"
                f"&resourceVersion={version}&allowWatchBookmarks=true&timeoutSeconds=3600"
            )
            async with self.session.get(url) as response:
                if response.status != 200:
                    raise ApiError("WATCH", path, response.status, await response.read())
                async for line in response.content:
                    event = orjson.loads(line)
                    if event["type"] == "ERROR":
                        raise ApiError("WATCH", path, event["object"].get("code", 0), line)
                    version = event["object"]["metadata"]["resourceVersion"]
                    if event["type"] != "BOOKMARK":
                        yield event


async def gather_all(calls: Iterable[Awaitable[T]]) -> list[T]:
    """Runs the calls concurrently (the connection pool bounds how many are in flight)."""
    return list(await asyncio.gather(*calls))
