"""The project's own HTTP endpoints' server (a scheduler's secure and plain ports, the
operator's metrics): which connections are held, for how long, over what TLS, and what of a
request is read. h11 (sans-IO HTTP/1.1) frames the requests and answers; the routes are the
caller's `Handler`. A full web framework would hold a fifth of a scheduler's memory at start-up
for three routes.

- **Queued, not dropped.** The listening socket's backlog is the system's maximum (Linux caps
  it at net.core.somaxconn), so a burst of connections waits in the kernel instead of having
  its SYNs dropped: a dropped SYN is sent again only after a second, and a kubelet's probe
  gives up after one.
- **A new connection is never refused.** At `max_connections` the client (address) holding
  the most connections loses one: the one that has waited longest for its next request (or
  its TLS handshake), else the one whose answer has taken longest. A probe's fresh connection
  always gets in, whoever holds the rest.
- **A timeout for each wait.** The TLS handshake, and a request's head once it has begun,
  within `read_timeout` (408 then); a kept-alive connection waits `idle_timeout` for its next
  request; an answer (reviews included) reaches the client within `answer_timeout`.
- **Bounded requests.** A head of at most MAX_HEAD_BYTES with at most MAX_HEADERS fields of at
  most MAX_LINE bytes each (431 past them, as Go's server answers), a body of at most
  `max_body_bytes` (413). One request is answered at a time; while it is, the connection is
  not read, so pipelined requests wait in the kernel rather than in memory.
- **TLS per connection.** The context is asked for at every connection, so a rotated
  certificate or client CA serves from the next one.
- **Nothing stops it but stop().** An exception while accepting or in one connection is
  logged and that connection alone closed (500 for a handler that raised).

It runs on an event loop of its own, on one thread: a slow or idle client holds a socket and a
few kilobytes, never a thread."""

from __future__ import annotations

import asyncio
import logging
import socket
import ssl
import threading
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from email.utils import formatdate
from http import HTTPStatus
from typing import Any, Final
from urllib.parse import unquote

import h11

log = logging.getLogger(__name__)

Address = tuple[str, int]
UNSPECIFIED: Final = ("", "0.0.0.0", "::")  # noqa: S104 - the addresses meaning "all interfaces"
BACKLOG: Final = 65535  # the kernel caps it at net.core.somaxconn (4096 by default)
MAX_HEADERS: Final = 64
MAX_LINE: Final = 8190  # for the request line and each header
MAX_HEAD_BYTES: Final = 16 * 1024
SHUTDOWN_TIMEOUT: Final = 5.0  # for the client's part of closing a TLS connection
SWEEP_INTERVAL: Final = 0.5
CLOSING_GRACE: Final = 1.0  # for a closing connection's last bytes to leave
TEXT: Final = "text/plain; charset=utf-8"
REQUEST_TIMEOUT_ANSWER: Final = (
    b"HTTP/1.1 408 Request Timeout\r\nContent-Type: text/plain; charset=utf-8\r\n"
    b"Content-Length: 16\r\nConnection: close\r\n\r\nrequest timeout\n"
)


@dataclass(frozen=True)
class Request:
    """What a handler is given of a request: `target` as sent (path and query), `path` its
    decoded path, `headers` by lower-cased name (repeated fields joined by ", "), `peercert`
    the verified client certificate on a TLS connection that presented one."""

    method: str
    target: str
    path: str
    headers: Mapping[str, str]
    peercert: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class Response:
    code: int
    body: bytes = b""
    content_type: str = TEXT
    close: bool = False  # ends the connection after this answer
    headers: tuple[tuple[str, str], ...] = ()


def plain(code: int, text: str, close: bool = True) -> Response:
    return Response(code, f"{text}\n".encode(), TEXT, close)


Handler = Callable[[Request], Awaitable[Response]]


@dataclass(frozen=True)
class Limits:
    """What the clients may hold of the server, together and each."""

    max_connections: int = 1024
    read_timeout: float = 10.0  # the TLS handshake; a request's head once it has begun
    idle_timeout: float = 90.0  # a kept-alive connection waiting for its next request
    answer_timeout: float = 60.0  # an answer reaching the client, reviews included
    max_body_bytes: int = 64 * 1024  # the endpoints take no body: larger ones are refused


@dataclass(frozen=True)
class Endpoint:
    """One listening address: its handler and, for HTTPS, the current TLS context."""

    address: Address
    handler: Handler
    tls: Callable[[], ssl.SSLContext] | None = None


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
        sock.listen(BACKLOG)
        sock.setblocking(False)
    except OSError:
        sock.close()
        raise
    return sock


class Connection:
    """One accepted connection and what it is waiting for. `transport` is None until its TLS
    handshake is done; `answering` is when its current answer began (None between requests);
    `head_began` when the bytes of its next request began to arrive."""

    __slots__ = (
        "answering",
        "client",
        "ending",
        "head_began",
        "heard_while_answering",
        "opened",
        "sock",
        "task",
        "transport",
        "waiting",
    )

    def __init__(self, sock: socket.socket, client: str) -> None:
        self.sock = sock
        self.client = client
        self.opened = self.waiting = time.monotonic()
        self.task: asyncio.Task[None] | None = None
        self.transport: asyncio.Transport | None = None
        self.answering: float | None = None
        self.head_began: float | None = None
        self.heard_while_answering = False
        self.ending: float | None = None  # when it was told to close

    def abort(self) -> None:
        """Cut at once: no TLS goodbye for a client that may never read it."""
        if self.transport is not None:
            self.transport.abort()
        else:
            if self.task is not None:
                self.task.cancel()
            self.sock.close()

    def time_out(self) -> None:
        """A request that did not arrive in time: 408, then close (cut, if it is closing)."""
        self.ending = time.monotonic()
        if self.transport is None or self.transport.is_closing():
            self.abort()
            return
        self.transport.write(REQUEST_TIMEOUT_ANSWER)
        self.transport.close()

    def close(self) -> None:
        """Idle too long: a graceful close."""
        self.ending = time.monotonic()
        if self.transport is not None and not self.transport.is_closing():
            self.transport.close()


class _Protocol(asyncio.Protocol):
    """One connection: h11 reads its requests, one at a time, and frames their answers."""

    def __init__(self, connection: Connection, owner: Server, handler: Handler) -> None:
        self.connection = connection
        self.owner = owner
        self.handler = handler
        self.http = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_HEAD_BYTES)
        self.transport: asyncio.Transport | None = None
        self.request: Request | None = None  # read, its body still arriving
        self.answer: asyncio.Task[None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = self.connection.transport = transport
        # Its first request is under way from the start: it has read_timeout to arrive.
        self.connection.waiting = self.connection.head_began = time.monotonic()

    def data_received(self, data: bytes) -> None:
        connection = self.connection
        if connection.answering is not None:
            connection.heard_while_answering = True
        elif connection.head_began is None:
            connection.head_began = time.monotonic()
        self.http.receive_data(data)
        self._read()

    def eof_received(self) -> bool:
        self.http.receive_data(b"")
        self._read()
        # A plain connection stays open for an answer under way (TLS cannot: it closes).
        tls = self.transport is not None and self.transport.get_extra_info("sslcontext")
        return self.answer is not None and not tls

    def connection_lost(self, exc: BaseException | None) -> None:
        if self.answer is not None:
            self.answer.cancel()
        self.owner.forget(self.connection)

    def _read(self) -> None:
        """Takes what h11 has whole, until a request is complete and its answer under way."""
        while self.answer is None and self.transport and not self.transport.is_closing():
            try:
                event = self.http.next_event()
            except h11.RemoteProtocolError as error:
                self._send(_status(error.error_status_hint), head=False)
                return
            if event is h11.NEED_DATA or event is h11.PAUSED:
                return
            if isinstance(event, h11.Request):
                refusal = _refusal(event, self.owner.limits.max_body_bytes)
                if refusal is not None:
                    self._send(_status(refusal), head=False)
                    return
                self.request = self._request(event)
            elif isinstance(event, h11.EndOfMessage) and self.request is not None:
                self._begin_answer(self.request)
            elif isinstance(event, h11.ConnectionClosed):
                self.transport.close()
            # A body (at most max_body_bytes, the endpoints take none) is read and dropped.

    def _request(self, event: h11.Request) -> Request:
        headers: dict[str, str] = {}
        for name, value in event.headers:
            key, text = name.decode("latin-1"), value.decode("latin-1")
            headers[key] = f"{headers[key]}, {text}" if key in headers else text
        target = event.target.decode("latin-1")
        peercert = self.transport.get_extra_info("peercert") if self.transport else None
        return Request(
            event.method.decode("ascii"),
            target,
            unquote(target.partition("?")[0]),
            headers,
            peercert or None,
        )

    def _begin_answer(self, request: Request) -> None:
        connection = self.connection
        connection.answering = time.monotonic()
        connection.head_began = None
        connection.heard_while_answering = False
        self.request = None
        assert self.transport is not None
        self.transport.pause_reading()  # a pipelined request waits in the kernel
        self.answer = asyncio.create_task(self._answer(request))

    async def _answer(self, request: Request) -> None:
        try:
            response = await self.handler(request)
        except Exception:  # one request's trouble is its own 500
            log.exception("http: cannot answer %s %s", request.method, request.path)
            response = plain(500, "internal server error")
        self.answer = None
        self._send(response, head=request.method == "HEAD")
        connection, now = self.connection, time.monotonic()
        connection.answering = None
        connection.waiting = now
        if self.transport is None or self.transport.is_closing():
            return
        self.http.start_next_cycle()
        buffered = bool(self.http.trailing_data[0])
        connection.head_began = now if connection.heard_while_answering or buffered else None
        self.transport.resume_reading()
        self._read()

    def _send(self, response: Response, head: bool) -> None:
        """Writes the answer (no body to a HEAD); closes after it when either side asked."""
        transport = self.transport
        if transport is None or transport.is_closing():
            return
        headers = [
            ("Content-Type", response.content_type),
            ("Content-Length", str(len(response.body))),
            ("Date", formatdate(usegmt=True)),
            *response.headers,
        ]
        if response.close:
            headers.append(("Connection", "close"))
        phrase = HTTPStatus(response.code).phrase.encode()
        data = self.http.send(
            h11.Response(status_code=response.code, headers=headers, reason=phrase)
        )
        if not head:
            data = (data or b"") + (self.http.send(h11.Data(data=response.body)) or b"")
        data = (data or b"") + (self.http.send(h11.EndOfMessage()) or b"")
        transport.write(data)
        if self.http.our_state is not h11.DONE or self.http.their_state is not h11.DONE:
            self.connection.ending = time.monotonic()
            transport.close()


def _refusal(event: h11.Request, max_body_bytes: int) -> int | None:
    """The status refusing what the endpoints will not read: targets that are not a path,
    other versions, heads past the bounds, bodies past max_body_bytes or in a transfer
    encoding. None for a request they read."""
    fields = event.headers.raw_items()
    sizes = [len(name) + len(value) + 2 for name, value in fields]
    lengths = [int(value) for name, value in event.headers if name == b"content-length"]
    checks = (
        (len(event.target) > MAX_LINE, 414),
        (not event.target.startswith(b"/"), 400),
        (event.http_version not in (b"1.0", b"1.1"), 505),
        (
            len(fields) > MAX_HEADERS
            or sum(sizes) > MAX_HEAD_BYTES
            or max(sizes, default=0) > MAX_LINE,
            431,
        ),
        (any(name == b"transfer-encoding" for name, _ in event.headers), 501),
        (max(lengths, default=0) > max_body_bytes, 413),
    )
    return next((code for refused, code in checks if refused), None)


def _status(code: int) -> Response:
    """A refusal with the status's own words, closing the connection."""
    return plain(code, HTTPStatus(code).phrase.lower())


class Server:
    """Serves `endpoints` on a thread of its own until stop(). Every address binds at
    construction, so a taken port fails at once."""

    def __init__(self, endpoints: list[Endpoint], limits: Limits | None = None) -> None:
        self.limits = limits or Limits()
        self.endpoints = endpoints
        self.sockets: list[socket.socket] = []
        try:
            for endpoint in endpoints:
                self.sockets.append(bind(endpoint.address))
        except OSError:
            self._close_sockets()
            raise
        self.connections: dict[int, Connection] = {}
        self.per_client: Counter[str] = Counter()
        self.evicted = 0
        self._loop = asyncio.new_event_loop()
        self._stopped = asyncio.Event()  # bound to the loop that first waits on it
        self.thread = threading.Thread(target=self._run, name="http", daemon=True)

    # ----- the public surface

    def port(self, index: int) -> int:
        return int(self.sockets[index].getsockname()[1])

    def url(self, index: int) -> str:
        host, port = self.sockets[index].getsockname()[:2]
        host = f"[{host}]" if ":" in host else host
        return f"{'https' if self.endpoints[index].tls else 'http'}://{host}:{port}"

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        if self.thread.is_alive():
            self._loop.call_soon_threadsafe(self._stopped.set)
            self.thread.join(10)
        if not self.thread.is_alive():
            self._loop.close()
        self._close_sockets()

    def forget(self, connection: Connection) -> None:
        """A connection has closed (or never opened): it holds nothing any more."""
        if self.connections.pop(id(connection), None) is not None:
            self.per_client[connection.client] -= 1
            if self.per_client[connection.client] <= 0:
                del self.per_client[connection.client]

    def _close_sockets(self) -> None:
        for sock in self.sockets:
            sock.close()

    # ----- the event loop

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self._serve())
        finally:
            self._loop.close()

    async def _serve(self) -> None:
        tasks = [
            asyncio.create_task(self._accept(sock, endpoint))
            for sock, endpoint in zip(self.sockets, self.endpoints, strict=True)
        ]
        tasks.append(asyncio.create_task(self._sweep()))
        await self._stopped.wait()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for connection in list(self.connections.values()):
            connection.abort()
        await asyncio.sleep(0)

    async def _accept(self, listening: socket.socket, endpoint: Endpoint) -> None:
        loop = asyncio.get_running_loop()
        while True:
            try:
                sock, peer = await loop.sock_accept(listening)
            except OSError as error:  # out of descriptors, say: wait, do not spin
                log.warning("http: accept failed: %s", error)
                await asyncio.sleep(0.1)
                continue
            try:
                self._admit(sock, str(peer[0]), endpoint)
            except Exception:  # one connection's trouble never stops the accepting
                log.exception("http: cannot serve a connection")
                sock.close()

    def _admit(self, sock: socket.socket, client: str, endpoint: Endpoint) -> None:
        while len(self.connections) >= self.limits.max_connections and self._evict():
            pass
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        connection = Connection(sock, client)
        self.connections[id(connection)] = connection
        self.per_client[client] += 1
        connection.task = asyncio.create_task(self._open(connection, endpoint))

    def _evict(self) -> bool:
        """Closes one connection of the client holding the most: the one that has waited
        longest for a request, else the one whose answer has taken longest."""
        if not self.per_client:
            return False
        client = self.per_client.most_common(1)[0][0]
        theirs = [c for c in self.connections.values() if c.client == client]
        waiting = [c for c in theirs if c.answering is None]
        victim = (
            min(waiting, key=lambda c: c.waiting)
            if waiting
            else min(theirs, key=lambda c: c.answering or 0.0)
        )
        self.forget(victim)
        victim.abort()
        self.evicted += 1
        return True

    async def _open(self, connection: Connection, endpoint: Endpoint) -> None:
        """The TLS handshake (on an HTTPS endpoint), then the protocol serves it."""
        loop = asyncio.get_running_loop()
        try:
            if endpoint.tls is None:
                await loop.connect_accepted_socket(
                    lambda: _Protocol(connection, self, endpoint.handler), connection.sock
                )
            else:
                await loop.connect_accepted_socket(
                    lambda: _Protocol(connection, self, endpoint.handler),
                    connection.sock,
                    ssl=endpoint.tls(),
                    ssl_handshake_timeout=self.limits.read_timeout,
                    ssl_shutdown_timeout=SHUTDOWN_TIMEOUT,
                )
        except asyncio.CancelledError:
            self.forget(connection)
            connection.sock.close()
            raise
        except Exception as error:  # a failed or timed-out handshake ends this connection alone
            log.debug("http: connection from %s not opened: %s", connection.client, error)
            self.forget(connection)
            connection.sock.close()

    async def _sweep(self) -> None:
        """Ends the connections that have waited too long for what they wait for."""
        limits = self.limits
        while True:
            await asyncio.sleep(SWEEP_INTERVAL)
            now = time.monotonic()
            for connection in list(self.connections.values()):
                try:
                    if connection.ending is not None:
                        # Its last words had a moment to go out; the client's goodbye to TLS
                        # is not waited for.
                        if now - connection.ending > CLOSING_GRACE:
                            self.forget(connection)
                            connection.abort()
                        continue
                    if connection.transport is None:
                        if now - connection.opened > limits.read_timeout + 1:
                            self.forget(connection)
                            connection.abort()
                    elif connection.answering is not None:
                        if now - connection.answering > limits.answer_timeout:
                            connection.abort()
                    elif connection.head_began is not None:
                        if now - connection.head_began > limits.read_timeout:
                            connection.time_out()
                    elif now - connection.waiting > limits.idle_timeout:
                        connection.close()
                except Exception:  # one connection's trouble never stops the sweeping
                    log.exception("http: cannot end a connection")
                    self.forget(connection)
