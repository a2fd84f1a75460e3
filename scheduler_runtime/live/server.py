"""The scheduler's HTTP endpoints: /healthz and /livez (the process serves and its loop runs),
/readyz (caches synced and, with leader election, leading or following a healthy leader),
/metrics (Prometheus text format) and /explain/<namespace>/<pod> (why a pod went where it went,
as JSON)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import orjson
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

log = logging.getLogger(__name__)

# A check returns "" when healthy, else the reason it is not.
Check = Callable[[], str]
# The explanation of pod "namespace/name" as JSON, None when it is not kept.
Explainer = Callable[[str], "dict[str, Any] | None"]
EXPLAIN_PREFIX = "/explain/"


def parse_listen(text: str) -> tuple[str, int]:
    """HOST:PORT (HOST may be empty or a bracketed IPv6 address) into a bind address."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"--listen {text!r}: expected HOST:PORT with a port from 0 to 65535")
    return host.strip("[]") or "0.0.0.0", int(port)  # noqa: S104 - a server listens on all by default


class HealthServer:
    """Serves the endpoints on a background thread."""

    def __init__(
        self,
        address: tuple[str, int],
        *,
        live: Check,
        ready: Check,
        registry: CollectorRegistry,
        explanations: Explainer | None = None,
    ) -> None:
        routes: dict[str, Check] = {"/healthz": live, "/livez": live, "/readyz": ready}

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0]
                if path == "/metrics":
                    self._send(200, generate_latest(registry), CONTENT_TYPE_LATEST)
                    return
                if path.startswith(EXPLAIN_PREFIX) and explanations is not None:
                    self._explain(path.removeprefix(EXPLAIN_PREFIX))
                    return
                check = routes.get(path)
                if check is None:
                    self._send(404, b"404 page not found\n", "text/plain; charset=utf-8")
                    return
                problem = check()
                body = (f"{problem}\n" if problem else "ok").encode()
                self._send(500 if problem else 200, body, "text/plain; charset=utf-8")

            def _explain(self, key: str) -> None:
                assert explanations is not None
                found = explanations(key) if key.count("/") == 1 else None
                if found is None:
                    missing = {"error": f"no explanation kept for pod {key!r}"}
                    self._send(404, orjson.dumps(missing), "application/json")
                else:
                    self._send(200, orjson.dumps(found), "application/json")

            def _send(self, code: int, body: bytes, content_type: str) -> None:
                self.send_response(code)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                log.debug("http: " + format, *args)

        self.httpd = ThreadingHTTPServer(address, Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, name="http", daemon=True)

    @property
    def port(self) -> int:
        return int(self.httpd.server_address[1])

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
