"""The Helm chart against the kustomize tree it must equal, with the real `helm` and `kubectl
kustomize`: default values render exactly manifests/, each option exactly its component (or the
samples), values reach the objects they name, and values.schema.json refuses wrong values with
the field's path. Installing, upgrading and uninstalling it on a real node:
tests/e2e/test_helm_install.py."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml
from chart_support import (
    CHART,
    differences,
    helm,
    helm_template,
    kustomize,
    named,
    of_kind,
    samples,
)

DIGEST = "sha256:" + "ab" * 32
EVERYTHING = {"monitoring.enabled": "true", "admissionPolicy.enabled": "true"}


@pytest.mark.parametrize(
    "values",
    [{}, {**EVERYTHING, "samples.enabled": "true", "podGroupCRD.enabled": "true"}],
    ids=["defaults", "everything"],
)
def test_helm_lint_passes(values: dict[str, str]) -> None:
    flags = [f for name, value in values.items() for f in ("--set", f"{name}={value}")]
    done = helm("lint", "--strict", str(CHART), *flags)
    assert "1 chart(s) linted, 0 chart(s) failed" in done.stdout


def test_default_values_render_exactly_what_kustomize_renders() -> None:
    differ = differences(kustomize(), helm_template())
    assert not differ, "\n".join(differ)


def test_installed_into_its_own_namespace_it_keeps_that_one_at_uninstall() -> None:
    """`helm install -n scheduler-operator`, as docs/install.md says: the namespace holding
    the release's records is kept by `helm uninstall`, which would otherwise delete them
    with it before it could remove them itself."""
    objects = helm_template({}, "--namespace", "scheduler-operator")
    kept = named(objects, "Namespace", "scheduler-operator")["metadata"]["annotations"]
    assert kept.pop("helm.sh/resource-policy") == "keep"
    assert (
        "helm.sh/resource-policy"
        not in named(objects, "Namespace", "schedulers")["metadata"]["annotations"]
    )
    differ = differences(kustomize(), objects)
    assert not differ, "\n".join(differ)


@pytest.mark.parametrize(
    ("values", "components"),
    [
        ({"monitoring.enabled": "true"}, ["monitoring"]),
        ({"admissionPolicy.enabled": "true"}, ["admission-policy"]),
        (EVERYTHING, ["monitoring", "admission-policy"]),
    ],
    ids=["monitoring", "admission-policy", "both"],
)
def test_each_option_renders_exactly_its_kustomize_component(
    values: dict[str, str], components: list[str]
) -> None:
    differ = differences(kustomize(*components), helm_template(values))
    assert not differ, "\n".join(differ)


def test_the_podgroup_crd_option_renders_its_component_and_keeps_the_crd() -> None:
    """scheduler-plugins' PodGroup CRD, as the podgroup-crd component has it; the chart
    also keeps it at uninstall (deleting a CRD deletes every PodGroup)."""
    objects = helm_template({"podGroupCRD.enabled": "true"})
    crd = named(objects, "CustomResourceDefinition", "podgroups.scheduling.x-k8s.io")
    assert crd["metadata"]["annotations"].pop("helm.sh/resource-policy") == "keep"
    differ = differences(kustomize("podgroup-crd"), objects)
    assert not differ, "\n".join(differ)


def test_the_samples_option_adds_exactly_the_samples() -> None:
    differ = differences(kustomize() + samples(), helm_template({"samples.enabled": "true"}))
    assert not differ, "\n".join(differ)


def operator_container(objects: list[dict[str, Any]]) -> dict[str, Any]:
    deployment = named(objects, "Deployment", "scheduler-operator")
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    return dict(container)


def test_the_image_is_pinned_by_digest_when_one_is_given() -> None:
    container = operator_container(helm_template({"image.digest": DIGEST}))
    assert container["image"] == f"ghcr.io/schedops/scheduler-operator@{DIGEST}"
    container = operator_container(
        helm_template({"image.repository": "registry.example.com/ops", "image.tag": "1.2"})
    )
    assert container["image"] == "registry.example.com/ops:1.2"


def test_the_operand_namespaces_reach_rbac_flags_monitoring_and_the_guard_rails() -> None:
    objects = helm_template(
        {**EVERYTHING, "schedulers.namespaces": "{batch,tenant-a}", "namespace.name": "ops"}
    )
    namespaces = {o["metadata"]["name"] for o in of_kind(objects, "Namespace")}
    assert namespaces == {"ops", "batch", "tenant-a"}
    bindings = {
        (o["metadata"]["namespace"], o["roleRef"]["name"])
        for o in of_kind(objects, "RoleBinding")
        if o["metadata"]["name"] == "scheduler-operator"
    }
    assert bindings == {
        ("batch", "scheduler-operator-schedulers"),
        ("tenant-a", "scheduler-operator-schedulers"),
        ("kube-system", "scheduler-operator"),
    }
    for binding in of_kind(objects, "RoleBinding") + of_kind(objects, "ClusterRoleBinding"):
        for subject in binding["subjects"]:
            if subject["name"] == "scheduler-operator":
                assert subject["namespace"] == "ops"
    command = operator_container(objects)["command"]
    assert [c for c in command if c.startswith("--namespace=")] == [
        "--namespace=batch",
        "--namespace=tenant-a",
    ]
    services = {
        o["metadata"]["namespace"]
        for o in of_kind(objects, "Service")
        if o["metadata"]["name"] == "scheduler-metrics"
    }
    assert services == {"batch", "tenant-a"}
    monitor = named(objects, "ServiceMonitor", "schedulers")
    assert monitor["spec"]["namespaceSelector"]["matchNames"] == ["batch", "tenant-a"]
    guard = named(objects, "ValidatingAdmissionPolicy", "scheduler-operator-guard")
    [who, _] = guard["spec"]["matchConditions"]
    assert "'system:serviceaccount:ops:scheduler-operator'" in who["expression"]
    [namespaces] = [v for v in guard["spec"]["variables"] if v["name"] == "namespaces"]
    assert namespaces["expression"] == '["batch","tenant-a"]'
    assert "paramKind" not in guard["spec"]  # kubernetes/kubernetes#133827
    rails = named(objects, "ConfigMap", "schedulerprofile-guard-rails")
    assert rails["metadata"]["namespace"] == "ops"
    assert rails["data"]["allowedNamespaces"] == "batch,tenant-a"
    binding = named(objects, "ValidatingAdmissionPolicyBinding", "schedulerprofile-guard-rails")
    assert binding["spec"]["paramRef"]["namespace"] == "ops"


def test_namespaces_that_exist_already_are_not_created() -> None:
    objects = helm_template({"namespace.create": "false", "schedulers.createNamespaces": "false"})
    assert of_kind(objects, "Namespace") == []


def test_the_operator_pod_takes_resources_node_selector_tolerations_and_affinity() -> None:
    toleration = {"key": "dedicated", "operator": "Equal", "value": "ops", "effect": "NoSchedule"}
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["ops"]}]}
                ]
            }
        }
    }
    values = {
        "resources": {"requests": {"cpu": "200m", "memory": "300Mi"}, "limits": {"memory": "1Gi"}},
        "nodeSelector": {"kubernetes.io/os": "linux", "pool": "ops"},
        "tolerations": [toleration],
        "affinity": affinity,
    }
    flags = [f for name, v in values.items() for f in ("--set-json", f"{name}={json.dumps(v)}")]
    done = helm("template", "x", str(CHART), *flags)
    objects = [d for d in yaml.safe_load_all(done.stdout) if d]
    pod = named(objects, "Deployment", "scheduler-operator")["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == values["nodeSelector"]
    assert pod["tolerations"] == [toleration]
    assert pod["affinity"] == affinity
    assert pod["containers"][0]["resources"] == values["resources"]


def test_the_monitoring_values_reach_their_objects() -> None:
    objects = helm_template(
        {
            "monitoring.enabled": "true",
            "monitoring.labels.release": "prometheus",
            "monitoring.interval": "1m",
            "monitoring.prometheusServiceAccount.name": "prometheus-k8s",
            "monitoring.prometheusServiceAccount.namespace": "observability",
            "monitoring.dashboard.labels.grafana_dashboard": "scheduling",
        }
    )
    for kind, name in [
        ("ServiceMonitor", "schedulers"),
        ("ServiceMonitor", "scheduler-operator"),
        ("PrometheusRule", "scheduler-operator"),
    ]:
        assert named(objects, kind, name)["metadata"]["labels"]["release"] == "prometheus"
    for monitor in of_kind(objects, "ServiceMonitor"):
        assert {e["interval"] for e in monitor["spec"]["endpoints"]} == {"1m"}
    [subject] = named(objects, "ClusterRoleBinding", "scheduler-operator-metrics-reader")[
        "subjects"
    ]
    assert subject == {
        "kind": "ServiceAccount",
        "name": "prometheus-k8s",
        "namespace": "observability",
    }
    dashboard = named(objects, "ConfigMap", "scheduler-operator-dashboard")
    assert dashboard["metadata"]["labels"]["grafana_dashboard"] == "scheduling"
    assert json.loads(dashboard["data"]["scheduler-operator.json"])["uid"] == "scheduler-operator"


def test_monitoring_parts_can_be_left_out() -> None:
    objects = helm_template(
        {
            "monitoring.enabled": "true",
            "monitoring.rules.enabled": "false",
            "monitoring.dashboard.enabled": "false",
            "monitoring.prometheusServiceAccount.name": "",
        }
    )
    kinds = {(o["kind"], o["metadata"]["name"]) for o in objects}
    assert ("PrometheusRule", "scheduler-operator") not in kinds
    assert ("ConfigMap", "scheduler-operator-dashboard") not in kinds
    assert ("ClusterRoleBinding", "scheduler-operator-metrics-reader") not in kinds
    assert ("ClusterRole", "scheduler-operator-metrics-reader") in kinds


@pytest.mark.parametrize(
    ("value", "complaint"),
    [
        ("image.digest=latest", "at '/image/digest': 'latest' does not match pattern"),
        ("image.pullPolicy=Sometimes", "at '/image/pullPolicy': value must be one of"),
        ("schedulers.namespaces={Bad_Name}", "at '/schedulers/namespaces/0': 'Bad_Name'"),
        ("schedulers.namespaces={a,a}", "at '/schedulers/namespaces': items at 0 and 1 are equal"),
        ("namespace.name=" + "n" * 64, "at '/namespace/name'"),
        ("monitoring.enabled=yes", "at '/monitoring/enabled': got string, want boolean"),
        ("monitoring.interval=soon", "at '/monitoring/interval'"),
        ("resources.requests.cpu=lots", "at '/resources/requests/cpu'"),
        ("tolerations[0].effect=Sometimes", "at '/tolerations/0/effect'"),
        ("schedulers.namespaces=[]", "at '/schedulers/namespaces': minItems: got 0, want 1"),
        ("schedulers.namespaces={schedulers,kube-system}", "at '/schedulers/namespaces/1'"),
        ("schedulers.namespaces={kube-node-lease}", "at '/schedulers/namespaces/0'"),
        ("replicas=2", "additional properties 'replicas' not allowed"),
    ],
)
def test_a_wrong_value_is_refused_with_its_path(value: str, complaint: str) -> None:
    flag = "--set-json" if value.endswith(("[]", "{}")) else "--set"
    done = helm("template", "x", str(CHART), flag, value, check=False)
    assert done.returncode != 0
    assert "values don't meet the specifications of the schema" in done.stderr
    assert complaint in done.stderr


def test_the_operators_own_namespace_is_refused_for_schedulers() -> None:
    """It would hold the operator's Deployment and its Role beside the schedulers'."""
    done = helm(
        "template", "x", str(CHART), "--set", "schedulers.namespaces={schedulers,ops}",
        "--set", "namespace.name=ops", check=False,
    )  # fmt: skip
    assert done.returncode != 0
    assert "schedulers.namespaces: ops is the operator's own namespace (namespace.name)" in (
        done.stderr
    )
