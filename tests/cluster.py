"""The local control plane as the tests see it: start or reuse it, talk to it, fake nodes on it."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import kubernetes

from benchmarks.tools import cluster_tool, shared_cluster_name

REPO = Path(__file__).resolve().parent.parent


@dataclass
class Cluster:
    """A running control plane: its admin kubeconfig and the binaries built for it."""

    kubeconfig: Path
    bin_dir: Path
    _api: kubernetes.client.ApiClient | None = field(default=None, repr=False)

    @property
    def api(self) -> kubernetes.client.ApiClient:
        if self._api is None:
            self._api = kubernetes.config.new_client_from_config(str(self.kubeconfig))
        return self._api

    def kubectl(
        self,
        *args: str,
        input: str | None = None,
        check: bool = True,
        kubeconfig: Path | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """kubectl as a user would type it, against this cluster."""
        done = subprocess.run(
            [
                str(self.bin_dir / "kubectl"),
                "--kubeconfig",
                str(kubeconfig or self.kubeconfig),
                *args,
            ],
            input=input,
            capture_output=True,
            text=True,
            check=False,
        )
        if check and done.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed: {done.stderr}")
        return done


def kwok_node(
    name: str,
    *,
    cpu: str = "32",
    memory: str = "256Gi",
    pods: int = 110,
    zone: str | None = None,
    labels: Mapping[str, str] | None = None,
    taints: Iterable[Mapping[str, str]] = (),
    images: Iterable[tuple[str, int]] = (),
    unschedulable: bool = False,
    extended: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """A Node that kwok manages, shaped like a real one: capacity, well-known labels, taints."""
    all_labels = {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "type": "kwok",
        **({"topology.kubernetes.io/zone": zone} if zone else {}),
        **(labels or {}),
    }
    capacity = {"cpu": cpu, "memory": memory, "pods": str(pods), **(extended or {})}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": all_labels,
            "annotations": {"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
        },
        "spec": {"taints": [dict(t) for t in taints], "unschedulable": unschedulable},
        "status": {
            "allocatable": capacity,
            "capacity": capacity,
            "images": [{"names": [image], "sizeBytes": size} for image, size in images],
            "nodeInfo": {  # every field a kubelet reports (the client checks them on create)
                "architecture": "amd64",
                "operatingSystem": "linux",
                "osImage": "",
                "kernelVersion": "fake",
                "kubeletVersion": "fake",
                "kubeProxyVersion": "fake",
                "containerRuntimeVersion": "fake",
                "machineID": "",
                "systemUUID": "",
                "bootID": "",
            },
        },
    }


def wait_for(
    what: str, probe: Callable[[], Any], timeout: float = 60, interval: float = 0.5
) -> Any:
    """Polls until probe() is truthy; fails naming what was awaited and the last value seen."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = probe()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}; last seen: {last!r}")


def start_cluster() -> tuple[Cluster, bool]:
    """Reuses the cluster named by $TEST_KUBECONFIG, or starts the project's own test cluster.

    Returns the cluster and whether this process owns it (and so should tear it down)."""
    bin_dir = Path(cluster_tool("bin").splitlines()[0])
    given = os.environ.get("TEST_KUBECONFIG")
    if given:
        return Cluster(Path(given), bin_dir), False
    return Cluster(Path(cluster_tool("up", shared_cluster_name())), bin_dir), True


def stop_cluster() -> None:
    cluster_tool("down", shared_cluster_name())
