"""The client of a scheduler's own endpoints follows no redirect: a bearer token given for the
secure port never reaches another address, plain http:// least of all."""

from __future__ import annotations

import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from scheduler_runtime.cli import main
from scheduler_runtime.live.certs import self_signed


class Recorder(BaseHTTPRequestHandler):
    """Answers 200 and notes every Authorization header it was sent."""

    seen: list[str | None]

    def do_GET(self) -> None:
        self.seen.append(self.headers.get("Authorization"))
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *_: object) -> None:
        pass


def serving(server: ThreadingHTTPServer) -> Iterator[ThreadingHTTPServer]:
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def elsewhere() -> Iterator[tuple[ThreadingHTTPServer, list[str | None]]]:
    seen: list[str | None] = []
    handler = type("Elsewhere", (Recorder,), {"seen": seen})
    for server in serving(ThreadingHTTPServer(("127.0.0.1", 0), handler)):
        yield server, seen


@pytest.fixture
def redirecting(
    tmp_path: Path, elsewhere: tuple[ThreadingHTTPServer, list[str | None]]
) -> Iterator[int]:
    """An HTTPS server that sends every request on to the plain one."""
    target = f"http://127.0.0.1:{elsewhere[0].server_port}"

    class Redirect(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(302)
            self.send_header("Location", target + self.path)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *_: object) -> None:
            pass

    chain, key = self_signed("127.0.0.1")
    (tmp_path / "tls.crt").write_bytes(chain)
    (tmp_path / "tls.key").write_bytes(key)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tmp_path / "tls.crt", tmp_path / "tls.key")
    server = ThreadingHTTPServer(("127.0.0.1", 0), Redirect)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    for running in serving(server):
        yield running.server_port


def test_explain_follows_no_redirect_and_sends_the_token_nowhere_else(
    redirecting: int,
    elsewhere: tuple[ThreadingHTTPServer, list[str | None]],
    capsys: pytest.CaptureFixture[str],
) -> None:
    endpoint = f"https://127.0.0.1:{redirecting}"
    flags = ["--endpoint", endpoint, "--token", "secret", "--insecure-skip-tls-verify"]
    code = main(["explain", "default/web", *flags])
    err = capsys.readouterr().err
    assert code == 1
    assert err == (
        f"error: {endpoint}/explain/default/web: HTTP 302: a redirect to "
        f"'http://127.0.0.1:{elsewhere[0].server_port}/explain/default/web', not followed: "
        "point --endpoint at the scheduler itself\n"
    )
    assert elsewhere[1] == []
