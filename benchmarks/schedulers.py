"""The two schedulers under test, as processes on this machine: the upstream kube-scheduler
binary and this project's runtime, each with the same KubeSchedulerConfiguration (default
plugins, client QPS/burst 1000/1000, no leader election) apart from its schedulerName."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import aiohttp
import yaml

from benchmarks.processes import cpu_seconds, free_port, stop_process
from benchmarks.stats import histogram_buckets

UPSTREAM = "upstream"
PYTHON = "python"
BINDER = "binder"  # no algorithm: binds pods round-robin as they come (benchmarks.measure)
SCHEDULERS = (UPSTREAM, PYTHON)
SCHEDULER_NAMES = {UPSTREAM: "bench-upstream", PYTHON: "bench-python", BINDER: "bench-binder"}
CLIENT_QPS = 1000
ATTEMPT_HISTOGRAM = "scheduler_scheduling_attempt_duration_seconds"
ALGORITHM_HISTOGRAM = "scheduler_scheduling_algorithm_duration_seconds"


class SchedulerFailedError(RuntimeError):
    """A scheduler process that exited or never became ready; its log's tail says why."""


def configuration(scheduler_name: str, kubeconfig: Path) -> dict[str, Any]:
    """The configuration both schedulers run with; only the name differs."""
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "clientConnection": {
            "kubeconfig": str(kubeconfig),
            "qps": CLIENT_QPS,
            "burst": CLIENT_QPS,
        },
        "leaderElection": {"leaderElect": False},
        "profiles": [{"schedulerName": scheduler_name}],
    }


def upstream_command(binary: Path, config: Path, port: int) -> list[str]:
    """kube-scheduler serving /metrics on its secure port to anyone (no token review needed)."""
    return [
        str(binary),
        f"--config={config}",
        "--bind-address=127.0.0.1",
        f"--secure-port={port}",
        "--authentication-skip-lookup",
        "--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics",
        "--v=0",
    ]


def runtime_command(config: Path, kubeconfig: Path, port: int) -> list[str]:
    """This runtime's `run` command, from the same environment as the benchmark, serving as
    upstream's does: its secure port on loopback, /metrics open (no token review)."""
    return [
        str(Path(sys.executable).parent / "scheduler-runtime"),
        "run",
        f"--config={config}",
        f"--kubeconfig={kubeconfig}",
        "--bind-address=127.0.0.1",
        f"--secure-port={port}",
        "--authentication-skip-lookup",
        "--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics",
        "--v=0",
    ]


@dataclass
class SchedulerProcess:
    """One scheduler process: started, probed, scraped, measured and stopped by the benchmark."""

    label: str
    command: list[str]
    base_url: str
    log_path: Path
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    log: IO[bytes] | None = field(default=None, repr=False)

    @classmethod
    def for_scheduler(
        cls, label: str, workdir: Path, kubeconfig: Path, bin_dir: Path, gates: str = ""
    ) -> SchedulerProcess:
        """`gates`: kube-scheduler's --feature-gates, given to either scheduler alike."""
        config = workdir / f"{label}.yaml"
        config.write_text(yaml.safe_dump(configuration(SCHEDULER_NAMES[label], kubeconfig)))
        port = free_port()
        if label == UPSTREAM:
            command = upstream_command(bin_dir / "kube-scheduler", config, port)
        else:
            command = runtime_command(config, kubeconfig, port)
        if gates:
            command.append(f"--feature-gates={gates}")
        return cls(label, command, f"https://127.0.0.1:{port}", workdir / f"{label}.log")

    def start(self) -> None:
        self.log = self.log_path.open("ab")
        self.process = subprocess.Popen(self.command, stdout=self.log, stderr=subprocess.STDOUT)

    @property
    def pid(self) -> int:
        if self.process is None:
            raise RuntimeError(f"{self.label} scheduler was not started")
        return self.process.pid

    async def wait_ready(self, timeout: float = 120) -> None:
        """Waits for /readyz (caches synced); an early exit fails with the log's tail."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.check_running()
            try:
                if (await self.get("/readyz")).strip() == "ok":
                    return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.5)
        raise SchedulerFailedError(
            f"{self.label} scheduler not ready after {timeout}s; {self.log_tail()}"
        )

    def check_running(self) -> None:
        if self.process is not None and self.process.poll() is not None:
            raise SchedulerFailedError(
                f"{self.label} scheduler exited with {self.process.returncode}; {self.log_tail()}"
            )

    async def get(self, path: str) -> str:
        async with (
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as session,
            session.get(self.base_url + path, ssl=False) as response,
        ):
            return await response.text()

    async def metrics(self) -> str:
        return await self.get("/metrics")

    async def settled_metrics(self, attempts: int, timeout: float = 10) -> str:
        """/metrics once the attempt histogram counts `attempts` (kube-scheduler records it a
        moment after the binding the watch saw), or as it stands at the timeout."""
        deadline = time.monotonic() + timeout
        while True:
            text = await self.metrics()
            buckets = histogram_buckets(text, ATTEMPT_HISTOGRAM)
            if (buckets and buckets[-1][1] >= attempts) or time.monotonic() >= deadline:
                return text
            await asyncio.sleep(0.2)

    def peak_rss_bytes(self) -> int:
        """The kernel's high-water mark of the process's resident set (VmHWM)."""
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
        raise RuntimeError(f"/proc/{self.pid}/status has no VmHWM line")

    def cpu_seconds(self) -> float:
        """User plus system CPU time the process has used."""
        return cpu_seconds(self.pid)

    def stop(self, timeout: float = 15) -> None:
        if self.process is not None:
            stop_process(self.process, timeout)
        if self.log is not None:
            self.log.close()

    def log_tail(self, lines: int = 15) -> str:
        text = self.log_path.read_text(errors="replace").splitlines()[-lines:]
        return "log " + str(self.log_path) + ":\n" + "\n".join(text)
