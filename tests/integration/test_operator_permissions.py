"""The operator's effective permissions as the manifests grant them, asked of the real API
server as its ServiceAccount; what RBAC cannot narrow, refused by operator-guard.yaml; and the
guard rails of the SchedulerProfile API itself (namespaces, Leases, all-or-nothing apply)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any

import pytest
import yaml
from cluster import Cluster, wait_for
from kopf.testing import KopfRunner
from operator_support import condition, get_json, profile_body

OPERATOR = "system:serviceaccount:scheduler-operator:scheduler-operator"
Apply = Callable[[dict[str, Any]], str]


def can(cluster: Cluster, *request: str, who: str = OPERATOR) -> bool:
    done = cluster.kubectl("auth", "can-i", *request, f"--as={who}", check=False)
    return done.stdout.strip() == "yes"


@pytest.mark.parametrize(
    "request_",
    [
        ("create", "deployments.apps", "-n", "schedulers"),
        ("patch", "configmaps", "-n", "schedulers"),
        ("create", "roles.rbac.authorization.k8s.io", "-n", "schedulers"),
        ("update", "leases.coordination.k8s.io", "-n", "schedulers"),
        ("list", "pods", "-n", "schedulers"),
        ("create", "clusterrolebindings.rbac.authorization.k8s.io"),
        ("bind", "clusterroles.rbac.authorization.k8s.io/system:kube-scheduler"),
        ("create", "rolebindings.rbac.authorization.k8s.io", "-n", "kube-system"),
        ("patch", "schedulerprofiles.scheduling.schedops.io/status"),
        ("create", "events", "-n", "default"),
        ("list", "namespaces"),
        ("watch", "namespaces"),
    ],
)
def test_the_operator_may_do_what_it_needs(
    operator: KopfRunner, cluster: Cluster, request_: tuple[str, ...]
) -> None:
    assert can(cluster, *request_)


@pytest.mark.parametrize(
    "request_",
    [
        ("create", "deployments.apps", "-n", "default"),
        ("create", "deployments.apps", "-n", "kube-system"),
        ("patch", "configmaps/coredns", "-n", "kube-system"),
        ("update", "leases.coordination.k8s.io/kube-controller-manager", "-n", "kube-system"),
        ("create", "roles.rbac.authorization.k8s.io", "-n", "kube-system"),
        ("create", "serviceaccounts", "-n", "default"),
        ("create", "pods", "-n", "schedulers"),
        ("delete", "deployments.apps", "-n", "schedulers"),
        ("get", "secrets", "-n", "schedulers"),
        ("list", "secrets", "-A"),
        ("list", "pods", "-A"),
        ("bind", "clusterroles.rbac.authorization.k8s.io/cluster-admin"),
        ("escalate", "clusterroles.rbac.authorization.k8s.io"),
        ("impersonate", "serviceaccounts"),
        ("delete", "schedulerprofiles.scheduling.schedops.io"),
    ],
)
def test_the_operator_is_denied_the_rest(
    operator: KopfRunner, cluster: Cluster, request_: tuple[str, ...]
) -> None:
    assert not can(cluster, *request_)


def binding(
    kind: str, name: str, role: str, account_namespace: str, account: str = "x", **namespace: str
) -> str:
    role_kind = "ClusterRole" if kind == "ClusterRoleBinding" else "Role"
    return json.dumps(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": kind,
            "metadata": {"name": name, **namespace},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role},
            "subjects": [
                {"kind": "ServiceAccount", "name": account, "namespace": account_namespace}
            ],
        }
    )


def as_operator(cluster: Cluster, *args: str, body: str | None = None) -> str:
    """A write as the operator's ServiceAccount (server dry run): "" when allowed, else why."""
    done = cluster.kubectl(*args, "--dry-run=server", f"--as={OPERATOR}", input=body, check=False)
    return "" if done.returncode == 0 else done.stderr


def test_the_guard_holds_what_rbac_cannot_narrow(operator: KopfRunner, cluster: Cluster) -> None:
    own = binding("ClusterRoleBinding", "schedulerprofile:x:kube-scheduler",
                  "system:kube-scheduler", "schedulers")  # fmt: skip
    assert as_operator(cluster, "create", "-f", "-", body=own) == ""
    reader = binding("RoleBinding", "schedulerprofile:x:authentication-reader",
                     "extension-apiserver-authentication-reader", "schedulers",
                     namespace="kube-system")  # fmt: skip
    assert as_operator(cluster, "create", "-f", "-", body=reader) == ""

    refusals = [
        # The cluster's own binding of the default scheduler.
        as_operator(cluster, "patch", "clusterrolebinding", "system:kube-scheduler",
                    "--type=json", "-p", '[{"op": "add", "path": "/subjects/-", "value": '
                    '{"kind": "ServiceAccount", "name": "s", "namespace": "schedulers"}}]'),
        as_operator(cluster, "create", "-f", "-", body=binding(
            "ClusterRoleBinding", "not-a-scheduler", "system:kube-scheduler", "schedulers")),
        as_operator(cluster, "create", "-f", "-", body=binding(
            "ClusterRoleBinding", "schedulerprofile:x:kube-scheduler", "system:kube-scheduler",
            "kube-system")),
        as_operator(cluster, "create", "-f", "-", body=binding(
            "RoleBinding", "schedulerprofile:x:reader", "system:controller:bootstrap-signer",
            "schedulers", namespace="kube-system")),
        as_operator(cluster, "delete", "clusterrolebinding", "system:kube-scheduler"),
        # Scheduler rights for any ServiceAccount: one outside the schedulers' namespaces (the
        # default one of `default`, the operator's own), or one the binding is not named for.
        as_operator(cluster, "create", "-f", "-", body=binding(
            "ClusterRoleBinding", "schedulerprofile:default:kube-scheduler",
            "system:kube-scheduler", "default", account="default")),
        as_operator(cluster, "create", "-f", "-", body=binding(
            "ClusterRoleBinding", "schedulerprofile:scheduler-operator:volume-scheduler",
            "system:volume-scheduler", "scheduler-operator", account="scheduler-operator")),
        as_operator(cluster, "create", "-f", "-", body=binding(
            "ClusterRoleBinding", "schedulerprofile:x:kube-scheduler", "system:kube-scheduler",
            "schedulers", account="default")),
        as_operator(cluster, "create", "-f", "-", body=binding(
            "ClusterRoleBinding", "schedulerprofile:x:kube-scheduler", "system:volume-scheduler",
            "schedulers")),
        as_operator(cluster, "create", "-f", "-", body=binding(
            "RoleBinding", "schedulerprofile:x:authentication-reader",
            "extension-apiserver-authentication-reader", "default", namespace="kube-system")),
    ]  # fmt: skip
    for refused in refusals:
        assert "scheduler-operator-guard" in refused or "forbidden" in refused.lower(), refused
    assert "ValidatingAdmissionPolicy 'scheduler-operator-guard'" in refusals[0]
    for refused in refusals[-5:]:
        assert "ValidatingAdmissionPolicy 'scheduler-operator-guard'" in refused, refused
    # The tests' own namespaces are listed in the guard's ConfigMap, as --namespace lists them.
    in_a_test_namespace = binding("ClusterRoleBinding", "schedulerprofile:y:kube-scheduler",
                                  "system:kube-scheduler", "t-abc", account="y")  # fmt: skip
    assert as_operator(cluster, "create", "-f", "-", body=in_a_test_namespace) == ""


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


def test_a_namespace_the_operator_does_not_manage_is_refused_and_nothing_is_made(
    cluster: Cluster, apply_profile: Apply
) -> None:
    name = apply_profile(profile_body(unique("elsewhere"), namespace="default"))
    refused = wait_for(
        "ConfigValid=False",
        lambda: (c := condition(get_json(cluster, "schedulerprofile", name), "ConfigValid"))
        .get("status") == "False" and c,
    )  # fmt: skip
    assert refused["reason"] == "NamespaceNotAllowed"
    assert refused["message"] == (
        "spec.namespace: 'default' is not a namespace this operator runs schedulers in "
        "(schedulers, t-*)"
    )
    assert (
        get_json(cluster, "clusterrolebinding", f"schedulerprofile:{name}:kube-scheduler") is None
    )
    assert get_json(cluster, "serviceaccount", name, "-n", "default") is None


def test_a_scheduler_named_like_a_component_cannot_take_its_lease(
    cluster: Cluster, namespace: str, apply_profile: Apply
) -> None:
    apply_profile(profile_body("kube-controller-manager", namespace=namespace))
    role = wait_for(
        "the scheduler's Lease Role",
        lambda: get_json(
            cluster, "role", "kube-controller-manager-leader-election", "-n", namespace
        ),
    )
    named = [rule["resourceNames"] for rule in role["rules"] if "resourceNames" in rule]
    assert named == [["schedulerprofile.kube-controller-manager"]]
    account = f"system:serviceaccount:{namespace}:kube-controller-manager"
    lease = "leases.coordination.k8s.io"
    assert can(cluster, "update", f"{lease}/schedulerprofile.kube-controller-manager",
               "-n", namespace, who=account)  # fmt: skip
    for where in (namespace, "kube-system"):
        assert not can(cluster, "update", f"{lease}/kube-controller-manager", "-n", where,
                       who=account)  # fmt: skip


def test_a_name_clash_at_the_config_map_changes_nothing(
    cluster: Cluster, namespace: str, apply_profile: Apply
) -> None:
    name = unique("clash")
    cluster.kubectl("create", "configmap", f"{name}-config", "-n", namespace)
    apply_profile(profile_body(name, namespace=namespace))
    failed = wait_for(
        "Ready=False with reason ApplyFailed",
        lambda: (c := condition(get_json(cluster, "schedulerprofile", name), "Ready"))
        .get("reason") == "ApplyFailed" and c,
    )  # fmt: skip
    assert failed["message"] == (
        f"ConfigMap {namespace}/{name}-config already exists and does not belong to this "
        "SchedulerProfile"
    )
    selector = f"app.kubernetes.io/instance={name}"
    made = get_json(cluster, "serviceaccounts,roles,rolebindings,deployments", "-n", namespace,
                    "-l", selector) or {}  # fmt: skip
    assert made.get("items") == []
    assert (get_json(cluster, "clusterrolebindings", "-l", selector) or {}).get("items") == []


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"tolerations": [{"key": "k", "operator": "Sometimes"}]}, "spec.tolerations[0].operator"),
        (
            {"tolerations": [{"operator": "Equal", "value": "v"}]},
            "without a key must use operator Exists",
        ),
        ({"nodeSelector": {"bad key!": "v"}}, "keys must be label keys"),
        ({"nodeSelector": {"zone": "not a value"}}, "spec.nodeSelector.zone"),
        ({"resources": {"requests": {"cpu": "lots"}}}, "spec.resources.requests.cpu"),
        ({"resources": {"limits": {"bad name!": "1"}}}, "keys must be resource names"),
    ],
)
def test_deployment_fields_are_checked_by_the_schema(
    cluster: Cluster, operator: KopfRunner, spec: dict[str, Any], message: str
) -> None:
    body = profile_body(unique("fields"), **spec)
    done = cluster.kubectl("apply", "-f", "-", input=yaml.safe_dump(body), check=False)
    assert done.returncode != 0
    assert message in done.stderr, done.stderr
