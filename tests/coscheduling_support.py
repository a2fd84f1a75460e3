"""scheduler-plugins as a second reference for gangs (scheduling.x-k8s.io/v1alpha1 PodGroups,
as Kubeflow's operators, KubeRay and the Spark operator create them): its kube-scheduler with
Coscheduling under a scheduler name of its own, its controller (which keeps PodGroup status),
the PodGroup CRD the project ships (manifests/components/podgroup-crd), and builders for
PodGroups and their pods. Built by tools/build-binaries.sh at SCHEDULER_PLUGINS_VERSION."""

from __future__ import annotations

import json
import os
import ssl
import subprocess
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator, Mapping
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import yaml
from cluster import REPO, Cluster, wait_for
from runtime_support import make_pod

from benchmarks.processes import free_port, stop_process
from benchmarks.tools import cluster_tool, pinned_versions

GROUP = "scheduling.x-k8s.io"
API_VERSION = f"{GROUP}/v1alpha1"
POD_GROUP_LABEL = f"{GROUP}/pod-group"
MODULE = "sigs.k8s.io/scheduler-plugins"
SHIPPED_CRD = (
    REPO / "manifests" / "components" / "podgroup-crd" / "podgroups.scheduling.x-k8s.io.yaml"
)
MODULE_CRD = "config/crd/bases/scheduling.x-k8s.io_podgroups.yaml"
# The controller also reconciles ElasticQuotas, and does not start without their CRD.
MODULE_QUOTA_CRD = "config/crd/bases/scheduling.x-k8s.io_elasticquotas.yaml"


def version() -> str:
    return pinned_versions()["SCHEDULER_PLUGINS_VERSION"]


def bin_dir() -> Path:
    """Where tools/build-binaries.sh put scheduler-plugins' kube-scheduler and controller."""
    found = [Path(d) for d in cluster_tool("bin").splitlines() if "/scheduler-plugins-" in d]
    assert found, "tools/build-binaries.sh printed no scheduler-plugins directory"
    return found[0]


def kubernetes_minor() -> str:
    """The Kubernetes minor scheduler-plugins' kube-scheduler is built from ("1.35"): its code,
    and so its messages, are that minor's, and the runtime emulates it beside it."""
    done = subprocess.run(
        [str(bin_dir() / "kube-scheduler"), "--version"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    version = done.stdout.split()[-1]  # "Kubernetes v1.35.4"
    return ".".join(version.removeprefix("v").split(".")[:2])


def module_dir() -> Path:
    """The pinned release's source, as the Go module cache holds it."""
    done = subprocess.run(
        ["go", "mod", "download", "-json", f"{MODULE}@{version()}"],
        cwd=bin_dir() / "src",
        capture_output=True,
        text=True,
        check=True,
    )
    return Path(json.loads(done.stdout)["Dir"])


def shipped_crd_body() -> str:
    """The shipped CRD file without its provenance comment."""
    lines = SHIPPED_CRD.read_text().splitlines(keepends=True)
    first = next(i for i, line in enumerate(lines) if not line.startswith("#"))
    return "".join(lines[first:])


def install_crds(cluster: Cluster) -> None:
    """The shipped PodGroup CRD (as a user applies it) and the module's ElasticQuota CRD."""
    cluster.kubectl("apply", "--server-side", "-f", str(SHIPPED_CRD))
    cluster.kubectl("apply", "--server-side", "-f", str(module_dir() / MODULE_QUOTA_CRD))
    for name in ("podgroups", "elasticquotas"):
        crd = f"{name}.{GROUP}"
        wait_for(f"the CRD {crd} to be served", partial(established, cluster, crd))


def established(cluster: Cluster, crd: str) -> bool:
    """Whether the CRD is served. `kubectl wait` fails at once, rather than waiting, on a CRD
    created so recently that it has no status yet."""
    waited = cluster.kubectl(
        "wait", "--for=condition=Established", f"crd/{crd}", "--timeout=30s", check=False
    )
    return waited.returncode == 0


def pod_group(
    name: str,
    min_member: int,
    *,
    min_resources: Mapping[str, str] | None = None,
    schedule_timeout_seconds: int | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {"minMember": min_member}
    if min_resources is not None:
        spec["minResources"] = dict(min_resources)
    if schedule_timeout_seconds is not None:
        spec["scheduleTimeoutSeconds"] = schedule_timeout_seconds
    return {"apiVersion": API_VERSION, "kind": "PodGroup", "metadata": {"name": name}, "spec": spec}


def gang_pod(name: str, group: str, scheduler_name: str, **fields: Any) -> dict[str, Any]:
    """A member of a PodGroup, labelled as Kubeflow's operators label them."""
    labels = {POD_GROUP_LABEL: group, **fields.pop("labels", {})}
    return make_pod(name, scheduler_name, labels=labels, **fields)


def create_pod_groups(cluster: Cluster, namespace: str, *groups: dict[str, Any]) -> None:
    cluster.kubectl("create", "-n", namespace, "-f", "-", input=yaml.safe_dump_all(groups))


def read_pod_group(cluster: Cluster, namespace: str, name: str) -> dict[str, Any]:
    shown = cluster.kubectl("get", f"podgroups.{GROUP}", name, "-n", namespace, "-o", "json")
    group: dict[str, Any] = json.loads(shown.stdout)
    return group


def coscheduling_configuration(
    scheduler_name: str, kubeconfig: Path, permit_waiting_seconds: int
) -> dict[str, Any]:
    """Coscheduling as scheduler-plugins' own manifests/coscheduling configures it, under
    `scheduler_name`: at every extension point it has, and as the queue's sort."""
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "leaderElection": {"leaderElect": False},
        "clientConnection": {"kubeconfig": str(kubeconfig)},
        "profiles": [
            {
                "schedulerName": scheduler_name,
                "plugins": {
                    "multiPoint": {"enabled": [{"name": "Coscheduling"}]},
                    "queueSort": {
                        "enabled": [{"name": "Coscheduling"}],
                        "disabled": [{"name": "*"}],
                    },
                },
                "pluginConfig": [
                    {
                        "name": "Coscheduling",
                        "args": {"permitWaitingTimeSeconds": permit_waiting_seconds},
                    }
                ],
            }
        ],
    }


class ReferenceProcess:
    """One of scheduler-plugins' binaries, logging to a file of the test's."""

    def __init__(
        self, name: str, command: list[str], workdir: Path, env: Mapping[str, str] | None = None
    ) -> None:
        self.name = name
        self.log_path = workdir / f"{name}.log"
        self._log = self.log_path.open("wb")
        self.process = subprocess.Popen(
            command, stdout=self._log, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})}
        )

    def log(self) -> str:
        if not self._log.closed:
            self._log.flush()
        return self.log_path.read_text(errors="replace")

    def wait_ready(self, url: str, timeout: float = 120) -> None:
        try:
            wait_for(
                f"{self.name} to be ready at {url}",
                lambda: self.process.poll() is None and _answers_ok(url),
                timeout=timeout,
            )
        except AssertionError as error:  # with the log as it is by then
            raise AssertionError(f"{error}\n{self.name}'s log:\n{self.log()[-4000:]}") from None

    def stop(self) -> None:
        stop_process(self.process, timeout=30)
        self._log.close()


def _answers_ok(url: str) -> bool:
    insecure = ssl.create_default_context()
    insecure.check_hostname = False
    insecure.verify_mode = ssl.CERT_NONE
    try:
        with urllib.request.urlopen(url, context=insecure, timeout=2) as answer:
            return bool(answer.read() == b"ok")
    except (OSError, urllib.error.URLError):
        return False


def start_scheduler(
    cluster: Cluster, workdir: Path, scheduler_name: str, permit_waiting_seconds: int = 10
) -> ReferenceProcess:
    """scheduler-plugins' kube-scheduler with Coscheduling under `scheduler_name`, ready."""
    config = workdir / "coscheduling.yaml"
    config.write_text(
        yaml.safe_dump(
            coscheduling_configuration(scheduler_name, cluster.kubeconfig, permit_waiting_seconds)
        )
    )
    port = free_port()
    scheduler = ReferenceProcess(
        "coscheduling-scheduler",
        [
            str(bin_dir() / "kube-scheduler"),
            f"--config={config}",
            "--bind-address=127.0.0.1",
            f"--secure-port={port}",
            f"--cert-dir={workdir}",
            f"--authentication-kubeconfig={cluster.kubeconfig}",
            f"--authorization-kubeconfig={cluster.kubeconfig}",
        ],
        workdir,
    )
    scheduler.wait_ready(f"https://127.0.0.1:{port}/readyz")
    return scheduler


def start_controller(cluster: Cluster, workdir: Path) -> ReferenceProcess:
    """scheduler-plugins' controller (PodGroup and ElasticQuota status), ready."""
    probes = free_port()
    controller = ReferenceProcess(
        "podgroup-controller",
        [
            str(bin_dir() / "controller"),
            f"--metricsAddr=127.0.0.1:{free_port()}",
            f"--probeAddr=127.0.0.1:{probes}",
        ],
        workdir,
        env={"KUBECONFIG": str(cluster.kubeconfig)},
    )
    controller.wait_ready(f"http://127.0.0.1:{probes}/readyz")
    return controller


@pytest.fixture
def coscheduling(cluster: Cluster, tmp_path: Path) -> Iterator[Callable[..., str]]:
    """Starts scheduler-plugins' scheduler (Coscheduling) and controller for a test, with the
    CRDs installed; returns the scheduler name its pods must name. Stops both afterwards,
    printing their logs."""
    started: list[ReferenceProcess] = []

    def start(permit_waiting_seconds: int = 10, controller: bool = True) -> str:
        install_crds(cluster)
        name = f"cosched-{uuid.uuid4().hex[:8]}"
        started.append(start_scheduler(cluster, tmp_path, name, permit_waiting_seconds))
        if controller:
            started.append(start_controller(cluster, tmp_path))
        return name

    yield start
    for process in started:
        process.stop()
        print(f"----- {process.name} log -----\n{process.log()[-6000:]}")
