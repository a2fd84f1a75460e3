"""Cluster events into the cache, the queue and the nominator (upstream's eventhandlers.go).

The live scheduler's reflectors and simulate's state file feed the same handlers, as a Store:
`replace` (a list), `upsert` (added or modified) and `delete`, by kind. Bound pods count in
the cache; pending pods of our profiles wait in the queue; events that could make an
unschedulable pod schedulable move it back to be tried again."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from scheduler_runtime.backend.cache import Cache
from scheduler_runtime.backend.nominator import Nominator
from scheduler_runtime.backend.queue import SchedulingQueue
from scheduler_runtime.framework.objects import object_key
from scheduler_runtime.framework.podinfo import PodInfo, pod_info

NODES, PODS = "nodes", "pods"

# Changes to these can make a pod feasible (volumes, namespaceSelector); the other kinds in the
# objects index only feed scoring defaults or preemption.
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


class EventHandlers:
    """What each cluster event does to the cache, the queue and the nominator."""

    def __init__(
        self,
        cache: Cache,
        queue: SchedulingQueue,
        nominator: Nominator,
        scheduler_names: Collection[str],
    ) -> None:
        self.cache = cache
        self.queue = queue
        self.nominator = nominator
        self.scheduler_names = frozenset(scheduler_names)

    # ----- the Store

    def replace(self, kind: str, items: list[dict[str, Any]]) -> None:
        with self.cache.lock:
            if kind == NODES:
                self._replace_nodes(items)
            elif kind == PODS:
                self._replace_pods(items)
            else:
                self._replace_objects(kind, items)

    def upsert(self, kind: str, item: dict[str, Any]) -> None:
        with self.cache.lock:
            if kind == NODES:
                self._upsert_node(item)
            elif kind == PODS:
                self._upsert_pod(item)
            else:
                self._upsert_object(kind, item)

    def delete(self, kind: str, item: dict[str, Any]) -> None:
        with self.cache.lock:
            if kind == NODES:
                self.cache.remove_node(item["metadata"]["name"])
            elif kind == PODS:
                self._delete_pod(pod_key(item))
            else:
                self.cache.snapshot.objects.delete(kind, object_key(item))

    # ----- other objects

    def _replace_objects(self, kind: str, items: list[dict[str, Any]]) -> None:
        objects = self.cache.snapshot.objects
        listed = {object_key(item) for item in items}
        for key in [object_key(o) for o in objects.all(kind)]:
            if key not in listed:
                objects.delete(kind, key)
        for item in items:
            self._upsert_object(kind, item)

    def _upsert_object(self, kind: str, item: dict[str, Any]) -> None:
        # List responses leave `kind` out of their items; the objects index needs it.
        self.cache.snapshot.objects.apply(
            item if item.get("kind") == kind else {**item, "kind": kind}
        )
        if kind in HELPFUL_KINDS:
            self.queue.move_all(f"{kind}Change")

    # ----- nodes

    def _replace_nodes(self, items: list[dict[str, Any]]) -> None:
        listed = {item["metadata"]["name"] for item in items}
        for name in self.cache.node_names():
            if name not in listed:
                self.cache.remove_node(name)
        for item in items:
            self._upsert_node(item)

    def _upsert_node(self, node: dict[str, Any]) -> None:
        added = self.cache.upsert_node(node)
        if added is not None:
            self.queue.move_all(NODE_ADD if added else NODE_UPDATE)

    # ----- pods

    def _replace_pods(self, items: list[dict[str, Any]]) -> None:
        """A relist, as an informer's Replace: every pod known here and missing from the list
        was deleted meanwhile, whether bound, assumed, nominated or waiting in the queue."""
        listed = {pod_key(item) for item in items}
        known = {*self.cache.pod_keys(), *self.nominator.keys(), *self.queue.keys()}
        for key in known - listed:
            self._delete_pod(key)
        for item in items:
            self._upsert_pod(item)

    def _upsert_pod(self, pod: dict[str, Any]) -> None:
        key = pod_key(pod)
        if (pod.get("spec") or {}).get("nodeName"):
            self._bound_pod(pod, key)
        elif self.cache.is_assumed(key):
            return  # our binding is in flight; its outcome decides what happens next
        elif self._pending_for_us(pod):
            info = pod_info(pod)
            self.nominator.nominate(info, info.nominated_node_name)
            self.queue.add(info)
        else:
            self.nominator.delete(key)
            self.queue.delete(key)

    def _bound_pod(self, pod: dict[str, Any], key: str) -> None:
        self.queue.delete(key)
        self.nominator.delete(key)
        if is_terminal(pod):
            self._delete_pod(key)
        elif self.cache.add_bound_pod(pod, key):
            self.queue.move_all(POD_ADD, only=could_be_helped_by_pod_add)

    def _delete_pod(self, key: str) -> None:
        self.queue.delete(key)
        self.nominator.delete(key)
        if self.cache.remove_pod(key):
            self.queue.move_all(POD_DELETE)

    def _pending_for_us(self, pod: dict[str, Any]) -> bool:
        spec = pod.get("spec") or {}
        return (
            (spec.get("schedulerName") or "default-scheduler") in self.scheduler_names
            and not is_terminal(pod)
            and not (pod.get("metadata") or {}).get("deletionTimestamp")
        )
