"""Fixtures of the as-shipped tier (tests/e2e): a cluster with one real node (tools/node.sh),
the project's images built here (tools/images.sh), and the manifests applied as a user applies
them. The operator and the schedulers run as real pods on that node; workload pods go to kwok
nodes, which carry kwok's NoSchedule taint, so nothing the project ships can land on a node
that only pretends."""

from __future__ import annotations

import fcntl
import os
import subprocess
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import kubernetes
import pytest
import yaml
from cluster import REPO, Cluster, kwok_node, wait_for
from operator_support import get_json

from benchmarks.tools import TOOLS, cluster_tool

OPERATOR_NAMESPACE = "scheduler-operator"
NODE_LOCK = "/tmp/scheduler-operator-real-node.lock"
KWOK_TAINT = {"key": "kwok.x-k8s.io/node", "value": "fake", "effect": "NoSchedule"}
KWOK_TOLERATION = {"key": "kwok.x-k8s.io/node", "operator": "Exists", "effect": "NoSchedule"}


def e2e_cluster_name() -> str:
    """The real-node cluster's name; one real node runs per machine."""
    return os.environ.get("TEST_E2E_CLUSTER_NAME", "e2e")


def tool(*command: str) -> str:
    """Runs a project script; a failure fails the test with the script's own explanation."""
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.fail(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr[-4000:]}")
    return done.stdout.strip()


@pytest.fixture(scope="session")
def real_cluster() -> Iterator[Cluster]:
    """The images built and loaded, and a cluster whose real node is Ready (kept with
    KEEP_CLUSTER=1). One real node runs per machine: test sessions take turns."""
    with open(NODE_LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        tool(str(TOOLS / "images.sh"), "build")
        kubeconfig = tool(str(TOOLS / "cluster.sh"), "node", e2e_cluster_name())
        bin_dir = Path(cluster_tool("bin").splitlines()[0])
        yield Cluster(Path(kubeconfig), bin_dir)
        if os.environ.get("KEEP_CLUSTER") != "1":
            cluster_tool("down", e2e_cluster_name())


@pytest.fixture(scope="session")
def real_node(real_cluster: Cluster) -> str:
    return tool(str(TOOLS / "node.sh"), "name", e2e_cluster_name())


@pytest.fixture(scope="session")
def installed(real_cluster: Cluster) -> Cluster:
    """`kubectl apply -k manifests`, as the README says, and the operator's pod Ready."""
    real_cluster.kubectl("apply", "--server-side", "-k", str(REPO / "manifests"))
    # A kept cluster may run an operator from an earlier build of the same tag.
    real_cluster.kubectl(
        "-n", OPERATOR_NAMESPACE, "rollout", "restart", "deployment/scheduler-operator"
    )
    real_cluster.kubectl(
        "-n", OPERATOR_NAMESPACE, "rollout", "status", "deployment/scheduler-operator",
        "--timeout=120s",
    )  # fmt: skip
    return real_cluster


@pytest.fixture
def workload_namespace(real_cluster: Cluster) -> Iterator[str]:
    name = f"w-{uuid.uuid4().hex[:8]}"
    real_cluster.kubectl("create", "namespace", name)
    yield name
    real_cluster.kubectl("delete", "namespace", name, "--wait=false")


@pytest.fixture
def kwok_nodes(real_cluster: Cluster) -> Iterator[Callable[..., list[str]]]:
    """kwok nodes with kwok's taint, Ready; deleted after the test."""
    core = kubernetes.client.CoreV1Api(real_cluster.api)
    created: list[str] = []

    def make(count: int, **shape: Any) -> list[str]:
        names = [f"kwok-{uuid.uuid4().hex[:6]}" for _ in range(count)]
        for name in names:
            core.create_node(kwok_node(name, taints=[KWOK_TAINT], **shape))
            created.append(name)
        wait_for(f"kwok nodes {names} to be Ready", lambda: all(ready_node(core, n) for n in names))
        return names

    yield make
    for name in created:
        core.delete_node(name)


def ready_node(core: kubernetes.client.CoreV1Api, name: str) -> bool:
    conditions = core.read_node_status(name).status.conditions or []
    return any(c.type == "Ready" and c.status == "True" for c in conditions)


@pytest.fixture
def profiles(installed: Cluster) -> Iterator[Callable[..., str]]:
    """Applies SchedulerProfiles with kubectl; deletes those left after the test."""
    applied: list[str] = []

    def apply(name: str, **spec: Any) -> str:
        body = {
            "apiVersion": "scheduling.schedops.io/v1alpha1",
            "kind": "SchedulerProfile",
            "metadata": {"name": name},
            "spec": spec,
        }
        installed.kubectl("apply", "-f", "-", input=yaml.safe_dump(body))
        applied.append(name)
        return name

    yield apply
    for name in applied:
        installed.kubectl("delete", "schedulerprofile", name, "--ignore-not-found", "--wait=true")


def running_on(pod: dict[str, Any], node: str) -> bool:
    """Running on the node, every container ready and never restarted."""
    statuses = pod["status"].get("containerStatuses") or []
    return (
        pod["spec"].get("nodeName") == node
        and pod["status"].get("phase") == "Running"
        and bool(statuses)
        and all(s["ready"] and s["restartCount"] == 0 for s in statuses)
    )


def scheduler_pods(cluster: Cluster, profile: str, namespace: str) -> list[dict[str, Any]]:
    """The pods of a profile's scheduler Deployment that are not being deleted."""
    found = get_json(
        cluster, "pods", "-n", namespace, "-l", f"app.kubernetes.io/instance={profile}"
    )
    items = (found or {}).get("items") or []
    return [p for p in items if not p["metadata"].get("deletionTimestamp")]
