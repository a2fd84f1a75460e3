"""The scheduler's view of the cluster, fed by the node and pod reflectors: the core's
columnar Snapshot (bound and assumed pods counted against their nodes) and the queue of
pending pods that belong to our profiles.

One lock serialises watch updates and scheduling cycles, because the Snapshot must not change
during a cycle. Assumed pods (chosen, not yet bound) count at once, are forgotten if binding
fails, and are confirmed when the bound pod arrives through the watch."""

from __future__ import annotations

import logging
import threading
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from typing import Any

from scheduler_runtime.framework.objects import object_key
from scheduler_runtime.framework.podinfo import PodInfo, pod_info
from scheduler_runtime.framework.snapshot import Snapshot
from scheduler_runtime.live.queue import SchedulingQueue, pod_identity

log = logging.getLogger(__name__)

NODES, PODS = "nodes", "pods"

# The other objects plugins read (framework.objects), and the collections they come from.
OBJECT_PATHS = {
    "Namespace": "/api/v1/namespaces",
    "PodDisruptionBudget": "/apis/policy/v1/poddisruptionbudgets",
    "PersistentVolumeClaim": "/api/v1/persistentvolumeclaims",
    "PersistentVolume": "/api/v1/persistentvolumes",
    "StorageClass": "/apis/storage.k8s.io/v1/storageclasses",
    "CSINode": "/apis/storage.k8s.io/v1/csinodes",
    "Service": "/api/v1/services",
    "ReplicaSet": "/apis/apps/v1/replicasets",
    "StatefulSet": "/apis/apps/v1/statefulsets",
    "ReplicationController": "/api/v1/replicationcontrollers",
}
# Changes to these can make a pod feasible (volumes, namespaceSelector); the rest only feed
# scoring defaults or preemption.
HELPFUL_KINDS = frozenset(
    {"Namespace", "PersistentVolumeClaim", "PersistentVolume", "StorageClass", "CSINode"}
)

# Cluster events that can make an unschedulable pod schedulable (upstream moves pods on them).
NODE_ADD, NODE_UPDATE = "NodeAdd", "NodeUpdate"
POD_ADD, POD_DELETE = "AssignedPodAdd", "AssignedPodDelete"


def pod_key(pod: dict[str, Any]) -> str:
    metadata = pod.get("metadata") or {}
    return f"{metadata.get('namespace') or 'default'}/{metadata.get('name')}"


def is_terminal(pod: dict[str, Any]) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def could_be_helped_by_pod_add(pod: PodInfo) -> bool:
    """Only pod affinity and topology spread can turn feasible because a pod was placed."""
    return bool(pod.affinity.get("podAffinity") or pod.spec.get("topologySpreadConstraints"))


def bound_pod_fingerprint(pod: dict[str, Any]) -> tuple[Any, ...]:
    """What plugins read of a bound pod: kwok's and the kubelet's status updates (phase,
    readiness, IPs) leave it unchanged and so cost nothing; a DisruptionTarget condition
    (preemption checks it) counts."""
    conditions = (pod.get("status") or {}).get("conditions") or ()
    disruption = [c for c in conditions if c.get("type") == "DisruptionTarget"]
    return (*pod_identity(pod), disruption)


def node_fingerprint(node: dict[str, Any]) -> tuple[Any, ...]:
    """What a node update must change to matter to scheduling; heartbeats change nothing here.

    Conditions count by type and status only, as upstream's nodeConditionsChanged does."""
    metadata = node.get("metadata") or {}
    status = node.get("status") or {}
    conditions = sorted(
        (c.get("type", ""), c.get("status", "")) for c in status.get("conditions") or ()
    )
    return (
        metadata.get("labels"),
        metadata.get("annotations"),
        node.get("spec"),
        status.get("allocatable"),
        status.get("images"),
        status.get("declaredFeatures"),
        conditions,
    )


class ClusterCache:
    """Nodes and pods, as the Snapshot and the queue need them."""

    def __init__(
        self, snapshot: Snapshot, queue: SchedulingQueue, scheduler_names: Collection[str]
    ) -> None:
        self.snapshot = snapshot
        self.queue = queue
        self.scheduler_names = frozenset(scheduler_names)
        self.lock = threading.RLock()
        self._nominated: dict[str, dict[str, PodInfo]] = {}
        self._nomination: dict[str, str] = {}
        self._nodes: dict[str, tuple[Any, ...]] = {}
        self._bound: dict[str, tuple[Any, ...]] = {}  # bound pods and their fingerprints
        self._assumed: dict[str, str] = {}

    @contextmanager
    def frozen(self) -> Iterator[Snapshot]:
        """The snapshot, unchanged by watches for as long as the block runs."""
        with self.lock:
            yield self.snapshot

    # ----- the reflectors' Store

    def replace(self, kind: str, items: list[dict[str, Any]]) -> None:
        with self.lock:
            if kind == NODES:
                self._replace_nodes(items)
            elif kind == PODS:
                self._replace_pods(items)
            else:
                self._replace_objects(kind, items)

    def upsert(self, kind: str, item: dict[str, Any]) -> None:
        with self.lock:
            if kind == NODES:
                self._upsert_node(item)
            elif kind == PODS:
                self._upsert_pod(item)
            else:
                self._upsert_object(kind, item)

    def delete(self, kind: str, item: dict[str, Any]) -> None:
        with self.lock:
            if kind == NODES:
                self._delete_node(item["metadata"]["name"])
            elif kind == PODS:
                self._delete_pod(pod_key(item))
            else:
                self.snapshot.objects.delete(kind, object_key(item))

    # ----- assumed pods

    def assume(self, pod: PodInfo, node_name: str) -> None:
        """Counts a pod against the node chosen for it, before it is bound."""
        with self.lock:
            self.snapshot.add_pod(pod.with_node(node_name))
            self._assumed[pod.key] = node_name

    def forget(self, pod: PodInfo) -> None:
        """Binding failed: the assumed pod no longer counts (unless the watch confirmed it)."""
        with self.lock:
            if self._assumed.pop(pod.key, None) is not None and pod.key not in self._bound:
                self.snapshot.remove_pod(pod.key)

    def is_assumed(self, key: str) -> bool:
        with self.lock:
            return key in self._assumed

    # ----- nominated pods (the nominator preemption and the filters consult)

    def nominate(self, pod: PodInfo, node_name: str) -> None:
        """Records (or with "" clears) the node a pending pod was nominated to."""
        with self.lock:
            self._set_nomination(pod, node_name)

    def nominated_pods(self, node_name: str) -> list[PodInfo]:
        with self.lock:
            return list(self._nominated.get(node_name, {}).values())

    def nominated_node_names(self) -> list[str]:
        """The nodes some pending pod is nominated to, so the filters need not ask the
        nominator about every feasible node (usually there are none)."""
        with self.lock:
            return list(self._nominated)

    def _set_nomination(self, pod: PodInfo, node_name: str) -> None:
        self._clear_nomination(pod.key)
        if node_name:
            self._nomination[pod.key] = node_name
            self._nominated.setdefault(node_name, {})[pod.key] = pod

    # ----- other objects

    def _replace_objects(self, kind: str, items: list[dict[str, Any]]) -> None:
        listed = {object_key(item) for item in items}
        for key in [object_key(o) for o in self.snapshot.objects.all(kind)]:
            if key not in listed:
                self.snapshot.objects.delete(kind, key)
        for item in items:
            self._upsert_object(kind, item)

    def _upsert_object(self, kind: str, item: dict[str, Any]) -> None:
        # List responses leave `kind` out of their items; the objects index needs it.
        self.snapshot.objects.apply({**item, "kind": kind})
        if kind in HELPFUL_KINDS:
            self.queue.move_all(f"{kind}Change")

    # ----- nodes

    def _replace_nodes(self, items: list[dict[str, Any]]) -> None:
        listed = {item["metadata"]["name"] for item in items}
        for name in [n for n in self._nodes if n not in listed]:
            self._delete_node(name)
        for item in items:
            self._upsert_node(item)

    def _upsert_node(self, node: dict[str, Any]) -> None:
        name = node["metadata"]["name"]
        fingerprint = node_fingerprint(node)
        previous = self._nodes.get(name)
        if previous == fingerprint:
            return
        self._nodes[name] = fingerprint
        self.snapshot.add_node(node)
        self.queue.move_all(NODE_ADD if previous is None else NODE_UPDATE)

    def _delete_node(self, name: str) -> None:
        if self._nodes.pop(name, None) is not None:
            self.snapshot.remove_node(name)

    # ----- pods

    def _replace_pods(self, items: list[dict[str, Any]]) -> None:
        """A relist, as an informer's Replace: every pod known here and missing from the list
        was deleted meanwhile, whether bound, assumed, nominated or waiting in the queue."""
        listed = {pod_key(item) for item in items}
        known = {*self._bound, *self._assumed, *self._nomination, *self.queue.keys()}
        for key in known - listed:
            self._delete_pod(key)
        for item in items:
            self._upsert_pod(item)

    def _upsert_pod(self, pod: dict[str, Any]) -> None:
        key = pod_key(pod)
        node_name = (pod.get("spec") or {}).get("nodeName")
        if node_name:
            self.queue.delete(key)
            self._clear_nomination(key)
            if is_terminal(pod):
                self._delete_pod(key)
                return
            was_assumed = self._assumed.pop(key, None) is not None
            fingerprint = bound_pod_fingerprint(pod)
            if was_assumed or self._bound.get(key) != fingerprint:
                self.snapshot.add_pod(pod_info(pod))
            if key not in self._bound:
                self.queue.move_all(POD_ADD, only=could_be_helped_by_pod_add)
            self._bound[key] = fingerprint
            return
        if key in self._assumed:
            return  # our binding is in flight; its outcome decides what happens next
        if self._pending_for_us(pod):
            info = pod_info(pod)
            self._set_nomination(info, info.nominated_node_name)
            self.queue.add(info)
        else:
            self._clear_nomination(key)
            self.queue.delete(key)

    def _clear_nomination(self, key: str) -> None:
        node_name = self._nomination.pop(key, None)
        if node_name is not None:
            on_node = self._nominated.get(node_name, {})
            on_node.pop(key, None)
            if not on_node:
                self._nominated.pop(node_name, None)

    def _delete_pod(self, key: str) -> None:
        self.queue.delete(key)
        self._clear_nomination(key)
        was_bound = self._bound.pop(key, None) is not None
        if was_bound or self._assumed.pop(key, None) is not None:
            self.snapshot.remove_pod(key)
            self.queue.move_all(POD_DELETE)

    def _pending_for_us(self, pod: dict[str, Any]) -> bool:
        spec = pod.get("spec") or {}
        return (
            (spec.get("schedulerName") or "default-scheduler") in self.scheduler_names
            and not is_terminal(pod)
            and not (pod.get("metadata") or {}).get("deletionTimestamp")
        )
