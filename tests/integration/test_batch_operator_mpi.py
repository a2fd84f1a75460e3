"""Kubeflow's MPI operator, built from its release and run with `--gang-scheduling=<scheduler
name>` as its docs run it out of cluster, gangs MPIJobs through the runtime: it makes a
`scheduling.x-k8s.io/v1alpha1` PodGroup per job (minMember: workers + launcher, minResources:
their requests) and gives the launcher's and the workers' pods the scheduler name and the
group's label; the runtime's Coscheduling places each job whole or not at all and keeps the
group's phase. The launcher is a batch Job's pod, which kwok completes as soon as it runs, so
the operator reports a placed job Succeeded (a job whose launcher never ran cannot be)."""

from __future__ import annotations

import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from batch_operator_support import (
    MPI_OPERATOR,
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

# The manager serves its health check on this port of every interface, not configurable.
HEALTH_PORT = 8080
CRD = "manifests/base/kubeflow.org_mpijobs.yaml"


def mpi_job(name: str, workers: int, worker_cpu: str, node_selector: dict[str, str]) -> Any:
    """An MPIJob as the operator's pi example writes one: a launcher and `workers` workers."""

    def template(role: str, cpu: str) -> dict[str, Any]:
        return {
            "spec": {
                "nodeSelector": node_selector,
                "containers": [
                    {
                        "name": f"mpi-{role}",
                        "image": "mpioperator/mpi-pi:openmpi",
                        "resources": {"requests": {"cpu": cpu}},
                    }
                ],
            }
        }

    return {
        "apiVersion": "kubeflow.org/v2beta1",
        "kind": "MPIJob",
        "metadata": {"name": name},
        "spec": {
            "slotsPerWorker": 1,
            "runPolicy": {"cleanPodPolicy": "None"},  # the workers stay to be counted
            "mpiReplicaSpecs": {
                "Launcher": {"replicas": 1, "template": template("launcher", "1")},
                "Worker": {"replicas": workers, "template": template("worker", worker_cpu)},
            },
        },
    }


def port_in_use(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture
def mpi_operator(
    cluster: Cluster,
    namespace: str,
    batch_operator: Callable[..., ReferenceProcess],
) -> Callable[[str], ReferenceProcess]:
    """The MPI operator's manager for the test's namespace, gang scheduling with the given
    scheduler, leading once its CRD is served."""

    def start(scheduler_name: str) -> ReferenceProcess:
        apply_crds(cluster, [MPI_OPERATOR.source() / CRD])
        if port_in_use(HEALTH_PORT):
            pytest.fail(f"port {HEALTH_PORT}, which the MPI operator always binds, is taken")
        manager = batch_operator(
            MPI_OPERATOR,
            [
                f"--kubeConfig={cluster.kubeconfig}",
                f"--namespace={namespace}",
                f"--lock-namespace={namespace}",
                f"--gang-scheduling={scheduler_name}",
            ],
            cluster.kubeconfig,
        )
        wait_for(
            f"the MPI operator to start its workers (log: {manager.log()[-2000:]})",
            lambda: "Started workers" in manager.log() or manager.process.poll() is not None,
            timeout=120,
        )
        assert manager.process.poll() is None, manager.log()[-4000:]
        return manager

    return start


def test_mpi_jobs_are_placed_whole_or_held_whole(
    cluster: Cluster,
    namespace: str,
    pods: Pods,
    schedulable_nodes: Callable[..., list[str]],
    gang_runtime: Callable[[str], RuntimeProcess],
    mpi_operator: Callable[[str], ReferenceProcess],
    tmp_path: Path,
) -> None:
    ours = {"batchops": namespace}
    nodes = schedulable_nodes(
        *(kwok_node(f"mpi-{namespace}-{i}", cpu="4", labels=ours) for i in range(3))
    )
    scheduler = f"mpi-{namespace}"
    runtime = gang_runtime(scheduler)
    mpi_operator(scheduler)

    # Four workers of 2.5 CPUs need four nodes; there are three of 4 CPUs. Its total (11 CPUs)
    # fits the nodes' 12, and each of its pods alone fits a node: only the gang does not.
    create = yaml.safe_dump(mpi_job("big", 4, "2500m", ours))
    cluster.kubectl("create", "-n", namespace, "-f", "-", input=create)
    big = wait_members(cluster, namespace, "big", 5)
    group = read(cluster, "podgroups.scheduling.x-k8s.io", namespace, "big")
    assert group["spec"]["minMember"] == 5
    assert group["spec"]["minResources"]["cpu"] == "11"
    wait_for(
        "every member of the MPIJob that does not fit to be refused",
        lambda: all(refused(pods.events(), name) for name in big),
    )

    create = yaml.safe_dump(mpi_job("small", 2, "1", ours))
    cluster.kubectl("create", "-n", namespace, "-f", "-", input=create)
    small = wait_members(cluster, namespace, "small", 3)
    placed = pods.wait_placed(*small)
    assert set(placed.values()) <= set(nodes)
    events = pods.events()
    instance = f"{scheduler}-{runtime.name}"
    members = group_pods(cluster, namespace, "small")
    for name in small:
        assert scheduled_by(events, name) == [(scheduler, instance)], name
        assert members[name]["spec"]["schedulerName"] == scheduler
    wait_for(
        "the small MPIJob's PodGroup to be Running",
        lambda: pod_group_phase(cluster, namespace, "small") == "Running",
    )
    wait_for(
        "the MPI operator to report the small MPIJob Succeeded",
        lambda: (
            condition_status(read(cluster, "mpijobs.kubeflow.org", namespace, "small"), "Succeeded")
            == "True"
        ),
        timeout=120,
    )

    settle(2)  # the big job had its chances to be placed in that time
    assert {name: pods.nodes()[name] for name in big} == dict.fromkeys(big)
    assert pod_group_phase(cluster, namespace, "big") == "Scheduling"
    big_job = read(cluster, "mpijobs.kubeflow.org", namespace, "big")
    assert condition_status(big_job, "Created") == "True"
    assert condition_status(big_job, "Running") != "True"
    assert condition_status(big_job, "Succeeded") != "True"
