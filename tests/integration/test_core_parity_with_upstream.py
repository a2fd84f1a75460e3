"""Parity of the scheduling core with the upstream kube-scheduler: the cluster's own
scheduler places a generated workload (200 pods with mixed constraints on 50 kwok nodes),
one pod at a time; replaying the same sequence through this runtime's framework must find the
same pods unschedulable with the same messages, and must score every node upstream chose as
high as its best node (ties are broken at random on both sides)."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import kubernetes
import numpy as np
import pytest
from cluster import Cluster, kwok_node, wait_for

from scheduler_runtime.config import load_configuration
from scheduler_runtime.framework.algorithm import SchedulingAlgorithm
from scheduler_runtime.framework.interface import CycleState, Handle
from scheduler_runtime.framework.podinfo import pod_info
from scheduler_runtime.framework.runtime import Framework
from scheduler_runtime.framework.snapshot import Snapshot
from scheduler_runtime.framework.types import FitError

MIB = 1024 * 1024
NODES = 50
PODS = 200
# Volume plugins have nothing to do without volumes; every other default plugin runs.
WITHOUT_VOLUMES = ("VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone")


def generated_nodes(prefix: str, rng: random.Random) -> list[dict[str, Any]]:
    nodes = []
    for index in range(NODES):
        taints = []
        if index % 10 == 0:
            taints.append({"key": "dedicated", "value": "batch", "effect": "NoSchedule"})
        if index % 7 == 0:
            taints.append({"key": "spot", "value": "true", "effect": "PreferNoSchedule"})
        images = []
        if index % 5 == 1 or index % 13 == 0:
            images.append(("registry.example/app:v1", 500 * MIB))
        if index % 5 == 2 or index % 13 == 0:
            images.append(("registry.example/app:v2", 600 * MIB))
        nodes.append(
            kwok_node(
                f"{prefix}-n{index:02}",
                cpu=rng.choice(["4", "8", "16"]),
                memory=rng.choice(["16Gi", "32Gi", "64Gi"]),
                pods=rng.choice([20, 110]),
                zone=f"zone-{index % 3}",
                labels={
                    "tier": rng.choice(["gold", "silver", "bronze"]),
                    "cores": str(rng.choice([4, 8, 16, 32])),
                    **({"disk": "ssd"} if rng.random() < 0.4 else {}),
                },
                taints=taints,
                images=images,
            )
        )
    return nodes


def _requirement(rng: random.Random) -> dict[str, Any]:
    return rng.choice(
        [
            {
                "key": "tier",
                "operator": "In",
                "values": rng.sample(["gold", "silver", "bronze"], 2),
            },
            {"key": "tier", "operator": "NotIn", "values": ["bronze"]},
            {"key": "disk", "operator": "Exists"},
            {"key": "disk", "operator": "DoesNotExist"},
            {"key": "cores", "operator": "Gt", "values": ["8"]},
            {"key": "cores", "operator": "Lt", "values": ["16"]},
        ]
    )


def _constraints(rng: random.Random, spec: dict[str, Any]) -> None:
    kind = rng.choice(
        ["none", "selector", "required", "preferred", "tolerate", "port", "image", "mixed"]
    )
    if kind in ("selector", "mixed"):
        spec["nodeSelector"] = {"tier": rng.choice(["gold", "silver"])}
    if kind in ("required", "mixed"):
        terms = [{"matchExpressions": [_requirement(rng)]} for _ in range(rng.choice([1, 2]))]
        spec.setdefault("affinity", {})["nodeAffinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}
        }
    if kind in ("preferred", "mixed"):
        preferred = [
            {"weight": rng.randint(1, 100), "preference": {"matchExpressions": [_requirement(rng)]}}
            for _ in range(rng.choice([1, 2, 3]))
        ]
        node_affinity = spec.setdefault("affinity", {}).setdefault("nodeAffinity", {})
        node_affinity["preferredDuringSchedulingIgnoredDuringExecution"] = preferred
    if kind in ("tolerate", "mixed"):
        spec["tolerations"] = [
            {"key": "dedicated", "operator": "Equal", "value": "batch", "effect": "NoSchedule"},
            {"key": "spot", "operator": "Exists"},
        ][: rng.choice([1, 2])]
    if kind == "port":
        spec["containers"][0]["ports"] = [
            {"containerPort": 80, "hostPort": rng.choice([8080, 9090])}
        ]
    if kind == "image":
        spec["containers"][0]["image"] = rng.choice(
            ["registry.example/app:v1", "registry.example/app:v2"]
        )


def generated_pod(index: int, rng: random.Random, priority_class: str) -> dict[str, Any]:
    requests = {}
    cpu = rng.choice(["", "100m", "250m", "500m", "1", "2", "3"])
    memory = rng.choice(["", "128Mi", "512Mi", "1Gi", "4Gi"])
    if cpu:
        requests["cpu"] = cpu
    if memory:
        requests["memory"] = memory
    spec: dict[str, Any] = {
        "containers": [
            {"name": "c", "image": "registry.example/web:1", "resources": {"requests": requests}}
        ],
    }
    # A class that never preempts keeps the state of each step as upstream left it.
    spec["priorityClassName"] = priority_class
    _constraints(rng, spec)
    if index % 23 == 5:
        requests["cpu"] = "64"  # fits no node, ever
    if index % 29 == 7:
        spec["nodeSelector"] = {"tier": "platinum"}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{index:03}"}, "spec": spec}


def read_json(call: Callable[..., Any], *args: Any) -> Any:
    return json.loads(call(*args, _preload_content=False).data)


def outcome(core: kubernetes.client.CoreV1Api, namespace: str, name: str) -> Any:
    """(node, None) once bound, (None, message) once upstream reported it unschedulable."""
    pod = read_json(core.read_namespaced_pod, name, namespace)
    if pod["spec"].get("nodeName"):
        return pod["spec"]["nodeName"], None
    for condition in pod.get("status", {}).get("conditions") or ():
        if condition["type"] == "PodScheduled" and condition["status"] == "False":
            return None, condition["message"]
    return None


def settled(core: kubernetes.client.CoreV1Api) -> list[dict[str, Any]] | None:
    """All nodes, once none carries a node.kubernetes.io/ taint (not-ready and the like)."""
    nodes: list[dict[str, Any]] = read_json(core.list_node)["items"]
    for node in nodes:
        for taint in node.get("spec", {}).get("taints") or ():
            if taint["key"].startswith("node.kubernetes.io/"):
                return None
    return nodes


def replay_framework(snapshot: Snapshot) -> Framework:
    config = load_configuration(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [
                {
                    "plugins": {
                        "multiPoint": {"disabled": [{"name": name} for name in WITHOUT_VOLUMES]}
                    }
                }
            ],
        }
    )
    return Framework(config.profiles[0], Handle(snapshot))


@pytest.fixture
def never_preempting(cluster: Cluster, namespace: str) -> Iterator[str]:
    scheduling = kubernetes.client.SchedulingV1Api(cluster.api)
    body = {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": namespace},
        "value": 0,
        "preemptionPolicy": "Never",
    }
    scheduling.create_priority_class(body)
    yield namespace
    scheduling.delete_priority_class(namespace)


def test_generated_workload_matches_upstream(
    cluster: Cluster,
    namespace: str,
    make_nodes: Callable[..., list[str]],
    never_preempting: str,
    tmp_path: Path,
) -> None:
    rng = random.Random(20261122)
    make_nodes(*generated_nodes(namespace, rng))
    core = kubernetes.client.CoreV1Api(cluster.api)
    nodes = wait_for("the node lifecycle controller to lift its taints", lambda: settled(core))
    existing = read_json(core.list_pod_for_all_namespaces)["items"]

    upstream: list[tuple[dict[str, Any], Any]] = []
    for index in range(PODS):
        pod = generated_pod(index, rng, never_preempting)
        core.create_namespaced_pod(namespace, pod)
        name = pod["metadata"]["name"]
        result = wait_for(
            f"upstream to decide on {name}", lambda n=name: outcome(core, namespace, n)
        )
        upstream.append((read_json(core.read_namespaced_pod, name, namespace), result))
    time.sleep(1)  # nothing may move afterwards: pending pods stay pending
    for pod, (node, _) in upstream:
        if node is None:
            assert outcome(core, namespace, pod["metadata"]["name"])[0] is None

    snapshot = Snapshot()
    for node in nodes:
        snapshot.add_node(node)
    for pod in existing:
        if pod["spec"].get("nodeName") and pod["status"].get("phase") not in (
            "Succeeded",
            "Failed",
        ):
            snapshot.add_pod(pod_info(pod))
    framework = replay_framework(snapshot)
    algorithm = SchedulingAlgorithm(snapshot, 0, random.Random(1))
    failures = []
    placed = 0
    for pod, (node, message) in upstream:
        info = pod_info({**pod, "spec": {**pod["spec"], "nodeName": ""}})
        state = CycleState()
        try:
            algorithm.schedule_pod(framework, state, info)
        except FitError as error:
            _, status = framework.run_post_filter(state, info, error.diagnosis)
            error.diagnosis.post_filter_msg = status.message()
            if node is not None:
                failures.append(f"{info.name}: upstream bound it to {node}, replay: {error}")
                snapshot.add_pod(info.with_node(node))
            elif str(error) != message:
                failures.append(f"{info.name}: upstream said {message!r}, replay {str(error)!r}")
            continue
        if node is None:
            failures.append(f"{info.name}: upstream: {message!r}, replay found a node")
            continue
        placement = algorithm.last_placement
        if placement is not None:  # more than one node fits: upstream's must score the best
            names = snapshot.names(placement.slots)
            if node not in names:
                failures.append(f"{info.name}: upstream chose {node}, replay found it infeasible")
            elif placement.totals[names.index(node)] != np.max(placement.totals):
                best = int(np.argmax(placement.totals))
                chosen = names.index(node)
                parts = {
                    plugin: (int(scores[chosen]), int(scores[best]))
                    for plugin, scores in placement.by_plugin.items()
                }
                failures.append(
                    f"{info.name}: upstream chose {node} scoring {placement.totals[chosen]}, "
                    f"replay's best is {names[best]} scoring {placement.totals[best]}; "
                    f"per plugin (upstream's, replay's): {parts}"
                )
        snapshot.add_pod(info.with_node(node))
        placed += 1
    record = tmp_path / "upstream-run.json"
    record.write_text(json.dumps({"nodes": nodes, "existing": existing, "upstream": upstream}))
    assert not failures, "\n".join([f"upstream's run is in {record}", *failures])
    assert placed > PODS // 2
    assert placed < PODS  # the workload does include unschedulable pods
