"""Kubeflow's Spark operator, built from its release and run as its chart runs it (its
controller with batch scheduling on and the runtime's scheduler among its
`--kube-scheduler-names`, its webhook making its own certificate and injecting its CA), gangs
SparkApplications through the runtime. For an application whose `spec.batchScheduler` names
that scheduler the controller makes a `scheduling.x-k8s.io/v1alpha1` PodGroup (minMember 1,
minResources: the driver's and every executor's cores and memory) and labels the application
with it; spark-submit (Spark's own, which the controller runs) copies the label to the driver
pod it creates, and the webhook gives the driver the scheduler name. Coscheduling's PreFilter
holds a driver whose group asks for more than the cluster has free and places one whose group
fits. kwok runs no Spark driver, so no executor is ever asked for: the operator reports a
placed application RUNNING (its driver runs) and a held one SUBMITTED."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml
from batch_operator_support import (
    SPARK_OPERATOR,
    apply_crds,
    built,
    free_port,
    group_pods,
    local_webhook_name,
    pod_group_phase,
    read,
    scheduled_by,
    webhooks_served_locally,
)
from cluster import Cluster, kwok_node, wait_for
from coscheduling_support import GROUP, ReferenceProcess
from kubernetes.utils import parse_quantity
from runtime_support import Pods, RuntimeProcess
from timing import settle

EXAMPLE = "examples/spark-pi-kube-scheduler.yaml"
OBJECT_SELECTOR_PATCH = "config/webhook/webhook-objectselector-patch.yaml"
APPLICATIONS = "sparkapplications.sparkoperator.k8s.io"
EXECUTOR_CORES = 4


def spark_pi(
    source: Path, name: str, scheduler: str, executors: int, node_selector: dict[str, str]
) -> Any:
    """The release's SparkPi example for the kube-scheduler batch scheduler, gang-scheduled by
    `scheduler`, with `executors` executors of EXECUTOR_CORES cores."""
    app = yaml.safe_load((source / EXAMPLE).read_text())
    app["metadata"] = {"name": name}
    app["spec"]["batchScheduler"] = scheduler
    app["spec"]["nodeSelector"] = node_selector
    app["spec"]["executor"].update(instances=executors, cores=EXECUTOR_CORES)
    return app


def pod_webhook_selects_launched_pods(source: Path) -> Callable[[list[dict[str, Any]]], None]:
    """The objectSelector the release's kustomization patches into its pod webhook (only the
    pods the operator launched are sent to it)."""
    patch = yaml.safe_load((source / OBJECT_SELECTOR_PATCH).read_text())
    selectors = {w["name"]: w["objectSelector"] for w in patch["webhooks"] if "objectSelector" in w}

    def adjust(configurations: list[dict[str, Any]]) -> None:
        for configuration in configurations:
            for webhook in configuration["webhooks"]:
                if webhook["name"] in selectors:
                    webhook["objectSelector"] = selectors[webhook["name"]]

    return adjust


def ca_injected(cluster: Cluster, kind: str, name: str) -> bool:
    found = read(cluster, kind, "", name)
    return bool(found) and all(w["clientConfig"].get("caBundle") for w in found["webhooks"])


@pytest.fixture
def spark_operator(
    cluster: Cluster,
    namespace: str,
    batch_operator: Callable[..., ReferenceProcess],
    tmp_path: Path,
) -> Iterator[str]:
    """The Spark operator for the test's namespace, batch scheduling with the scheduler it
    yields (spark-NAMESPACE): its webhook ready and its CA injected into the webhook
    configurations, then its controller, with Spark's distribution as SPARK_HOME."""
    scheduler = f"spark-{namespace}"
    source = SPARK_OPERATOR.source()
    apply_crds(cluster, sorted((source / "config/crd/bases").glob("*.yaml")))
    cluster.kubectl("create", "serviceaccount", "spark-operator-spark", "-n", namespace)
    names = {
        kind: local_webhook_name(SPARK_OPERATOR, namespace, f"{kind}-webhook-configuration")
        for kind in ("mutating", "validating")
    }
    port, webhook_health, controller_health = free_port(), free_port(), free_port()
    webhook = batch_operator(
        SPARK_OPERATOR,
        [
            "webhook",
            "start",
            f"--namespaces={namespace}",
            f"--webhook-port={port}",
            f"--webhook-cert-dir={tmp_path / 'spark-webhook-certs'}",
            f"--webhook-secret-namespace={namespace}",
            f"--webhook-svc-namespace={namespace}",
            f"--mutating-webhook-name={names['mutating']}",
            f"--validating-webhook-name={names['validating']}",
            f"--health-probe-bind-address=127.0.0.1:{webhook_health}",
        ],
        cluster.kubeconfig,
        role="webhook",
    )
    webhook.wait_ready(f"http://127.0.0.1:{webhook_health}/readyz")
    with webhooks_served_locally(
        cluster,
        SPARK_OPERATOR,
        source / "config/webhook/manifests.yaml",
        port,
        None,  # the webhook injects the CA it made; its certificate names localhost
        namespace,
        host="localhost",
        adjust=pod_webhook_selects_launched_pods(source),
    ):
        wait_for(
            f"the Spark operator's webhook to inject its CA into {sorted(names.values())}",
            lambda: all(
                ca_injected(cluster, f"{kind}webhookconfiguration", name)
                for kind, name in names.items()
            ),
        )
        server = urlsplit(cluster.api.configuration.host)
        controller = batch_operator(
            SPARK_OPERATOR,
            [
                "controller",
                "start",
                f"--namespaces={namespace}",
                "--enable-batch-scheduler",
                f"--kube-scheduler-names={scheduler}",
                "--enable-ui-service=false",
                f"--health-probe-bind-address=127.0.0.1:{controller_health}",
            ],
            cluster.kubeconfig,
            # spark-submit is given the API server as a pod finds it.
            env={
                "SPARK_HOME": str(built("spark")),
                "KUBERNETES_SERVICE_HOST": str(server.hostname),
                "KUBERNETES_SERVICE_PORT": str(server.port),
            },
            role="controller",
        )
        controller.wait_ready(f"http://127.0.0.1:{controller_health}/readyz")
        yield scheduler


def cluster_cpus(cluster: Cluster) -> int:
    """Every node's allocatable CPUs, whole."""
    nodes = yaml.safe_load(cluster.kubectl("get", "nodes", "-o", "yaml").stdout)["items"]
    return int(sum(parse_quantity(node["status"]["allocatable"]["cpu"]) for node in nodes))


def application_state(cluster: Cluster, namespace: str, name: str) -> str | None:
    found = read(cluster, APPLICATIONS, namespace, name)
    state = found.get("status", {}).get("applicationState", {}).get("state")
    return None if state is None else str(state)


def driver_of(cluster: Cluster, namespace: str, group: str) -> dict[str, Any]:
    """The group's one pod, once spark-submit has created it: the application's driver."""
    found: dict[str, dict[str, Any]] = wait_for(
        f"spark-submit to create the driver of group {group}",
        lambda: pods if len(pods := group_pods(cluster, namespace, group)) == 1 else None,
        timeout=180,
    )
    return next(iter(found.values()))


def test_spark_applications_are_placed_whole_or_held_whole(
    cluster: Cluster,
    namespace: str,
    pods: Pods,
    schedulable_nodes: Callable[..., list[str]],
    gang_runtime: Callable[[str], RuntimeProcess],
    spark_operator: str,
) -> None:
    ours = {"batchops": namespace}
    nodes = schedulable_nodes(
        *(kwok_node(f"spark-{namespace}-{i}", cpu="4", labels=ours) for i in range(3))
    )
    scheduler = spark_operator
    runtime = gang_runtime(scheduler)
    source = SPARK_OPERATOR.source()

    # One executor more than every node of the cluster together has CPUs for: the driver
    # alone fits a node; the group does not fit the cluster.
    executors = cluster_cpus(cluster) // EXECUTOR_CORES + 1
    big = spark_pi(source, "big", scheduler, executors, ours)
    cluster.kubectl("create", "-n", namespace, "-f", "-", input=yaml.safe_dump(big))
    driver = driver_of(cluster, namespace, "big-pg")
    group = read(cluster, f"podgroups.{GROUP}", namespace, "big-pg")
    assert group["spec"]["minMember"] == 1
    assert group["spec"]["minResources"]["cpu"] == str(1 + executors * EXECUTOR_CORES)
    assert driver["spec"]["schedulerName"] == scheduler
    name = driver["metadata"]["name"]
    wait_for(
        "the driver of the application that does not fit to be refused for the group's gap",
        lambda: any(
            e["reason"] == "FailedScheduling"
            and e["regarding"]["name"] == name
            and "resource gap: map[cpu:" in e["note"]
            for e in pods.events()
        ),
    )

    small = spark_pi(source, "small", scheduler, 2, ours)
    cluster.kubectl("create", "-n", namespace, "-f", "-", input=yaml.safe_dump(small))
    placed_driver = driver_of(cluster, namespace, "small-pg")
    placed_name = placed_driver["metadata"]["name"]
    assert placed_driver["spec"]["schedulerName"] == scheduler
    assert read(cluster, f"podgroups.{GROUP}", namespace, "small-pg")["spec"]["minResources"][
        "cpu"
    ] == str(1 + 2 * EXECUTOR_CORES)
    placed = pods.wait_placed(placed_name)
    assert placed[placed_name] in nodes
    assert scheduled_by(pods.events(), placed_name) == [(scheduler, f"{scheduler}-{runtime.name}")]
    wait_for(
        "the small application's PodGroup to be Running",
        lambda: pod_group_phase(cluster, namespace, "small-pg") == "Running",
    )
    wait_for(
        "the Spark operator to report the small application RUNNING",
        lambda: application_state(cluster, namespace, "small") == "RUNNING",
        timeout=120,
    )

    settle(2)  # the big application's driver had its chances to be placed in that time
    assert pods.nodes()[name] is None
    assert pod_group_phase(cluster, namespace, "big-pg") != "Running"
    assert application_state(cluster, namespace, "big") == "SUBMITTED"
