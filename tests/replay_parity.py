"""Replay parity with the upstream kube-scheduler: the cluster's own scheduler places a workload
one pod at a time; replaying the same sequence through this runtime's framework must find the
same pods unschedulable with the same messages, and must score every node upstream chose as
high as its best node (ties are broken at random on both sides)."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import kubernetes
import numpy as np
import pytest
from cluster import Cluster, wait_for

from benchmarks.tools import kubernetes_minor
from scheduler_runtime.config import FeatureGates, load_configuration
from scheduler_runtime.framework.algorithm import SchedulingAlgorithm
from scheduler_runtime.framework.interface import CycleState, Handle
from scheduler_runtime.framework.podinfo import pod_info
from scheduler_runtime.framework.runtime import Framework
from scheduler_runtime.framework.snapshot import Snapshot
from scheduler_runtime.framework.types import FitError

# Volume plugins have nothing to do without volumes; every other default plugin runs.
WITHOUT_VOLUMES = ("VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone")
Decision = tuple[str | None, str | None]  # (node, None) or (None, FailedScheduling message)
Decisions = list[tuple[dict[str, Any], Decision]]


def read_json(call: Callable[..., Any], *args: Any) -> Any:
    return json.loads(call(*args, _preload_content=False).data)


def outcome(core: kubernetes.client.CoreV1Api, namespace: str, name: str) -> Decision | None:
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


@pytest.fixture
def never_preempting(cluster: Cluster, namespace: str) -> Iterator[str]:
    """A PriorityClass that never preempts, so each step keeps the state upstream left."""
    scheduling = kubernetes.client.SchedulingV1Api(cluster.api)
    scheduling.create_priority_class(
        {"metadata": {"name": namespace}, "value": 0, "preemptionPolicy": "Never"}
    )
    yield namespace
    scheduling.delete_priority_class(namespace)


def upstream_decisions(
    core: kubernetes.client.CoreV1Api,
    namespace: str,
    pods: Iterable[dict[str, Any]],
    *,
    drop_unschedulable: bool = False,
) -> Decisions:
    """Creates each pod and waits for upstream's decision before the next one.

    With drop_unschedulable, a refused pod is deleted at once: a pod waiting for an affinity
    partner would otherwise be placed later, while the replay judges each pod at its turn."""
    decisions: Decisions = []
    for pod in pods:
        core.create_namespaced_pod(namespace, pod)
        name = pod["metadata"]["name"]
        decision: Decision = wait_for(
            f"upstream to decide on {name}", lambda n=name: outcome(core, namespace, n)
        )
        decisions.append((read_json(core.read_namespaced_pod, name, namespace), decision))
        if drop_unschedulable and decision[0] is None:
            core.delete_namespaced_pod(name, namespace, grace_period_seconds=0)
    time.sleep(1)  # nothing may move afterwards: pending pods stay pending
    if not drop_unschedulable:
        for pod, (node, _) in decisions:
            if node is None:
                still = outcome(core, namespace, pod["metadata"]["name"])
                assert still is not None
                assert still[0] is None, f"{pod['metadata']['name']} was placed late"
    return decisions


def replay_snapshot(
    nodes: list[dict[str, Any]],
    existing: list[dict[str, Any]],
    objects: Iterable[dict[str, Any]] = (),
) -> Snapshot:
    """The state upstream started from: the nodes, the pods already running, extra objects."""
    snapshot = Snapshot()
    for node in nodes:
        snapshot.add_node(node)
    for pod in existing:
        finished = pod["status"].get("phase") in ("Succeeded", "Failed")
        if pod["spec"].get("nodeName") and not finished:
            snapshot.add_pod(pod_info(pod))
    for obj in objects:
        snapshot.objects.apply(obj)
    return snapshot


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
        },
        feature_gates=FeatureGates(version=kubernetes_minor()),  # the control plane's minor
    )
    return Framework(config.profiles[0], Handle(snapshot, features=config.features))


def replay(snapshot: Snapshot, decisions: Decisions) -> tuple[list[str], int]:
    """Replays upstream's sequence through the framework; returns the disagreements and how
    many pods upstream placed."""
    framework = replay_framework(snapshot)
    algorithm = SchedulingAlgorithm(snapshot, 0, random.Random(1))
    failures: list[str] = []
    placed = 0
    for pod, (node, message) in decisions:
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
        failures.extend(score_disagreement(snapshot, algorithm, info.name, node))
        snapshot.add_pod(info.with_node(node))
        placed += 1
    return failures, placed


def score_disagreement(
    snapshot: Snapshot, algorithm: SchedulingAlgorithm, pod: str, node: str
) -> list[str]:
    """Where more than one node fits, upstream's choice must score as high as the best."""
    placement = algorithm.last_placement
    if placement is None:
        return []
    names = snapshot.names(placement.slots)
    if node not in names:
        return [f"{pod}: upstream chose {node}, replay found it infeasible"]
    chosen, best = names.index(node), int(np.argmax(placement.totals))
    if placement.totals[chosen] == placement.totals[best]:
        return []
    parts = {
        plugin: (int(scores[chosen]), int(scores[best]))
        for plugin, scores in placement.by_plugin.items()
    }
    return [
        f"{pod}: upstream chose {node} scoring {placement.totals[chosen]}, "
        f"replay's best is {names[best]} scoring {placement.totals[best]}; "
        f"per plugin (upstream's, replay's): {parts}"
    ]


def assert_parity(
    failures: list[str],
    placed: int,
    total: int,
    record: Path,
    run: dict[str, Any],
) -> None:
    """No disagreement, and a workload that both places and refuses pods."""
    record.write_text(json.dumps(run))
    assert not failures, "\n".join([f"upstream's run is in {record}", *failures])
    assert placed > total // 2
    assert placed < total
