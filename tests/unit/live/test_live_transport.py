"""The per-thread keep-alive transport against a local HTTP/1.1 server: connections are
reused, a connection the server closed is replaced, broken answers fail the one request, and
Kube turns error statuses into ApiError."""

from __future__ import annotations

import json
import socket
import socketserver
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import kubernetes
import pytest

from scheduler_runtime.live.kube import ApiError, Kube, load_client
from scheduler_runtime.live.transport import Connections, TransportError


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.connections: list[tuple[str, int]] = []
        self.requests: list[tuple[str, str, bytes]] = []
        self.user_agents: list[str | None] = []
        self.close_after_answer = False

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

    do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _answer  # noqa: N815 - http.server's names


@pytest.fixture
def server() -> Iterator[Server]:
    running = Server()
    thread = threading.Thread(target=running.serve_forever, daemon=True)
    thread.start()
    yield running
    running.shutdown()
    running.server_close()


def configuration(host: str) -> kubernetes.client.Configuration:
    config = kubernetes.client.Configuration(host=host)
    config.api_key = {"BearerToken": "Bearer secret"}
    return config


def test_a_thread_keeps_its_connection(server: Server) -> None:
    kube = Kube(kubernetes.client.ApiClient(configuration(server.url)))
    answers = [kube.get("/api/v1/pods", limit=5) for _ in range(3)]
    assert answers[0] == {"path": "/api/v1/pods?limit=5", "auth": "Bearer secret"}
    assert len(server.connections) == 1


def test_threads_get_connections_of_their_own(server: Server) -> None:
    connections = Connections(configuration(server.url))
    barrier = threading.Barrier(3)

    def call(_: int) -> int:
        barrier.wait()
        return connections.request("GET", "/x", None, {}, 5.0).status

    with ThreadPoolExecutor(3) as pool:
        assert list(pool.map(call, range(3))) == [200, 200, 200]
        assert list(pool.map(call, range(3))) == [200, 200, 200]
    assert len(server.connections) == 3


def test_a_connection_the_server_closed_is_replaced(server: Server) -> None:
    connections = Connections(configuration(server.url))
    server.close_after_answer = True
    assert connections.request("GET", "/a", None, {}, 5.0).status == 200
    server.close_after_answer = False
    assert connections.request("GET", "/b", None, {}, 5.0).status == 200
    assert connections.request("GET", "/c", None, {}, 5.0).status == 200
    assert len(server.connections) == 2
    assert [path for _, path, _ in server.requests] == ["/a", "/b", "/c"]


def test_bodies_are_sent_and_errors_become_api_errors(server: Server) -> None:
    kube = Kube(kubernetes.client.ApiClient(configuration(server.url)))
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
        connections = Connections(configuration(f"http://127.0.0.1:{garbage.server_address[1]}"))
        with pytest.raises(TransportError, match="GET /x"):
            connections.request("GET", "/x", None, {}, 5.0)
        with pytest.raises(TransportError):  # a fresh connection, the same garbage
            connections.request("GET", "/x", None, {}, 5.0)
        garbage.shutdown()


def test_a_silent_server_times_out() -> None:
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        connections = Connections(configuration(f"http://127.0.0.1:{silent.getsockname()[1]}"))
        with pytest.raises(TimeoutError):
            connections.request("GET", "/x", None, {}, 0.3)


def test_a_refused_connection_is_an_os_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    connections = Connections(configuration(f"http://127.0.0.1:{port}"))
    with pytest.raises(ConnectionRefusedError):
        connections.request("GET", "/x", None, {}, 1.0)
