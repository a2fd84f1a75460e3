"""The upstream kube-scheduler of the pinned release on a secure port of its own, the reference
for what the runtime's secure port answers and how it holds up, and an HTTPS GET that trusts
any serving certificate (both serve self-signed ones)."""

from __future__ import annotations

import http.client
import ssl
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from cluster import Cluster, wait_for
from runtime_support import free_port, unique_scheduler_name


def https_get(port: int, path: str, token: str | None = None) -> tuple[int, str]:
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    connection = http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=10)
    try:
        connection.request(
            "GET", path, headers={"Authorization": f"Bearer {token}"} if token else {}
        )
        answer = connection.getresponse()
        return answer.status, answer.read().decode()
    finally:
        connection.close()


@pytest.fixture
def upstream_scheduler(cluster: Cluster, tmp_path: Path) -> Iterator[int]:
    """The real kube-scheduler on a secure port of its own, reviewing with the admin's
    credentials as the runtime under test does; its port."""
    port = free_port()
    config = tmp_path / "upstream.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "clientConnection": {"kubeconfig": str(cluster.kubeconfig)},
                "leaderElection": {"leaderElect": False},
                "profiles": [{"schedulerName": unique_scheduler_name()}],
            }
        )
    )
    log = (tmp_path / "upstream.log").open("wb")
    process = subprocess.Popen(
        [
            str(cluster.bin_dir / "kube-scheduler"),
            f"--config={config}",
            "--bind-address=127.0.0.1",
            f"--secure-port={port}",
            f"--authentication-kubeconfig={cluster.kubeconfig}",
            f"--authorization-kubeconfig={cluster.kubeconfig}",
            "--v=1",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        wait_for("kube-scheduler's /readyz", lambda: _answers(port), timeout=60)
        yield port
    finally:
        process.terminate()
        process.wait(20)
        log.close()


def _answers(port: int) -> bool:
    try:
        return https_get(port, "/readyz")[0] == 200
    except OSError:
        return False
