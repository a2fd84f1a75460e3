"""KubeRay's operator, built from its release and run with `--batch-scheduler=scheduler-plugins`
as its docs run it out of cluster, gangs RayClusters labelled `ray.io/gang-scheduling-enabled`
through the runtime: it makes a `scheduling.x-k8s.io/v1alpha1` PodGroup per cluster (minMember:
the head and the desired workers, minResources: their requests), labels the pods with it and
names the scheduler `scheduler-plugins-scheduler` (hard-coded), which a runtime profile of that
name serves. A cluster that fits is placed whole and reported ready; one that does not is held
whole. (This release creates no upstream Workload or PodGroup objects.)"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import yaml
from batch_operator_support import (
    KUBERAY,
    apply_crds,
    condition_status,
    group_pods,
    pod_group_phase,
    read,
    refused,
    scheduled_by,
    wait_members,
)
from cluster import Cluster, kwok_node, wait_for
from coscheduling_support import ReferenceProcess
from runtime_support import Pods, RuntimeProcess
from timing import settle

from benchmarks.processes import free_port

# The scheduler name KubeRay gives every pod when its batch scheduler is scheduler-plugins.
SCHEDULER = "scheduler-plugins-scheduler"
CRDS = ("ray.io_rayclusters.yaml", "ray.io_rayjobs.yaml", "ray.io_rayservices.yaml")
RAY_IMAGE = "rayproject/ray:2.46.0"


def ray_cluster(name: str, workers: int, worker_cpu: str, node_selector: dict[str, str]) -> Any:
    """A RayCluster as KubeRay's scheduler-plugins sample writes one, gang scheduling on."""

    def template(container: str, cpu: str) -> dict[str, Any]:
        resources = {"cpu": cpu, "memory": "1Gi"}
        return {
            "spec": {
                "nodeSelector": node_selector,
                "containers": [
                    {
                        "name": container,
                        "image": RAY_IMAGE,
                        "resources": {"requests": resources, "limits": resources},
                    }
                ],
            }
        }

    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": name, "labels": {"ray.io/gang-scheduling-enabled": "true"}},
        "spec": {
            "rayVersion": "2.46.0",
            "headGroupSpec": {"rayStartParams": {}, "template": template("ray-head", "1")},
            "workerGroupSpecs": [
                {
                    "groupName": "worker",
                    "rayStartParams": {},
                    "replicas": workers,
                    "minReplicas": workers,
                    "maxReplicas": workers,
                    "template": template("ray-worker", worker_cpu),
                }
            ],
        },
    }


@pytest.fixture
def kuberay(
    cluster: Cluster,
    namespace: str,
    batch_operator: Callable[..., ReferenceProcess],
) -> ReferenceProcess:
    """KubeRay's manager for the test's namespace, scheduler-plugins as its batch scheduler."""
    apply_crds(cluster, [KUBERAY.source() / "config" / "crd" / "bases" / crd for crd in CRDS])
    probes = free_port()
    manager = batch_operator(
        KUBERAY,
        [
            f"--watch-namespace={namespace}",
            "--batch-scheduler=scheduler-plugins",
            "--enable-leader-election=false",
            f"--metrics-addr=127.0.0.1:{free_port()}",
            f"--health-probe-bind-address=127.0.0.1:{probes}",
            "--log-stdout-encoder=console",
        ],
        cluster.kubeconfig,
    )
    manager.wait_ready(f"http://127.0.0.1:{probes}/readyz")
    return manager


def test_ray_clusters_are_placed_whole_or_held_whole(
    cluster: Cluster,
    namespace: str,
    pods: Pods,
    schedulable_nodes: Callable[..., list[str]],
    gang_runtime: Callable[[str], RuntimeProcess],
    kuberay: ReferenceProcess,
) -> None:
    ours = {"batchops": namespace}
    nodes = schedulable_nodes(
        *(kwok_node(f"ray-{namespace}-{i}", cpu="4", labels=ours) for i in range(3))
    )
    runtime = gang_runtime(SCHEDULER)

    # Four workers of 2.5 CPUs need four nodes; there are three of 4 CPUs. Its total (11 CPUs)
    # fits the nodes' 12, and each of its pods alone fits a node: only the gang does not.
    create = yaml.safe_dump(ray_cluster("big", 4, "2500m", ours))
    cluster.kubectl("create", "-n", namespace, "-f", "-", input=create)
    big = wait_members(cluster, namespace, "big", 5)
    group = read(cluster, "podgroups.scheduling.x-k8s.io", namespace, "big")
    assert group["spec"]["minMember"] == 5
    assert group["spec"]["minResources"]["cpu"] == "11"
    wait_for(
        "every member of the RayCluster that does not fit to be refused",
        lambda: all(refused(pods.events(), name) for name in big),
    )

    create = yaml.safe_dump(ray_cluster("small", 2, "1", ours))
    cluster.kubectl("create", "-n", namespace, "-f", "-", input=create)
    small = wait_members(cluster, namespace, "small", 3)
    placed = pods.wait_placed(*small)
    assert set(placed.values()) <= set(nodes)
    events = pods.events()
    instance = f"{SCHEDULER}-{runtime.name}"
    for name in small:
        assert scheduled_by(events, name) == [(SCHEDULER, instance)], name
        assert group_pods(cluster, namespace, "small")[name]["spec"]["schedulerName"] == SCHEDULER
    wait_for(
        "the small RayCluster's PodGroup to be Running",
        lambda: pod_group_phase(cluster, namespace, "small") == "Running",
    )
    wait_for(
        "KubeRay to report the small RayCluster ready",
        lambda: (
            read(cluster, "rayclusters.ray.io", namespace, "small").get("status", {}).get("state")
            == "ready"
        ),
        timeout=120,
    )
    small_cluster = read(cluster, "rayclusters.ray.io", namespace, "small")
    assert condition_status(small_cluster, "RayClusterProvisioned") == "True"
    assert small_cluster["status"]["readyWorkerReplicas"] == 2

    settle(2)  # the big cluster had its chances to be placed in that time
    assert {name: pods.nodes()[name] for name in big} == dict.fromkeys(big)
    assert pod_group_phase(cluster, namespace, "big") == "Scheduling"
    big_cluster = read(cluster, "rayclusters.ray.io", namespace, "big")
    assert big_cluster.get("status", {}).get("state") != "ready"
    assert condition_status(big_cluster, "RayClusterProvisioned") != "True"
