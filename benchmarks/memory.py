"""What the scheduler keeps per node and per pod, counted by tracemalloc (Python's own
allocations, numpy's arrays included), on a simulate snapshot of a given size.

Objects are decoded from JSON after tracing starts, as the watch decodes them, and the decoded
list is dropped before each reading, so what is counted is what the scheduler holds on to:
- per node: the nodes loaded into the cache and snapshot;
- per bound pod: pods already bound when listed (the cluster's running pods);
- per scheduled pod: pending pods taken through the scheduling cycle and bound (the
  simulation's own per-pod report, its placements, is left out).

The objects carry metadata.managedFields as an API server writes them (the creating client's
entry, and the kubelet's for a running pod's status), and a bound pod what the admission chain
and a kubelet add (the service account's token volume, default tolerations, the running
status): a watch delivers them, so what is kept of them counts.

`python -m benchmarks.memory` (or `make memory`) prints bytes per node and per pod at 500 and
5,000 nodes and, with `--top N`, where each part's bytes were allocated."""

from __future__ import annotations

import argparse
import gc
import tracemalloc
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from benchmarks import simulated, workloads
from scheduler_runtime.config import load_configuration
from scheduler_runtime.simulate import Simulation

SIZES = (500, 5000)
BOUND_PER_NODE = 4  # bound pods listed per node
SCHEDULED = 200  # pending pods scheduled through the cycle
WARM_UP = 20  # pending pods scheduled before (the first cycles' imports and caches)
FRAMES = 8


@dataclass(frozen=True)
class Part:
    """One reading: bytes held after a step, over how many objects, and where."""

    name: str
    objects: int
    bytes: int
    top: list[tuple[str, int]]

    @property
    def per_object(self) -> int:
        return round(self.bytes / self.objects)


def managed_fields(manager: str, fields: dict[str, Any], subresource: str = "") -> dict[str, Any]:
    """One managedFields entry as the API server writes it."""
    entry = {
        "manager": manager,
        "operation": "Update",
        "apiVersion": "v1",
        "time": simulated.CREATED,
        "fieldsType": "FieldsV1",
        "fieldsV1": fields,
    }
    return entry | ({"subresource": subresource} if subresource else {})


def _fields(obj: Any) -> dict[str, Any]:
    """The FieldsV1 set of a JSON object (lists as a whole, as atomic lists are)."""
    if not isinstance(obj, dict):
        return {}
    return {".": {}} | {f"f:{key}": _fields(value) for key, value in obj.items()}


def served(obj: dict[str, Any], manager: str) -> dict[str, Any]:
    """`obj` with the managedFields entry its creating client would leave."""
    fields = _fields({k: v for k, v in obj.items() if k in ("metadata", "spec")})
    obj["metadata"]["managedFields"] = [managed_fields(manager, fields)]
    return obj


def bound_pods(nodes: int, count: int) -> list[dict[str, Any]]:
    """`count` basic pods already bound round-robin over the nodes, running, each as the
    admission chain and a kubelet (kwok's) leave it."""
    listed = workloads.pods("basic", count, simulated.SCHEDULER_NAME)
    for index, pod in enumerate(listed):
        pod["metadata"]["name"] = f"bound-{index:06d}"
        pod["metadata"] |= {
            "namespace": simulated.NAMESPACE,
            "uid": f"uid-bound-{index}",
            "creationTimestamp": simulated.CREATED,
        }
        pod["spec"]["nodeName"] = workloads.node_name(index % nodes)
        admitted(pod, f"{index:05x}")
        served(pod, "kube-controller-manager")
        pod["status"] = running_status(pod, index)
        status = managed_fields("kubelet", _fields({"status": pod["status"]}), "status")
        pod["metadata"]["managedFields"].append(status)
    return listed


def admitted(pod: dict[str, Any], suffix: str) -> None:
    """What the API server's defaults and admission add to a pod: the service account's token
    volume and its mount, the default tolerations, the containers' and the pod's defaults."""
    volume = f"kube-api-access-{suffix}"
    spec = pod["spec"]
    for container in spec["containers"]:
        container |= {
            "imagePullPolicy": "IfNotPresent",
            "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File",
            "volumeMounts": [
                {
                    "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                    "name": volume,
                    "readOnly": True,
                }
            ],
        }
    spec |= {
        "dnsPolicy": "ClusterFirst",
        "enableServiceLinks": True,
        "preemptionPolicy": "PreemptLowerPriority",
        "priority": 0,
        "restartPolicy": "Always",
        "securityContext": {},
        "serviceAccount": "default",
        "serviceAccountName": "default",
        "tolerations": [
            {"effect": "NoExecute", "key": key, "operator": "Exists", "tolerationSeconds": 300}
            for key in ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")
        ],
        "volumes": [{"name": volume, "projected": _TOKEN_VOLUME}],
    }


_TOKEN_VOLUME = {
    "defaultMode": 420,
    "sources": [
        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
        {"configMap": {"items": [{"key": "ca.crt", "path": "ca.crt"}], "name": "kube-root-ca.crt"}},
        {
            "downwardAPI": {
                "items": [
                    {
                        "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
                        "path": "namespace",
                    }
                ]
            }
        },
    ],
}


def running_status(pod: dict[str, Any], index: int) -> dict[str, Any]:
    """The status a kubelet (kwok's) reports for a running pod."""
    started = simulated.CREATED
    ip = f"10.{index >> 16 & 255}.{index >> 8 & 255}.{index & 255}"
    return {
        "conditions": [
            {"lastProbeTime": None, "lastTransitionTime": started, "status": "True", "type": t}
            for t in ("Initialized", "Ready", "ContainersReady", "PodScheduled")
        ],
        "containerStatuses": [
            {
                "image": container["image"],
                "imageID": "",
                "lastState": {},
                "name": container["name"],
                "ready": True,
                "restartCount": 0,
                "state": {"running": {"startedAt": started}},
            }
            for container in pod["spec"]["containers"]
        ],
        "phase": "Running",
        "podIP": ip,
        "podIPs": [{"ip": ip}],
        "qosClass": "Burstable",
        "startTime": started,
    }


def simulation() -> Simulation:
    config = load_configuration(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": simulated.SCHEDULER_NAME}],
        }
    )
    return Simulation(config, seed=1, explaining=False)


def _held(step: Callable[[], None], top: int) -> tuple[int, list[tuple[str, int]]]:
    """Bytes still held after `step` (garbage collected), and the `top` places they were
    allocated at (the innermost frame of the project's own code)."""
    gc.collect()
    before = tracemalloc.take_snapshot() if top else None
    start = tracemalloc.get_traced_memory()[0]
    step()
    gc.collect()
    held = tracemalloc.get_traced_memory()[0] - start
    if before is None:
        return held, []
    after = tracemalloc.take_snapshot()
    stats = after.compare_to(before, "traceback")
    places = [(_where(stat.traceback), stat.size_diff) for stat in stats[:top]]
    return held, places


def _where(traceback: tracemalloc.Traceback) -> str:
    for frame in reversed(traceback):  # newest first
        if "scheduler_runtime" in frame.filename:
            return f"{frame.filename.split('scheduler_runtime/')[-1]}:{frame.lineno}"
    frame = traceback[-1]
    return f"{frame.filename.rsplit('/', 1)[-1]}:{frame.lineno}"


def measure(nodes: int, top: int = 0) -> list[Part]:
    """Bytes per node, per bound pod and per scheduled pod at `nodes` nodes."""
    listed = BOUND_PER_NODE * nodes
    node_json = orjson.dumps([served(workloads.node(i), "kwok") for i in range(nodes)])
    bound_json = orjson.dumps(bound_pods(nodes, listed))
    pending = simulated.state(nodes, "basic", WARM_UP + SCHEDULED)
    pods = [served(o, "kube-controller-manager") for o in pending if o.get("kind") == "Pod"]
    warm_json, pending_json = orjson.dumps(pods[:WARM_UP]), orjson.dumps(pods[WARM_UP:])
    sim = simulation()
    parts = []

    def load(data: bytes) -> Callable[[], None]:
        return lambda: sim.load(orjson.loads(data))

    def schedule(data: bytes) -> Callable[[], None]:
        def step() -> None:
            sim.load(orjson.loads(data))
            while sim.step():
                pass
            sim.placements.clear()

        return step

    for name, count, step in (
        ("node", nodes, load(node_json)),
        ("bound pod", listed, load(bound_json)),
        ("", 0, schedule(warm_json)),
        ("scheduled pod", SCHEDULED, schedule(pending_json)),
    ):
        held, places = _held(step, top if name else 0)
        if name:
            parts.append(Part(name, count, held, places))
    placed = len(sim.backend.cache.pod_ids())
    if placed != listed + WARM_UP + SCHEDULED:
        raise RuntimeError(f"{placed} pods counted, expected {listed + WARM_UP + SCHEDULED}")
    return parts


def report(sizes: Iterable[int], top: int) -> str:
    lines = [f"{'nodes':>6}  {'part':<14}{'objects':>8}  {'bytes':>12}  {'bytes each':>10}"]
    details = []
    for nodes in sizes:
        for part in measure(nodes, top):
            lines.append(
                f"{nodes:>6}  {part.name:<14}{part.objects:>8}  {part.bytes:>12,}  "
                f"{part.per_object:>10,}"
            )
            if part.top:
                details.append(f"{nodes} nodes, {part.name}: where the bytes were allocated")
                details += [f"  {size / part.objects:>10,.0f}  {where}" for where, size in part.top]
    return "\n".join([*lines, *details])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.memory")
    parser.add_argument("--nodes", type=int, action="append", help="sizes (default 500, 5000)")
    parser.add_argument("--top", type=int, default=0, help="allocation sites per part")
    args = parser.parse_args(argv)
    tracemalloc.start(FRAMES if args.top else 1)
    print(report(args.nodes or SIZES, args.top))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
