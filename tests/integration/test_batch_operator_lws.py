"""LeaderWorkerSet, built from its release and run as its docs run the manager (its CRD and
webhook configurations from the release's files; the manager a local process serving its
webhooks on 127.0.0.1, as controller-runtime's envtest installs them), with its pods placed by
the runtime. This release makes PodGroups for Volcano only: with the runtime its pods are plain
pods naming the runtime's scheduler.

Exclusive placement (`leaderworkerset.sigs.k8s.io/exclusive-topology`) leans on the scheduler:
LWS's pod webhook gives each group's leader a required pod affinity to its own group and a
required anti-affinity to every other group, in the topology domain; LWS makes the group's
workers (a StatefulSet) once the leader is bound, pinned to its domain by nodeSelector. Two
groups of three and two blocks: the runtime must put each group in a block of its own."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from batch_operator_support import (
    BLOCK,
    LWS,
    apply_crds,
    blocks_of_groups,
    condition_status,
    local_configuration,
    local_manager,
    read,
    scheduled_by,
    two_blocks,
)
from cluster import Cluster, wait_for
from coscheduling_support import ReferenceProcess
from runtime_support import Pods, RuntimeProcess, scheduler_config

EXCLUSIVE = "leaderworkerset.sigs.k8s.io/exclusive-topology"
GROUP_KEY = "leaderworkerset.sigs.k8s.io/group-key"
WORKER_INDEX = "leaderworkerset.sigs.k8s.io/worker-index"
LWS_RESOURCE = "leaderworkersets.leaderworkerset.x-k8s.io"


@pytest.fixture
def lws(
    cluster: Cluster,
    namespace: str,
    batch_operator: Callable[..., ReferenceProcess],
    tmp_path: Path,
) -> Iterator[ReferenceProcess]:
    """LeaderWorkerSet's manager, its webhooks answering for the test's namespace."""
    source = LWS.source()
    apply_crds(cluster, sorted((source / "config/crd/bases").glob("*.yaml")))
    certs = tmp_path / "certs"
    with local_manager(
        cluster,
        batch_operator,
        LWS,
        namespace,
        tmp_path,
        certs=certs,
        configuration=lambda webhook_port, health: local_configuration(
            "config.lws.x-k8s.io/v1alpha1",
            webhook_port,
            health,
            certs,
            internalCertManagement={"enable": False},
        ),
        webhooks=source / "config/webhook/manifests.yaml",
    ) as manager:
        yield manager
        cluster.kubectl("delete", LWS_RESOURCE, "--all", "-n", namespace)


def exclusive_lws(name: str, scheduler: str, groups: int, size: int, ours: Any) -> Any:
    """`groups` groups of a leader and `size - 1` workers, each group alone in a block."""
    pod_spec = {
        "schedulerName": scheduler,
        "nodeSelector": ours,
        "containers": [
            {
                "name": "serve",
                "image": "registry.k8s.io/pause:3.10",
                "resources": {"requests": {"cpu": "1"}},
            }
        ],
    }
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": name, "annotations": {EXCLUSIVE: BLOCK}},
        "spec": {
            "replicas": groups,
            "leaderWorkerTemplate": {"size": size, "workerTemplate": {"spec": pod_spec}},
        },
    }


def test_each_group_is_placed_alone_in_a_block(
    cluster: Cluster,
    namespace: str,
    pods: Pods,
    schedulable_nodes: Callable[..., list[str]],
    start_runtime: Callable[..., RuntimeProcess],
    lws: ReferenceProcess,
) -> None:
    ours = {"batchops": namespace}
    block_of = two_blocks(schedulable_nodes, "lws", namespace)
    scheduler = f"lws-{namespace}"
    runtime = start_runtime(scheduler_config(scheduler), name=f"runtime-{scheduler}")
    instance = f"{scheduler}-{runtime.name}"

    manifest = yaml.safe_dump(exclusive_lws("serve", scheduler, 2, 3, ours))
    cluster.kubectl("create", "-n", namespace, "-f", "-", input=manifest)
    members = wait_for(
        "the two groups' six pods",
        lambda: found if len(found := pods.all()) == 6 else None,
        timeout=120,
    )
    placed = pods.wait_placed(*members)
    events = pods.events()
    for name, node in placed.items():
        assert scheduled_by(events, name) == [(scheduler, instance)], name
        spec = members[name]["spec"]  # what LWS asked the scheduler to honour
        if members[name]["metadata"]["labels"][WORKER_INDEX] == "0":  # a leader
            affinity = spec["affinity"]
            assert affinity["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
            assert affinity["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        else:
            assert spec["nodeSelector"][BLOCK] == block_of[node], name
    blocks = blocks_of_groups(placed, members, GROUP_KEY, block_of)
    assert len(blocks) == 2, blocks
    assert all(len(used) == 1 for used in blocks.values()), blocks  # each group in one block
    assert set.union(*blocks.values()) == {"b0", "b1"}, blocks  # and no block shared

    wait_for(
        "LWS to report the LeaderWorkerSet Available",
        lambda: (
            condition_status(read(cluster, LWS_RESOURCE, namespace, "serve"), "Available") == "True"
        ),
        timeout=120,
    )
