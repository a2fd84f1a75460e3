"""The scheduler runtime as its integration tests run it: a real `scheduler-runtime run`
process against the test cluster, with a configuration written per test, plus helpers to
create pods and read where they went and what was reported about them."""

from __future__ import annotations

import json
import os
import signal
import ssl
import subprocess
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import kubernetes
import pytest
import yaml
from cluster import REPO, Cluster, wait_for
from timing import settle

from benchmarks.processes import free_port, stop_process
from benchmarks.tools import kubernetes_version
from scheduler_runtime.config.defaults import default_multi_point
from scheduler_runtime.config.features import FeatureGates
from scheduler_runtime.config.versions import choose_emulation
from scheduler_runtime.framework.registry import PluginLoadError, registry

# The minor the runtime emulates on the control plane (tools/versions.env's pin, or
# KUBE_VERSION's): the control plane's own, or the newest the runtime knows when it is newer.
CLUSTER_MINOR = choose_emulation(kubernetes_version()).version
DEFAULT_PLUGINS = [
    name
    for name, _ in default_multi_point(FeatureGates(version=CLUSTER_MINOR).features, CLUSTER_MINOR)
]
RUNTIME = REPO / ".venv" / "bin" / "scheduler-runtime"


def plugins_not_installed() -> list[str]:
    """Default plugins this checkout does not ship yet; the runtime refuses profiles naming
    them, so test profiles leave them out until they exist."""
    missing = []
    for name in DEFAULT_PLUGINS:
        try:
            registry()[name].load()
        except PluginLoadError:
            missing.append(name)
    return missing


def scheduler_config(
    scheduler_name: str,
    *,
    lease: Mapping[str, Any] | None = None,
    plugins: Mapping[str, Any] | None = None,
    plugin_config: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A KubeSchedulerConfiguration with one profile; leader election only when `lease` says."""
    profile: dict[str, Any] = {"schedulerName": scheduler_name}
    wanted = dict(plugins or {})
    missing = [{"name": name} for name in plugins_not_installed()]
    if missing:
        multi_point = dict(wanted.get("multiPoint") or {})
        multi_point["disabled"] = [*multi_point.get("disabled", []), *missing]
        wanted["multiPoint"] = multi_point
    if wanted:
        profile["plugins"] = wanted
    if plugin_config:
        profile["pluginConfig"] = plugin_config
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "leaderElection": {"leaderElect": False}
        if lease is None
        else {"leaderElect": True, **lease},
        "profiles": [profile],
    }


def admin_certificate(cluster: Cluster) -> tuple[str, str]:
    """The cluster admin's client certificate and key (system:masters), from its kubeconfig."""
    user = yaml.safe_load(cluster.kubeconfig.read_text())["users"][0]["user"]
    return user["client-certificate"], user["client-key"]


class RuntimeProcess:
    """One `scheduler-runtime run` process; its log is kept for failure reports. It serves on
    its secure port (on loopback), and on a plain port only when the test asks for one."""

    def __init__(
        self,
        cluster: Cluster,
        config: dict[str, Any],
        workdir: Path,
        name: str,
        args: tuple[str, ...] = (),
        plain: bool = False,
    ) -> None:
        self.name = name
        self.scheduler_names = [profile["schedulerName"] for profile in config["profiles"]]
        self.secure_port = free_port()
        self.port = free_port() if plain else None
        self.kubeconfig = cluster.kubeconfig
        self.admin = admin_certificate(cluster)
        self.config_path = workdir / f"{name}.yaml"
        self.config_path.write_text(yaml.safe_dump(config))
        self.log_path = workdir / f"{name}.log"
        self._log = self.log_path.open("wb")
        self.process = subprocess.Popen(
            [
                str(RUNTIME),
                "run",
                "--config",
                str(self.config_path),
                "--kubeconfig",
                str(cluster.kubeconfig),
                "--bind-address=127.0.0.1",
                f"--secure-port={self.secure_port}",
                *([f"--listen=127.0.0.1:{self.port}"] if plain else []),
                *args,
            ],
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "POD_NAME": name},
        )

    def get(
        self, path: str, *, token: str | None = None, as_admin: bool = False, plain: bool = False
    ) -> tuple[int, str]:
        """A GET on the runtime's own server ((0, reason) while it is not listening): on the
        secure port with a bearer token, the cluster admin's client certificate or nothing;
        on the plain port when asked (and started with one)."""
        if plain:
            url, opener = f"http://127.0.0.1:{self.port}{path}", urllib.request.build_opener()
        else:
            context = ssl.create_default_context()
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE  # its self-signed certificate
            if as_admin:
                context.load_cert_chain(*self.admin)
            url = f"https://127.0.0.1:{self.secure_port}{path}"
            opener = urllib.request.build_opener(urllib.request.HTTPSHandler(context=context))
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        try:
            with opener.open(urllib.request.Request(url, headers=headers), timeout=5) as answer:
                return answer.status, answer.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()
        except OSError as error:
            return 0, str(error)

    def wait_ready(self, timeout: float = 60) -> None:
        wait_for(
            f"{self.name} to be ready (log: {self.log()[-2000:]})",
            lambda: self.process.poll() is None and self.get("/readyz")[0] == 200,
            timeout=timeout,
        )

    def log(self) -> str:
        if not self._log.closed:
            self._log.flush()
        return self.log_path.read_text(errors="replace")

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> int:
        """SIGTERM, as the kubelet sends it; the exit status."""
        status = stop_process(self.process, timeout=30)
        self._log.close()
        return status


def _lease_namespace(cluster: Cluster, config: dict[str, Any]) -> None:
    """The namespace a leader-electing configuration keeps its Lease in, made when missing
    (the operator makes its own in a cluster; a test must not rely on another having run)."""
    election = config.get("leaderElection") or {}
    namespace = election.get("resourceNamespace")
    if not namespace or not election.get("leaderElect", True):
        return
    core = kubernetes.client.CoreV1Api(cluster.api)
    try:
        core.create_namespace({"metadata": {"name": namespace}})
    except kubernetes.client.ApiException as error:
        if error.status != 409:  # already there
            raise


@pytest.fixture
def start_runtime(
    cluster: Cluster, tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[Callable[..., RuntimeProcess]]:
    """Starts runtime processes for a test and stops them after it (printing their logs)."""
    started: list[RuntimeProcess] = []

    def start(
        config: dict[str, Any],
        name: str = "runtime",
        ready: bool = True,
        args: tuple[str, ...] = (),
        plain: bool = False,
    ) -> RuntimeProcess:
        _lease_namespace(cluster, config)
        runtime = RuntimeProcess(cluster, config, tmp_path, name, args, plain)
        started.append(runtime)
        if ready:
            runtime.wait_ready()
        return runtime

    yield start
    for runtime in started:
        runtime.stop()
        print(f"----- {runtime.name} log -----\n{runtime.log()[-6000:]}")


@pytest.fixture
def schedulable_nodes(
    cluster: Cluster, make_nodes: Callable[..., list[str]]
) -> Callable[..., list[str]]:
    """make_nodes, then waits until the node lifecycle controller has lifted its
    `node.kubernetes.io/*` taints and gives the runtime's node watch a moment to see that
    (nodes and pods are separate watches, so a pod created at once could otherwise be seen
    before the node's last update)."""

    def make(*nodes: dict[str, Any]) -> list[str]:
        names = make_nodes(*nodes)
        wait_for(
            f"nodes {names} without node.kubernetes.io taints",
            lambda: all(not _condition_taints(cluster, name) for name in names),
        )
        settle(1)
        return names

    return make


def _condition_taints(cluster: Cluster, name: str) -> list[str]:
    node = kubernetes.client.CoreV1Api(cluster.api).read_node(name)
    return [t.key for t in node.spec.taints or () if t.key.startswith("node.kubernetes.io/")]


def unique_scheduler_name() -> str:
    return f"live-{uuid.uuid4().hex[:8]}"


def make_pod(
    name: str,
    scheduler_name: str,
    *,
    cpu: str | None = None,
    memory: str | None = None,
    image: str = "registry.k8s.io/pause:3.10",
    labels: Mapping[str, str] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    """A pod for the given scheduler; extra keyword arguments go into its spec."""
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    container: dict[str, Any] = {"name": "main", "image": image}
    if requests:
        container["resources"] = {"requests": requests}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": dict(labels or {})},
        "spec": {"schedulerName": scheduler_name, "containers": [container], **spec},
    }


def listed_events(
    api: kubernetes.client.ApiClient, namespace: str, field_selector: str
) -> list[dict[str, Any]]:
    """events.k8s.io/v1 events as JSON, oldest first. Not through the client's model, which
    refuses a core/v1 event read through events.k8s.io (its eventTime is null), as some
    releases' schedulers still write a few."""
    answer = kubernetes.client.EventsV1Api(api).list_namespaced_event(
        namespace, field_selector=field_selector, _preload_content=False
    )
    items: list[dict[str, Any]] = json.loads(answer.data)["items"]
    return sorted(items, key=lambda e: e["metadata"]["creationTimestamp"])


class Pods:
    """Pods of one namespace: create them, wait for their nodes, read their events."""

    def __init__(self, cluster: Cluster, namespace: str) -> None:
        self.cluster = cluster
        self.namespace = namespace
        self.core = kubernetes.client.CoreV1Api(cluster.api)

    def create(self, *pods: dict[str, Any]) -> None:
        for pod in pods:
            self.core.create_namespaced_pod(self.namespace, pod)

    def all(self) -> dict[str, dict[str, Any]]:
        shown = self.cluster.kubectl("get", "pods", "-n", self.namespace, "-o", "json").stdout
        return {p["metadata"]["name"]: p for p in json.loads(shown)["items"]}

    def nodes(self) -> dict[str, str | None]:
        return {name: p["spec"].get("nodeName") for name, p in self.all().items()}

    def wait_placed(self, *names: str, timeout: float = 60) -> dict[str, str]:
        """Waits until every named pod has a node; their nodes."""

        def placed() -> dict[str, str] | None:
            nodes = self.nodes()
            if all(nodes.get(name) for name in names):
                return {name: str(nodes[name]) for name in names}
            return None

        result: dict[str, str] = wait_for(f"pods {names} to be placed", placed, timeout=timeout)
        return result

    def events(self, pod: str | None = None) -> list[dict[str, Any]]:
        """events.k8s.io/v1 events in the namespace (about `pod` when given)."""
        shown = self.cluster.kubectl(
            "get", "events.events.k8s.io", "-n", self.namespace, "-o", "json"
        ).stdout
        items = json.loads(shown)["items"]
        return [e for e in items if pod is None or e["regarding"]["name"] == pod]

    def wait_event(self, pod: str, reason: str, timeout: float = 60) -> dict[str, Any]:
        found: dict[str, Any] = wait_for(
            f"a {reason} event for {pod}",
            lambda: next((e for e in self.events(pod) if e["reason"] == reason), None),
            timeout=timeout,
        )
        return found

    def condition(self, pod: str, kind: str = "PodScheduled") -> dict[str, Any] | None:
        conditions = self.all()[pod].get("status", {}).get("conditions") or []
        return next((c for c in conditions if c["type"] == kind), None)


@pytest.fixture
def pods(cluster: Cluster, namespace: str) -> Pods:
    return Pods(cluster, namespace)
