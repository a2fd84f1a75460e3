"""The scheduler's HTTP endpoints: /healthz and /livez (the process serves and its loop runs),
/readyz (caches synced and, with leader election, leading or following a healthy leader),
/metrics (Prometheus text format) and /explain/<namespace>/<pod> (why a pod went where it went,
as JSON).

They are served on the secure port (HTTPS, every request through a delegated.Gate) and, when
asked for, on a plain HTTP port for local use (no authentication). One event-loop thread reads
every connection, so a slow or idle client holds a socket, never a thread: a request's head
must arrive within `read_timeout`, an idle keep-alive connection is closed after
`idle_timeout`, heads and bodies are bounded, and at `max_connections` the connection that has
waited longest for a request is closed to make room. Requests run on a few worker threads;
probes that need no review are answered on the loop itself, so they never queue behind
requests waiting on the API server."""

from __future__ import annotations

import asyncio
import email.utils
import http.client
import io
import logging
import socket
import ssl
import threading
import urllib.parse
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any

import orjson
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from scheduler_runtime.live.delegated import Credentials, Gate, certificate_user

log = logging.getLogger(__name__)

# A check returns "" when healthy, else the reason it is not.
Check = Callable[[], str]
# The explanation of pod "namespace/name" as JSON, None when it is not kept.
Explainer = Callable[[str], "dict[str, Any] | None"]
Address = tuple[str, int]
EXPLAIN_PREFIX = "/explain/"
HEALTH_PATHS = ("/healthz", "/livez", "/readyz")
TEXT = "text/plain; charset=utf-8"
SHUTDOWN_TIMEOUT = 5.0  # for the client's part of closing a TLS connection
UNSPECIFIED = ("", "0.0.0.0", "::")  # noqa: S104 - the addresses meaning "all interfaces"


def parse_listen(text: str) -> Address:
    """HOST:PORT (HOST may be empty or a bracketed IPv6 address) into a bind address."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"--listen {text!r}: expected HOST:PORT with a port from 0 to 65535")
    return host.strip("[]") or "0.0.0.0", int(port)  # noqa: S104 - a server listens on all by default


@dataclass(frozen=True)
class Limits:
    """What one client may hold of the server."""

    max_connections: int = 256
    read_timeout: float = 10.0  # TLS handshake and a request's head and body
    idle_timeout: float = 90.0  # a kept-alive connection waiting for its next request
    write_timeout: float = 30.0  # a response's bytes reaching a client that reads slowly
    max_head_bytes: int = 64 * 1024  # request line and headers
    max_body_bytes: int = 64 * 1024  # these are GET endpoints; a body is read and dropped
    worker_threads: int = 4


@dataclass(frozen=True)
class Secure:
    """The secure port: where, its current TLS context, and the gate every request passes."""

    address: Address
    tls: Callable[[], ssl.SSLContext]
    gate: Gate


@dataclass(frozen=True)
class Response:
    code: int
    body: bytes = b""
    content_type: str = TEXT
    close: bool = False  # ends the connection after this answer


@dataclass
class _Listener:
    sock: socket.socket
    secure: Secure | None

    @property
    def port(self) -> int:
        return int(self.sock.getsockname()[1])


@dataclass(eq=False)
class _Connection:
    task: asyncio.Task[None] | None = None


class _UnreadableError(Exception):
    """The request cannot be read: answer `response` and close."""

    def __init__(self, response: Response) -> None:
        super().__init__(response.code)
        self.response = response


def _plain(code: int, text: str, close: bool = True) -> Response:
    return Response(code, f"{text}\n".encode(), TEXT, close)


def bind(address: Address) -> socket.socket:
    """A listening socket; an unspecified host means every interface of both IP families, as
    Go's listener does (IPv4 alone where the host has no IPv6)."""
    host, port = address
    if host in UNSPECIFIED:
        try:
            sock = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
            return _listen(sock, ("::", port))
        except OSError:
            host = "0.0.0.0"  # noqa: S104 - the same meaning, IPv4 only
    family, _, _, _, sockaddr = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    return _listen(socket.socket(family, socket.SOCK_STREAM), sockaddr)


def _listen(sock: socket.socket, sockaddr: Any) -> socket.socket:
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(sockaddr)
        sock.listen(128)
        sock.setblocking(False)
    except OSError:
        sock.close()
        raise
    return sock


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
        self.listeners: list[_Listener] = []
        try:
            if address is not None:
                self.listeners.append(_Listener(bind(address), None))
            if secure is not None:
                self.listeners.append(_Listener(bind(secure.address), secure))
        except OSError:
            self._close_listeners()
            raise
        self.connections: dict[_Connection, None] = {}
        # Connections waiting for a request's head (or their TLS handshake), longest first.
        self.waiting: dict[_Connection, None] = {}
        self._workers = ThreadPoolExecutor(self.limits.worker_threads, thread_name_prefix="http")
        self._loop = asyncio.new_event_loop()
        self._stopped = asyncio.Event()
        self.thread = threading.Thread(target=self._run, name="http", daemon=True)

    # ----- the public surface

    @property
    def port(self) -> int:
        """The plain HTTP port."""
        return next(listener.port for listener in self.listeners if listener.secure is None)

    @property
    def secure_port(self) -> int:
        return next(listener.port for listener in self.listeners if listener.secure is not None)

    def addresses(self) -> list[str]:
        """Where it serves, as URLs."""
        found = []
        for listener in self.listeners:
            host, port = listener.sock.getsockname()[:2]
            host = f"[{host}]" if ":" in host else host
            found.append(f"{'https' if listener.secure else 'http'}://{host}:{port}")
        return found

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        if self.thread.is_alive():
            self._loop.call_soon_threadsafe(self._stopped.set)
            self.thread.join(10)
        if not self.thread.is_alive():
            self._loop.close()
        self._close_listeners()
        self._workers.shutdown(wait=False, cancel_futures=True)

    def _close_listeners(self) -> None:
        for listener in self.listeners:
            listener.sock.close()

    # ----- the event loop

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self._serve())
        finally:
            self._loop.close()

    async def _serve(self) -> None:
        accepting = [asyncio.create_task(self._accept(listener)) for listener in self.listeners]
        await self._stopped.wait()
        for task in [*accepting, *(c.task for c in self.connections if c.task is not None)]:
            task.cancel()
        await asyncio.gather(*accepting, return_exceptions=True)
        open_tasks = [c.task for c in self.connections if c.task is not None]
        await asyncio.gather(*open_tasks, return_exceptions=True)

    async def _accept(self, listener: _Listener) -> None:
        loop = asyncio.get_running_loop()
        while True:
            try:
                sock, _ = await loop.sock_accept(listener.sock)
            except OSError as error:  # out of descriptors, say: wait, do not spin
                log.warning("http: accept failed: %s", error)
                await asyncio.sleep(0.5)
                continue
            if len(self.connections) >= self.limits.max_connections and not self._evict():
                sock.close()  # every connection is busy answering: no room
                continue
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            connection = _Connection()
            self.connections[connection] = None
            self.waiting[connection] = None
            connection.task = asyncio.create_task(self._connection(connection, sock, listener))

    def _evict(self) -> bool:
        """Closes the connection that has waited longest for a request; whether there was one."""
        for connection in self.waiting:
            del self.waiting[connection]
            if connection.task is not None:
                connection.task.cancel()
            del self.connections[connection]
            return True
        return False

    async def _connection(
        self, connection: _Connection, sock: socket.socket, listener: _Listener
    ) -> None:
        """Serves one connection's requests in turn. It ends gracefully after an answer or when
        the client closes or idles out; on a timeout, an error or eviction it is cut at once,
        so a client that never completes the TLS shutdown does not keep its socket."""
        writer: asyncio.StreamWriter | None = None
        graceful = False
        try:
            reader, writer, credentials = await self._open(sock, listener)
            first = True
            while True:
                self.waiting.pop(connection, None)
                self.waiting[connection] = None  # waits again, as the newest
                try:
                    request = await self._read_request(reader, first)
                except _UnreadableError as refused:
                    self.waiting.pop(connection, None)
                    await self._write(writer, "GET", refused.response)
                    graceful = True
                    return
                if request is None:
                    graceful = True
                    return
                self.waiting.pop(connection, None)
                response = await self._answer(request, listener, credentials)
                close = response.close or request.close
                await self._write(writer, request.method, response, close)
                first = False
                if close:
                    graceful = True
                    return
        except (TimeoutError, ConnectionError, ssl.SSLError, OSError, asyncio.IncompleteReadError):
            return
        finally:
            self.waiting.pop(connection, None)
            self.connections.pop(connection, None)
            if writer is None:
                sock.close()
            elif graceful:
                writer.close()
            else:
                writer.transport.abort()

    async def _open(
        self, sock: socket.socket, listener: _Listener
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter, Credentials]:
        """Streams over the accepted socket, after the TLS handshake on the secure port."""
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=self.limits.max_head_bytes)
        protocol = asyncio.StreamReaderProtocol(reader)
        secure = listener.secure
        if secure is None:
            transport, _ = await loop.connect_accepted_socket(lambda: protocol, sock)
        else:
            timeout = self.limits.read_timeout
            transport, _ = await asyncio.wait_for(
                loop.connect_accepted_socket(
                    lambda: protocol,
                    sock,
                    ssl=secure.tls(),
                    ssl_handshake_timeout=timeout,
                    ssl_shutdown_timeout=SHUTDOWN_TIMEOUT,
                ),
                timeout,
            )
        writer = asyncio.StreamWriter(transport, protocol, reader, loop)
        peer = writer.get_extra_info("peercert") if secure is not None else None
        return reader, writer, Credentials(certificate=certificate_user(peer))

    async def _read_request(self, reader: asyncio.StreamReader, first: bool) -> _Request | None:
        """The next request; None when the client closed or idled out between requests."""
        limits = self.limits
        if not first:  # keep-alive: the next request may take a while to start
            try:
                start = await asyncio.wait_for(reader.read(1), limits.idle_timeout)
            except TimeoutError:
                return None
            if not start:
                return None
        else:
            start = b""
        try:
            head = start + await asyncio.wait_for(
                reader.readuntil(b"\r\n\r\n"), limits.read_timeout
            )
        except TimeoutError:
            raise _UnreadableError(_plain(408, "request timeout")) from None
        except asyncio.LimitOverrunError:
            raise _UnreadableError(_plain(431, "request header fields too large")) from None
        except asyncio.IncompleteReadError as error:
            if start or error.partial.strip():
                raise _UnreadableError(_plain(400, "bad request")) from None
            return None
        request = _parse(head.lstrip(b"\r\n"))
        length = request.content_length(limits.max_body_bytes)
        if length:
            try:
                await asyncio.wait_for(reader.readexactly(length), limits.read_timeout)
            except TimeoutError:
                raise _UnreadableError(_plain(408, "request timeout")) from None
        return request

    async def _answer(
        self, request: _Request, listener: _Listener, credentials: Credentials
    ) -> Response:
        gate = listener.secure.gate if listener.secure is not None else None
        credentials = Credentials(request.authorization, credentials.certificate)
        light = request.path in HEALTH_PATHS and (
            gate is None or not gate.needs_review(request.path, credentials)
        )
        if light:
            return self._respond(request, gate, credentials)
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._workers, self._respond, request, gate, credentials)

    async def _write(
        self, writer: asyncio.StreamWriter, method: str, response: Response, close: bool = True
    ) -> None:
        reason = HTTPStatus(response.code).phrase
        headers = [
            f"HTTP/1.1 {response.code} {reason}",
            f"Content-Type: {response.content_type}",
            f"Content-Length: {len(response.body)}",
            f"Date: {email.utils.formatdate(usegmt=True)}",
        ]
        if response.code >= 400:
            headers += ["Cache-Control: no-cache, private", "X-Content-Type-Options: nosniff"]
        if close:
            headers.append("Connection: close")
        head = ("\r\n".join(headers) + "\r\n\r\n").encode("latin-1")
        # One write: a head and a body sent apart could wait out the client's delayed ACK.
        writer.write(head if method == "HEAD" else head + response.body)
        await asyncio.wait_for(writer.drain(), self.limits.write_timeout)

    # ----- answering (on a worker thread, or on the loop for a probe that needs no review)

    def _respond(self, request: _Request, gate: Gate | None, credentials: Credentials) -> Response:
        if gate is not None:
            refusal = gate.check(request.method, request.path, request.target, credentials)
            if refusal is not None:
                # An unauthenticated client does not keep its connection.
                return Response(
                    refusal.code, refusal.body, refusal.content_type, refusal.code == 401
                )
        if request.method not in ("GET", "HEAD"):
            return _plain(405, "method not allowed", close=False)
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


@dataclass
class _Request:
    method: str
    target: str  # as sent: path and query
    path: str  # the decoded path, the one authorized and routed
    version: str
    headers: http.client.HTTPMessage = field(repr=False)

    @property
    def authorization(self) -> str | None:
        return self.headers.get("Authorization")

    @property
    def close(self) -> bool:
        connection = (self.headers.get("Connection") or "").lower()
        return self.version == "HTTP/1.0" or "close" in connection

    def content_length(self, limit: int) -> int:
        if "Transfer-Encoding" in self.headers:
            raise _UnreadableError(_plain(501, "transfer encodings are not supported"))
        text = self.headers.get("Content-Length")
        if text is None:
            return 0
        if not text.strip().isdigit():
            raise _UnreadableError(_plain(400, "bad content length"))
        length = int(text)
        if length > limit:
            raise _UnreadableError(_plain(413, "request entity too large"))
        return length


def _parse(head: bytes) -> _Request:
    line, _, rest = head.partition(b"\r\n")
    parts = line.decode("latin-1").split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1.") or not parts[1].startswith("/"):
        raise _UnreadableError(_plain(400, "bad request"))
    method, target, version = parts
    if version not in ("HTTP/1.0", "HTTP/1.1"):
        raise _UnreadableError(_plain(505, "HTTP version not supported"))
    try:
        headers = http.client.parse_headers(io.BytesIO(rest))
    except http.client.HTTPException:
        raise _UnreadableError(_plain(431, "request header fields too large")) from None
    path = urllib.parse.unquote(target.split("?", 1)[0])
    return _Request(method, target, path, version, headers)
