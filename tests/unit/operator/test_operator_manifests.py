"""The operator's own manifests: least privilege, restricted pods, sync waves in order, the
limits policy as the operator renders it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from scheduler_operator import limits
from scheduler_operator.handlers import CHILDREN

REPO = Path(__file__).resolve().parents[3]
MANIFESTS = REPO / "manifests"


def documents(name: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((MANIFESTS / name).read_text()) if d]


def role(kind: str, name: str, namespace: str | None = None) -> dict[str, Any]:
    return next(
        d
        for d in documents("rbac.yaml")
        if (d["kind"], d["metadata"]["name"], d["metadata"].get("namespace"))
        == (kind, name, namespace)
    )


def roles() -> list[dict[str, Any]]:
    return [d for d in documents("rbac.yaml") if d["kind"] in ("Role", "ClusterRole")]


def test_no_wildcard_verbs_resources_or_groups() -> None:
    for granted in roles():
        for rule in granted["rules"]:
            for field in ("verbs", "resources", "apiGroups", "resourceNames"):
                assert "*" not in rule.get(field, []), rule


def test_bind_is_limited_to_the_roles_a_scheduler_needs() -> None:
    cluster_wide = role("ClusterRole", "scheduler-operator")["rules"]
    in_kube_system = role("Role", "scheduler-operator", "kube-system")["rules"]
    binding = [rule for rule in cluster_wide + in_kube_system if "bind" in rule["verbs"]]
    assert binding == [
        {
            "apiGroups": ["rbac.authorization.k8s.io"],
            "resources": ["clusterroles"],
            "verbs": ["bind"],
            "resourceNames": [
                "system:kube-scheduler",
                "system:volume-scheduler",
                "scheduler-operator:pod-group-scheduler",
            ],
        },
        {
            "apiGroups": ["rbac.authorization.k8s.io"],
            "resources": ["roles"],
            "verbs": ["bind"],
            "resourceNames": ["extension-apiserver-authentication-reader"],
        },
    ]
    verbs = {verb for r in roles() for rule in r["rules"] for verb in rule["verbs"]}
    assert not verbs & {"escalate", "impersonate", "delete", "deletecollection"}


def test_namespaced_writes_are_granted_only_in_the_schedulers_namespace() -> None:
    cluster_wide = {
        resource
        for rule in role("ClusterRole", "scheduler-operator")["rules"]
        for resource in rule["resources"]
    }
    assert cluster_wide == {
        "schedulerprofiles",
        "schedulerprofiles/status",
        "schedulerprofiles/finalizers",
        "clusterrolebindings",
        "clusterroles",
        "customresourcedefinitions",
        "namespaces",  # read only: kopf matches --namespace against them
    }
    namespace_verbs = {
        verb
        for rule in role("ClusterRole", "scheduler-operator")["rules"]
        if "namespaces" in rule["resources"]
        for verb in rule["verbs"]
    }
    assert namespace_verbs == {"list", "watch"}
    bindings = [
        d
        for d in documents("rbac.yaml")
        if d["kind"] == "RoleBinding" and d["roleRef"]["name"] == "scheduler-operator-schedulers"
    ]
    assert [b["metadata"]["namespace"] for b in bindings] == ["schedulers"]
    [deployment] = documents("deployment.yaml")
    command = deployment["spec"]["template"]["spec"]["containers"][0]["command"]
    assert "--namespace=schedulers" in command


def test_the_operator_may_apply_and_watch_every_kind_of_child() -> None:
    """Cluster-scoped children by the ClusterRole, namespaced ones by the role bound in each
    schedulers' namespace."""
    rules = (
        role("ClusterRole", "scheduler-operator")["rules"]
        + role("ClusterRole", "scheduler-operator-schedulers")["rules"]
    )
    for group, _, plural in CHILDREN:
        verbs = {
            verb
            for rule in rules
            if group in rule["apiGroups"] and plural in rule["resources"]
            for verb in rule["verbs"]
        }
        assert {"get", "list", "watch", "create", "patch"} <= verbs, plural
    assert ("networking.k8s.io", "v1", "networkpolicies") in CHILDREN


def test_the_operator_pod_runs_restricted() -> None:
    [deployment] = documents("deployment.yaml")
    pod = deployment["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    [container] = pod["containers"]
    assert container["securityContext"] == {
        "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": True,
        "runAsNonRoot": True,
        "capabilities": {"drop": ["ALL"]},
    }
    assert container["image"] == "scheduler-operator"  # set by the kustomization's images:


def wave(document: dict[str, Any]) -> int:
    return int(document["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"])


def test_sync_waves_apply_the_crd_then_the_operator_then_profiles() -> None:
    crd = wave(
        yaml.safe_load((REPO / "crds/schedulerprofiles.scheduling.schedops.io.yaml").read_text())
    )
    operator = {
        wave(d)
        for name in (
            "namespace.yaml",
            "rbac.yaml",
            "operator-guard.yaml",
            "limits.yaml",
            "deployment.yaml",
        )
        for d in documents(name)
    }
    samples = {
        wave(d)
        for path in (MANIFESTS / "samples").glob("*.yaml")
        for d in documents(f"samples/{path.name}")
    }
    assert len(operator) == 1
    assert crd < min(operator)
    assert max(operator) < min(samples)


def test_the_limits_policy_is_the_one_the_operator_renders() -> None:
    """manifests/limits.yaml is `python -m scheduler_operator.limits`, and is installed."""
    assert documents("limits.yaml") == limits.admission_policy()
    assert (MANIFESTS / "limits.yaml").read_text() == limits.manifest()
    kustomization = yaml.safe_load((MANIFESTS / "kustomization.yaml").read_text())
    assert "limits.yaml" in kustomization["resources"]
