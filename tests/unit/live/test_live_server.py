"""The HTTP server: the secure port's gate and TLS, and what one client may hold of it. Slow or
idle clients hold sockets, not threads; heads must come within the read timeout; sizes are
bounded; at the connection cap the longest-waiting connection makes room; probes do not queue
behind requests waiting for a review."""

from __future__ import annotations

import contextlib
import datetime
import http.client
import json
import re
import resource
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from prometheus_client import CollectorRegistry, Counter

from scheduler_runtime import httpserver
from scheduler_runtime.cli import main
from scheduler_runtime.live.certs import ServingTLS, serving_pair
from scheduler_runtime.live.delegated import AccessReviewer, Gate, TokenReviewer
from scheduler_runtime.live.server import HealthServer, Limits, Secure


class Api:
    """A token `reader` may get /metrics and /explain/*; `nobody` may not; `slow` waits."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.release.set()
        self.calls = 0

    def request(
        self, method: str, path: str, *, body: Any = None, timeout: float | None = None
    ) -> dict[str, Any]:
        self.calls += 1
        spec = body["spec"]
        if "token" in spec:
            token = spec["token"]
            if token.startswith("slow"):
                self.release.wait(10)
            if token in ("reader", "nobody") or token.startswith("slow"):
                return {"status": {"authenticated": True, "user": {"username": token}}}
            return {"status": {"authenticated": False}}
        path_ = spec["nonResourceAttributes"]["path"]
        allowed = spec["user"] in ("reader", "client") and (
            path_ == "/metrics" or path_.startswith("/explain/")
        )
        return {"status": {"allowed": allowed}}


def certificate_authority() -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "test-client-ca")])
    now = datetime.datetime.now(datetime.UTC)
    ca = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    return key, ca


def client_certificate(
    ca: tuple[ec.EllipticCurvePrivateKey, x509.Certificate], name: str, directory: Path
) -> tuple[Path, Path]:
    ca_key, ca_cert = ca
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    cert_file, key_file = directory / f"{name}.crt", directory / f"{name}.key"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_file, key_file


def pem(certificate: x509.Certificate) -> str:
    return certificate.public_bytes(serialization.Encoding.PEM).decode()


class Served:
    def __init__(self, server: HealthServer, tls: ServingTLS, api: Api, tmp_path: Path) -> None:
        self.server = server
        self.tls = tls
        self.api = api
        self.tmp_path = tmp_path
        # Trusts the self-signed serving certificate's CA, and checks the name (127.0.0.1).
        self.serving_ca = pem(x509.load_pem_x509_certificates(tls.pair.cert_pem)[1])
        self.client_context = ssl.create_default_context(cadata=self.serving_ca)

    def connection(self, context: ssl.SSLContext | None = None) -> http.client.HTTPSConnection:
        return http.client.HTTPSConnection(
            "127.0.0.1",
            self.server.secure_port,
            context=context or self.client_context,
            timeout=5,
        )

    def get(
        self, path: str, token: str | None = None, context: ssl.SSLContext | None = None
    ) -> tuple[int, str]:
        connection = self.connection(context)
        try:
            headers = {"Authorization": f"Bearer {token}"} if token else {}
            connection.request("GET", path, headers=headers)
            answer = connection.getresponse()
            return answer.status, answer.read().decode()
        finally:
            connection.close()

    def plain(self, path: str) -> tuple[int, str]:
        connection = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=5)
        try:
            connection.request("GET", path)
            answer = connection.getresponse()
            return answer.status, answer.read().decode()
        finally:
            connection.close()


CLIENT_CA = certificate_authority()


def serve(tmp_path: Path, limits: Limits | None = None, plain: bool = True) -> Served:
    registry = CollectorRegistry()
    Counter("test_served", "a counter", registry=registry).inc()
    api = Api()
    tls = ServingTLS(serving_pair(None, None, None, "127.0.0.1"), lambda: pem(CLIENT_CA[1]))
    gate = Gate(TokenReviewer(api), AccessReviewer(api))
    server = HealthServer(
        ("127.0.0.1", 0) if plain else None,
        live=lambda: "",
        ready=lambda: "",
        registry=registry,
        explanations=lambda key: {"pod": key} if key == "default/web" else None,
        secure=Secure(("127.0.0.1", 0), tls.context, gate),
        limits=limits,
    )
    server.start()
    return Served(server, tls, api, tmp_path)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    running = serve(tmp_path)
    yield running
    running.server.stop()


def test_the_secure_port_answers_like_upstreams(served: Served) -> None:
    for path in ("/healthz", "/livez", "/readyz"):
        assert served.get(path) == (200, "ok")
    code, body = served.get("/metrics")
    assert code == 401
    assert '"reason":"Unauthorized"' in body
    assert served.get("/metrics", token="forged")[0] == 401
    code, body = served.get("/metrics", token="nobody")
    assert code == 403
    assert 'forbidden: User \\"nobody\\" cannot get path \\"/metrics\\"' in body
    code, body = served.get("/metrics", token="reader")
    assert code == 200
    assert "test_served_total 1.0" in body
    assert served.get("/explain/default/web", token="reader") == (200, '{"pod":"default/web"}')
    assert served.get("/explain/default/nope", token="reader")[0] == 404
    assert served.get("/explain/default/web")[0] == 401
    assert served.get("/explain/default/web", token="nobody")[0] == 403
    assert served.get("/other", token="reader")[0] == 403


def test_the_plain_port_serves_everything_without_credentials(served: Served) -> None:
    assert served.plain("/healthz") == (200, "ok")
    code, body = served.plain("/metrics")
    assert code == 200
    assert "test_served_total 1.0" in body
    assert served.plain("/explain/default/web")[0] == 200
    assert served.plain("/nothing")[0] == 404


def test_a_client_certificate_from_the_client_ca_authenticates(served: Served) -> None:
    cert, key = client_certificate(CLIENT_CA, "client", served.tmp_path)
    with_cert = ssl.create_default_context(cadata=served.serving_ca)
    with_cert.load_cert_chain(cert, key)
    assert served.get("/metrics", context=with_cert)[0] == 200
    other, other_key = client_certificate(certificate_authority(), "client", served.tmp_path)
    foreign = ssl.create_default_context(cadata=served.serving_ca)
    foreign.load_cert_chain(other, other_key)
    with pytest.raises((ssl.SSLError, ConnectionError)):
        served.get("/metrics", context=foreign)


def raw(port: int, data: bytes = b"") -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    if data:
        sock.sendall(data)
    return sock


def read_all(sock: socket.socket, timeout: float = 5) -> bytes:
    sock.settimeout(timeout)
    chunks = []
    try:
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    except OSError:
        pass
    return b"".join(chunks)


def threads_now() -> int:
    return threading.active_count()


def half_sent(port: int, context: ssl.SSLContext | None = None) -> socket.socket:
    """A connection whose request never ends (its TLS handshake done, on the secure port)."""
    sock = raw(port)
    if context is not None:
        sock = context.wrap_socket(sock, server_hostname="127.0.0.1")
    sock.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
    return sock


def test_half_sent_requests_hold_no_threads_and_are_dropped_after_the_read_timeout(
    tmp_path: Path,
) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 2100:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))
    running = serve(tmp_path, Limits(read_timeout=10.0, max_connections=1000))
    server = running.server
    sockets: list[socket.socket] = []
    try:
        assert running.plain("/healthz") == (200, "ok")
        before = threads_now()
        sockets += [half_sent(server.port) for _ in range(250)]
        sockets += [half_sent(server.secure_port, running.client_context) for _ in range(250)]
        held = wait_until(lambda: server.connections == 500, 3)
        during = threads_now()
        started = time.monotonic()
        assert running.plain("/healthz") == (200, "ok")
        assert running.get("/readyz") == (200, "ok")
        assert running.get("/metrics", token="reader")[0] == 200
        answered_in = time.monotonic() - started
        still_held = server.connections
        print(
            f"threads before {before}, with {held} half-sent requests {during}; "
            f"three requests answered in {answered_in * 1000:.0f} ms"
        )
        assert held
        assert during - before <= 4  # at most the worker threads, never one per connection
        # Answered while all 500 were still held: nothing waited for them to be dropped.
        assert still_held >= 500
        # Past the read timeout every one is answered 408 and closed.
        answers = [read_all(sock, timeout=15) for sock in sockets]
        assert all(answer.startswith(b"HTTP/1.1 408 ") for answer in answers)
        assert wait_until(lambda: server.connections == 0, 2)
    finally:
        for sock in sockets:
            sock.close()
        server.stop()


def wait_until(condition: Any, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_a_connection_that_never_starts_its_handshake_is_dropped(tmp_path: Path) -> None:
    running = serve(tmp_path, Limits(read_timeout=1.0))
    try:
        sock = raw(running.server.secure_port)
        started = time.monotonic()
        assert read_all(sock) == b""
        assert 0.8 < time.monotonic() - started < 4
    finally:
        running.server.stop()


def test_at_the_cap_the_longest_waiting_connection_makes_room(tmp_path: Path) -> None:
    running = serve(tmp_path, Limits(max_connections=5))
    try:
        idle = [raw(running.server.port, b"GET /he") for _ in range(5)]
        time.sleep(0.3)
        assert running.plain("/healthz") == (200, "ok")
        assert read_all(idle[0], timeout=2) == b""  # the oldest went
        assert running.get("/healthz") == (200, "ok")
        assert running.server.connections <= 5
        for sock in idle:
            sock.close()
    finally:
        running.server.stop()


def test_probes_do_not_queue_behind_requests_waiting_for_a_review(tmp_path: Path) -> None:
    running = serve(tmp_path)
    running.api.release.clear()
    try:
        waiting = [
            threading.Thread(target=running.get, args=("/metrics", f"slow{i}")) for i in range(8)
        ]
        for thread in waiting:
            thread.start()
        time.sleep(0.3)
        started = time.monotonic()
        assert running.get("/healthz") == (200, "ok")
        assert running.plain("/readyz") == (200, "ok")
        assert time.monotonic() - started < 1
    finally:
        running.api.release.set()
        for thread in waiting:
            thread.join(10)
        running.server.stop()


@pytest.mark.parametrize(
    ("request_bytes", "status"),
    [
        # Heads past the bounds: 431, as Go's server answers.
        (b"GET /healthz HTTP/1.1\r\nHost: x\r\nX: " + b"a" * 70_000 + b"\r\n\r\n", 431),
        (b"GET /healthz HTTP/1.1\r\nHost: x\r\nX: " + b"a" * 9_000 + b"\r\n\r\n", 431),
        (b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + b"X: a\r\n" * 100 + b"\r\n", 431),
        (b"GET /healthz HTTP/1.1\r\nHost: x\r\nX: " + b"a" * 70_000, 431),  # never ends
        (b"GET /" + b"a" * 9_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", 414),
        (b"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n", 413),
        (b"GET /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n", 501),
        (b"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: x\r\n\r\n", 400),
        (b"BREW /healthz\r\n\r\n", 400),
        (b"GET http://elsewhere/healthz HTTP/1.1\r\nHost: x\r\n\r\n", 400),
        (b"GET /healthz HTTP/2.0\r\nHost: x\r\n\r\n", 505),
        (b"GET /healthz HTTP/1.1\r\n\r\n", 400),  # HTTP/1.1 names its host
        (b"POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi", 405),
    ],
)
def test_unreadable_or_oversized_requests_are_refused(
    served: Served, request_bytes: bytes, status: int
) -> None:
    sock = raw(served.server.port, request_bytes)
    answer = read_all(sock, timeout=3) if status != 405 else sock.recv(4096)
    sock.close()
    assert answer.split(b" ", 2)[1] == str(status).encode(), answer[:100]


def test_kept_alive_connections_serve_several_requests_and_head(served: Served) -> None:
    connection = served.connection()
    try:
        for _ in range(3):
            connection.request("GET", "/metrics", headers={"Authorization": "Bearer reader"})
            answer = connection.getresponse()
            assert answer.status == 200
            answer.read()
        connection.request("HEAD", "/healthz")
        answer = connection.getresponse()
        assert answer.status == 200
        assert answer.getheader("Content-Length") == "2"
        assert answer.read() == b""
    finally:
        connection.close()
    assert served.api.calls == 2  # one TokenReview, one SubjectAccessReview: then the cache


def test_pipelined_requests_are_answered_in_order_and_http_1_0_closes(served: Served) -> None:
    sock = raw(
        served.server.port,
        b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
        b"GET /nowhere HTTP/1.1\r\nHost: x\r\n\r\n"
        b"HEAD /readyz HTTP/1.1\r\nHost: x\r\n\r\n"
        b"GET /livez HTTP/1.0\r\n\r\n",
    )
    answers = read_all(sock, timeout=5)  # ends: HTTP/1.0 without keep-alive closes
    sock.close()
    statuses = re.findall(rb"HTTP/1\.1 (\d{3}) ", answers)
    assert statuses == [b"200", b"404", b"200", b"200"], answers
    assert answers.endswith(b"\r\n\r\nok"), answers[-60:]
    assert answers.count(b"\r\n\r\nok") == 2  # no body after HEAD's head
    assert answers.count(b"Server: scheduler-runtime") == 4


def test_a_401_closes_the_connection(served: Served) -> None:
    connection = served.connection()
    try:
        connection.request("GET", "/metrics")
        answer = connection.getresponse()
        assert answer.status == 401
        assert answer.getheader("Connection") == "close"
        assert answer.getheader("X-Content-Type-Options") == "nosniff"
    finally:
        connection.close()


def test_a_taken_port_fails_at_construction() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        with pytest.raises(OSError, match="Address already in use"):
            HealthServer(
                taken.getsockname(),
                live=lambda: "",
                ready=lambda: "",
                registry=CollectorRegistry(),
            )


def test_an_unspecified_bind_address_serves_both_families(tmp_path: Path) -> None:
    server = HealthServer(
        ("0.0.0.0", 0), live=lambda: "", ready=lambda: "", registry=CollectorRegistry()
    )
    server.start()
    try:
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
        connection.request("GET", "/healthz")
        assert connection.getresponse().status == 200
        if socket.has_ipv6 and server.transport.sockets[0].family == socket.AF_INET6:
            connection = http.client.HTTPConnection("::1", server.port, timeout=5)
            connection.request("GET", "/healthz")
            assert connection.getresponse().status == 200
    finally:
        server.stop()


def kubeconfig(path: Path, user: dict[str, Any]) -> Path:
    path.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1"}}],
                "users": [{"name": "u", "user": user}],
                "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "x",
            }
        )
    )
    return path


def test_the_explain_command_presents_a_token_or_a_client_certificate(
    served: Served, capsys: pytest.CaptureFixture[str]
) -> None:
    endpoint = f"https://127.0.0.1:{served.server.secure_port}"
    serving_ca = served.tmp_path / "serving-ca.crt"
    serving_ca.write_text(served.serving_ca)

    def explain(*flags: str) -> tuple[int, str]:
        code = main(["explain", "default/web", "--endpoint", endpoint, "-o", "json", *flags])
        out, err = capsys.readouterr()
        return code, out + err

    assert explain("--token", "reader", "--insecure-skip-tls-verify") == (
        0,
        '{\n  "pod": "default/web"\n}\n',
    )
    assert explain("--token", "reader", "--certificate-authority", str(serving_ca))[0] == 0
    cert, key = client_certificate(CLIENT_CA, "client", served.tmp_path)
    with_cert = kubeconfig(
        served.tmp_path / "cert.kubeconfig",
        {"client-certificate": str(cert), "client-key": str(key)},
    )
    assert explain("--kubeconfig", str(with_cert), "--insecure-skip-tls-verify")[0] == 0
    with_token = kubeconfig(served.tmp_path / "token.kubeconfig", {"token": "reader"})
    assert explain("--kubeconfig", str(with_token), "--insecure-skip-tls-verify")[0] == 0

    code, text = explain("--insecure-skip-tls-verify")
    assert code == 1
    assert text == (
        f"error: {endpoint}/explain/default/web: HTTP 401: Unauthorized: "
        "pass --token or --kubeconfig\n"
    )
    code, text = explain("--token", "nobody", "--insecure-skip-tls-verify")
    assert code == 1
    assert text == (
        f'error: {endpoint}/explain/default/web: HTTP 403: forbidden: User "nobody" cannot '
        'get path "/explain/default/web": the user needs get on the nonResourceURL /explain/*\n'
    )
    code, text = explain("--token", "reader")
    assert code == 1
    assert text.startswith(f"error: cannot reach the scheduler at {endpoint}: its certificate is ")
    assert "pass --certificate-authority, or --insecure-skip-tls-verify" in text
    plain = f"http://127.0.0.1:{served.server.port}"
    code = main(["explain", "default/web", "--endpoint", plain, "--token", "reader"])
    assert code == 1
    assert "a token is only sent over https://" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["explain", "default/web", "--kubeconfig", str(served.tmp_path / "absent")])


def test_the_kernel_queues_a_burst_of_connections_instead_of_dropping_them() -> None:
    """300 connections at once, before the server accepts any: all are queued (the backlog is
    the system's maximum). With a backlog of 128 the rest had their SYNs dropped, sent again
    only after a second: longer than a kubelet's probe waits."""
    server = HealthServer(
        ("127.0.0.1", 0), live=lambda: "", ready=lambda: "", registry=CollectorRegistry()
    )
    connected: list[socket.socket] = []
    try:
        for _ in range(300):
            connected.append(socket.create_connection(("127.0.0.1", server.port), timeout=0.5))
    except OSError:
        pass
    finally:
        for sock in connected:
            sock.close()
        server.stop()
    assert len(connected) == 300


def test_at_the_cap_a_new_connection_is_never_refused_even_when_all_are_answering(
    tmp_path: Path,
) -> None:
    """Every connection busy waiting for a review (a client with a token and no rights can
    keep them so): a probe still gets in, and the longest answer makes room."""
    running = serve(tmp_path, Limits(max_connections=6))
    running.api.release.clear()

    def ask(token: str) -> None:
        with contextlib.suppress(OSError, http.client.HTTPException):  # evicted to make room
            running.get("/metrics", token)

    busy = [threading.Thread(target=ask, args=(f"slow{i}",)) for i in range(6)]
    try:
        for thread in busy:
            thread.start()
        assert wait_until(lambda: running.server.connections == 6, 3)
        assert running.get("/healthz") == (200, "ok")
        assert running.server.transport.evicted >= 1
    finally:
        running.api.release.set()
        for thread in busy:
            thread.join(10)
        running.server.stop()


def test_no_exception_while_accepting_or_answering_stops_the_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    running = serve(tmp_path)
    real = httpserver.Connection.__init__
    failures = [RuntimeError("while admitting"), KeyError("while admitting")]

    def fails_twice(self: httpserver.Connection, *args: Any) -> None:
        if failures:
            raise failures.pop()
        real(self, *args)

    monkeypatch.setattr(httpserver.Connection, "__init__", fails_twice)
    try:
        for _ in range(2):
            with pytest.raises((ConnectionError, ssl.SSLError, OSError)):
                running.get("/healthz")
        assert running.get("/healthz") == (200, "ok")
        running.server.checks["/readyz"] = lambda: 1 / 0  # type: ignore[assignment, return-value]
        assert running.get("/readyz")[0] == 500
        assert running.get("/healthz") == (200, "ok")
    finally:
        running.server.stop()


def test_stopped_right_after_starting_it_stops() -> None:
    server = HealthServer(
        ("127.0.0.1", 0), live=lambda: "", ready=lambda: "", registry=CollectorRegistry()
    )
    server.start()
    server.stop()
    assert not server.transport.thread.is_alive()
