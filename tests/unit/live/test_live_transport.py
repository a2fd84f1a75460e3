"""The per-thread keep-alive transport against a local HTTP/1.1 server: connections are
reused, a connection the server closed is replaced, broken answers fail the one request, watch
streams arrive event by event, and Kube turns error statuses into ApiError."""

from __future__ import annotations

import json
import socket
import socketserver
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from scheduler_runtime.live.apiconfig import ApiConfig
from scheduler_runtime.live.kube import ApiError, Kube, load_client
from scheduler_runtime.live.transport import Connections, Exchange, TransportError


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.connections: list[tuple[str, int]] = []
        self.requests: list[tuple[str, str, bytes]] = []
        self.user_agents: list[str | None] = []
        self.close_after_answer = False
        self.watch_chunks: list[bytes] = []  # what /watch sends, one HTTP chunk each
        self.watch_hold = threading.Event()  # /watch waits for it before ending its answer
        self.watch_hold.set()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Server

    def setup(self) -> None:
        super().setup()
        self.server.connections.append(self.client_address)

    def log_message(self, *args: object) -> None:
        pass

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        self.server.requests.append((self.command, self.path, body))
        self.server.user_agents.append(self.headers.get("User-Agent"))
        if self.path.startswith("/watch"):
            self._stream()
            return
        if self.path.startswith("/missing"):
            status, answer = 404, {"kind": "Status", "reason": "NotFound", "message": "gone"}
        else:
            status, answer = 200, {"path": self.path, "auth": self.headers.get("Authorization")}
        payload = json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        if self.server.close_after_answer:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        self.wfile.write(payload)

    def _stream(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for chunk in self.server.watch_chunks:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            self.wfile.flush()
        self.server.watch_hold.wait(10)
        self.wfile.write(b"0\r\n\r\n")

    do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _answer  # noqa: N815 - http.server's names


@pytest.fixture
def server() -> Iterator[Server]:
    running = Server()
    thread = threading.Thread(target=running.serve_forever, daemon=True)
    thread.start()
    yield running
    running.shutdown()
    running.server_close()


def configuration(host: str) -> ApiConfig:
    return ApiConfig.at(host, token="secret")


def test_a_thread_keeps_its_connection(server: Server) -> None:
    kube = Kube(configuration(server.url))
    answers = [kube.get("/api/v1/pods", limit=5) for _ in range(3)]
    assert answers[0] == {"path": "/api/v1/pods?limit=5", "auth": "Bearer secret"}
    assert len(server.connections) == 1


def test_threads_get_connections_of_their_own(server: Server) -> None:
    connections = Connections(configuration(server.url).endpoint)
    barrier = threading.Barrier(3)

    def call(_: int) -> int:
        barrier.wait()
        return connections.request("GET", "/x", None, {}, 5.0).status

    with ThreadPoolExecutor(3) as pool:
        assert list(pool.map(call, range(3))) == [200, 200, 200]
        assert list(pool.map(call, range(3))) == [200, 200, 200]
    assert len(server.connections) == 3


def test_a_connection_the_server_closed_is_replaced(server: Server) -> None:
    connections = Connections(configuration(server.url).endpoint)
    server.close_after_answer = True
    assert connections.request("GET", "/a", None, {}, 5.0).status == 200
    server.close_after_answer = False
    assert connections.request("GET", "/b", None, {}, 5.0).status == 200
    assert connections.request("GET", "/c", None, {}, 5.0).status == 200
    assert len(server.connections) == 2
    assert [path for _, path, _ in server.requests] == ["/a", "/b", "/c"]


def test_bodies_are_sent_and_errors_become_api_errors(server: Server) -> None:
    kube = Kube(configuration(server.url))
    kube.request("POST", "/api/v1/namespaces/ns/pods/p/binding", body={"target": {"name": "n"}})
    assert server.requests[-1] == (
        "POST",
        "/api/v1/namespaces/ns/pods/p/binding?fieldManager=scheduler-runtime",
        b'{"target":{"name":"n"}}',
    )
    with pytest.raises(ApiError) as raised:
        kube.get("/missing")
    assert (raised.value.code, raised.value.reason, raised.value.message) == (
        404,
        "NotFound",
        "gone",
    )
    assert len(server.connections) == 1  # an error status keeps the connection


def test_every_write_names_the_runtime_as_its_field_manager(server: Server, tmp_path: Path) -> None:
    """As kube-scheduler's writes are recorded under "kube-scheduler", the runtime's are under
    "scheduler-runtime" (not the Python client's default, OpenAPI-Generator): named on each
    write, and the prefix of the user agent the API server falls back to."""
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": {"server": server.url}}],
                "users": [{"name": "u", "user": {"token": "secret"}}],
                "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "x",
            }
        )
    )
    kube = Kube(load_client(str(kubeconfig)))
    kube.get("/api/v1/pods")
    kube.request("POST", "/api/v1/namespaces/ns/events", body={})
    kube.patch("/api/v1/namespaces/ns/pods/p/status", {})
    kube.request("PUT", "/apis/coordination.k8s.io/v1/namespaces/ns/leases/l", body={})
    kube.request("PATCH", "/x", query={"fieldManager": "mine"}, body={})
    kube.request("DELETE", "/api/v1/namespaces/ns/pods/p")
    assert [path for _, path, _ in server.requests] == [
        "/api/v1/pods",
        "/api/v1/namespaces/ns/events?fieldManager=scheduler-runtime",
        "/api/v1/namespaces/ns/pods/p/status?fieldManager=scheduler-runtime",
        "/apis/coordination.k8s.io/v1/namespaces/ns/leases/l?fieldManager=scheduler-runtime",
        "/x?fieldManager=mine",
        "/api/v1/namespaces/ns/pods/p",
    ]
    assert {str(agent).split("/")[0] for agent in server.user_agents} == {"scheduler-runtime"}
    assert len(server.user_agents) == 6


class Garbage(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        self.rfile.readline()
        self.wfile.write(b"NOT HTTP AT ALL\r\n\r\n")


def test_an_answer_that_is_not_http_fails_that_request_only() -> None:
    with socketserver.ThreadingTCPServer(("127.0.0.1", 0), Garbage) as garbage:
        threading.Thread(target=garbage.serve_forever, daemon=True).start()
        connections = Connections(
            configuration(f"http://127.0.0.1:{garbage.server_address[1]}").endpoint
        )
        with pytest.raises(TransportError, match="GET /x"):
            connections.request("GET", "/x", None, {}, 5.0)
        with pytest.raises(TransportError):  # a fresh connection, the same garbage
            connections.request("GET", "/x", None, {}, 5.0)
        garbage.shutdown()


def test_a_silent_server_times_out() -> None:
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        connections = Connections(
            configuration(f"http://127.0.0.1:{silent.getsockname()[1]}").endpoint
        )
        with pytest.raises(TimeoutError):
            connections.request("GET", "/x", None, {}, 0.3)


def test_a_refused_connection_is_an_os_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    connections = Connections(configuration(f"http://127.0.0.1:{port}").endpoint)
    with pytest.raises(ConnectionRefusedError):
        connections.request("GET", "/x", None, {}, 1.0)


def test_a_watch_yields_each_event_and_keeps_the_connection(server: Server) -> None:
    """Events arrive one chunk each, or split across chunks, or several in one; the
    connection carries the next request once the server ends the watch."""
    server.watch_chunks = [
        b'{"type":"ADDED","n":1}\n',
        b'{"type":"MOD',
        b'IFIED","n":2}\n{"n":3}\n',
    ]
    kube = Kube(configuration(server.url))
    exchanges: list[Exchange] = []
    events = list(kube.watch("/watch", {"timeoutSeconds": 5}, exchanges))
    assert events == [{"type": "ADDED", "n": 1}, {"type": "MODIFIED", "n": 2}, {"n": 3}]
    assert exchanges == []
    assert kube.get("/after") == {"path": "/after", "auth": "Bearer secret"}
    assert len(server.connections) == 1


def test_a_watch_is_ended_from_another_thread(server: Server) -> None:
    server.watch_chunks = [b'{"n":1}\n']
    server.watch_hold.clear()
    kube = Kube(configuration(server.url))
    exchanges: list[Exchange] = []
    events = kube.watch("/watch", {"timeoutSeconds": 5}, exchanges)
    assert next(events) == {"n": 1}
    threading.Timer(0.2, lambda: [exchange.shutdown() for exchange in exchanges]).start()
    with pytest.raises(TransportError, match="closed"):  # instead of waiting for the server
        next(events)
    server.watch_hold.set()
    assert exchanges == []
    assert kube.get("/after")["path"] == "/after"  # on a new connection
    assert len(server.connections) == 2


@pytest.mark.parametrize(
    ("path", "headers"),
    [("/api/v1/namespaces/a b/pods", {}), ("/x\r\nX-Evil: 1", {}), ("/x", {"X": "a\r\nB: c"})],
)
def test_control_characters_never_reach_the_wire(
    server: Server, path: str, headers: dict[str, str]
) -> None:
    """A name that could split the request (a space or a line break in a path or a header)
    is refused before anything is sent, as http.client refuses it."""
    connections = Connections(configuration(server.url).endpoint)
    with pytest.raises(ValueError, match="control characters"):
        connections.request("GET", path, None, headers, 5.0)
    assert server.requests == []


class Unasked(socketserver.StreamRequestHandler):
    """Answers, then sends a second answer nobody asked for."""

    def handle(self) -> None:
        while self.rfile.readline() not in (b"\r\n", b""):
            pass
        answer = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"
        self.wfile.write(answer + answer)
        self.rfile.readline()  # until the client hangs up


def test_a_connection_that_sent_more_than_the_answer_is_not_reused() -> None:
    with socketserver.ThreadingTCPServer(("127.0.0.1", 0), Unasked) as unasked:
        threading.Thread(target=unasked.serve_forever, daemon=True).start()
        port = unasked.server_address[1]
        connections = Connections(configuration(f"http://127.0.0.1:{port}").endpoint)
        assert connections.request("GET", "/x", None, {}, 5.0).body == b"{}"
        assert getattr(connections._local, "connection", None) is None
        unasked.shutdown()
