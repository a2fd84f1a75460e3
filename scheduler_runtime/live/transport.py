"""Keep-alive HTTP/1.1 connections to the API server, one per thread, on the standard
library's http.client.

A scheduler makes two API calls per pod (the binding and its event). Through urllib3's pool
(the kubernetes package's transport) each costs about 1 ms of CPU on the calling side; through
a connection of the thread's own it costs under half of that, so the API server keeps the CPU
instead. Watches, long-lived and few, stay on urllib3."""

from __future__ import annotations

import http.client
import ssl
import threading
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

import kubernetes
from kubernetes.client.rest import should_bypass_proxies
from urllib3.util.wait import wait_for_read

CONNECT_TIMEOUT = 5.0


class TransportError(ConnectionError):
    """The connection failed or the server's answer was not HTTP (a closed keep-alive
    connection, a malformed status line); the request may or may not have been served."""


@dataclass(frozen=True)
class Response:
    status: int
    reason: str
    body: bytes


def ssl_context(configuration: kubernetes.client.Configuration) -> ssl.SSLContext:
    """TLS as the kubernetes package's own transport sets it up from the configuration."""
    context = ssl.create_default_context(cafile=configuration.ssl_ca_cert)
    if not configuration.verify_ssl:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    elif configuration.assert_hostname is False:
        context.check_hostname = False
    if configuration.cert_file:
        context.load_cert_chain(configuration.cert_file, configuration.key_file)
    return context


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


class Connections:
    """One connection per calling thread to the configuration's API server."""

    def __init__(self, configuration: kubernetes.client.Configuration) -> None:
        url = urlsplit(configuration.host)
        self.https = url.scheme == "https"
        self.host = url.hostname or "localhost"
        self.port = url.port or (443 if self.https else 80)
        self.base_path = url.path.rstrip("/")
        self.context = ssl_context(configuration) if self.https else None
        self.server_hostname = configuration.tls_server_name
        proxy = configuration.proxy
        if proxy and configuration.no_proxy:
            bypass = should_bypass_proxies(configuration.host, configuration.no_proxy)
            proxy = None if bypass else proxy
        self.proxy = urlsplit(proxy) if proxy else None
        self.proxy_headers = dict(configuration.proxy_headers or {})
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
        connection = self._connection()
        try:
            if before_send is not None:
                if connection.sock is None:
                    connection.connect()
                before_send()
            connection.request(method, self.base_path + path, body=body, headers=headers)
            if connection.sock is not None:  # connected now, within the connect timeout
                connection.sock.settimeout(timeout)
            response = connection.getresponse()
            answer = Response(response.status, response.reason, response.read())
        except http.client.HTTPException as error:
            self._drop(connection)
            raise TransportError(f"{method} {path}: {error!r}") from error
        except OSError:
            self._drop(connection)
            raise
        if response.will_close:
            self._drop(connection)
        return answer

    def close(self) -> None:
        """Closes the calling thread's connection."""
        connection = getattr(self._local, "connection", None)
        if connection is not None:
            self._drop(connection)

    def _connection(self) -> http.client.HTTPConnection:
        connection: http.client.HTTPConnection | None = getattr(self._local, "connection", None)
        # A kept connection the server has closed (or written to unasked) reads as ready.
        if (
            connection is not None
            and connection.sock is not None
            and wait_for_read(connection.sock, timeout=0.0)
        ):
            self._drop(connection)
            connection = None
        if connection is None:
            connection = self._local.connection = self._new_connection()
        return connection

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

    def _drop(self, connection: http.client.HTTPConnection) -> None:
        connection.close()
        if getattr(self._local, "connection", None) is connection:
            self._local.connection = None


__all__ = ["Connections", "Response", "TransportError"]
