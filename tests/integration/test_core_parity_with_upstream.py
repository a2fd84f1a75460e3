"""Parity of the scheduling core with the upstream kube-scheduler: the cluster's own
scheduler places a generated workload (200 pods with mixed constraints on 50 kwok nodes),
one pod at a time; replaying the same sequence through this runtime's framework must find the
same pods unschedulable with the same messages, and must score every node upstream chose as
high as its best node (ties are broken at random on both sides)."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import kubernetes
from cluster import Cluster, kwok_node, wait_for
from replay_parity import (
    assert_parity,
    read_json,
    replay,
    replay_snapshot,
    settled,
    upstream_decisions,
)

MIB = 1024 * 1024
NODES = 50
PODS = 200


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
    pods = (generated_pod(index, rng, never_preempting) for index in range(PODS))
    decisions = upstream_decisions(core, namespace, pods)

    failures, placed = replay(replay_snapshot(nodes, existing), decisions)
    run = {"nodes": nodes, "existing": existing, "upstream": decisions}
    assert_parity(failures, placed, PODS, tmp_path / "upstream-run.json", run)
