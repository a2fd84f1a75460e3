"""Parity with the upstream kube-scheduler for pod affinity and topology spreading: the
cluster's own scheduler places a generated workload (200 pods on 50 kwok nodes, with required
and preferred pod affinity and anti-affinity, hard and soft spread constraints, and pods a
Service selects, so the system default spreading applies), one pod at a time; replaying the
same sequence through this runtime's framework must find the same pods unschedulable with the
same messages, and must score every node upstream chose as high as its best node."""

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
from test_core_parity_with_upstream import outcome, read_json, replay_framework, settled

from scheduler_runtime.framework.algorithm import SchedulingAlgorithm
from scheduler_runtime.framework.interface import CycleState
from scheduler_runtime.framework.podinfo import pod_info
from scheduler_runtime.framework.snapshot import Snapshot
from scheduler_runtime.framework.types import FitError

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


@pytest.fixture
def never_preempting(cluster: Cluster, namespace: str) -> Iterator[str]:
    scheduling = kubernetes.client.SchedulingV1Api(cluster.api)
    scheduling.create_priority_class(
        {"metadata": {"name": namespace}, "value": 0, "preemptionPolicy": "Never"}
    )
    yield namespace
    scheduling.delete_priority_class(namespace)


def _replay_snapshot(
    nodes: list[dict[str, Any]], existing: list[dict[str, Any]], service: dict[str, Any]
) -> Snapshot:
    snapshot = Snapshot()
    for node in nodes:
        snapshot.add_node(node)
    for pod in existing:
        if pod["spec"].get("nodeName") and pod["status"].get("phase") not in (
            "Succeeded",
            "Failed",
        ):
            snapshot.add_pod(pod_info(pod))
    snapshot.objects.apply({**service, "kind": "Service"})
    return snapshot


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

    upstream: list[tuple[dict[str, Any], Any]] = []
    for index in range(PODS):
        pod = generated_pod(index, rng, never_preempting)
        core.create_namespaced_pod(namespace, pod)
        name = pod["metadata"]["name"]
        result = wait_for(
            f"upstream to decide on {name}", lambda n=name: outcome(core, namespace, n)
        )
        upstream.append((read_json(core.read_namespaced_pod, name, namespace), result))
        if result[0] is None:
            # A pod that waits for an affinity partner would be placed once one arrives; the
            # replay judges each pod at its own turn, so the pod goes.
            core.delete_namespaced_pod(name, namespace, grace_period_seconds=0)
    time.sleep(1)

    snapshot = _replay_snapshot(nodes, existing, service)
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
        if placement is not None:
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
    assert placed < PODS
