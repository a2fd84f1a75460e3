"""The optional guard rails (manifests/components/admission-policy) on the real API server: a
SchedulerProfile that asks for what they forbid is refused at `kubectl apply` with the
policy's message; one within them passes."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from cluster import REPO, Cluster, wait_for
from operator_support import for_the_tests_namespaces

POLICY = "schedulerprofile-guard-rails"
ALLOWED_NAMESPACE = "schedulers"
CONTROL_PLANE = "node-role.kubernetes.io/control-plane"
HOSTNAME = "kubernetes.io/hostname"


def overlay(directory: Path) -> Path:
    """An overlay of a user's own, as the component's kustomization.yaml describes it."""
    manifests = os.path.relpath(REPO / "manifests", directory)
    component = os.path.relpath(REPO / "manifests" / "components" / "admission-policy", directory)
    (directory / "kustomization.yaml").write_text(
        yaml.safe_dump({"resources": [manifests], "components": [component]})
    )
    return directory


@pytest.fixture(scope="module")
def guard_rails(cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    built = cluster.kubectl("kustomize", str(overlay(tmp_path_factory.mktemp("overlay")))).stdout
    # Everything but the operator's Deployment: admission needs no operator.
    documents = for_the_tests_namespaces(yaml.safe_load_all(built))
    kinds = {d["kind"] for d in documents}
    assert {"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding", "ConfigMap"} <= kinds
    cluster.kubectl("apply", "--server-side", "-f", "-", input=yaml.safe_dump_all(documents))
    wait_for("the policy to be in force", lambda: refusal(cluster, {"image": "x.io/y:1"}))
    yield cluster
    cluster.kubectl("delete", "validatingadmissionpolicybinding", POLICY, "--ignore-not-found")
    cluster.kubectl("delete", "validatingadmissionpolicy", POLICY, "--ignore-not-found")


def refusal(cluster: Cluster, spec: dict[str, Any]) -> str:
    """The API server's refusal of a SchedulerProfile (dry run), "" when it would be created."""
    body = {
        "apiVersion": "scheduling.schedops.io/v1alpha1",
        "kind": "SchedulerProfile",
        "metadata": {"name": "guarded"},
        "spec": {"namespace": ALLOWED_NAMESPACE, **spec},
    }
    done = cluster.kubectl(
        "apply", "--dry-run=server", "-f", "-", input=json.dumps(body), check=False
    )
    return "" if done.returncode == 0 else done.stderr


def node_affinity(key: str, *, required: bool) -> dict[str, Any]:
    term = {"matchExpressions": [{"key": key, "operator": "Exists"}]}
    if required:
        rule: dict[str, Any] = {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}
        }
    else:
        rule = {
            "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "preference": term}]
        }
    return {"nodeAffinity": rule}


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            {"image": "evil.example/scheduler-operator:0.1.0"},
            "spec.image: evil.example/scheduler-operator:0.1.0 is not from an allowed registry",
        ),
        (
            # A longer repository name that starts like an allowed one.
            {"image": "ghcr.io/schedops/scheduler-operator-evil:1"},
            "is not from an allowed registry",
        ),
        (
            {"namespace": "kube-system"},
            "spec.namespace: kube-system is not one of the namespaces allowed for schedulers",
        ),
        (
            {"tolerations": [{"operator": "Exists"}]},
            "spec.tolerations: a toleration without a key tolerates every taint",
        ),
        (
            {"tolerations": [{"key": CONTROL_PLANE, "operator": "Exists", "effect": "NoSchedule"}]},
            "spec.tolerations: scheduler pods may not tolerate the control plane's taints",
        ),
        ({"nodeSelector": {CONTROL_PLANE: ""}}, "may not be steered onto control-plane nodes"),
        (
            {"affinity": node_affinity(CONTROL_PLANE, required=True)},
            "may not be steered onto control-plane nodes",
        ),
        (
            {"affinity": node_affinity("node-role.kubernetes.io/master", required=False)},
            "may not be steered onto control-plane nodes",
        ),
        # A control-plane node by name, by its fields, or by the pods it runs.
        ({"nodeSelector": {HOSTNAME: "control-plane-0"}}, "nor onto nodes by name"),
        ({"affinity": node_affinity(HOSTNAME, required=True)}, "nor onto nodes by name"),
        (
            {
                "affinity": {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                {
                                    "matchFields": [
                                        {
                                            "key": "metadata.name",
                                            "operator": "In",
                                            "values": ["control-plane-0"],
                                        }
                                    ]
                                }
                            ]
                        }
                    }
                }
            },
            "spec.affinity.nodeAffinity: scheduler pods may not pick nodes by their fields",
        ),
        (
            {
                "affinity": {
                    "podAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": [
                            {
                                "labelSelector": {"matchLabels": {"component": "kube-apiserver"}},
                                "namespaces": ["kube-system"],
                                "topologyKey": HOSTNAME,
                            }
                        ]
                    }
                }
            },
            "spec.affinity.podAffinity: scheduler pods may not follow other pods",
        ),
    ],
)
def test_a_forbidden_profile_is_refused_with_the_policys_message(
    guard_rails: Cluster, spec: dict[str, Any], message: str
) -> None:
    refused = refusal(guard_rails, spec)
    assert f"ValidatingAdmissionPolicy '{POLICY}'" in refused
    assert message in refused


@pytest.mark.parametrize(
    "spec",
    [
        {},
        {"image": "ghcr.io/schedops/scheduler-operator:0.2.0"},
        {"engine": "KubeScheduler", "image": "registry.k8s.io/kube-scheduler:v1.36.3"},
        {"tolerations": [{"key": "dedicated", "operator": "Equal", "value": "sched"}]},
        {"nodeSelector": {"kubernetes.io/os": "linux"}},
        {"affinity": node_affinity("topology.kubernetes.io/zone", required=False)},
        {
            "affinity": {
                "podAntiAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "weight": 1,
                            "podAffinityTerm": {
                                "labelSelector": {"matchLabels": {"app": "s"}},
                                "topologyKey": HOSTNAME,
                            },
                        }
                    ]
                }
            }
        },
    ],
)
def test_a_profile_within_the_guard_rails_passes(
    guard_rails: Cluster, spec: dict[str, Any]
) -> None:
    assert refusal(guard_rails, spec) == ""


def test_a_digest_can_be_required(guard_rails: Cluster) -> None:
    params = ["-n", "scheduler-operator", "configmap", POLICY]
    guard_rails.kubectl("patch", *params, "-p", '{"data": {"requireImageDigest": "true"}}')
    try:
        tagged = {"image": "ghcr.io/schedops/scheduler-operator:0.1.0"}
        digest = "ghcr.io/schedops/scheduler-operator@sha256:" + "0" * 64
        refused = wait_for("the digest rule", lambda: refusal(guard_rails, tagged))
        assert "must name a digest (@sha256:...)" in refused
        assert refusal(guard_rails, {"image": digest}) == ""
    finally:
        guard_rails.kubectl("patch", *params, "-p", '{"data": {"requireImageDigest": "false"}}')
