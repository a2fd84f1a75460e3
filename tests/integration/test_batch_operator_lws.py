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
    LWS,
    apply_crds,
    free_port,
    read,
    scheduled_by,
    serving_certificate,
    webhooks_served_locally,
)
from cluster import Cluster, kwok_node, wait_for
from coscheduling_support import ReferenceProcess
from runtime_support import Pods, RuntimeProcess, scheduler_config

BLOCK = "example.com/block"
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
    bundle = serving_certificate(certs)
    webhook_port, health = free_port(), free_port()
    config = tmp_path / "lws.yaml"
    config.write_text(
        yaml.safe_dump(
            {  # the release's Configuration, made local: no election, the test's certificate
                "apiVersion": "config.lws.x-k8s.io/v1alpha1",
                "kind": "Configuration",
                "leaderElection": {"leaderElect": False},
                "internalCertManagement": {"enable": False},
                "webhook": {"port": webhook_port, "host": "127.0.0.1", "certDir": str(certs)},
                "metrics": {"bindAddress": "0"},
                "health": {"healthProbeBindAddress": f"127.0.0.1:{health}"},
            }
        )
    )
    manager = batch_operator(LWS, [f"--config={config}"], cluster.kubeconfig)
    manager.wait_ready(f"http://127.0.0.1:{health}/readyz")
    manifest = source / "config/webhook/manifests.yaml"
    with webhooks_served_locally(cluster, LWS, manifest, webhook_port, bundle, namespace):
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


def condition(obj: dict[str, Any], kind: str) -> str | None:
    found = [c for c in (obj.get("status") or {}).get("conditions") or [] if c["type"] == kind]
    return str(found[0]["status"]) if found else None


def test_each_group_is_placed_alone_in_a_block(
    cluster: Cluster,
    namespace: str,
    pods: Pods,
    schedulable_nodes: Callable[..., list[str]],
    start_runtime: Callable[..., RuntimeProcess],
    lws: ReferenceProcess,
) -> None:
    ours = {"batchops": namespace}
    block_of = {f"lws-{namespace}-{i}": f"b{i // 2}" for i in range(4)}
    schedulable_nodes(
        *(kwok_node(name, cpu="4", labels={**ours, BLOCK: b}) for name, b in block_of.items())
    )
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
    blocks: dict[str, set[str]] = {}
    for name, node in placed.items():
        assert scheduled_by(events, name) == [(scheduler, instance)], name
        spec = members[name]["spec"]  # what LWS asked the scheduler to honour
        if members[name]["metadata"]["labels"][WORKER_INDEX] == "0":  # a leader
            affinity = spec["affinity"]
            assert affinity["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
            assert affinity["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        else:
            assert spec["nodeSelector"][BLOCK] == block_of[node], name
        group = members[name]["metadata"]["labels"][GROUP_KEY]
        blocks.setdefault(group, set()).add(block_of[node])
    assert len(blocks) == 2, blocks
    assert all(len(used) == 1 for used in blocks.values()), blocks  # each group in one block
    assert set.union(*blocks.values()) == {"b0", "b1"}, blocks  # and no block shared

    wait_for(
        "LWS to report the LeaderWorkerSet Available",
        lambda: condition(read(cluster, LWS_RESOURCE, namespace, "serve"), "Available") == "True",
        timeout=120,
    )
