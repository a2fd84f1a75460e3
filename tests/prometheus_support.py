"""Prometheus for the tests: a real one (built by tools/build-binaries.sh at the version pinned
in tools/versions.env, started per test on a free port with its own configuration and storage)
scraping an exporter the test controls (per node, the node-exporter series NetworkTraffic
reads, at the receive rates the test sets), and a fake one that answers queries with whatever
the test sets."""

from __future__ import annotations

import json
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import yaml
from cluster import wait_for

from benchmarks.processes import free_port, stop_process
from benchmarks.tools import built_binary

SCRAPE_INTERVAL_SECONDS = 1
# (path) -> (status, content type, body)
Responder = Callable[[str], tuple[int, str, bytes]]


def serve(respond: Responder) -> ThreadingHTTPServer:
    """A quiet HTTP server on a free local port, answering each GET with `respond(path)`."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            status, content_type, body = respond(self.path)
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def stop_serving(server: ThreadingHTTPServer) -> None:
    server.shutdown()
    server.server_close()


class TrafficExporter:
    """Serves node_network_receive_bytes_total (counters growing at each node's set rate)
    and node_uname_info, one target-like `instance` per node, as node-exporter would."""

    def __init__(self, device: str = "eth0") -> None:
        self.device = device
        self._rates: dict[str, float] = {}
        self._totals: dict[str, float] = {}
        self._since = time.monotonic()
        self._lock = threading.Lock()
        self.server = serve(
            lambda path: (200, "text/plain; version=0.0.4", self.exposition().encode())
        )

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.server.server_address[1]}"

    def _advance(self) -> None:
        now = time.monotonic()
        for node, rate in self._rates.items():
            self._totals[node] = self._totals.get(node, 0.0) + rate * (now - self._since)
        self._since = now

    def set_rates(self, rates: dict[str, float]) -> None:
        """Bytes per second each node receives from now on."""
        with self._lock:
            self._advance()
            self._rates = dict(rates)

    def exposition(self) -> str:
        with self._lock:
            self._advance()
            totals = dict(self._totals)
        lines = ["# TYPE node_network_receive_bytes_total counter"]
        lines += [
            f'node_network_receive_bytes_total{{device="{self.device}",instance="{node}:9100"}}'
            f" {total:.0f}"
            for node, total in totals.items()
        ]
        lines.append("# TYPE node_uname_info gauge")
        lines += [
            f'node_uname_info{{instance="{node}:9100",nodename="{node}",sysname="Linux"}} 1'
            for node in totals
        ]
        return "\n".join(lines) + "\n"

    def stop(self) -> None:
        stop_serving(self.server)


class Prometheus:
    """One prometheus process scraping every second the exporter, if given, and the jobs
    (scrape_configs entries) a test adds."""

    def __init__(
        self,
        exporter: TrafficExporter | None,
        workdir: Path,
        jobs: Sequence[dict[str, Any]] = (),
    ) -> None:
        binary = built_binary("prometheus")
        self.port = free_port()
        config = workdir / "prometheus.yml"
        # The exporter names each node's instance itself.
        node = [
            {"job_name": "node", "honor_labels": True, "static_configs": [{"targets": [e]}]}
            for e in ([exporter.address] if exporter else [])
        ]
        config.write_text(
            yaml.safe_dump(
                {
                    "global": {
                        "scrape_interval": f"{SCRAPE_INTERVAL_SECONDS}s",
                        "evaluation_interval": f"{SCRAPE_INTERVAL_SECONDS}s",
                    },
                    "scrape_configs": node + list(jobs),
                }
            )
        )
        self.log_path = workdir / "prometheus.log"
        self._log = self.log_path.open("wb")
        self.process = subprocess.Popen(
            [
                binary,
                f"--config.file={config}",
                f"--storage.tsdb.path={workdir / 'tsdb'}",
                f"--web.listen-address=127.0.0.1:{self.port}",
            ],
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        wait_for(
            f"prometheus to be ready (log: {self.log_path})",
            lambda: self.process.poll() is None and self._ready(),
            timeout=60,
        )

    @property
    def address(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.address}/-/ready", timeout=2) as answer:
                return bool(answer.status == 200)
        except OSError:
            return False

    def query(self, promql: str) -> dict[str, float]:
        result = self.api("query", query=promql)["result"]
        return {s["metric"].get("nodename", ""): float(s["value"][1]) for s in result}

    def api(self, endpoint: str, **params: str) -> Any:
        """`/api/v1/<endpoint>`'s data; an error answer fails with Prometheus's own words."""
        url = f"{self.address}/api/v1/{endpoint}?{urllib.parse.urlencode(params)}"
        try:
            with urllib.request.urlopen(url, timeout=10) as answer:
                document = json.loads(answer.read())
        except urllib.error.HTTPError as error:
            document = json.loads(error.read())
        assert document["status"] == "success", f"{params}: {document.get('error')}"
        return document["data"]

    def stop(self) -> None:
        stop_process(self.process)
        self._log.close()


@pytest.fixture
def traffic_exporter() -> Iterator[TrafficExporter]:
    exporter = TrafficExporter()
    yield exporter
    exporter.stop()


@pytest.fixture
def prometheus(traffic_exporter: TrafficExporter, tmp_path: Path) -> Iterator[Prometheus]:
    workdir = tmp_path / "prometheus"
    workdir.mkdir()
    server = Prometheus(traffic_exporter, workdir)
    yield server
    server.stop()


class FakePrometheus:
    """Answers /api/v1/query with `traffic` ({node: bytes per second}), or with `status` and
    an error when that is not 200, after `delay` seconds; records the queries."""

    def __init__(self) -> None:
        self.traffic: dict[str, float] = {}
        self.status = 200
        self.delay = 0.0
        self.queries: list[str] = []
        self.server = serve(self._answer)

    def _answer(self, path: str) -> tuple[int, str, bytes]:
        self.queries.append(parse_qs(urlsplit(path).query)["query"][0])
        time.sleep(self.delay)
        document: dict[str, Any] = (
            {
                "status": "success",
                "data": {
                    "resultType": "vector",
                    "result": [
                        {"metric": {"nodename": node}, "value": [1.0, str(value)]}
                        for node, value in self.traffic.items()
                    ],
                },
            }
            if self.status == 200
            else {"status": "error", "error": "overloaded"}
        )
        return self.status, "application/json", json.dumps(document).encode()

    @property
    def address(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"


@pytest.fixture
def fake_prometheus() -> Iterator[FakePrometheus]:
    fake = FakePrometheus()
    yield fake
    stop_serving(fake.server)
