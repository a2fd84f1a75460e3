"""The transport of the project's own HTTP endpoints (a scheduler's secure and plain ports, the
operator's metrics): which connections are held, for how long, and over what TLS. aiohttp's
server parses and answers the requests; the routes are the caller's `Handler`.

aiohttp holds the limits of a request itself: a line of at most 8 KiB, at most MAX_HEADERS
headers, pipelined requests queued a few at a time. It has no cap on connections, one timeout
for everything a connection waits for, and a TLS context fixed when it starts listening; so
this module accepts the connections itself and hands each to aiohttp's protocol:

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
- **TLS per connection.** The context is asked for at every connection, so a rotated
  certificate or client CA serves from the next one.
- **Nothing stops it but stop().** An exception while accepting or in one connection is
  logged and that connection alone closed.

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
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Final

from aiohttp import web

log = logging.getLogger(__name__)

Address = tuple[str, int]
Handler = Callable[[web.BaseRequest], Awaitable[web.StreamResponse]]
UNSPECIFIED: Final = ("", "0.0.0.0", "::")  # noqa: S104 - the addresses meaning "all interfaces"
BACKLOG: Final = 65535  # the kernel caps it at net.core.somaxconn (4096 by default)
MAX_HEADERS: Final = 64
MAX_LINE: Final = 8190  # aiohttp's default, for the request line and each header
SHUTDOWN_TIMEOUT: Final = 5.0  # for the client's part of closing a TLS connection
SWEEP_INTERVAL: Final = 0.5
CLOSING_GRACE: Final = 1.0  # for a closing connection's last bytes to leave
REQUEST_TIMEOUT_ANSWER: Final = (
    b"HTTP/1.1 408 Request Timeout\r\nContent-Type: text/plain; charset=utf-8\r\n"
    b"Content-Length: 16\r\nConnection: close\r\n\r\nrequest timeout\n"
)


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


class _Protocol(web.RequestHandler):
    """aiohttp's protocol for one connection, telling the server when bytes arrive."""

    def __init__(self, manager: web.Server, connection: Connection, owner: Server) -> None:
        super().__init__(
            manager,
            loop=asyncio.get_running_loop(),
            keepalive_timeout=owner.limits.idle_timeout,
            max_line_size=MAX_LINE,
            max_field_size=MAX_LINE,
            max_headers=MAX_HEADERS,
            access_log=None,  # type: ignore[arg-type]  # None: no access log, as aiohttp allows
            lingering_time=owner.limits.read_timeout,
        )
        self.connection = connection
        self.owner = owner

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        connection = self.connection
        connection.transport = transport  # type: ignore[assignment]
        # Its first request is under way from the start: it has read_timeout to arrive.
        connection.waiting = connection.head_began = time.monotonic()
        super().connection_made(transport)

    def data_received(self, data: bytes) -> None:
        connection = self.connection
        if connection.answering is not None:
            connection.heard_while_answering = True
        elif connection.head_began is None:
            connection.head_began = time.monotonic()
        super().data_received(data)

    def connection_lost(self, exc: BaseException | None) -> None:
        self.owner.forget(self.connection)
        super().connection_lost(exc)


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
        aiohttp_server = web.Server(self._answering(endpoint.handler), access_log=None)
        while True:
            try:
                sock, peer = await loop.sock_accept(listening)
            except OSError as error:  # out of descriptors, say: wait, do not spin
                log.warning("http: accept failed: %s", error)
                await asyncio.sleep(0.1)
                continue
            try:
                self._admit(sock, str(peer[0]), endpoint, aiohttp_server)
            except Exception:  # one connection's trouble never stops the accepting
                log.exception("http: cannot serve a connection")
                sock.close()

    def _admit(
        self, sock: socket.socket, client: str, endpoint: Endpoint, aiohttp_server: web.Server
    ) -> None:
        while len(self.connections) >= self.limits.max_connections and self._evict():
            pass
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        connection = Connection(sock, client)
        self.connections[id(connection)] = connection
        self.per_client[client] += 1
        connection.task = asyncio.create_task(self._open(connection, endpoint, aiohttp_server))

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

    async def _open(
        self, connection: Connection, endpoint: Endpoint, aiohttp_server: web.Server
    ) -> None:
        """The TLS handshake (on an HTTPS endpoint), then aiohttp's protocol serves it."""
        loop = asyncio.get_running_loop()
        try:
            if endpoint.tls is None:
                await loop.connect_accepted_socket(
                    lambda: _Protocol(aiohttp_server, connection, self), connection.sock
                )
            else:
                await loop.connect_accepted_socket(
                    lambda: _Protocol(aiohttp_server, connection, self),
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

    def _answering(self, handler: Handler) -> Handler:
        """The handler, with the connection marked as answering until the answer is sent."""

        async def answer(request: web.BaseRequest) -> web.StreamResponse:
            protocol = request.protocol
            connection = protocol.connection if isinstance(protocol, _Protocol) else None
            if connection is not None:
                connection.answering = time.monotonic()
                connection.head_began = None
                connection.heard_while_answering = False
            try:
                response = await handler(request)
                await response.prepare(request)  # sent here, so answer_timeout covers it
                await response.write_eof()
                return response
            finally:
                if connection is not None:
                    now = time.monotonic()
                    connection.answering = None
                    connection.waiting = now
                    connection.head_began = now if connection.heard_while_answering else None

        return answer

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
