"""Parity with the upstream kube-scheduler: the same configuration under two schedulerNames,
on the same 50 kwok nodes, over 200 generated pods with mixed constraints.

Pods are offered one at a time to both schedulers in the same cluster state: first to the
runtime (its choice is recorded, then the pod is deleted), then to kube-scheduler, whose
placement stays and becomes the state for the next pod. So each decision is compared on an
identical state: the same pods must be unschedulable with the same message, and where the
two pick different nodes, both nodes must score the same (a tie, broken at random by both),
computed with the upstream formulas as the runtime's framework implements them."""

from __future__ import annotations

import random
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import kubernetes
import pytest
import yaml
from cluster import Cluster, kwok_node, wait_for
from runtime_support import (
    CLUSTER_MINOR,
    RuntimeProcess,
    listed_events,
    make_pod,
    scheduler_config,
    unique_scheduler_name,
)

from benchmarks.processes import stop_process
from scheduler_runtime.config import FeatureGates, load_configuration
from scheduler_runtime.framework.algorithm import SchedulingAlgorithm
from scheduler_runtime.framework.interface import CycleState, Handle
from scheduler_runtime.framework.podinfo import pod_info
from scheduler_runtime.framework.runtime import Framework
from scheduler_runtime.framework.snapshot import Snapshot

NODES, PODS = 50, 200
SEED = 20261122
MiB = 1024 * 1024


def generated_nodes(rng: random.Random) -> list[dict[str, Any]]:
    nodes = []
    for i in range(NODES):
        taints = []
        if i % 17 == 3:
            taints.append({"key": "dedicated", "value": "gpu", "effect": "NoSchedule"})
        elif i % 9 == 4:
            taints.append({"key": "spot", "value": "true", "effect": "PreferNoSchedule"})
        images = [("example.com/app:v1", 300 * MiB)] if i % 7 == 0 else []
        images += [("example.com/app:v2", 600 * MiB)] if i % 11 == 0 else []
        nodes.append(
            kwok_node(
                f"par-{i:02d}",
                cpu=rng.choice(["4", "8", "16"]),
                memory=rng.choice(["16Gi", "32Gi", "64Gi"]),
                pods=rng.choice([20, 110]),
                zone=f"zone-{i % 3}",
                labels={"disk": rng.choice(["ssd", "hdd"]), "tier": rng.choice(["a", "b"])},
                taints=taints,
                images=images,
            )
        )
    return nodes


def generated_pod(i: int, rng: random.Random) -> dict[str, Any]:
    """One pod of a mix: resources, selectors, affinity, tolerations, spreading, ports,
    images, and some that cannot fit anywhere."""
    kind = i % 10
    cpu = rng.choice(["100m", "250m", "500m", "1", "2"])
    memory = rng.choice(["64Mi", "256Mi", "1Gi", "2Gi"])
    name = f"p-{i:03d}"
    labels = {"group": f"g{i % 8}"}
    spec: dict[str, Any] = {}
    image = "registry.k8s.io/pause:3.10"
    if kind == 1:
        spec["nodeSelector"] = {"disk": "ssd"}
    elif kind == 2:
        values = rng.choice([["a"], ["b"]])
        spec["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": "tier", "operator": "NotIn", "values": values}
                            ]
                        }
                    ]
                },
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 50,
                        "preference": {
                            "matchExpressions": [
                                {"key": "disk", "operator": "In", "values": ["hdd"]}
                            ]
                        },
                    }
                ],
            }
        }
    elif kind == 3:
        spec["tolerations"] = [{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}]
    elif kind == 4:
        spec["affinity"] = {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "labelSelector": {"matchLabels": labels},
                        "topologyKey": "kubernetes.io/hostname",
                    }
                ]
            }
        }
    elif kind == 5:
        spec["topologySpreadConstraints"] = [
            {
                "maxSkew": 1,
                "topologyKey": "topology.kubernetes.io/zone",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": labels},
            }
        ]
    elif kind == 6:
        image = rng.choice(["example.com/app:v1", "example.com/app:v2"])
        if i % 20 == 6:  # an image volume: scored from 1.36, and in the cap from 1.37
            other = "example.com/app:v2" if image.endswith("v1") else "example.com/app:v1"
            spec["volumes"] = [{"name": "data", "image": {"reference": other}}]
    elif kind == 7:
        spec["affinity"] = {
            "podAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 80,
                        "podAffinityTerm": {
                            "labelSelector": {"matchLabels": labels},
                            "topologyKey": "topology.kubernetes.io/zone",
                        },
                    }
                ]
            }
        }
    elif kind == 8:
        if rng.random() < 0.5:
            cpu = "20"  # more than any node has
        else:
            spec["nodeSelector"] = {"disk": "nvme"}  # no such node
    pod = make_pod(name, "", cpu=cpu, memory=memory, image=image, labels=labels, **spec)
    if kind == 9:
        pod["spec"]["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": 8080}]
    return pod


def renamed(pod: dict[str, Any], name: str) -> dict[str, Any]:
    return {**pod, "metadata": {**pod["metadata"], "name": name}}


@dataclass
class Outcome:
    node: str | None
    message: str | None


class Upstream:
    """The cluster's kube-scheduler binary, run again with the test's configuration."""

    def __init__(self, cluster: Cluster, config: dict[str, Any], workdir: Path) -> None:
        path = workdir / "upstream.yaml"
        path.write_text(
            yaml.safe_dump({**config, "clientConnection": {"kubeconfig": str(cluster.kubeconfig)}})
        )
        self.log_path = workdir / "upstream.log"
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(
                [
                    str(cluster.bin_dir / "kube-scheduler"),
                    "--config",
                    str(path),
                    "--secure-port",
                    "0",
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
            )

    def stop(self) -> None:
        stop_process(self.process)


@pytest.fixture
def upstream_scheduler(
    cluster: Cluster, tmp_path: Path
) -> Iterator[Callable[[dict[str, Any]], Upstream]]:
    started: list[Upstream] = []

    def start(config: dict[str, Any]) -> Upstream:
        started.append(Upstream(cluster, config, tmp_path))
        return started[-1]

    yield start
    for upstream in started:
        upstream.stop()
        print(f"----- kube-scheduler log -----\n{upstream.log_path.read_text()[-4000:]}")


class Offer:
    """Creates a pod for one scheduler and waits for its outcome: a node or a message."""

    def __init__(self, cluster: Cluster, namespace: str) -> None:
        self.core = kubernetes.client.CoreV1Api(cluster.api)
        self.api = cluster.api
        self.namespace = namespace

    def outcome(self, pod: dict[str, Any], scheduler: str) -> Outcome:
        """Offers `pod` to `scheduler`. Each offer has a name of its own: kwok finishes a
        deleted pod by name, and would take a successor of the same name with it."""
        body = {**pod, "spec": {**pod["spec"], "schedulerName": scheduler}}
        created = self.core.create_namespaced_pod(self.namespace, body)
        uid = created.metadata.uid

        def decided() -> Outcome | None:
            current = self.core.read_namespaced_pod(pod["metadata"]["name"], self.namespace)
            if current.spec.node_name:
                return Outcome(current.spec.node_name, None)
            events = listed_events(
                self.api, self.namespace, f"regarding.uid={uid},reason=FailedScheduling"
            )
            return Outcome(None, events[0]["note"]) if events else None

        result: Outcome = wait_for(
            f"{scheduler} to decide on {pod['metadata']['name']}", decided, interval=0.1
        )
        return result

    def delete(self, name: str) -> None:
        self.core.delete_namespaced_pod(name, self.namespace, grace_period_seconds=0)

        def gone() -> bool:
            try:
                self.core.read_namespaced_pod(name, self.namespace)
            except kubernetes.client.ApiException as error:
                return error.status == 404
            return False

        wait_for(f"pod {name} to be deleted", gone, interval=0.1)


def scores_by_node(
    config: dict[str, Any],
    nodes: list[dict[str, Any]],
    placed: list[dict[str, Any]],
    pod: dict[str, Any],
) -> dict[str, tuple[int, dict[str, int]]]:
    """Every feasible node's total score for `pod` with `placed` bound, and each plugin's
    weighted part of it, by the framework."""
    cluster_gates = FeatureGates(version=CLUSTER_MINOR)  # the minor the runtime emulates there
    profile = load_configuration(config, feature_gates=cluster_gates).profiles[0]
    snapshot = Snapshot()
    for node in nodes:
        snapshot.add_node(node)
    for bound in placed:
        snapshot.add_pod(pod_info(bound))
    framework = Framework(profile, Handle(snapshot=snapshot, features=cluster_gates.features))
    algorithm = SchedulingAlgorithm(snapshot, 0, random.Random(0))
    state = CycleState()
    info = pod_info(pod)
    feasible, _ = algorithm.find_nodes_that_fit(framework, state, info)
    totals, by_plugin = algorithm.prioritize(framework, state, info, feasible)
    weights = framework.score_weights
    return {
        snapshot.name(int(slot)): (
            int(totals[position]),
            {name: int(part[position]) * weights.get(name, 1) for name, part in by_plugin.items()},
        )
        for position, slot in enumerate(feasible)
    }


def test_same_decisions_as_upstream_kube_scheduler(
    cluster: Cluster,
    namespace: str,
    schedulable_nodes,
    start_runtime: Callable[..., RuntimeProcess],
    upstream_scheduler: Callable[[dict[str, Any]], Upstream],
) -> None:
    rng = random.Random(SEED)
    nodes = generated_nodes(rng)
    schedulable_nodes(*nodes)
    ours, theirs = unique_scheduler_name(), unique_scheduler_name()
    ours_config = scheduler_config(ours)
    theirs_config = {
        **ours_config,
        "profiles": [{**ours_config["profiles"][0], "schedulerName": theirs}],
    }
    start_runtime(ours_config)
    upstream_scheduler(theirs_config)
    offer = Offer(cluster, namespace)

    placed: list[dict[str, Any]] = []
    differences: list[str] = []
    ties = agreements = unschedulable = 0
    for i in range(PODS):
        pod = generated_pod(i, rng)
        name = pod["metadata"]["name"]
        mine = offer.outcome(renamed(pod, f"{name}-ours"), ours)
        offer.delete(f"{name}-ours")
        reference = offer.outcome(pod, theirs)
        if reference.node is None:
            offer.delete(name)
            unschedulable += 1
            if mine != reference:
                differences.append(
                    f"{name}: upstream refused with {reference.message!r}, we: {mine}"
                )
            continue
        if mine.node == reference.node:
            agreements += 1
        elif mine.node is None:
            differences.append(
                f"{name}: upstream chose {reference.node}, we refused: {mine.message}"
            )
        else:
            with_state = {**pod, "metadata": {**pod["metadata"], "namespace": namespace}}
            scores = scores_by_node(ours_config, nodes, placed, with_state)
            theirs_score, mine_score = scores.get(reference.node), scores.get(mine.node)
            if theirs_score is None or mine_score is None or mine_score[0] != theirs_score[0]:
                differences.append(
                    f"{name}: upstream chose {reference.node} {theirs_score}, "
                    f"we chose {mine.node} {mine_score} (None: infeasible to the framework)"
                )
            ties += 1
        placed.append(
            {
                **pod,
                "metadata": {**pod["metadata"], "namespace": namespace},
                "spec": {**pod["spec"], "schedulerName": theirs, "nodeName": reference.node},
            }
        )
    print(f"parity: {agreements} same node, {ties} equal-score ties, {unschedulable} unschedulable")
    assert differences == []
    assert unschedulable >= PODS // 20  # the workload does exercise failures
