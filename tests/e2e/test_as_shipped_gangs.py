"""A gang as shipped: the podgroup-crd component applied as docs/install.md says, a
SchedulerProfile running Coscheduling on the shipped image as a real pod, under the shipped
RBAC (scheduler-operator:pod-group-scheduler), places a scheduler-plugins PodGroup's members
whole on kwok nodes and keeps the group's status."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
import yaml
from cluster import REPO, Cluster, wait_for
from operator_support import get_json
from real_node_support import KWOK_TOLERATION
from test_as_shipped import bound_nodes, wait_ready

pytestmark = pytest.mark.timeout(900)

COSCHEDULING = {
    "plugins": {
        "multiPoint": {"enabled": [{"name": "Coscheduling"}]},
        "queueSort": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "*"}]},
    }
}


def member(name: str, group: str, scheduler: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "labels": {"app": "workload", "scheduling.x-k8s.io/pod-group": group},
        },
        "spec": {
            "schedulerName": scheduler,
            "tolerations": [KWOK_TOLERATION],
            "containers": [
                {"name": "app", "image": "workload:1", "resources": {"requests": {"cpu": "1"}}}
            ],
        },
    }


def test_a_gang_is_placed_whole_by_the_shipped_scheduler(
    installed: Cluster, profiles: Any, kwok_nodes: Any, workload_namespace: str
) -> None:
    installed.kubectl(
        "apply", "--server-side", "-k", str(REPO / "manifests" / "components" / "podgroup-crd")
    )
    installed.kubectl(
        "wait", "--for=condition=Established", "crd/podgroups.scheduling.x-k8s.io", "--timeout=60s"
    )
    nodes = kwok_nodes(2, cpu="4")
    name = profiles(f"e2e-gangs-{uuid.uuid4().hex[:4]}", profiles=[COSCHEDULING])
    wait_ready(installed, name)
    group = {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": "train"},
        "spec": {"minMember": 3, "minResources": {"cpu": "3"}, "scheduleTimeoutSeconds": 60},
    }
    pods = [member(f"train-{i}", "train", name) for i in range(3)]
    installed.kubectl(
        "apply", "-n", workload_namespace, "-f", "-", input=yaml.safe_dump_all([group, *pods])
    )
    placed = wait_for(
        "the gang to be bound whole",
        lambda: (
            len(b := bound_nodes(installed, workload_namespace, ["train-0", "train-1", "train-2"]))
            == 3
            and b
        ),
        timeout=120,
    )
    assert set(placed.values()) <= set(nodes)

    def status() -> dict[str, Any]:
        found = get_json(
            installed, "podgroups.scheduling.x-k8s.io", "train", "-n", workload_namespace
        )
        return dict((found or {}).get("status") or {})

    wait_for("the scheduler to report the gang running", lambda: status().get("phase") == "Running")
    assert status()["running"] == 3
