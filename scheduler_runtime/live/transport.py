"""Keep-alive HTTP/1.1 connections to the API server, one per thread: the standard library's
http.client connects them (TLS, the server name, a proxy's tunnel), and each exchange on them
is framed by httptools (llhttp, Node.js's parser, in C).

A scheduler makes two API calls per pod (the binding and its event) and reads several watch
events about it. Measured against a local API server, a call costs the caller about 1 ms of
CPU through urllib3's pool (the kubernetes package's transport), 0.3 ms through http.client's
request and response objects (the answer's headers go through the email package's parser),
and 0.15 ms written as one buffer and parsed in C: the API server, on the same CPUs, keeps the
difference. A watch's events, one HTTP chunk each, are decoded in C too, where urllib3 made
several Python calls per chunk."""

from __future__ import annotations

import contextlib
import http.client
import re
import select
import socket
import ssl
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from urllib.parse import urlsplit

import httptools

from scheduler_runtime.live.apiconfig import Endpoint
from scheduler_runtime.live.certs import KeyPair, load_chain

CONNECT_TIMEOUT = 5.0
READ_SIZE = 65536
# What http.client refuses in a request target and in a header value: a control character
# there would let a name (a pod's, a namespace's) split the request.
_UNSAFE_TARGET = re.compile(r"[\x00-\x20\x7f]")
_UNSAFE_HEADER = re.compile(r"[\x00\r\n]")


class TransportError(ConnectionError):
    """The connection failed or the server's answer was not HTTP (a closed keep-alive
    connection, a malformed status line); the request may or may not have been served."""


@dataclass(frozen=True)
class Response:
    status: int
    reason: str
    body: bytes


def ssl_context(endpoint: Endpoint) -> ssl.SSLContext:
    """TLS as the kubernetes package's own transport sets it up from a configuration."""
    context = ssl.create_default_context(cadata=endpoint.ca_pem)
    if not endpoint.verify_ssl:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    if endpoint.cert_pem and endpoint.key_pem:
        load_chain(context, KeyPair(endpoint.cert_pem, endpoint.key_pem))
    return context


def _readable(sock: socket.socket) -> bool:
    """Whether the socket has something to read (or has closed) right now: poll, not select,
    as a descriptor may be above select's 1024."""
    poller = select.poll()
    poller.register(sock, select.POLLIN)
    return bool(poller.poll(0))


class _TLSConnection(http.client.HTTPSConnection):
    """An HTTPS connection that may name another server in its TLS handshake
    (the configuration's tls_server_name)."""

    def __init__(
        self,
        host: str,
        port: int,
        *,
        context: ssl.SSLContext,
        server_hostname: str | None,
    ) -> None:
        super().__init__(host, port, timeout=CONNECT_TIMEOUT, context=context)
        self.server_hostname = server_hostname

    def connect(self) -> None:
        if self.server_hostname is None:
            super().connect()
            return
        http.client.HTTPConnection.connect(self)
        self.sock = self._context.wrap_socket(  # type: ignore[attr-defined]
            self.sock, server_hostname=self.server_hostname
        )


class _Answer:
    """One answer as it arrives: httptools' parser and its callbacks."""

    __slots__ = (
        "body",
        "complete",
        "headers_complete",
        "keep_alive",
        "messages",
        "parser",
        "reason",
    )

    def __init__(self) -> None:
        self.reason = b""
        self.body: list[bytes] = []
        self.headers_complete = False
        self.keep_alive = False
        self.complete = False
        self.messages = 0
        # The parser holds this object and this object the parser (llhttp answers whether the
        # connection stays open only while it parses the headers): finish() breaks the cycle.
        self.parser: httptools.HttpResponseParser | None = httptools.HttpResponseParser(self)

    def on_message_begin(self) -> None:
        self.messages += 1

    def on_status(self, reason: bytes) -> None:
        self.reason += reason

    def on_headers_complete(self) -> None:
        if self.messages == 1:
            self.headers_complete = True
            self.keep_alive = self.parser is not None and self.parser.should_keep_alive()

    def on_body(self, body: bytes) -> None:
        if self.messages == 1:  # not what follows, unasked, on the connection
            self.body.append(body)

    def on_message_complete(self) -> None:
        self.complete = True


class Exchange:
    """One request on a connection and its answer, read as it arrives. The connection goes
    back to its thread once the answer is read whole and the server keeps it open."""

    def __init__(
        self, connections: Connections, connection: http.client.HTTPConnection, what: str
    ) -> None:
        self._connections = connections
        self._connection = connection
        self._what = what
        self._answer = _Answer()
        self.status = 0
        self.reason = ""

    def _receive(self) -> None:
        """Reads what the server has sent next (waiting for it) into the answer."""
        sock = self._connection.sock
        data = sock.recv(READ_SIZE) if sock is not None else b""
        if not data:
            raise TransportError(f"{self._what}: the connection closed before the answer ended")
        parser = self._answer.parser
        if parser is None:
            raise TransportError(f"{self._what}: the exchange is finished")
        try:
            parser.feed_data(data)
        except httptools.HttpParserError as error:
            raise TransportError(f"{self._what}: {error!r}") from error

    def read_head(self) -> None:
        while not self._answer.headers_complete:
            self._receive()
        self.status = self._answer.parser.get_status_code() if self._answer.parser else 0
        self.reason = self._answer.reason.decode("latin-1")

    def pieces(self) -> Iterator[bytes]:
        """The answer's body as it arrives (a watch's events, each as soon as it is sent)."""
        answer = self._answer
        while True:
            if answer.body:
                pieces, answer.body = answer.body, []
                yield from pieces
            if answer.complete:
                return
            self._receive()

    def read(self) -> bytes:
        """The whole body."""
        while not self._answer.complete:
            self._receive()
        body, self._answer.body = b"".join(self._answer.body), []
        return body

    def shutdown(self) -> None:
        """Ends the exchange from another thread: a read under way returns (or fails)."""
        sock = self._connection.sock
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def finish(self) -> None:
        """Gives the connection back to its thread if it may carry another request (the
        answer was read whole, and the server keeps the connection open); else closes it."""
        answer = self._answer
        answer.parser = None
        reusable = answer.complete and answer.messages == 1 and answer.keep_alive
        self._connections.put_back(self._connection, reusable=reusable)


class Connections:
    """One kept connection per calling thread to the configuration's API server."""

    def __init__(self, endpoint: Endpoint) -> None:
        url = urlsplit(endpoint.host)
        self.https = url.scheme == "https"
        self.host = url.hostname or "localhost"
        self.port = url.port or (443 if self.https else 80)
        self.base_path = url.path.rstrip("/")
        self.context = ssl_context(endpoint) if self.https else None
        self.server_hostname = endpoint.tls_server_name
        self.proxy = urlsplit(endpoint.proxy) if endpoint.proxy else None
        self.proxy_headers = dict(endpoint.proxy_headers)
        host = f"[{self.host}]" if ":" in self.host else self.host
        default_port = 443 if self.https else 80
        self.host_header = host if self.port == default_port else f"{host}:{self.port}"
        self._local = threading.local()

    def request(
        self,
        method: str,
        path: str,
        body: bytes | None,
        headers: dict[str, str],
        timeout: float,
        *,
        before_send: Callable[[], None] | None = None,
    ) -> Response:
        """Sends one request and reads the whole answer, within `timeout` per socket
        operation. A failed connection is dropped, so the thread's next call starts afresh.

        `before_send` runs once connected, right before the request is written (what it
        raises leaves the connection unused and the request unsent)."""
        exchange = self.open(method, path, body, headers, timeout, before_send=before_send)
        try:
            return Response(exchange.status, exchange.reason, exchange.read())
        finally:
            exchange.finish()

    def open(
        self,
        method: str,
        path: str,
        body: bytes | None,
        headers: dict[str, str],
        timeout: float,
        *,
        before_send: Callable[[], None] | None = None,
    ) -> Exchange:
        """Sends one request and waits for the answer's status and headers; the caller reads
        the body from the exchange and then finishes it. The thread's connection is the
        exchange's until then (a request made meanwhile on this thread gets another)."""
        head = self._head(method, path, headers, body)
        connection = self._take()
        exchange = Exchange(self, connection, f"{method} {path}")
        try:
            if connection.sock is None:
                connection.connect()  # within the connect timeout
            if before_send is not None:
                before_send()
        except BaseException:
            # Nothing was sent: a connection that was made stays the thread's.
            self.put_back(connection, reusable=connection.sock is not None)
            raise
        try:
            sock = connection.sock
            sock.settimeout(timeout)
            sock.sendall(head + body if body else head)
            exchange.read_head()
        except BaseException:
            connection.close()
            raise
        return exchange

    def close(self) -> None:
        """Closes the calling thread's connection."""
        connection = getattr(self._local, "connection", None)
        self._local.connection = None
        if connection is not None:
            connection.close()

    def put_back(self, connection: http.client.HTTPConnection, *, reusable: bool) -> None:
        if reusable and getattr(self._local, "connection", None) is None:
            self._local.connection = connection
        else:
            connection.close()

    def _head(self, method: str, path: str, headers: dict[str, str], body: bytes | None) -> bytes:
        target = self.base_path + path
        if _UNSAFE_TARGET.search(target):
            raise ValueError(f"{method} {target!r}: control characters or spaces in the path")
        lines = [f"{method} {target} HTTP/1.1", f"Host: {self.host_header}"]
        for name, value in headers.items():
            if _UNSAFE_HEADER.search(name) or _UNSAFE_HEADER.search(value):
                raise ValueError(f"{method} {path}: header {name!r} has control characters")
            lines.append(f"{name}: {value}")
        if body is not None:
            lines.append(f"Content-Length: {len(body)}")
        lines.append("\r\n")
        return "\r\n".join(lines).encode("latin-1")

    def _take(self) -> http.client.HTTPConnection:
        """The thread's kept connection (out of its slot until put back), or a new one."""
        connection: http.client.HTTPConnection | None = getattr(self._local, "connection", None)
        self._local.connection = None
        # A kept connection the server has closed (or written to unasked) reads as ready.
        if connection is not None and connection.sock is not None and _readable(connection.sock):
            connection.close()
            connection = None
        return connection if connection is not None else self._new_connection()

    def _new_connection(self) -> http.client.HTTPConnection:
        host, port = self.host, self.port
        if self.proxy is not None:
            host, port = self.proxy.hostname or host, self.proxy.port or 80
        connection: http.client.HTTPConnection
        if self.context is not None:
            connection = _TLSConnection(
                host, port, context=self.context, server_hostname=self.server_hostname
            )
        else:
            connection = http.client.HTTPConnection(host, port, timeout=CONNECT_TIMEOUT)
        if self.proxy is not None:
            connection.set_tunnel(self.host, self.port, headers=self.proxy_headers)
        return connection


__all__ = ["Connections", "Exchange", "Response", "TransportError"]
