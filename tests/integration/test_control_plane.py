"""The local control plane is real: pinned version, kwok nodes, upstream scheduling, RBAC."""

from __future__ import annotations

import json
from pathlib import Path

import kubernetes
import yaml
from cluster import Cluster, kwok_node, wait_for

from benchmarks.tools import kubernetes_version


def test_api_server_reports_the_pinned_version(cluster: Cluster) -> None:
    version = json.loads(cluster.kubectl("get", "--raw", "/version").stdout)
    assert version["gitVersion"] == kubernetes_version()


def test_kwok_nodes_become_ready(cluster: Cluster, make_nodes) -> None:
    names = make_nodes(*(kwok_node(f"ready-{i}", zone=f"zone-{i}") for i in range(3)))
    shown = cluster.kubectl("get", "nodes", "-l", "type=kwok", "-o", "json").stdout
    ready = {
        item["metadata"]["name"]
        for item in json.loads(shown)["items"]
        if any(c["type"] == "Ready" and c["status"] == "True" for c in item["status"]["conditions"])
    }
    assert set(names) <= ready


def test_upstream_scheduler_places_a_deployment(
    cluster: Cluster, make_nodes, namespace: str
) -> None:
    make_nodes(kwok_node("deploy-a"), kwok_node("deploy-b"))
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": namespace},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [
                        {
                            "name": "web",
                            "image": "registry.k8s.io/pause:3.10",
                            "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
                        }
                    ]
                },
            },
        },
    }
    cluster.kubectl("apply", "-f", "-", input=yaml.safe_dump(deployment))
    core = kubernetes.client.CoreV1Api(cluster.api)

    def running() -> list[kubernetes.client.V1Pod]:
        pods = core.list_namespaced_pod(namespace, label_selector="app=web").items
        return [p for p in pods if p.status.phase == "Running"]

    pods = wait_for("2 Running pods", lambda: len(running()) == 2 and running())
    assert {p.spec.node_name for p in pods} <= {"deploy-a", "deploy-b"}
    events = core.list_namespaced_event(namespace, field_selector="reason=Scheduled").items
    assert {e.involved_object.name for e in events} == {p.metadata.name for p in pods}
    assert {e.reporting_component or e.source.component for e in events} == {"default-scheduler"}


def test_rbac_denies_a_service_account_a_write_it_lacks(
    cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    cluster.kubectl("create", "serviceaccount", "reader", "-n", namespace)
    cluster.kubectl(
        "create", "role", "read-pods", "--verb=get,list", "--resource=pods", "-n", namespace
    )
    cluster.kubectl(
        "create",
        "rolebinding",
        "reader",
        "--role=read-pods",
        f"--serviceaccount={namespace}:reader",
        "-n",
        namespace,
    )
    token = cluster.kubectl("create", "token", "reader", "-n", namespace).stdout.strip()
    admin = yaml.safe_load(cluster.kubeconfig.read_text())
    server = admin["clusters"][0]["cluster"]
    as_reader = tmp_path / "reader.kubeconfig"
    as_reader.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "local", "cluster": server}],
                "users": [{"name": "reader", "user": {"token": token}}],
                "contexts": [{"name": "reader", "context": {"cluster": "local", "user": "reader"}}],
                "current-context": "reader",
            }
        )
    )
    allowed = cluster.kubectl("get", "pods", "-n", namespace, kubeconfig=as_reader, check=False)
    assert allowed.returncode == 0, allowed.stderr
    denied = cluster.kubectl(
        "create", "configmap", "x", "-n", namespace, kubeconfig=as_reader, check=False
    )
    assert denied.returncode != 0
    assert "forbidden" in denied.stderr.lower()
    assert f"system:serviceaccount:{namespace}:reader" in denied.stderr
