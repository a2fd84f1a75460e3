"""Faults for the integration tests to inject into their own control plane and processes: stop
and restart a component (kwokctl runs each as a process with a pid file), freeze and thaw a
runtime, create many pods at once, read a runtime's metrics, and tally what a fault did to the
pods (created, bound, lost, bound twice, nodes over-committed)."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
import urllib.request
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import kubernetes
import pytest
import yaml
from cluster import Cluster, wait_for
from kubernetes.utils import parse_quantity
from prometheus_client.parser import text_string_to_metric_families
from runtime_support import Pods, RuntimeProcess

from benchmarks.tools import cluster_tool
from benchmarks.tools import shared_cluster_name as cluster_name


def report(line: str) -> None:
    """A measurement, on the real stderr: the in-process operator (kopf's runner) swaps
    sys.stdout while it runs, and would swallow a print."""
    sys.__stderr__.write(f"{line}\n")  # type: ignore[union-attr]
    sys.__stderr__.flush()  # type: ignore[union-attr]


def component_pid(cluster: Cluster, component: str) -> int:
    """The pid of one of the control plane's processes (kube-apiserver, etcd, ...)."""
    return int((cluster.kubeconfig.parent / "pids" / f"{component}.pid").read_text().strip())


def kill_component(cluster: Cluster, component: str) -> None:
    """SIGKILLs a component and waits until it is gone, reaped too: kwokctl counts a zombie
    as running and would not start the component again."""
    pid = component_pid(cluster, component)
    os.kill(pid, signal.SIGKILL)
    wait_for(f"{component} ({pid}) to be gone", lambda: not exists(pid), timeout=60, interval=0.1)


def exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def stop_control_plane(cluster: Cluster) -> None:
    """kwokctl stops every component; this waits until each has exited, so that none still
    holds its port when the components start again (etcd or the API server would then fail to
    bind and stay down)."""
    pids = [int(f.read_text().strip()) for f in (cluster.kubeconfig.parent / "pids").glob("*.pid")]
    cluster_tool("kwokctl", "--name", cluster_name(), "stop", "cluster")
    wait_for(
        "the control plane's processes to exit",
        lambda: not [pid for pid in pids if running(pid)],
        timeout=60,
        interval=0.1,
    )


def running(pid: int) -> bool:
    """Alive and not a zombie (an exited process keeps no port)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state != "Z"


def start_stopped_components(cluster: Cluster) -> None:
    """kwokctl starts whatever component of the cluster is not running (again, should one exit
    at start), until the API server answers; a failure shows what etcd and the API server logged."""

    def started() -> bool:
        cluster_tool("kwokctl", "--name", cluster_name(), "start", "cluster")
        return cluster.kubectl("get", "--raw", "/readyz", check=False).returncode == 0

    try:
        wait_for("the API server to answer again", started, timeout=180, interval=2)
    except AssertionError as timed_out:
        raise AssertionError(f"{timed_out}\n{component_logs(cluster)}") from None


def component_logs(cluster: Cluster, lines: int = 30) -> str:
    logs = cluster.kubeconfig.parent / "logs"
    return "\n".join(
        f"--- {name}.log (last {lines} lines) ---\n"
        + "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
        for name in ("etcd", "kube-apiserver")
        if (path := logs / f"{name}.log").is_file()
    )


def etcd_url(cluster: Cluster) -> str:
    """etcd's client URL, from the cluster's kwokctl configuration."""
    documents = yaml.safe_load_all((cluster.kubeconfig.parent / "kwok.yaml").read_text())
    components = [c for d in documents if d and "components" in d for c in d["components"]]
    (etcd,) = [c for c in components if c["name"] == "etcd"]
    (port,) = [p["port"] for p in etcd["ports"] if p["name"] == "http"]
    return f"http://127.0.0.1:{port}"


def etcd_call(cluster: Cluster, path: str, body: dict[str, Any]) -> dict[str, Any]:
    """One call of etcd's JSON gateway (/v3/...)."""
    request = urllib.request.Request(
        etcd_url(cluster) + path, data=json.dumps(body).encode(), method="POST"
    )
    with urllib.request.urlopen(request, timeout=30) as answer:
        result: dict[str, Any] = json.loads(answer.read())
    return result


def compact_etcd(cluster: Cluster) -> int:
    """Compacts etcd's history up to now: a watch resuming from any earlier resourceVersion
    is answered 410 Gone, whether the API server's watch cache or etcd serves it."""
    revision = int(etcd_call(cluster, "/v3/maintenance/status", {})["header"]["revision"])
    etcd_call(cluster, "/v3/kv/compaction", {"revision": str(revision), "physical": True})
    return revision


def freeze(runtime: RuntimeProcess) -> None:
    runtime.process.send_signal(signal.SIGSTOP)


def thaw(runtime: RuntimeProcess) -> None:
    runtime.process.send_signal(signal.SIGCONT)


def create_all(cluster: Cluster, namespace: str, bodies: Iterable[dict[str, Any]]) -> None:
    """Creates pods from a few threads at once, as a controller scaling up would."""
    core = kubernetes.client.CoreV1Api(cluster.api)
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda body: core.create_namespaced_pod(namespace, body), bodies))


def metric(runtime: RuntimeProcess, name: str, **labels: str) -> float:
    """One sample of a runtime's /metrics (0 when absent)."""
    code, text = runtime.get("/metrics", as_admin=True)
    assert code == 200, text
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items()):
                return float(sample.value)
    return 0.0


def pending(runtime: RuntimeProcess) -> dict[str, float]:
    """scheduler_pending_pods by queue."""
    return {
        queue: metric(runtime, "scheduler_pending_pods", queue=queue)
        for queue in ("active", "backoff", "unschedulable", "gated")
    }


def binding_latency(cluster: Cluster) -> str:
    """The API server's own latency for pods/binding requests (apiserver_request_duration_seconds):
    from the request's arrival to its answer, the binding stored. Count, mean and the bucket
    that holds 99% of them."""
    text = cluster.kubectl("get", "--raw", "/metrics").stdout
    buckets: list[tuple[float, float]] = []
    total = count = 0.0
    for family in text_string_to_metric_families(text):
        if family.name != "apiserver_request_duration_seconds":
            continue
        for sample in family.samples:
            labels = sample.labels
            if (labels.get("resource"), labels.get("subresource"), labels.get("verb")) != (
                "pods",
                "binding",
                "POST",
            ):
                continue
            if sample.name.endswith("_bucket"):
                buckets.append((float(labels["le"]), sample.value))
            elif sample.name.endswith("_sum"):
                total += sample.value
            elif sample.name.endswith("_count"):
                count += sample.value
    p99 = next((le for le, seen in sorted(buckets) if seen >= 0.99 * count), float("inf"))
    return (
        f"{int(count)} bindings, {1000 * total / max(count, 1):.1f} ms on average, "
        f"99% within {1000 * p99:.0f} ms"
    )


@pytest.fixture
def priority_class(cluster: Cluster) -> Iterator[str]:
    """A PriorityClass above the default, deleted after the test."""
    name = f"faults-high-{os.getpid()}-{time.monotonic_ns() % 100000}"
    scheduling = kubernetes.client.SchedulingV1Api(cluster.api)
    scheduling.create_priority_class({"metadata": {"name": name}, "value": 1000})
    yield name
    scheduling.delete_priority_class(name)


@dataclass(frozen=True)
class Tally:
    """What a fault did to the pods of one namespace."""

    created: int
    bound: int
    lost: int  # gone (deleted by no one but a scheduler), or neither bound nor unschedulable
    bound_twice: int  # pods with more than one Scheduled event
    over_committed: dict[str, str]  # node -> "requested/allocatable" cpu

    def __str__(self) -> str:
        return (
            f"created {self.created}, bound {self.bound}, lost {self.lost}, "
            f"bound twice {self.bound_twice}, nodes over-committed {len(self.over_committed)}"
            + (f" {self.over_committed}" if self.over_committed else "")
        )


def tally(
    cluster: Cluster, pods: Pods, allocatable: Mapping[str, str], created: Iterable[str]
) -> Tally:
    """Counts what became of the pods a test created (and did not delete), and adds up the cpu
    requests of every pod on each node (all namespaces) against the node's allocatable cpu."""
    names = set(created)
    mine = {name: pod for name, pod in pods.all().items() if name in names}
    core = kubernetes.client.CoreV1Api(cluster.api)
    everywhere = cluster.api.sanitize_for_serialization(core.list_pod_for_all_namespaces())
    requested: Counter[str] = Counter()
    for pod in everywhere["items"]:
        node = pod["spec"].get("nodeName")
        if node in allocatable and pod["status"].get("phase") not in ("Succeeded", "Failed"):
            requested[node] += sum(millicpu(c) for c in pod["spec"]["containers"])
    over = {
        node: f"{requested[node]}m/{allocatable[node]}"
        for node in allocatable
        if requested[node] > int(parse_quantity(allocatable[node]) * 1000)
    }
    bound = [name for name, pod in mine.items() if pod["spec"].get("nodeName")]
    lost = [
        name
        for name in names
        if name not in mine or not (mine[name]["spec"].get("nodeName") or unschedulable(mine[name]))
    ]
    scheduled = Counter(
        event["regarding"]["name"] for event in pods.events() if event["reason"] == "Scheduled"
    )
    return Tally(
        created=len(names),
        bound=len(bound),
        lost=len(lost),
        bound_twice=sum(1 for count in scheduled.values() if count > 1),
        over_committed=over,
    )


def millicpu(container: Mapping[str, Any]) -> int:
    cpu = ((container.get("resources") or {}).get("requests") or {}).get("cpu", "0")
    return int(parse_quantity(cpu) * 1000)


def settled(pods: Pods, names: Iterable[str], timeout: float = 60) -> None:
    """Waits (at most `timeout`) until each of the pods still there is bound or reported
    unschedulable; what is not by then is what `tally` counts as lost."""
    wanted = set(names)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        shown = [pod for name, pod in pods.all().items() if name in wanted]
        if all(pod["spec"].get("nodeName") or unschedulable(pod) for pod in shown):
            return
        time.sleep(0.5)


def unschedulable(pod: Mapping[str, Any]) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or ()
    return any(
        c.get("type") == "PodScheduled" and c.get("reason") == "Unschedulable" for c in conditions
    )
