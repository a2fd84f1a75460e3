"""Gang tests on a control plane of their own: the workload API of the cluster's release
enabled (`--runtime-config=scheduling.k8s.io/v1alpha2=true` on 1.36, `v1beta1` on 1.37) and
the workload gates on for the API server, the controller manager and the cluster's scheduler.
The cluster is named after those flags, so it is reused by every gang test (and kept with
KEEP_CLUSTER=1), and the default test cluster stays as it is for everyone else.

A gang test runs one scenario twice, on the same nodes: once with the runtime, once with the
upstream kube-scheduler of the cluster's release (gates on), each in a namespace of its own; it
compares what each did. A watcher (benchmarks.gangs.GangLedger) follows every pod of both runs
and checks the gang invariant: no group is left partly bound, and no member of a group that
gave up keeps a node reserved."""

from __future__ import annotations

import json
import os
import ssl
import subprocess
import threading
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import kubernetes
import pytest
import yaml
from cluster import Cluster, kwok_node, wait_for
from runtime_support import CLUSTER_MINOR, RuntimeProcess, scheduler_config

from benchmarks.gangs import (
    GANG_GATES,
    SERVES_POD_GROUPS,
    WORKLOAD,
    WORKLOAD_CLUSTER_FLAGS,
    GangLedger,
    minimums_of,
)
from benchmarks.gangs import workload_cluster_name as gang_cluster_name
from benchmarks.processes import free_port, stop_process
from benchmarks.tools import cluster_tool, shared_cluster_name
from scheduler_runtime.config.features import version_key

CLUSTER_FLAGS = WORKLOAD_CLUSTER_FLAGS
# The gates of the upstream scheduler the tests compare with (TopologyAwareWorkloadScheduling
# only where a test asks for it: it changes the group cycle's messages): GenericWorkload and
# GangScheduling on 1.36, GenericWorkload alone on 1.37 (it has no GangScheduling gate).
UPSTREAM_GATES = GANG_GATES
# The condition the scheduler sets on a workload API PodGroup (PodGroupInitiallyScheduled
# from 1.37).
SCHEDULED_CONDITION = WORKLOAD.scheduled_condition
POD_GROUPS = "podgroups.scheduling.k8s.io"

# 1.37's group cycle: GangScheduling's PlacementFeasible says why a gang does not fit, and
# PodGroupPostFilter (pod group preemption) adds its part to the group's status.
GROUP_CYCLE_137 = version_key(CLUSTER_MINOR) >= (1, 37)
NO_GROUP_VICTIMS = "pod group preemption: No preemption victims found for incoming preemptor"


def cannot_satisfy(min_count: int, scheduled: int, remaining: int) -> str:
    """PlacementFeasible's refusal: what members the cycle did not reach are told."""
    return (
        f"minCount ({min_count}) cannot be satisfied: {scheduled} scheduled, {remaining} remaining"
    )


def group_refusal(min_count: int, scheduled: int, remaining: int) -> str:
    """The group's status (its condition's message) once PodGroupPostFilter found nothing."""
    return f"{cannot_satisfy(min_count, scheduled, remaining)}, {NO_GROUP_VICTIMS}"


def placed_in_refused_group(min_count: int, scheduled: int, remaining: int) -> str:
    """What a member placed in the cycle of a group that does not fit is told (1.37)."""
    return f"pod group is unschedulable, {group_refusal(min_count, scheduled, remaining)}"


def workload_cluster_name() -> str:
    """The gang cluster's name: the test cluster's, and a digest of the flags it runs with."""
    return gang_cluster_name(shared_cluster_name())


@pytest.fixture(scope="session")
def workload_cluster() -> Iterator[Cluster]:
    """The gang cluster for the whole session (kept with KEEP_CLUSTER=1)."""
    bin_dir = Path(cluster_tool("bin").splitlines()[0])
    name = workload_cluster_name()
    started = Cluster(Path(cluster_tool("up", name, *CLUSTER_FLAGS)), bin_dir)
    if SERVES_POD_GROUPS:
        wait_for(
            "the gang cluster's API server to serve PodGroups",
            lambda: started.kubectl("get", POD_GROUPS, "-A", check=False).returncode == 0,
            timeout=120,
        )
    yield started
    if os.environ.get("KEEP_CLUSTER") != "1":
        cluster_tool("down", name)


# ----- objects


def workload_pod_group(name: str, min_count: int | None, **spec: Any) -> dict[str, Any]:
    """A scheduling.k8s.io PodGroup of the cluster's version: a gang of `min_count` (None:
    basic policy)."""
    policy = {"gang": {"minCount": min_count}} if min_count else {"basic": {}}
    return {
        "apiVersion": WORKLOAD.api_version,
        "kind": "PodGroup",
        "metadata": {"name": name},
        "spec": {"schedulingPolicy": policy, **spec},
    }


def member(name: str, scheduler: str, group: str, cpu: str, **spec: Any) -> dict[str, Any]:
    """A pod of a workload API group (spec.schedulingGroup)."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "schedulerName": scheduler,
            "schedulingGroup": {"podGroupName": group},
            "terminationGracePeriodSeconds": 0,
            "containers": [
                {"name": "c", "image": "pause", "resources": {"requests": {"cpu": cpu}}}
            ],
            **spec,
        },
    }


def lone_pod(name: str, scheduler: str, cpu: str, **spec: Any) -> dict[str, Any]:
    pod = member(name, scheduler, "", cpu, **spec)
    del pod["spec"]["schedulingGroup"]
    return pod


# ----- the two schedulers


@dataclass
class UpstreamScheduler:
    """The cluster's kube-scheduler binary with the workload gates, as one more scheduler."""

    name: str
    process: subprocess.Popen[bytes]
    log_path: Path
    port: int

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def metrics(self) -> str:
        """Its /metrics (allowed without authentication on loopback)."""
        insecure = ssl.create_default_context()
        insecure.check_hostname = False
        insecure.verify_mode = ssl.CERT_NONE
        url = f"https://127.0.0.1:{self.port}/metrics"
        with urllib.request.urlopen(url, context=insecure, timeout=5) as answer:
            return str(answer.read().decode())


def start_upstream(
    cluster: Cluster, workdir: Path, name: str, gates: str = UPSTREAM_GATES
) -> UpstreamScheduler:
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "leaderElection": {"leaderElect": False},
        "clientConnection": {"kubeconfig": str(cluster.kubeconfig)},
        "profiles": [{"schedulerName": name}],
    }
    path = workdir / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config))
    log = workdir / f"{name}.log"
    port = free_port()
    process = subprocess.Popen(
        [
            str(cluster.bin_dir / "kube-scheduler"),
            f"--config={path}",
            f"--feature-gates={gates}",
            f"--secure-port={port}",
            "--bind-address=127.0.0.1",
            f"--cert-dir={workdir}",
            f"--authentication-kubeconfig={cluster.kubeconfig}",
            f"--authorization-kubeconfig={cluster.kubeconfig}",
            "--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics",
            "--authentication-skip-lookup",
        ],
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
    )
    return UpstreamScheduler(name, process, log, port)


def group_attempts(metrics: str, profile: str) -> int:
    """scheduler_podgroup_schedule_attempts_total of one profile, over every result."""
    total = 0.0
    for line in metrics.splitlines():
        if line.startswith("scheduler_podgroup_schedule_attempts_total{") and (
            f'profile="{profile}"' in line
        ):
            total += float(line.rsplit(" ", 1)[1])
    return int(total)


@dataclass
class Schedulers:
    runtime: RuntimeProcess
    upstream: UpstreamScheduler

    @property
    def names(self) -> dict[str, str]:
        return {"runtime": self.runtime.scheduler_names[0], "upstream": self.upstream.name}


@pytest.fixture
def start_gang_schedulers(
    workload_cluster: Cluster,
    tmp_path: Path,
    start_runtime: Callable[..., RuntimeProcess],
) -> Iterator[Callable[[str], Schedulers]]:
    """Starts the runtime and the upstream kube-scheduler with the same feature gates, each
    with a default profile of its own; stops upstream's after the test (printing its log)."""
    started: list[UpstreamScheduler] = []

    def start(gates: str) -> Schedulers:
        suffix = uuid.uuid4().hex[:6]
        runtime = start_runtime(
            scheduler_config(f"gang-rt-{suffix}"),
            name=f"runtime-{suffix}",
            args=(f"--feature-gates={gates}",),
        )
        upstream = start_upstream(workload_cluster, tmp_path, f"gang-up-{suffix}", gates)
        started.append(upstream)
        return Schedulers(runtime, upstream)

    yield start
    for upstream in started:
        stop_process(upstream.process)
        print(f"----- upstream log -----\n{upstream.log()[-6000:]}")


@pytest.fixture
def gang_schedulers(start_gang_schedulers: Callable[[str], Schedulers]) -> Schedulers:
    """The runtime and the upstream kube-scheduler, the gang gates (UPSTREAM_GATES) on for
    both."""
    return start_gang_schedulers(UPSTREAM_GATES)


# ----- one run of a scenario


@dataclass
class Outcome:
    """What a scheduler did with a scenario: where each pod went, the PodScheduled message
    of each pending pod, each PodGroup's PodGroupScheduled condition, and the nominated node
    of each pending pod."""

    nodes: dict[str, str | None]
    messages: dict[str, str]
    conditions: dict[str, tuple[str, str, str]]
    nominated: dict[str, str] = field(default_factory=dict)

    @property
    def bound(self) -> set[str]:
        return {pod for pod, node in self.nodes.items() if node}


class GangRun:
    """One scheduler's run of a scenario, in a namespace of its own; every pod it creates is
    followed by a watcher that keeps the gang ledger."""

    def __init__(self, cluster: Cluster, scheduler: str) -> None:
        self.cluster = cluster
        self.scheduler = scheduler
        self.namespace = f"g-{uuid.uuid4().hex[:8]}"
        self.core = kubernetes.client.CoreV1Api(cluster.api)
        self.custom = kubernetes.client.CustomObjectsApi(cluster.api)
        self.core.create_namespace({"metadata": {"name": self.namespace}})
        wait_for(
            f"the default ServiceAccount of {self.namespace}",
            lambda: (
                self.core.list_namespaced_service_account(
                    self.namespace, field_selector="metadata.name=default"
                ).items
            ),
        )
        self.groups: list[dict[str, Any]] = []
        self.ledger = GangLedger({})
        self._stop = threading.Event()
        self._watcher = threading.Thread(target=self._watch, daemon=True)
        self._watcher.start()

    # ----- making things

    def pod_groups(self, *groups: dict[str, Any]) -> None:
        """PodGroups of either API (by their apiVersion)."""
        for group in groups:
            made = {**group, "metadata": {**group["metadata"], "namespace": self.namespace}}
            api, version = group["apiVersion"].split("/")
            self.custom.create_namespaced_custom_object(
                api, version, self.namespace, "podgroups", made
            )
            self.groups.append(made)
        self.ledger.groups.update(GangLedger(minimums_of(self.groups)).groups)

    def pods(self, *pods: dict[str, Any]) -> None:
        for pod in pods:
            self.core.create_namespaced_pod(self.namespace, pod)

    def delete(self, *names: str) -> None:
        for name in names:
            try:
                self.core.delete_namespaced_pod(name, self.namespace, grace_period_seconds=0)
            except kubernetes.client.ApiException as error:
                if error.status != 404:  # gone already (its Job deleted it)
                    raise
        wait_for(f"pods {names} to be gone", lambda: not set(names) & set(self.current()))

    # ----- what happened

    def current(self) -> dict[str, dict[str, Any]]:
        shown = self.cluster.kubectl("get", "pods", "-n", self.namespace, "-o", "json").stdout
        return {p["metadata"]["name"]: p for p in json.loads(shown)["items"]}

    def wait_bound(self, *names: str, timeout: float = 60) -> None:
        wait_for(
            f"{self.scheduler} to bind {names}",
            lambda: all(
                (self.current().get(n) or {}).get("spec", {}).get("nodeName") for n in names
            ),
            timeout=timeout,
        )

    def wait_decided(self, *names: str, timeout: float = 60) -> None:
        """Until each named pod is bound or was found unschedulable."""

        def decided(pod: dict[str, Any] | None) -> bool:
            if pod is None:
                return False
            if pod["spec"].get("nodeName"):
                return True
            conditions = pod.get("status", {}).get("conditions") or []
            return any(c["type"] == "PodScheduled" and c["status"] == "False" for c in conditions)

        wait_for(
            f"{self.scheduler} to decide on {names}",
            lambda: all(decided(self.current().get(n)) for n in names),
            timeout=timeout,
        )

    def outcome(self) -> Outcome:
        pods = self.current()
        messages, nominated = {}, {}
        for name, pod in pods.items():
            status = pod.get("status") or {}
            for condition in status.get("conditions") or ():
                if condition["type"] == "PodScheduled" and condition["status"] == "False":
                    # Messages name the run's namespace: both runs' read alike without it.
                    message = condition.get("message", "")
                    messages[name] = message.replace(f"{self.namespace}/", "NAMESPACE/")
            if status.get("nominatedNodeName") and not pod["spec"].get("nodeName"):
                nominated[name] = status["nominatedNodeName"]
        return Outcome(
            {name: pod["spec"].get("nodeName") for name, pod in pods.items()},
            messages,
            self.group_status(),
            nominated,
        )

    def group_status(self) -> dict[str, tuple[str, str, str]]:
        """Each PodGroup's status as its users read it: a workload API group's scheduled
        condition (PodGroupScheduled; PodGroupInitiallyScheduled from 1.37), a v1alpha1
        group's phase (kept by scheduler-plugins' controller)."""
        found: dict[str, tuple[str, str, str]] = {}
        # Groups the run made, else those the Job controller made for it (the workload API,
        # where the release serves one).
        made_elsewhere = {WORKLOAD.api_version} if SERVES_POD_GROUPS else set()
        apis = {group["apiVersion"] for group in self.groups} or made_elsewhere
        for api in apis:
            group_name, version = api.split("/")
            for group in self.custom.list_namespaced_custom_object(
                group_name, version, self.namespace, "podgroups"
            )["items"]:
                status = group.get("status") or {}
                name = group["metadata"]["name"]
                if "phase" in status:
                    found[name] = ("phase", status["phase"], "")
                for condition in status.get("conditions") or ():
                    if condition["type"] == SCHEDULED_CONDITION:
                        found[name] = (
                            condition["status"],
                            condition["reason"],
                            condition.get("message", ""),
                        )
        return found

    def check_invariant(self, *, reserving: bool = False) -> None:
        """No group is left partly bound, and (unless `reserving`: scheduler-plugins leaves
        the nominated nodes of the pods it let wait) no member of a group without a bound
        member keeps a node reserved (its nominated node)."""
        wait_for(
            f"no partly bound group in {self.namespace} ({self.scheduler})",
            lambda: not self.ledger.partial_groups(),
            timeout=30,
        )
        if not reserving:
            assert self.ledger.reserved_by_unplaced() == {}

    # ----- the watcher

    def _watch(self) -> None:
        watch = kubernetes.watch.Watch()
        while not self._stop.is_set():
            try:
                for event in watch.stream(
                    self.core.list_namespaced_pod, self.namespace, timeout_seconds=5
                ):
                    pod = event["raw_object"]
                    if event["type"] == "DELETED":
                        self.ledger.deleted(pod, time.monotonic())
                    else:
                        self.ledger.observe(pod, time.monotonic())
                    if self._stop.is_set():
                        return
            except kubernetes.client.ApiException:
                return  # the namespace is gone

    def close(self) -> None:
        self._stop.set()
        self.core.delete_namespace(self.namespace, grace_period_seconds=0)
        self._watcher.join(10)


def run_both(
    cluster: Cluster,
    names: dict[str, str],
    scenario: Callable[[GangRun], Outcome],
    *,
    reference_reserves: bool = False,
) -> dict[str, Outcome]:
    """The scenario for the reference scheduler (`names["upstream"]`), then for the runtime
    (`names["runtime"]`), one after the other on the same nodes; each run's pods are deleted
    before the next starts, and each is checked for the gang invariant."""
    outcomes = {}
    for which in ("upstream", "runtime"):
        run = GangRun(cluster, names[which])
        try:
            outcomes[which] = scenario(run)
            run.check_invariant(reserving=reference_reserves and which == "upstream")
            pods = list(run.current())
            if pods:
                run.delete(*pods)
        finally:
            run.close()
    return outcomes


def gang_nodes(
    prefix: str,
    count: int = 2,
    cpu: str = "4",
    labels: dict[str, str] | None = None,
    taints: tuple[dict[str, str], ...] = (),
) -> list[dict[str, Any]]:
    return [
        kwok_node(f"{prefix}-{index}", cpu=cpu, memory="16Gi", labels=labels, taints=taints)
        for index in range(count)
    ]
