"""Kueue, built from its release and run as its docs run the manager (its CRDs and webhook
configurations from the release's files; the manager a local process serving its webhooks on
127.0.0.1 with a certificate the API server is told to trust, as controller-runtime's envtest
installs them), admits workloads that the runtime then places:

- a Job in a LocalQueue whose ClusterQueue's flavor has a Topology (topology-aware
  scheduling) and that asks for one block: Kueue suspends it at creation (its Job webhook),
  admits it to one block, resumes it with the topology gate (`kueue.x-k8s.io/topology`) on its
  pods and lifts the gate pod by pod with each pod's node in its nodeSelector; the runtime
  binds each pod to that node;
- a Job that no block can hold: Kueue keeps it suspended, so none of its pods exists;
- a plain pod in the queue: Kueue's pod webhook gates it (`kueue.x-k8s.io/admission`) and the
  runtime places it once Kueue has admitted it and lifted the gate."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import yaml
from batch_operator_support import (
    BLOCK,
    KUEUE,
    apply_crds,
    condition,
    local_configuration,
    local_manager,
    read,
    scheduled_by,
    two_blocks,
)
from cluster import Cluster, wait_for
from coscheduling_support import ReferenceProcess
from runtime_support import Pods, RuntimeProcess, make_pod, scheduler_config
from timing import settle

HOSTNAME = "kubernetes.io/hostname"
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
ADMISSION_GATE = "kueue.x-k8s.io/admission"
TOPOLOGY_GATE = "kueue.x-k8s.io/topology"
GROUP = "kueue.x-k8s.io"
API = f"{GROUP}/v1beta2"


def manager_configuration(namespace: str, certs: Path, webhook_port: int, health: int) -> Any:
    """The release's default Configuration, made local: no leader election, no internal
    certificates (the test gives the webhook server its own), jobs and pods managed in the
    test's namespace only."""
    return local_configuration(
        "config.kueue.x-k8s.io/v1beta2",
        webhook_port,
        health,
        certs,
        namespace="kueue-system",  # its own, which it may not manage
        internalCertManagement={"enable": False},
        managedJobsNamespaceSelector={"matchLabels": {"kubernetes.io/metadata.name": namespace}},
        integrations={"frameworks": ["batch/job", "pod"]},
    )


@pytest.fixture
def kueue(
    cluster: Cluster,
    namespace: str,
    batch_operator: Callable[..., ReferenceProcess],
    tmp_path: Path,
) -> Iterator[ReferenceProcess]:
    """Kueue's manager for the test's namespace, its webhooks answering."""
    source = KUEUE.source()
    apply_crds(cluster, sorted((source / "config/components/crd/bases").glob("*.yaml")))
    certs = tmp_path / "certs"
    with local_manager(
        cluster,
        batch_operator,
        KUEUE,
        namespace,
        tmp_path,
        certs=certs,
        configuration=partial(manager_configuration, namespace, certs),
        webhooks=source / "config/components/webhook/manifests.yaml",
        args=["--feature-gates=VisibilityOnDemand=false", "--zap-log-level=2"],
        # Without its internal certificates the release reads the metrics server's there.
        etc={"/etc/kueue/metrics/certs": certs},
    ) as manager:
        yield manager
        # Kueue's finalizers on what it manages are lifted by Kueue alone: delete all of it
        # while the manager and its webhooks serve.
        for kind in ("jobs.batch", "pods", f"workloads.{GROUP}", f"localqueues.{GROUP}"):
            cluster.kubectl("delete", kind, "--all", "-n", namespace, "--timeout=60s", check=False)
        for kind in ("clusterqueues", "resourceflavors", "topologies"):
            cluster.kubectl(
                "delete",
                f"{kind}.{GROUP}",
                namespace,
                "--ignore-not-found",
                "--timeout=60s",
                check=False,
            )


def queues(namespace: str) -> list[dict[str, Any]]:
    """Two blocks of two nodes each (the Topology's levels: block, then the node); a flavor on
    the test's nodes with that Topology; a ClusterQueue with quota for more than the nodes hold
    (so topology alone decides); the test's LocalQueue."""
    ours = {"batchops": namespace}
    return [
        {
            "apiVersion": API,
            "kind": "Topology",
            "metadata": {"name": namespace},
            "spec": {"levels": [{"nodeLabel": BLOCK}, {"nodeLabel": HOSTNAME}]},
        },
        {
            "apiVersion": API,
            "kind": "ResourceFlavor",
            "metadata": {"name": namespace},
            "spec": {"nodeLabels": ours, "topologyName": namespace},
        },
        {
            "apiVersion": API,
            "kind": "ClusterQueue",
            "metadata": {"name": namespace},
            "spec": {
                "namespaceSelector": {},
                "resourceGroups": [
                    {
                        "coveredResources": ["cpu", "memory"],
                        "flavors": [
                            {
                                "name": namespace,
                                "resources": [
                                    {"name": "cpu", "nominalQuota": "100"},
                                    {"name": "memory", "nominalQuota": "1Ti"},
                                ],
                            }
                        ],
                    }
                ],
            },
        },
        {
            "apiVersion": API,
            "kind": "LocalQueue",
            "metadata": {"name": "queue", "namespace": namespace},
            "spec": {"clusterQueue": namespace},
        },
    ]


def job(name: str, scheduler: str, pods: int, cpu: str) -> dict[str, Any]:
    """A Job in the test's LocalQueue whose pods must all be in one block."""
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "labels": {QUEUE_LABEL: "queue"}},
        "spec": {
            "parallelism": pods,
            "completions": pods,
            "template": {
                "metadata": {"annotations": {"kueue.x-k8s.io/podset-required-topology": BLOCK}},
                "spec": {
                    "schedulerName": scheduler,
                    "restartPolicy": "Never",
                    "containers": [
                        {
                            "name": "work",
                            "image": "registry.k8s.io/pause:3.10",
                            "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}},
                        }
                    ],
                },
            },
        },
    }


def workload_of(cluster: Cluster, namespace: str, job_name: str) -> dict[str, Any]:
    """The Workload Kueue made for the Job ({} until it exists)."""
    shown = cluster.kubectl("get", f"workloads.{GROUP}", "-n", namespace, "-o", "json")
    for item in json.loads(shown.stdout)["items"]:
        if any(o.get("name") == job_name for o in item["metadata"].get("ownerReferences") or []):
            found: dict[str, Any] = item
            return found
    return {}


def job_pods(pods: Pods, job_name: str) -> dict[str, dict[str, Any]]:
    return {
        name: pod
        for name, pod in pods.all().items()
        if (pod["metadata"].get("labels") or {}).get("job-name") == job_name
    }


def test_kueue_admits_and_the_runtime_places_what_it_admitted(
    cluster: Cluster,
    namespace: str,
    pods: Pods,
    schedulable_nodes: Callable[..., list[str]],
    start_runtime: Callable[..., RuntimeProcess],
    kueue: ReferenceProcess,
) -> None:
    block_of = two_blocks(schedulable_nodes, "kueue", namespace, memory="16Gi")
    scheduler = f"kueue-{namespace}"
    runtime = start_runtime(scheduler_config(scheduler), name=f"runtime-{scheduler}")
    instance = f"{scheduler}-{runtime.name}"
    cluster.kubectl("apply", "-f", "-", input=yaml.safe_dump_all(queues(namespace)))

    # Three pods of 2 CPUs fit one block (8 CPUs), not one node.
    cluster.kubectl(
        "create", "-n", namespace, "-f", "-", input=yaml.safe_dump(job("fits", scheduler, 3, "2"))
    )
    members = wait_for(
        "the admitted Job's three pods",
        lambda: found if len(found := job_pods(pods, "fits")) == 3 else None,
        timeout=120,
    )
    placed = pods.wait_placed(*members)
    events = pods.events()
    for name, node in placed.items():
        assert scheduled_by(events, name) == [(scheduler, instance)], name
        # Kueue's topology ungater chose the node (the Topology's last level); the runtime
        # bound the pod there.
        selector = pods.all()[name]["spec"].get("nodeSelector") or {}
        assert selector == {"batchops": namespace, HOSTNAME: node}, (name, selector)
    assert len({block_of[node] for node in placed.values()}) == 1, placed
    admitted = workload_of(cluster, namespace, "fits")
    assert condition(admitted, "Admitted").get("status") == "True", admitted
    assignment = admitted["status"]["admission"]["podSetAssignments"][0]
    assert assignment.get("topologyAssignment"), assignment

    # Three pods of 3 CPUs: 9 CPUs, more than any block has. Kueue keeps the Job suspended.
    cluster.kubectl(
        "create",
        "-n",
        namespace,
        "-f",
        "-",
        input=yaml.safe_dump(job("no-block", scheduler, 3, "3")),
    )
    refused = wait_for(
        "Kueue to say the Job that fits no block does not fit",
        lambda: (
            w
            if (w := workload_of(cluster, namespace, "no-block"))
            and condition(w, "QuotaReserved").get("status") == "False"
            and condition(w, "QuotaReserved").get("message")
            else None
        ),
        timeout=60,
    )
    settle(3)
    assert job_pods(pods, "no-block") == {}
    assert read(cluster, "jobs.batch", namespace, "no-block")["spec"]["suspend"] is True
    assert condition(refused, "Admitted").get("status") != "True", refused
    print("Kueue on the Job no block holds:", condition(refused, "QuotaReserved")["message"])

    # A plain pod in the queue: gated at creation by Kueue's pod webhook, placed once admitted.
    single = make_pod("single", scheduler, cpu="1", memory="1Gi", labels={QUEUE_LABEL: "queue"})
    created = json.loads(
        cluster.kubectl(
            "create", "-n", namespace, "-f", "-", "-o", "json", input=yaml.safe_dump(single)
        ).stdout
    )
    gates = {g["name"] for g in created["spec"].get("schedulingGates") or []}
    assert ADMISSION_GATE in gates, created["spec"]
    node = pods.wait_placed("single")["single"]
    assert node in block_of
    assert scheduled_by(pods.events(), "single") == [(scheduler, instance)]
    assert not pods.all()["single"]["spec"].get("schedulingGates")
    assert TOPOLOGY_GATE not in json.dumps(pods.all()["single"]["spec"])
