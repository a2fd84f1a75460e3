"""The Helm chart as a platform team installs it, with the real helm, on the cluster with the
real node: a wrong value is refused before anything is written; `helm install` (with the
monitoring objects, on a cluster that has the Prometheus Operator's CRDs) brings the operator
up as a real pod, which runs a scheduler as a real pod and serves its own metrics through the
chart's Service; the scheduler pod is an endpoint of the metrics Service; `helm upgrade` rolls
the operator with the new values; `helm uninstall` removes what the chart made but the CRD and
the namespace holding the release's records. The kustomize install of the other tests is set
aside meanwhile and restored after."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from chart_support import CHART, MANIFESTS, helm
from cluster import REPO, Cluster, wait_for
from operator_support import condition, get_json
from real_node_support import OPERATOR_NAMESPACE, running_on, scheduler_pods

pytestmark = pytest.mark.timeout(900)

RELEASE = "scheduler-operator"
SCHEDULERS = "schedulers"
PROMETHEUS_OPERATOR_CRDS = REPO / "tests" / "data" / "prometheus-operator-crds"


def kustomize_installed(cluster: Cluster) -> bool:
    """The operator's Deployment exists and Helm does not own it."""
    deployment = get_json(cluster, "deployment", RELEASE, "-n", OPERATOR_NAMESPACE)
    owners = ((deployment or {}).get("metadata") or {}).get("annotations") or {}
    return deployment is not None and "meta.helm.sh/release-name" not in owners


@pytest.fixture
def helm_cluster(real_cluster: Cluster) -> Iterator[Cluster]:
    """The cluster without the kustomize install (restored after, if it was there), with the
    Prometheus Operator's CRDs; no release is left behind."""
    restore = kustomize_installed(real_cluster)
    if restore:
        real_cluster.kubectl("delete", "schedulerprofiles", "--all", "--wait=true")
        real_cluster.kubectl("delete", "-k", str(MANIFESTS), "--ignore-not-found", "--wait=true")
    for crd in sorted(PROMETHEUS_OPERATOR_CRDS.glob("*.yaml")):
        real_cluster.kubectl("apply", "--server-side", "--force-conflicts", "-f", str(crd))
    yield real_cluster
    if helm_of(real_cluster, "status", RELEASE, check=False).returncode == 0:
        real_cluster.kubectl("delete", "schedulerprofiles", "--all", "--wait=true")
        helm_of(real_cluster, "uninstall", RELEASE, "--wait", "--timeout=3m", check=False)
    if restore:
        wait_for(
            "the namespaces to be gone",
            lambda: get_json(real_cluster, "namespace", SCHEDULERS) is None,
            timeout=120,
        )
        real_cluster.kubectl("apply", "--server-side", "--force-conflicts", "-k", str(MANIFESTS))
        real_cluster.kubectl(
            "-n", OPERATOR_NAMESPACE, "rollout", "status", f"deployment/{RELEASE}",
            "--timeout=180s",
        )  # fmt: skip


def helm_of(cluster: Cluster, *args: str, check: bool = True) -> Any:
    return helm(*args, "--namespace", OPERATOR_NAMESPACE, kubeconfig=cluster.kubeconfig,
                check=check)  # fmt: skip


def operator_pod(cluster: Cluster) -> dict[str, Any]:
    found = get_json(
        cluster, "pods", "-n", OPERATOR_NAMESPACE, "-l", "app.kubernetes.io/name=scheduler-operator"
    )
    live = [p for p in (found or {}).get("items", []) if not p["metadata"].get("deletionTimestamp")]
    [pod] = live
    return dict(pod)


def operator_metrics(cluster: Cluster) -> str:
    """The operator's /metrics through the API server's proxy to the chart's Service."""
    path = (
        f"/api/v1/namespaces/{OPERATOR_NAMESPACE}/services/{RELEASE}-metrics:metrics/proxy/metrics"
    )
    return str(cluster.kubectl("get", "--raw", path).stdout)


def sample_value(text: str, sample: str) -> float:
    match = re.search(rf"^{re.escape(sample)} (\S+)$", text, re.MULTILINE)
    return float(match[1]) if match else 0.0


def wait_ready(cluster: Cluster, name: str) -> dict[str, Any]:
    def ready() -> dict[str, Any] | None:
        current = get_json(cluster, "schedulerprofile", name)
        found = condition(current, "Ready")
        fresh = found.get("observedGeneration") == (current or {}).get("metadata", {}).get(
            "generation"
        )
        return current if fresh and found.get("status") == "True" else None

    return dict(wait_for(f"SchedulerProfile {name} Ready=True", ready, timeout=240))


def test_helm_install_upgrade_and_uninstall_on_the_real_node(
    helm_cluster: Cluster, real_node: str, tmp_path: Path
) -> None:
    cluster = helm_cluster
    install = ["install", RELEASE, str(CHART), "--create-namespace", "--wait", "--timeout=5m"]

    # A wrong value is refused at install, with its path, and nothing is written.
    refused = helm_of(cluster, *install, "--set", "image.digest=latest", check=False)
    assert refused.returncode != 0
    assert "at '/image/digest': 'latest' does not match pattern" in refused.stderr
    assert get_json(cluster, "deployment", RELEASE, "-n", OPERATOR_NAMESPACE) is None

    helm_of(cluster, *install, "--set", "monitoring.enabled=true")
    status = yaml.safe_load(helm_of(cluster, "status", RELEASE, "-o", "yaml").stdout)
    assert status["info"]["status"] == "deployed"
    assert status["version"] == 1
    namespace = get_json(cluster, "namespace", OPERATOR_NAMESPACE)
    assert namespace is not None
    assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"
    pod = operator_pod(cluster)
    assert running_on(pod, real_node), pod["status"]
    for kind, name in [("servicemonitor", "schedulers"), ("prometheusrule", RELEASE)]:
        assert get_json(cluster, kind, name, "-n", OPERATOR_NAMESPACE) is not None

    # The operator it installed runs a scheduler as a real pod, and counts what it did.
    profile = f"helm-{uuid.uuid4().hex[:4]}"
    body = {
        "apiVersion": "scheduling.schedops.io/v1alpha1",
        "kind": "SchedulerProfile",
        "metadata": {"name": profile},
        "spec": {},
    }
    cluster.kubectl("apply", "-f", "-", input=yaml.safe_dump(body))
    wait_ready(cluster, profile)
    [scheduler] = scheduler_pods(cluster, profile, SCHEDULERS)
    assert running_on(scheduler, real_node), scheduler["status"]
    applied = 'scheduler_operator_reconciles_total{result="applied"}'
    wait_for(
        "the operator's metrics to count the reconciliation",
        lambda: sample_value(operator_metrics(cluster), applied) >= 1,
    )
    # The scheduler pod is an endpoint of the metrics Service, on its secure port.
    slices = get_json(
        cluster, "endpointslices", "-n", SCHEDULERS,
        "-l", "kubernetes.io/service-name=scheduler-metrics",
    )  # fmt: skip
    endpoints = {
        (address, port["port"])
        for item in (slices or {}).get("items", [])
        for endpoint in item.get("endpoints") or []
        for address in endpoint["addresses"]
        for port in item.get("ports") or []
    }
    assert (scheduler["status"]["podIP"], 10259) in endpoints

    # An upgrade rolls the operator with the new values; the scheduler keeps running.
    helm_of(cluster, "upgrade", RELEASE, str(CHART), "--reuse-values", "--wait", "--timeout=5m",
            "--set", "resources.requests.cpu=60m")  # fmt: skip
    status = yaml.safe_load(helm_of(cluster, "status", RELEASE, "-o", "yaml").stdout)
    assert status["version"] == 2
    pod = operator_pod(cluster)
    assert running_on(pod, real_node), pod["status"]
    assert pod["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "60m"
    assert "--metrics-bind-address=:8081" in pod["spec"]["containers"][0]["command"]
    wait_ready(cluster, profile)

    # Uninstall: SchedulerProfiles first (docs/install.md), then the release.
    cluster.kubectl("delete", "schedulerprofile", profile, "--wait=true")
    done = helm_of(cluster, "uninstall", RELEASE, "--wait", "--timeout=3m")
    assert "[Namespace] scheduler-operator" in done.stdout  # kept, as said
    assert helm_of(cluster, "status", RELEASE, check=False).returncode != 0
    for args in (
        ("deployment", RELEASE, "-n", OPERATOR_NAMESPACE),
        ("clusterrole", RELEASE),
        ("clusterrolebinding", RELEASE),
        ("validatingadmissionpolicy", "scheduler-operator-guard"),
        ("servicemonitor", "schedulers", "-n", OPERATOR_NAMESPACE),
        ("namespace", SCHEDULERS),
    ):
        wait_for(f"{args} to be gone", lambda a=args: get_json(cluster, *a) is None, timeout=120)
    # Helm never deletes a CRD of its crds/ directory (that would delete every SchedulerProfile).
    assert get_json(cluster, "crd", "schedulerprofiles.scheduling.schedops.io") is not None
