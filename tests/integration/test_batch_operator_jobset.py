"""JobSet, built from its release and run as its docs run the manager (its CRD and webhook
configurations from the release's files; the manager a local process serving its webhooks on
127.0.0.1, as controller-runtime's envtest installs them), with its pods placed by the runtime.
This release makes no PodGroup: a JobSet's pods are plain pods naming the runtime's scheduler.

Exclusive placement (`alpha.jobset.sigs.k8s.io/exclusive-topology`) is JobSet's own placement
contract, and it leans on the scheduler: JobSet's pod webhook gives each child Job's leader
(completion index 0) a required pod affinity to its own Job and a required anti-affinity to
every other Job, across all namespaces, in the topology domain; it refuses a follower until its
leader is bound, then pins it to the leader's domain by nodeSelector. Two child Jobs and two
blocks: the runtime must put each Job's pods in a block of their own."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import yaml
from batch_operator_support import (
    BLOCK,
    blocks_of_groups,
    condition_status,
    read,
    scheduled_by,
    two_blocks,
)
from cluster import Cluster, wait_for
from coscheduling_support import ReferenceProcess
from runtime_support import Pods, RuntimeProcess, scheduler_config

EXCLUSIVE = "alpha.jobset.sigs.k8s.io/exclusive-topology"
JOB_KEY = "jobset.sigs.k8s.io/job-key"


def exclusive_jobset(name: str, scheduler: str, jobs: int, pods: int, ours: Any) -> Any:
    """`jobs` child Jobs of `pods` pods each, each Job alone in a block."""
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": name, "annotations": {EXCLUSIVE: BLOCK}},
        "spec": {
            "replicatedJobs": [
                {
                    "name": "workers",
                    "replicas": jobs,
                    "template": {
                        "spec": {
                            "parallelism": pods,
                            "completions": pods,
                            "backoffLimit": 0,
                            "template": {
                                "spec": {
                                    "schedulerName": scheduler,
                                    "restartPolicy": "Never",
                                    "nodeSelector": ours,
                                    "containers": [
                                        {
                                            "name": "work",
                                            "image": "registry.k8s.io/pause:3.10",
                                            "resources": {"requests": {"cpu": "1"}},
                                        }
                                    ],
                                }
                            },
                        }
                    },
                }
            ]
        },
    }


def test_each_child_job_is_placed_alone_in_a_block(
    cluster: Cluster,
    namespace: str,
    pods: Pods,
    schedulable_nodes: Callable[..., list[str]],
    start_runtime: Callable[..., RuntimeProcess],
    jobset: ReferenceProcess,
) -> None:
    ours = {"batchops": namespace}
    block_of = two_blocks(schedulable_nodes, "jobset", namespace)
    scheduler = f"jobset-{namespace}"
    runtime = start_runtime(scheduler_config(scheduler), name=f"runtime-{scheduler}")
    instance = f"{scheduler}-{runtime.name}"

    # Two Jobs of three pods: each fits one block (two nodes of 4 CPUs), and must be alone there.
    manifest = yaml.safe_dump(exclusive_jobset("train", scheduler, 2, 3, ours))
    cluster.kubectl("create", "-n", namespace, "-f", "-", input=manifest)
    members = wait_for(
        "JobSet's six pods, the followers made once their leader is bound",
        lambda: found if len(found := pods.all()) == 6 else None,
        timeout=120,
    )
    placed = pods.wait_placed(*members)
    events = pods.events()
    for name in placed:
        assert scheduled_by(events, name) == [(scheduler, instance)], name
    blocks = blocks_of_groups(placed, members, JOB_KEY, block_of)
    assert len(blocks) == 2, blocks
    assert all(len(used) == 1 for used in blocks.values()), blocks  # each Job in one block
    assert set.union(*blocks.values()) == {"b0", "b1"}, blocks  # and no block shared

    leaders = [
        pod
        for pod in members.values()
        if pod["metadata"]["annotations"].get("batch.kubernetes.io/job-completion-index") == "0"
    ]
    assert len(leaders) == 2
    for leader in leaders:  # what JobSet asked the scheduler to honour
        affinity = leader["spec"]["affinity"]
        assert affinity["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        assert affinity["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]

    wait_for(
        "JobSet to report the JobSet Completed (kwok completes a Job's pods once they run)",
        lambda: (
            condition_status(
                read(cluster, "jobsets.jobset.x-k8s.io", namespace, "train"), "Completed"
            )
            == "True"
        ),
        timeout=120,
    )
