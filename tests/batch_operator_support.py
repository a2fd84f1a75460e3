"""Batch operators that create gangs, run for real against the local control plane: each built
from its release on the Go module proxy (tools/build-binaries.sh OPERATOR, at the version
pinned in tools/versions.env), its CRDs applied from the release's own files in the Go module
cache, its manager run as a local process as its docs run it out of cluster; and the runtime
with a Coscheduling profile under the scheduler name the operator gives its pods."""

from __future__ import annotations

import base64
import contextlib
import json
import shlex
import socket
import subprocess
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import yaml
from cluster import Cluster, kwok_node, wait_for
from coscheduling_support import (
    GROUP,
    ReferenceProcess,
    coscheduling_configuration,
    established,
    install_crds,
)
from runtime_support import RuntimeProcess

from benchmarks.tools import TOOLS, pinned_versions
from scheduler_runtime.live.certs import self_signed


@dataclass(frozen=True)
class Operator:
    """A batch operator as tools/build-binaries.sh knows it."""

    name: str  # the argument of tools/build-binaries.sh
    version_key: str  # its pin in tools/versions.env
    module: str
    binary: str

    @property
    def version(self) -> str:
        return pinned_versions()[self.version_key]

    def build(self) -> Path:
        """The directory holding its manager, built on first use (minutes, once per pin)."""
        return built(self.name)

    def source(self) -> Path:
        """The release's files in the Go module cache (its CRDs are read from there)."""
        done = subprocess.run(
            ["go", "mod", "download", "-json", f"{self.module}@{self.version}"],
            cwd=self.build() / "src",
            capture_output=True,
            text=True,
            check=True,
        )
        return Path(json.loads(done.stdout)["Dir"])


def built(component: str) -> Path:
    """The cache directory of a tools/build-binaries.sh component, built on first use."""
    done = subprocess.run(
        [str(TOOLS / "build-binaries.sh"), component],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"building {component} failed:\n{done.stderr[-4000:]}")
    return Path(done.stdout.strip().splitlines()[-1])


MPI_OPERATOR = Operator(
    "mpi-operator", "MPI_OPERATOR_VERSION", "github.com/kubeflow/mpi-operator", "mpi-operator"
)
KUBERAY = Operator(
    "kuberay", "KUBERAY_VERSION", "github.com/ray-project/kuberay/ray-operator", "ray-operator"
)
KUEUE = Operator("kueue", "KUEUE_VERSION", "sigs.k8s.io/kueue", "kueue")
JOBSET = Operator("jobset", "JOBSET_VERSION", "sigs.k8s.io/jobset", "jobset")
LWS = Operator("lws", "LWS_VERSION", "sigs.k8s.io/lws", "lws")
TRAINER = Operator(
    "trainer", "TRAINER_VERSION", "github.com/kubeflow/trainer/v2", "trainer-controller-manager"
)
SPARK_OPERATOR = Operator(
    "spark-operator",
    "SPARK_OPERATOR_VERSION",
    "github.com/kubeflow/spark-operator/v2",
    "spark-operator",
)


def apply_crds(cluster: Cluster, files: Sequence[Path]) -> None:
    """Applies CRDs server-side (some are too large for the last-applied annotation) and
    waits until each is served."""
    for path in files:
        cluster.kubectl("apply", "--server-side", "--force-conflicts", "-f", str(path))
        name = yaml.safe_load(path.read_text())["metadata"]["name"]
        wait_for(f"the CRD {name} to be served", partial(established, cluster, name))


def start_manager(
    operator: Operator,
    args: Sequence[str],
    workdir: Path,
    kubeconfig: Path,
    env: Mapping[str, str] | None = None,
    etc: Mapping[str, Path] | None = None,
    role: str = "",
) -> ReferenceProcess:
    """The operator's manager as a local process with the cluster's admin kubeconfig; `etc`:
    directories it reads at fixed paths under /etc (see with_private_etc); `role` names one
    of several processes of the operator (its log is named after it)."""
    name = f"{operator.name}-{role}" if role else operator.name
    command = [str(operator.build() / operator.binary), *args]
    if etc:
        command = with_private_etc(command, etc, workdir / f"{name}-etc")
    return ReferenceProcess(
        name, command, workdir, env={"KUBECONFIG": str(kubeconfig), **(env or {})}
    )


def with_private_etc(command: Sequence[str], etc: Mapping[str, Path], scratch: Path) -> list[str]:
    """`command` in a mount namespace of its own whose /etc is an overlay of the host's with
    `etc`'s directories (path under /etc -> directory) copied in: for a manager that reads its
    certificates at a fixed path in a pod, without writing the host's /etc. Needs root (the
    integration tier runs as root, as the real node's tests need)."""
    upper, work = scratch / "upper", scratch / "work"
    upper.mkdir(parents=True)
    work.mkdir()
    steps = [f"mount -t overlay overlay -o lowerdir=/etc,upperdir={upper},workdir={work} /etc"]
    for target, source in etc.items():
        steps += [
            f"mkdir -p {shlex.quote(target)}",
            f"cp -R {shlex.quote(f'{source}/.')} {shlex.quote(target)}",
        ]
    script = " && ".join([*steps, 'exec "$@"'])
    return [
        "unshare",
        "--mount",
        "--propagation",
        "private",
        "--",
        "sh",
        "-c",
        script,
        "sh",
        *command,
    ]


def serving_certificate(directory: Path) -> bytes:
    """A certificate for 127.0.0.1 signed by a CA made for it, written where controller-runtime's
    webhook server reads it (tls.crt, tls.key); the chain, which the API server is told to
    trust."""
    chain, key = self_signed("127.0.0.1")
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "tls.crt").write_bytes(chain)
    (directory / "tls.key").write_bytes(key)
    return chain


def local_webhook_name(operator: Operator, namespace: str, name: str) -> str:
    """The name local_webhooks gives the release's webhook configuration `name`."""
    return f"{namespace}-{operator.name}-{name}"


def local_webhooks(
    operator: Operator,
    manifest: Path,
    port: int,
    ca_bundle: bytes | None,
    namespace: str,
    host: str = "127.0.0.1",
) -> list[dict[str, Any]]:
    """The operator's webhook configurations (its release's kubebuilder manifest), served by
    its manager as a local process, as controller-runtime's envtest installs them: each
    webhook calls https://HOST:PORT at its service's path, trusting `ca_bundle` (None: the
    operator injects its own CA, as its chart leaves it to); the configurations are named
    after the test and the operator (kubebuilder names every operator's alike), and
    namespaced objects are sent to them only from the test's namespace (the manager is the
    test's alone)."""
    trust = {} if ca_bundle is None else {"caBundle": base64.b64encode(ca_bundle).decode()}
    configurations = [c for c in yaml.safe_load_all(manifest.read_text()) if c]
    only_ours = {"matchLabels": {"kubernetes.io/metadata.name": namespace}}
    for configuration in configurations:
        name = local_webhook_name(operator, namespace, configuration["metadata"]["name"])
        configuration["metadata"] = {"name": name}
        for webhook in configuration["webhooks"]:
            path = webhook["clientConfig"]["service"]["path"]
            webhook["clientConfig"] = {"url": f"https://{host}:{port}{path}", **trust}
            webhook["namespaceSelector"] = only_ours
    return configurations


@contextlib.contextmanager
def webhooks_served_locally(
    cluster: Cluster,
    operator: Operator,
    manifest: Path,
    port: int,
    ca_bundle: bytes | None,
    namespace: str,
    host: str = "127.0.0.1",
    adjust: Callable[[list[dict[str, Any]]], None] = lambda _: None,
) -> Iterator[None]:
    """The operator's webhook configurations (local_webhooks, then `adjust`ed) installed
    while in the block."""
    configurations = local_webhooks(operator, manifest, port, ca_bundle, namespace, host)
    adjust(configurations)
    cluster.kubectl("apply", "-f", "-", input=yaml.safe_dump_all(configurations))
    try:
        yield
    finally:
        for configuration in configurations:
            name = configuration["metadata"]["name"]
            cluster.kubectl("delete", configuration["kind"], name, "--ignore-not-found")


def local_configuration(
    api_version: str,
    webhook_port: int,
    health: int,
    cert_dir: Path | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A kubebuilder operator's Configuration (its release's, `api_version`), made local: no
    leader election, the webhook server on 127.0.0.1 with the test's certificate (read from
    `cert_dir`, else controller-runtime's default directory), no metrics, health checks on a
    port of the test's; `extra` keys added or replaced."""
    webhook: dict[str, Any] = {"port": webhook_port, "host": "127.0.0.1"}
    if cert_dir is not None:
        webhook["certDir"] = str(cert_dir)
    return {
        "apiVersion": api_version,
        "kind": "Configuration",
        "leaderElection": {"leaderElect": False},
        "webhook": webhook,
        "metrics": {"bindAddress": "0"},
        "health": {"healthProbeBindAddress": f"127.0.0.1:{health}"},
        **extra,
    }


@contextlib.contextmanager
def local_manager(
    cluster: Cluster,
    start: Callable[..., ReferenceProcess],
    operator: Operator,
    namespace: str,
    workdir: Path,
    *,
    certs: Path,
    configuration: Callable[[int, int], dict[str, Any]],
    webhooks: Path,
    args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    etc: Mapping[str, Path] | None = None,
) -> Iterator[ReferenceProcess]:
    """The operator's manager (started by the batch_operator fixture's `start`) with the
    Configuration `configuration(webhook port, health port)`, ready, its webhook server
    serving a certificate made in `certs`, and its webhook configurations (the manifest
    `webhooks`) installed while in the block."""
    bundle = serving_certificate(certs)
    webhook_port, health = free_port(), free_port()
    config = workdir / f"{operator.name}.yaml"
    config.write_text(yaml.safe_dump(configuration(webhook_port, health)))
    manager = start(operator, [f"--config={config}", *args], cluster.kubeconfig, env, etc)
    manager.wait_ready(f"http://127.0.0.1:{health}/readyz")
    with webhooks_served_locally(cluster, operator, webhooks, webhook_port, bundle, namespace):
        yield manager


def condition(obj: Mapping[str, Any], kind: str) -> dict[str, Any]:
    """The object's status condition of type `kind` ({} when it has none)."""
    found = [c for c in (obj.get("status") or {}).get("conditions") or [] if c["type"] == kind]
    return dict(found[0]) if found else {}


def condition_status(obj: Mapping[str, Any], kind: str) -> str | None:
    status = condition(obj, kind).get("status")
    return None if status is None else str(status)


BLOCK = "example.com/block"


def two_blocks(
    schedulable_nodes: Callable[..., list[str]], prefix: str, namespace: str, **node: Any
) -> dict[str, str]:
    """Four kwok nodes of 4 CPUs for the test (labelled batchops=<namespace>), two to a block
    (the BLOCK label); node -> block."""
    block_of = {f"{prefix}-{namespace}-{i}": f"b{i // 2}" for i in range(4)}
    schedulable_nodes(
        *(
            kwok_node(name, cpu="4", labels={"batchops": namespace, BLOCK: block}, **node)
            for name, block in block_of.items()
        )
    )
    return block_of


def blocks_of_groups(
    placed: Mapping[str, str],
    members: Mapping[str, Mapping[str, Any]],
    group_label: str,
    block_of: Mapping[str, str],
) -> dict[str, set[str]]:
    """The blocks each group's pods (by the pod label `group_label`) were placed in."""
    blocks: dict[str, set[str]] = {}
    for name, node in placed.items():
        group = members[name]["metadata"]["labels"][group_label]
        blocks.setdefault(group, set()).add(block_of[node])
    return blocks


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture
def batch_operator(tmp_path: Path) -> Iterator[Callable[..., ReferenceProcess]]:
    """Starts batch operators' managers for a test; stops them after it, printing their logs."""
    started: list[ReferenceProcess] = []

    def start(
        operator: Operator,
        args: Sequence[str],
        kubeconfig: Path,
        env: Mapping[str, str] | None = None,
        etc: Mapping[str, Path] | None = None,
        role: str = "",
    ) -> ReferenceProcess:
        manager = start_manager(operator, args, tmp_path, kubeconfig, env, etc, role)
        started.append(manager)
        return manager

    yield start
    for manager in started:
        manager.stop()
        print(f"----- {manager.name} log -----\n{manager.log()[-8000:]}")


@pytest.fixture
def gang_runtime(
    cluster: Cluster, start_runtime: Callable[..., RuntimeProcess]
) -> Callable[[str], RuntimeProcess]:
    """The runtime serving `scheduler_name` with Coscheduling as scheduler-plugins configures
    it, the v1alpha1 PodGroup CRD installed first (the runtime keeps the groups' status)."""

    def start(scheduler_name: str) -> RuntimeProcess:
        install_crds(cluster)
        config = coscheduling_configuration(scheduler_name, cluster.kubeconfig, 60)
        del config["clientConnection"]
        return start_runtime(config, name=f"runtime-{scheduler_name}")

    return start


def read(cluster: Cluster, resource: str, namespace: str, name: str) -> dict[str, Any]:
    """One object as JSON ({} while it does not exist)."""
    done = cluster.kubectl("get", resource, name, "-n", namespace, "-o", "json", check=False)
    if done.returncode != 0:
        return {}
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def pod_group_phase(cluster: Cluster, namespace: str, name: str) -> str:
    return str(read(cluster, f"podgroups.{GROUP}", namespace, name).get("status", {}).get("phase"))


def group_pods(cluster: Cluster, namespace: str, group: str) -> dict[str, dict[str, Any]]:
    """The pods labelled as members of the v1alpha1 PodGroup `group`."""
    shown = cluster.kubectl(
        "get", "pods", "-n", namespace, "-l", f"{GROUP}/pod-group={group}", "-o", "json"
    ).stdout
    return {p["metadata"]["name"]: p for p in json.loads(shown)["items"]}


def wait_members(cluster: Cluster, namespace: str, group: str, count: int) -> list[str]:
    """Waits until the operator has made `count` pods of the group; their names."""
    found: dict[str, dict[str, Any]] = wait_for(
        f"{count} pods of group {group} in {namespace}",
        lambda: pods if len(pods := group_pods(cluster, namespace, group)) == count else None,
        timeout=120,
    )
    return sorted(found)


def scheduled_by(events: list[dict[str, Any]], pod: str) -> list[tuple[str, str]]:
    """(reportingController, reportingInstance) of each Scheduled event about `pod`."""
    return [
        (e["reportingController"], e.get("reportingInstance", ""))
        for e in events
        if e["reason"] == "Scheduled" and e["regarding"]["name"] == pod
    ]


def refused(events: list[dict[str, Any]], pod: str) -> bool:
    return any(e["reason"] == "FailedScheduling" and e["regarding"]["name"] == pod for e in events)


@pytest.fixture
def jobset(
    cluster: Cluster,
    namespace: str,
    batch_operator: Callable[..., ReferenceProcess],
    tmp_path: Path,
) -> Iterator[ReferenceProcess]:
    """JobSet's manager, its webhooks answering for the test's namespace (JobSets, and
    Kubeflow Trainer's TrainJobs, which it runs as JobSets)."""
    source = JOBSET.source()
    apply_crds(cluster, sorted((source / "config/components/crd/bases").glob("*.yaml")))
    certs = tmp_path / "jobset-certs"
    with local_manager(
        cluster,
        batch_operator,
        JOBSET,
        namespace,
        tmp_path,
        certs=certs,
        configuration=lambda webhook_port, health: local_configuration(
            "config.jobset.x-k8s.io/v1alpha1",
            webhook_port,
            health,
            certs,
            internalCertManagement={"enable": False},
        ),
        webhooks=source / "config/components/webhook/manifests.yaml",
    ) as manager:
        yield manager
        cluster.kubectl("delete", "jobsets.jobset.x-k8s.io", "--all", "-n", namespace)
