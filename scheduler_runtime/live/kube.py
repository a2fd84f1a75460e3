"""A thin JSON client for the Kubernetes API: the kubernetes package's loaders supply the
configuration and the credentials (in a child process, apiconfig); requests and watch streams
stay raw bytes decoded with orjson, so no client model objects are built on the hot path."""

from __future__ import annotations

import datetime
import functools
import importlib.metadata
import platform
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any
from urllib.parse import urlencode

import orjson

from scheduler_runtime.live import apiconfig
from scheduler_runtime.live.apiconfig import ApiConfig
from scheduler_runtime.live.transport import Connections, Exchange

JSON = "application/json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"

READ_TIMEOUT = 30.0  # for a request's answer (connecting has transport.CONNECT_TIMEOUT)

# The runtime's name on the API server: every write names it as its field manager (as
# kube-scheduler's writes are recorded under "kube-scheduler"), and its user agent starts with it.
FIELD_MANAGER = "scheduler-runtime"
WRITES = frozenset({"POST", "PUT", "PATCH"})
UNAUTHORIZED = 401


class ApiError(Exception):
    """The API server answered with an error status (`code`, the Status `reason`)."""

    def __init__(self, code: int, reason: str, message: str) -> None:
        super().__init__(f"{code} {reason}: {message}")
        self.code = code
        self.reason = reason
        self.message = message


def micro_time(moment: datetime.datetime | None = None) -> str:
    """metav1.MicroTime as the API server writes it: RFC 3339 with microseconds, UTC."""
    moment = moment or datetime.datetime.now(datetime.UTC)
    return moment.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_micro_time(text: str) -> datetime.datetime:
    """Reads a MicroTime (or Time) string back into an aware datetime."""
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))


@functools.cache
def load_client(kubeconfig: str | None) -> ApiConfig:
    """The API server and credentials from a kubeconfig file, or from the pod's service account
    when None (apiconfig.ClusterConfigError when neither can be loaded). Resolved once per
    process: the version check, the scheduler's clients and the reviews share it."""
    return apiconfig.load(kubeconfig)


def user_agent() -> str:
    """As client-go builds kube-scheduler's: `<name>/<version> (<os>/<arch>)`. The API server
    takes the part before the first `/` as the manager of a write that names none."""
    try:
        version = importlib.metadata.version("scheduler-operator")
    except importlib.metadata.PackageNotFoundError:
        version = "unknown"
    system = platform.system().lower() or "unknown"
    arch = {"x86_64": "amd64", "aarch64": "arm64"}.get(platform.machine(), platform.machine())
    return f"{FIELD_MANAGER}/v{version} ({system}/{arch})"


def _error(code: int, http_reason: str, body: bytes) -> ApiError:
    try:
        status = orjson.loads(body) if body else {}
    except orjson.JSONDecodeError:
        status = {}
    if not isinstance(status, dict):
        status = {}
    reason = status.get("reason") or http_reason
    message = status.get("message") or body[:200].decode(errors="replace")
    return ApiError(code, str(reason), str(message))


class RateLimiter:
    """client-go's token bucket: `qps` requests a second on average, in bursts of up to
    `burst` (clientConnection.qps / burst; a qps of 0 means no limit)."""

    def __init__(
        self,
        qps: float,
        burst: int,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.qps = qps
        self.burst = max(burst, 1)
        self.clock = clock
        self.sleep = sleep
        self._tokens = float(self.burst)
        self._last = clock()
        self._lock = threading.Lock()

    def backlog(self) -> int:
        """How many callers wait for a token now (the API client is the bottleneck)."""
        if self.qps <= 0:
            return 0
        with self._lock:
            tokens = self._tokens + (self.clock() - self._last) * self.qps
        return max(0, -int(tokens))

    def wait(self) -> None:
        """Takes a token, sleeping until one is due; callers queue up in order."""
        if self.qps <= 0:
            return
        with self._lock:
            now = self.clock()
            self._tokens = min(self.burst, self._tokens + (now - self._last) * self.qps)
            self._last = now
            self._tokens -= 1
            delay = -self._tokens / self.qps if self._tokens < 0 else 0.0
        if delay > 0:
            self.sleep(delay)


class Kube:
    """JSON requests and watch streams against one API server."""

    def __init__(self, config: ApiConfig, limiter: RateLimiter | None = None) -> None:
        self.config = config
        self.limiter = limiter or RateLimiter(qps=0, burst=1)
        self.connections = Connections(config.endpoint)  # one per thread, kept open
        self.default_headers = {"User-Agent": user_agent(), "Accept": JSON}

    def _prepare(
        self, method: str, path: str, query: Mapping[str, Any] | None
    ) -> tuple[str, dict[str, str]]:
        """The path with its query, and the headers with credentials; waits for the limiter."""
        self.limiter.wait()
        if query:
            path += "?" + urlencode({k: v for k, v in query.items() if v is not None})
        return path, self._headers()

    def _headers(self) -> dict[str, str]:
        """The user agent, and the current bearer token (renewed as it expires)."""
        token = self.config.token.value()
        if token:
            return {**self.default_headers, "Authorization": f"Bearer {token}"}
        return dict(self.default_headers)

    def request(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, Any] | None = None,
        body: Any = None,
        content_type: str = JSON,
        timeout: float | None = None,
        before_send: Callable[[], None] | None = None,
    ) -> dict[str, Any]:
        """One request; the decoded JSON answer, or ApiError for an error status.

        `timeout` bounds each wait on the server (default: 5s to connect, 30s to read).
        `before_send` runs once the rate limiter and the connection are ready, right before
        the request is written; what it raises stops the request unsent. A write names the
        runtime as its field manager unless the caller named one."""
        if method in WRITES:
            query = {"fieldManager": FIELD_MANAGER, **(query or {})}
        target, headers = self._prepare(method, path, query)
        payload = None if body is None else orjson.dumps(body)
        if payload is not None:
            headers["Content-Type"] = content_type
        response = self.connections.request(
            method,
            target,
            payload,
            headers,
            READ_TIMEOUT if timeout is None else timeout,
            before_send=before_send,
        )
        if response.status >= 400:
            self._refused(response.status)
            raise _error(response.status, response.reason, response.body)
        decoded = orjson.loads(response.body) if response.body else {}
        return decoded if isinstance(decoded, dict) else {}

    def _refused(self, status: int) -> None:
        """A 401: the token may have expired early (client-go asks for a new one too)."""
        if status == UNAUTHORIZED:
            self.config.token.renew()

    def get(self, path: str, timeout: float | None = None, **query: Any) -> dict[str, Any]:
        return self.request("GET", path, query=query, timeout=timeout)

    def patch(
        self,
        path: str,
        body: Mapping[str, Any],
        *,
        content_type: str = STRATEGIC_MERGE_PATCH,
        before_send: Callable[[], None] | None = None,
    ) -> dict[str, Any]:
        """A strategic-merge patch (as kubectl and client-go's typed clients send), unless
        another patch type is asked for."""
        return self.request(
            "PATCH", path, body=body, content_type=content_type, before_send=before_send
        )

    def watch(
        self, path: str, query: Mapping[str, Any], open_exchanges: list[Exchange]
    ) -> Iterator[dict[str, Any]]:
        """The events of a watch, one decoded dict per line, until the server ends it.

        The open exchange is kept in `open_exchanges` so another thread can shut it down."""
        target, headers = self._prepare("GET", path, {**query, "watch": "true"})
        read_timeout = float(query.get("timeoutSeconds", 300)) + 30
        exchange = self.connections.open("GET", target, None, headers, read_timeout)
        open_exchanges.append(exchange)
        try:
            if exchange.status >= 400:
                self._refused(exchange.status)
                raise _error(exchange.status, exchange.reason, exchange.read())
            yield from _lines(exchange.pieces())
        finally:
            open_exchanges.remove(exchange)
            exchange.finish()


def _lines(pieces: Iterator[bytes]) -> Iterator[dict[str, Any]]:
    """One JSON document per line; the server sends each watch event as one piece."""
    pending = b""
    for piece in pieces:
        *complete, pending = (pending + piece if pending else piece).split(b"\n")
        for line in complete:
            if line.strip():
                yield orjson.loads(line)
    if pending.strip():
        yield orjson.loads(pending)
