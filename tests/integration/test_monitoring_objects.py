"""The monitoring objects on a cluster that has the Prometheus Operator's CRDs, installed from
upstream's own manifests (tests/data/prometheus-operator-crds): the API server takes every
ServiceMonitor and PrometheusRule the chart and the kustomize component make, with strict field
validation, and keeps every field (a field the schema does not know would be pruned); the
Services select the scheduler pods the operator runs; and the ClusterRole lets a
ServiceAccount read a scheduler's /metrics, as the scheduler's own SubjectAccessReview asks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from chart_support import helm_template, kustomize, metrics_reader_for, named
from cluster import Cluster, wait_for
from scheduler_operator.parsing import parse
from scheduler_operator.render import render

REPO = Path(__file__).resolve().parents[2]
CRDS = REPO / "tests" / "data" / "prometheus-operator-crds"
MONITORING_GROUP = "monitoring.coreos.com/v1"


@pytest.fixture(scope="module")
def prometheus_operator_crds(cluster: Cluster) -> None:
    """The upstream CRDs, Established; left installed (other runs on the cluster may use them)."""
    for crd in sorted(CRDS.glob("*.yaml")):
        cluster.kubectl("apply", "--server-side", "--force-conflicts", "-f", str(crd))
    for crd in sorted(CRDS.glob("*.yaml")):
        name = yaml.safe_load(crd.read_text())["metadata"]["name"]
        cluster.kubectl("wait", "--for=condition=Established", f"crd/{name}", "--timeout=60s")


def monitoring_objects(objects: list[dict[str, Any]], namespace: str) -> list[dict[str, Any]]:
    """The Prometheus Operator's objects among `objects`, moved to the test's namespace."""
    found = [o for o in objects if o["apiVersion"] == MONITORING_GROUP]
    for obj in found:
        obj["metadata"]["namespace"] = namespace
    return found


@pytest.mark.parametrize("source", ["chart", "kustomize"])
def test_the_api_server_takes_every_monitoring_object_and_keeps_every_field(
    cluster: Cluster, prometheus_operator_crds: None, namespace: str, source: str
) -> None:
    rendered = (
        helm_template({"monitoring.enabled": "true"})
        if source == "chart"
        else kustomize("monitoring")
    )
    objects = monitoring_objects(rendered, namespace)
    assert sorted((o["kind"], o["metadata"]["name"]) for o in objects) == [
        ("PrometheusRule", "scheduler-operator"),
        ("ServiceMonitor", "scheduler-operator"),
        ("ServiceMonitor", "schedulers"),
    ]
    cluster.kubectl(
        "apply", "--server-side", "--validate=strict", "--field-manager=test", "-f", "-",
        input=yaml.safe_dump_all(objects),
    )  # fmt: skip
    for obj in objects:
        kind = f"{obj['kind'].lower()}s.monitoring.coreos.com"
        stored = json.loads(
            cluster.kubectl(
                "get", kind, obj["metadata"]["name"], "-n", namespace, "-o", "json"
            ).stdout
        )
        assert stored["spec"] == obj["spec"]


def test_the_schedulers_service_selects_the_pods_the_operator_runs() -> None:
    service = named(kustomize("monitoring"), "Service", "scheduler-metrics")
    deployment = render(parse({"metadata": {"name": "batch"}})).objects[-1]
    assert deployment["kind"] == "Deployment"
    pod = deployment["spec"]["template"]
    assert service["spec"]["selector"].items() <= pod["metadata"]["labels"].items()
    [container] = pod["spec"]["containers"]
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    [port] = service["spec"]["ports"]
    assert ports[port["targetPort"]] == port["port"] == 10259
    # The ServiceMonitor's relabeling reads the pod label naming the SchedulerProfile.
    assert pod["metadata"]["labels"]["app.kubernetes.io/instance"] == "batch"


def test_the_metrics_reader_role_lets_prometheus_read_a_scheduler_s_metrics(
    cluster: Cluster, namespace: str
) -> None:
    # Bound to a ServiceAccount of the test's own, under names of the test's own.
    role, binding = metrics_reader_for(namespace)
    cluster.kubectl("create", "serviceaccount", "prometheus", "-n", namespace)
    user = f"system:serviceaccount:{namespace}:prometheus"

    def allowed() -> bool:
        done = cluster.kubectl("auth", "can-i", "get", "/metrics", "--as", user, check=False)
        return done.stdout.strip() == "yes"

    assert not allowed()
    cluster.kubectl("apply", "-f", "-", input=yaml.safe_dump_all([role, binding]))
    try:
        wait_for(f"{user} to be allowed to get /metrics", allowed, timeout=30)
        done = cluster.kubectl("auth", "can-i", "get", "/explain/x/y", "--as", user, check=False)
        assert done.stdout.strip() == "no"
    finally:
        cluster.kubectl("delete", "-f", "-", input=yaml.safe_dump_all([binding, role]))
