"""Parity with the upstream kube-scheduler for pod affinity and topology spreading: the
cluster's own scheduler places a generated workload (200 pods on 50 kwok nodes, with required
and preferred pod affinity and anti-affinity, hard and soft spread constraints, and pods a
Service selects, so the system default spreading applies), one pod at a time; replaying the
same sequence through this runtime's framework must find the same pods unschedulable with the
same messages, and must score every node upstream chose as high as its best node."""

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

NODES = 50
PODS = 200
APPS = ("web", "api", "db", "cache")
HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"


def generated_nodes(prefix: str, rng: random.Random) -> list[dict[str, Any]]:
    """Three zones; every 17th node has no zone label at all."""
    return [
        kwok_node(
            f"{prefix}-n{index:02}",
            cpu=rng.choice(["4", "8"]),
            memory="32Gi",
            pods=rng.choice([8, 110]),
            zone=None if index % 17 == 0 else f"zone-{index % 3}",
        )
        for index in range(NODES)
    ]


def _term(app: str, key: str) -> dict[str, Any]:
    return {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": key}


def _spread(rng: random.Random, app: str, when: str) -> dict[str, Any]:
    constraint: dict[str, Any] = {
        "maxSkew": rng.choice([1, 2]),
        "topologyKey": rng.choice([ZONE, HOST]),
        "whenUnsatisfiable": when,
        "labelSelector": {"matchLabels": {"app": app}},
    }
    if when == "DoNotSchedule" and rng.random() < 0.3:
        constraint["minDomains"] = 4
    return constraint


def _affinity(rng: random.Random, app: str, kind: str) -> dict[str, Any]:
    other = rng.choice(APPS)
    key = rng.choice([ZONE, HOST])
    match kind:
        case "anti-required":
            return {
                "podAntiAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [_term(app, HOST)]
                }
            }
        case "required":
            return {
                "podAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [_term(other, key)]
                }
            }
    weighted = [
        {"weight": rng.randint(1, 100), "podAffinityTerm": _term(rng.choice(APPS), key)}
        for _ in range(rng.choice([1, 2]))
    ]
    side = "podAffinity" if rng.random() < 0.5 else "podAntiAffinity"
    return {side: {"preferredDuringSchedulingIgnoredDuringExecution": weighted}}


def generated_pod(index: int, rng: random.Random, priority_class: str) -> dict[str, Any]:
    app = rng.choice(APPS)
    cpu = rng.choice(["100m", "250m", "500m", "1"])
    spec: dict[str, Any] = {
        "containers": [
            {
                "name": "c",
                "image": "registry.example/web:1",
                "resources": {"requests": {"cpu": cpu, "memory": "256Mi"}},
            }
        ],
        "priorityClassName": priority_class,
    }
    kind = rng.choice(
        ["plain", "spread-hard", "spread-soft", "anti-required", "required", "preferred", "mixed"]
    )
    if kind in ("spread-hard", "mixed"):
        spec["topologySpreadConstraints"] = [_spread(rng, app, "DoNotSchedule")]
    if kind == "spread-soft":
        spec["topologySpreadConstraints"] = [_spread(rng, app, "ScheduleAnyway")]
    if kind in ("anti-required", "required", "preferred"):
        spec["affinity"] = _affinity(rng, app, kind)
    if kind == "mixed":
        spec["affinity"] = _affinity(rng, app, "preferred")
    if index % 31 == 11:
        spec["containers"][0]["resources"]["requests"]["cpu"] = "64"  # fits no node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"p{index:03}", "labels": {"app": app}},
        "spec": spec,
    }


def test_affinity_and_spreading_match_upstream(
    cluster: Cluster,
    namespace: str,
    make_nodes: Callable[..., list[str]],
    never_preempting: str,
    tmp_path: Path,
) -> None:
    rng = random.Random(20261123)
    make_nodes(*generated_nodes(namespace, rng))
    core = kubernetes.client.CoreV1Api(cluster.api)
    service = read_json(
        core.create_namespaced_service,
        namespace,
        {
            "metadata": {"name": "web"},
            "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]},
        },
    )
    nodes = wait_for("the node lifecycle controller to lift its taints", lambda: settled(core))
    existing = read_json(core.list_pod_for_all_namespaces)["items"]
    pods = (generated_pod(index, rng, never_preempting) for index in range(PODS))
    decisions = upstream_decisions(core, namespace, pods, drop_unschedulable=True)

    snapshot = replay_snapshot(nodes, existing, [{**service, "kind": "Service"}])
    failures, placed = replay(snapshot, decisions)
    run = {"nodes": nodes, "existing": existing, "upstream": decisions}
    assert_parity(failures, placed, PODS, tmp_path / "upstream-run.json", run)
