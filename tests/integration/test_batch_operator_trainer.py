"""Kubeflow Trainer (v2), built from its release and run as its docs run the controller manager
(its CRDs and webhook configurations from the release's files; the manager a local process
serving its webhooks on 127.0.0.1, as controller-runtime's envtest installs them), next to
JobSet's manager, which runs what Trainer makes. A TrainingRuntime with
`podGroupPolicy.coscheduling` makes Trainer create a `scheduling.x-k8s.io/v1alpha1` PodGroup per
TrainJob (minMember: every node's pod; minResources: their requests) and label the pods with it;
the runtime's pod template names the runtime's scheduler, whose Coscheduling places each
TrainJob whole or not at all. kwok completes a Job's pods once they run, so a TrainJob that was
placed ends Complete."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from batch_operator_support import (
    TRAINER,
    apply_crds,
    condition_status,
    group_pods,
    local_configuration,
    local_manager,
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

TRAINER_GROUP = "trainer.kubeflow.org"


@pytest.fixture
def trainer(
    cluster: Cluster,
    namespace: str,
    batch_operator: Callable[..., ReferenceProcess],
    jobset: ReferenceProcess,
    tmp_path: Path,
) -> Iterator[ReferenceProcess]:
    """Trainer's controller manager, its webhooks answering for the test's namespace. Its
    webhook server reads its certificate from controller-runtime's default directory, under
    $TMPDIR."""
    source = TRAINER.source()
    apply_crds(cluster, sorted((source / "manifests/base/crds").glob("trainer.*.yaml")))
    temporary = tmp_path / "trainer-tmp"
    with local_manager(
        cluster,
        batch_operator,
        TRAINER,
        namespace,
        tmp_path,
        certs=temporary / "k8s-webhook-server/serving-certs",
        configuration=lambda webhook_port, health: local_configuration(
            "config.trainer.kubeflow.org/v1alpha1",
            webhook_port,
            health,
            certManagement={"enable": False},
        ),
        webhooks=source / "manifests/base/webhook/manifests.yaml",
        env={"TMPDIR": str(temporary)},
    ) as manager:
        yield manager
        cluster.kubectl("delete", f"trainjobs.{TRAINER_GROUP}", "--all", "-n", namespace)


def training_runtime(scheduler: str, ours: dict[str, str]) -> dict[str, Any]:
    """A TrainingRuntime whose TrainJobs are gangs (Coscheduling) of pods named for the
    runtime's scheduler: one replicated Job, the trainer, as Trainer's own runtimes write it."""
    return {
        "apiVersion": f"{TRAINER_GROUP}/v1alpha1",
        "kind": "TrainingRuntime",
        "metadata": {"name": "gang"},
        "spec": {
            "mlPolicy": {"numNodes": 1},
            "podGroupPolicy": {"coscheduling": {"scheduleTimeoutSeconds": 60}},
            "template": {
                "spec": {
                    "replicatedJobs": [
                        {
                            "name": "node",
                            "template": {
                                "metadata": {
                                    "labels": {f"{TRAINER_GROUP}/trainjob-ancestor-step": "trainer"}
                                },
                                "spec": {
                                    "template": {
                                        "spec": {
                                            "schedulerName": scheduler,
                                            "nodeSelector": ours,
                                            "containers": [
                                                {
                                                    "name": "node",
                                                    "image": "registry.k8s.io/pause:3.10",
                                                }
                                            ],
                                        }
                                    }
                                },
                            },
                        }
                    ]
                }
            },
        },
    }


def train_job(name: str, nodes: int, cpu: str) -> dict[str, Any]:
    return {
        "apiVersion": f"{TRAINER_GROUP}/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": name},
        "spec": {
            "runtimeRef": {"name": "gang", "kind": "TrainingRuntime"},
            "trainer": {"numNodes": nodes, "resourcesPerNode": {"requests": {"cpu": cpu}}},
        },
    }


def test_train_jobs_are_placed_whole_or_held_whole(
    cluster: Cluster,
    namespace: str,
    pods: Pods,
    schedulable_nodes: Callable[..., list[str]],
    gang_runtime: Callable[[str], RuntimeProcess],
    trainer: ReferenceProcess,
) -> None:
    ours = {"batchops": namespace}
    nodes = schedulable_nodes(
        *(kwok_node(f"trainer-{namespace}-{i}", cpu="4", labels=ours) for i in range(3))
    )
    scheduler = f"trainer-{namespace}"
    runtime = gang_runtime(scheduler)
    create = yaml.safe_dump(training_runtime(scheduler, ours))
    cluster.kubectl("create", "-n", namespace, "-f", "-", input=create)

    # Four nodes' pods of 2.5 CPUs need four nodes; there are three of 4 CPUs. Its total (10
    # CPUs) fits the nodes' 12, and each pod alone fits a node: only the gang does not.
    create = yaml.safe_dump(train_job("big", 4, "2500m"))
    cluster.kubectl("create", "-n", namespace, "-f", "-", input=create)
    big = wait_members(cluster, namespace, "big", 4)
    group = read(cluster, "podgroups.scheduling.x-k8s.io", namespace, "big")
    assert group["spec"]["minMember"] == 4
    assert group["spec"]["minResources"]["cpu"] == "10"
    wait_for(
        "every pod of the TrainJob that does not fit to be refused",
        lambda: all(refused(pods.events(), name) for name in big),
    )

    create = yaml.safe_dump(train_job("small", 2, "1"))
    cluster.kubectl("create", "-n", namespace, "-f", "-", input=create)
    small = wait_members(cluster, namespace, "small", 2)
    placed = pods.wait_placed(*small)
    assert set(placed.values()) <= set(nodes)
    events = pods.events()
    instance = f"{scheduler}-{runtime.name}"
    members = group_pods(cluster, namespace, "small")
    for name in small:
        assert scheduled_by(events, name) == [(scheduler, instance)], name
        assert members[name]["spec"]["schedulerName"] == scheduler
    wait_for(
        "Trainer to report the small TrainJob Complete",
        lambda: (
            condition_status(
                read(cluster, f"trainjobs.{TRAINER_GROUP}", namespace, "small"), "Complete"
            )
            == "True"
        ),
        timeout=120,
    )

    settle(2)  # the big job had its chances to be placed in that time
    assert {name: pods.nodes()[name] for name in big} == dict.fromkeys(big)
    assert pod_group_phase(cluster, namespace, "big") in ("Pending", "Scheduling")
    big_job = read(cluster, f"trainjobs.{TRAINER_GROUP}", namespace, "big")
    assert condition_status(big_job, "Complete") != "True"
