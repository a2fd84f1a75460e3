"""Fixtures for the operator's integration tests: its RBAC from manifests/, the operator itself
running in-process under that ServiceAccount, and SchedulerProfiles cleaned up after each test."""

from __future__ import annotations

import json
import os
import ssl
import subprocess
import urllib.request
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import kubernetes
import pytest
import yaml
from cluster import REPO, Cluster, wait_for
from kopf.testing import KopfRunner
from lease_player import LeasePlayer
from scheduler_operator.decoding import loads

from benchmarks.processes import free_port

OPERATOR_NAMESPACE = "scheduler-operator"
OPERATOR_ACCOUNT = "scheduler-operator"
OPERATOR_SUBJECT = {
    "kind": "ServiceAccount",
    "name": OPERATOR_ACCOUNT,
    "namespace": OPERATOR_NAMESPACE,
}
# Where the tests' schedulers run: the install's own namespace, and every test's namespace.
OPERAND_NAMESPACES = ("schedulers", "t-*")
NAMESPACE_GLOB_RBAC = [
    {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "scheduler-operator-namespace-globs"},
        "rules": [{"apiGroups": [""], "resources": ["namespaces"], "verbs": ["list", "watch"]}],
    },
    {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": "scheduler-operator-namespace-globs"},
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": "scheduler-operator-namespace-globs",
        },
        "subjects": [OPERATOR_SUBJECT],
    },
]


def operand_namespace(cluster: Cluster, namespace: str) -> str:
    """Lets the operator run schedulers in a namespace, as an installer does (namespace.yaml)."""
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "scheduler-operator", "namespace": namespace},
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": "scheduler-operator-schedulers",
        },
        "subjects": [OPERATOR_SUBJECT],
    }
    cluster.kubectl("apply", "-f", "-", input=yaml.safe_dump(binding))
    return namespace


def operator_manifests(cluster: Cluster) -> list[dict[str, Any]]:
    """manifests/ as kustomize builds it, minus the operator's Deployment (it runs here), its
    guard told of the tests' namespaces as an installer tells it of another one."""
    built = cluster.kubectl("kustomize", str(REPO / "manifests")).stdout
    return for_the_tests_namespaces(yaml.safe_load_all(built))


def for_the_tests_namespaces(built: Iterable[dict[str, Any] | None]) -> list[dict[str, Any]]:
    """Built manifests minus the operator's Deployment (it runs here), with the tests'
    namespaces in the operator's guard, as an installer adds a namespace of its own."""
    manifests = [doc for doc in built if doc and doc["kind"] != "Deployment"]
    for doc in manifests:
        if (doc["kind"], doc["metadata"]["name"]) == (
            "ValidatingAdmissionPolicy",
            "scheduler-operator-guard",
        ):
            [namespaces] = [v for v in doc["spec"]["variables"] if v["name"] == "namespaces"]
            namespaces["expression"] = json.dumps(list(OPERAND_NAMESPACES))
    return manifests


def service_account_kubeconfig(cluster: Cluster, path: Path) -> Path:
    """A kubeconfig that authenticates as the operator's ServiceAccount, never as admin."""
    token = cluster.kubectl(
        "create", "token", OPERATOR_ACCOUNT, "-n", OPERATOR_NAMESPACE, "--duration=4h"
    ).stdout.strip()
    admin = yaml.safe_load(cluster.kubeconfig.read_text())
    server = admin["clusters"][0]["cluster"]
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "local", "cluster": server}],
                "users": [{"name": "operator", "user": {"token": token}}],
                "contexts": [
                    {"name": "operator", "context": {"cluster": "local", "user": "operator"}}
                ],
                "current-context": "operator",
            }
        )
    )
    return path


@pytest.fixture(scope="session")
def operator(cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[KopfRunner]:
    """The operator, running in-process with the ServiceAccount and ClusterRole of manifests/."""
    manifests = operator_manifests(cluster)
    cluster.kubectl("apply", "--server-side", "-f", "-", input=yaml.safe_dump_all(manifests))
    cluster.kubectl(
        "wait", "--for=condition=Established", "crd/schedulerprofiles.scheduling.schedops.io"
    )
    # The tests' namespaces (t-*) are schedulers' namespaces too, as an installer adds one: a
    # RoleBinding in each (operand_namespace) and the namespace (here a glob) in the operator's
    # --namespace. Following a glob takes listing namespaces, which the manifests do not grant.
    cluster.kubectl("apply", "-f", "-", input=yaml.safe_dump_all(NAMESPACE_GLOB_RBAC))
    kubeconfig = service_account_kubeconfig(cluster, tmp_path_factory.mktemp("sa") / "kubeconfig")
    previous = os.environ.get("KUBECONFIG")
    os.environ["KUBECONFIG"] = str(kubeconfig)
    os.environ["SCHEDULER_OPERATOR_NAMESPACES"] = ",".join(OPERAND_NAMESPACES)
    namespaces = [f"--namespace={pattern}" for pattern in OPERAND_NAMESPACES]
    args = ["run", "--standalone", *namespaces, "-m", "scheduler_operator.handlers"]
    try:
        player = LeasePlayer(kubernetes.config.new_client_from_config(str(cluster.kubeconfig)))
        with player, KopfRunner(args, timeout=60) as runner:
            wait_until_serving(cluster)
            # Logged in and configured: the rest of the session keeps its own KUBECONFIG.
            restore_kubeconfig(previous)
            yield runner
    finally:
        restore_kubeconfig(previous)
    assert runner.exception is None, runner.output


def restore_kubeconfig(previous: str | None) -> None:
    if previous is None:
        os.environ.pop("KUBECONFIG", None)
    else:
        os.environ["KUBECONFIG"] = previous


def wait_until_serving(cluster: Cluster) -> None:
    """Waits for the operator to judge a probe that claims the default scheduler's name
    (refused, so it creates nothing), then deletes the probe."""
    probe = profile_body("operator-probe", schedulerName="default-scheduler")
    cluster.kubectl("apply", "-f", "-", input=yaml.safe_dump(probe))
    try:
        wait_for(
            "the operator to report on a probe SchedulerProfile",
            lambda: condition(get_json(cluster, "schedulerprofile", "operator-probe"), "Ready"),
            timeout=60,
        )
    finally:
        cluster.kubectl("delete", "schedulerprofile", "operator-probe", "--wait=true")


@pytest.fixture
def apply_profile(
    cluster: Cluster, operator: KopfRunner
) -> Iterator[Callable[[dict[str, Any]], str]]:
    """Applies SchedulerProfiles with kubectl; deletes them (and waits) after the test."""
    applied: list[str] = []

    def apply(profile: dict[str, Any]) -> str:
        cluster.kubectl("apply", "-f", "-", input=yaml.safe_dump(profile))
        applied.append(profile["metadata"]["name"])
        return str(profile["metadata"]["name"])

    yield apply
    for name in applied:
        cluster.kubectl("delete", "schedulerprofile", name, "--ignore-not-found", "--wait=true")


def profile_body(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.schedops.io/v1alpha1",
        "kind": "SchedulerProfile",
        "metadata": {"name": name},
        "spec": spec,
    }


def get_json(cluster: Cluster, *args: str) -> dict[str, Any] | None:
    """`kubectl get -o json`, or None when the object does not exist (decoded as the operator
    decodes objects: a value nested too deep for json.loads becomes null past the bound)."""
    done = cluster.kubectl("get", *args, "-o", "json", check=False)
    if done.returncode != 0:
        if "NotFound" in done.stderr:
            return None
        raise AssertionError(done.stderr)
    found: dict[str, Any] = loads(done.stdout)
    return found


def condition(profile: dict[str, Any] | None, kind: str) -> dict[str, Any]:
    for entry in ((profile or {}).get("status") or {}).get("conditions") or []:
        if entry["type"] == kind:
            return dict(entry)
    return {}


def wait_condition(
    cluster: Cluster, name: str, kind: str, status: str, timeout: float = 90
) -> dict[str, Any]:
    """Waits for a condition of the current generation; returns the whole object."""

    seen: list[dict[str, Any]] = [{}]

    def probe() -> dict[str, Any] | None:
        current = get_json(cluster, "schedulerprofile", name)
        found = seen[0] = condition(current, kind)
        generation = (current or {}).get("metadata", {}).get("generation")
        if found.get("status") == status and found.get("observedGeneration") == generation:
            return current
        return None

    try:
        return dict(wait_for(f"{name} {kind}={status}", probe, timeout=timeout))
    except AssertionError as error:
        raise AssertionError(f"{error}; the condition was {seen[0]}") from None


def start_kube_scheduler(
    cluster: Cluster, config: dict[str, Any], workdir: Path, args: tuple[str, ...] = ()
) -> tuple[subprocess.Popen[bytes], int, Path]:
    """Runs the upstream kube-scheduler binary with a rendered configuration, as admin;
    `args` are further flags (--feature-gates, say)."""
    config = {**config, "clientConnection": {"kubeconfig": str(cluster.kubeconfig)}}
    config_file = workdir / "config.yaml"
    config_file.write_text(yaml.safe_dump(config))
    log = workdir / "kube-scheduler.log"
    port = free_port()
    process = subprocess.Popen(
        [
            str(cluster.bin_dir / "kube-scheduler"),
            f"--config={config_file}",
            f"--secure-port={port}",
            "--bind-address=127.0.0.1",
            f"--cert-dir={workdir}",
            f"--authentication-kubeconfig={cluster.kubeconfig}",
            f"--authorization-kubeconfig={cluster.kubeconfig}",
            *args,
        ],
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
    )
    return process, port, log


def healthz(port: int) -> bool:
    """The scheduler's own health endpoint (self-signed certificate, always-allowed path)."""
    insecure = ssl.create_default_context()
    insecure.check_hostname = False
    insecure.verify_mode = ssl.CERT_NONE
    try:
        with urllib.request.urlopen(
            f"https://127.0.0.1:{port}/healthz", context=insecure, timeout=2
        ) as answer:
            return bool(answer.read() == b"ok")
    except OSError:
        return False
