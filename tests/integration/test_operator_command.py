"""`scheduler-operator run`, the program the operator's Deployment starts, under its RBAC."""

from __future__ import annotations

import os
import subprocess
import sys
import urllib.request
from pathlib import Path

from cluster import Cluster, wait_for
from kopf.testing import KopfRunner
from operator_support import service_account_kubeconfig

from benchmarks.processes import free_port


def alive(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as answer:
            return bool(answer.status == 200)
    except OSError:
        return False


def test_the_operator_command_starts_and_reports_liveness(
    cluster: Cluster, operator: KopfRunner, tmp_path: Path
) -> None:
    kubeconfig = service_account_kubeconfig(cluster, tmp_path / "operator.kubeconfig")
    url = f"http://127.0.0.1:{free_port()}/healthz"
    log = tmp_path / "operator.log"
    process = subprocess.Popen(
        [sys.executable, "-m", "scheduler_operator", "run", "--liveness", url],
        env={**os.environ, "KUBECONFIG": str(kubeconfig)},
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
    )
    try:
        wait_for("the operator's liveness endpoint", lambda: alive(url), timeout=60)
        assert process.poll() is None
    finally:
        process.terminate()
        process.wait(timeout=30)
    output = log.read_text()
    assert "Traceback" not in output, output
    assert "Forbidden" not in output, output
