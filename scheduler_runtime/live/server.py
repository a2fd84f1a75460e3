"""The scheduler's HTTP endpoints: /healthz and /livez (the process serves and its loop runs),
/readyz (caches synced and, with leader election, leading or following a healthy leader),
/metrics (Prometheus text format) and /explain/<namespace>/<pod> (why a pod went where it went,
as JSON).

They are served on the secure port (HTTPS, every request through a delegated.Gate) and, when
asked for, on a plain HTTP port for local use (no authentication). Which connections are held
and for how long is the transport's (`scheduler_runtime.httpserver`); this module routes.
Requests that need the API server (a review, or a scrape that is not cached) run on a few
worker threads; probes that need no review are answered on the event loop itself, so they
never queue behind requests waiting on the API server."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import ssl
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Final

import orjson
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from scheduler_runtime.httpserver import (
    Address,
    Endpoint,
    Handler,
    Limits,
    Request,
    Response,
    Server,
    plain,
)
from scheduler_runtime.live.delegated import Credentials, Gate, certificate_user

log = logging.getLogger(__name__)

# A check returns "" when healthy, else the reason it is not.
Check = Callable[[], str]
# The explanation of pod "namespace/name" as JSON, None when it is not kept.
Explainer = Callable[[str], "dict[str, Any] | None"]
EXPLAIN_PREFIX: Final = "/explain/"
HEALTH_PATHS: Final = ("/healthz", "/livez", "/readyz")
WORKER_THREADS: Final = 4
SERVER_NAME: Final = "scheduler-runtime"

__all__ = ["HealthServer", "Limits", "Response", "Secure", "parse_listen"]


def parse_listen(text: str) -> Address:
    """HOST:PORT (HOST may be empty or a bracketed IPv6 address) into a bind address."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"--listen {text!r}: expected HOST:PORT with a port from 0 to 65535")
    return host.strip("[]") or "0.0.0.0", int(port)  # noqa: S104 - a server listens on all by default


@dataclass(frozen=True)
class Secure:
    """The secure port: where, its current TLS context, and the gate every request passes."""

    address: Address
    tls: Callable[[], ssl.SSLContext]
    gate: Gate


@dataclass(frozen=True)
class _Request:
    """What the routes need of a request, read on the event loop."""

    method: str
    target: str  # as sent: path and query
    path: str  # the decoded path, the one authorized and routed
    credentials: Credentials


class HealthServer:
    """Serves the endpoints on a background thread: plain HTTP on `address` when given, HTTPS
    on `secure` when given. Both bind at construction, so a taken port fails at once."""

    def __init__(
        self,
        address: Address | None = None,
        *,
        live: Check,
        ready: Check,
        registry: CollectorRegistry,
        explanations: Explainer | None = None,
        secure: Secure | None = None,
        limits: Limits | None = None,
    ) -> None:
        self.checks: dict[str, Check] = {"/healthz": live, "/livez": live, "/readyz": ready}
        self.registry = registry
        self.explanations = explanations
        self.limits = limits or Limits()
        endpoints = []
        if address is not None:
            endpoints.append(Endpoint(address, self._handler(None)))
        if secure is not None:
            endpoints.append(Endpoint(secure.address, self._handler(secure.gate), secure.tls))
        self._plain_index = 0 if address is not None else None
        self._secure_index = len(endpoints) - 1 if secure is not None else None
        self.transport = Server(endpoints, self.limits)
        self._workers = ThreadPoolExecutor(WORKER_THREADS, thread_name_prefix="http")

    # ----- the public surface

    @property
    def port(self) -> int:
        """The plain HTTP port."""
        assert self._plain_index is not None, "no plain port"
        return self.transport.port(self._plain_index)

    @property
    def secure_port(self) -> int:
        assert self._secure_index is not None, "no secure port"
        return self.transport.port(self._secure_index)

    @property
    def connections(self) -> int:
        """The connections held now."""
        return len(self.transport.connections)

    def addresses(self) -> list[str]:
        """Where it serves, as URLs."""
        return [self.transport.url(i) for i in range(len(self.transport.endpoints))]

    def start(self) -> None:
        self.transport.start()

    def stop(self) -> None:
        self.transport.stop()
        self._workers.shutdown(wait=False, cancel_futures=True)

    # ----- answering (on a worker thread, or on the loop for a probe that needs no review)

    def _handler(self, gate: Gate | None) -> Handler:
        async def handle(request: Request) -> Response:
            ours = _Request(
                request.method,
                request.target,
                request.path,
                Credentials(
                    request.headers.get("authorization"), certificate_user(request.peercert)
                ),
            )
            light = ours.path in HEALTH_PATHS and (
                gate is None or not gate.needs_review(ours.path, ours.credentials)
            )
            if light:
                return _sent(self._respond(ours, gate))
            loop = asyncio.get_running_loop()
            return _sent(await loop.run_in_executor(self._workers, self._respond, ours, gate))

        return handle

    def _respond(self, request: _Request, gate: Gate | None) -> Response:
        if gate is not None:
            refusal = gate.check(request.method, request.path, request.target, request.credentials)
            if refusal is not None:
                # An unauthenticated client does not keep its connection.
                return Response(
                    refusal.code, refusal.body, refusal.content_type, refusal.code == 401
                )
        if request.method not in ("GET", "HEAD"):
            return plain(405, "method not allowed", close=False)
        path = request.path
        if path == "/metrics":
            return Response(200, generate_latest(self.registry), CONTENT_TYPE_LATEST)
        if path.startswith(EXPLAIN_PREFIX) and self.explanations is not None:
            return self._explain(path.removeprefix(EXPLAIN_PREFIX))
        check = self.checks.get(path)
        if check is None:
            return Response(404, b"404 page not found\n")
        problem = check()
        body = (f"{problem}\n" if problem else "ok").encode()
        return Response(500 if problem else 200, body)

    def _explain(self, key: str) -> Response:
        assert self.explanations is not None
        found = self.explanations(key) if key.count("/") == 1 else None
        if found is None:
            missing = {"error": f"no explanation kept for pod {key!r}"}
            return Response(404, orjson.dumps(missing), "application/json")
        return Response(200, orjson.dumps(found), "application/json")


def _sent(response: Response) -> Response:
    """With the headers kube-scheduler's server sends: its name, and on a refusal that it is
    neither cached nor sniffed."""
    headers: tuple[tuple[str, str], ...] = (("Server", SERVER_NAME),)
    if response.code >= 400:
        headers += (("Cache-Control", "no-cache, private"), ("X-Content-Type-Options", "nosniff"))
    return dataclasses.replace(response, headers=headers + response.headers)
