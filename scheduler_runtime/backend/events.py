"""Cluster events into the cache, the queue and the nominator (upstream's eventhandlers.go).

The live scheduler's reflectors and simulate's state file feed the same handlers, as a Store:
`replace` (a list), `upsert` (added or modified) and `delete`, by kind. Bound pods count in
the cache; pending pods of our profiles wait in the queue; each change that matters to
scheduling becomes a ClusterEvent, and the queue tries again the pods whose rejecting plugins
say it could help them (queueing hints)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Mapping
from collections.abc import Set as AbstractSet
from typing import Any, Protocol

from scheduler_runtime.backend.cache import Cache
from scheduler_runtime.backend.nominator import Nominator
from scheduler_runtime.backend.podgroups import PodGroups
from scheduler_runtime.backend.queue import SchedulingQueue
from scheduler_runtime.framework import events
from scheduler_runtime.framework.events import ActionType, ClusterEvent, node_update_action
from scheduler_runtime.framework.objects import object_key
from scheduler_runtime.framework.podgroups import (
    EVENT_RESOURCES as GROUP_EVENT_RESOURCES,
)
from scheduler_runtime.framework.podgroups import (
    POD_GROUP_KINDS,
    GroupKey,
    GroupPolicy,
    PodGroupError,
)
from scheduler_runtime.framework.podinfo import pod_id, pod_info

log = logging.getLogger(__name__)

NODES, PODS = "nodes", "pods"

# The kinds whose changes can make a pod feasible, as the resources their events are about;
# the other kinds in the objects index only feed scoring defaults or preemption.
EVENT_RESOURCES = {
    "Namespace": events.NAMESPACE,
    "PersistentVolumeClaim": events.PERSISTENT_VOLUME_CLAIM,
    "PersistentVolume": events.PERSISTENT_VOLUME,
    "StorageClass": events.STORAGE_CLASS,
    "CSINode": events.CSI_NODE,
    "CSIDriver": events.CSI_DRIVER,
    "CSIStorageCapacity": events.CSI_STORAGE_CAPACITY,
}


class KindStore(Protocol):
    """State kept by kind outside the cache (the DRA objects, say): fed like the cache."""

    def replace(self, kind: str, items: list[dict[str, Any]]) -> None: ...

    def upsert(self, kind: str, item: dict[str, Any]) -> None: ...

    def delete(self, kind: str, item: dict[str, Any]) -> None: ...


# What nothing in scheduling reads of a pod, dropped on arrival with managedFields: a Python
# dict costs about twice what Go's struct does, and the bound pods are most of the cache (the
# service account's projected token volume alone was a quarter of a running pod's objects).
# Dicts are rebuilt rather than emptied, as a dict keeps its size when keys are deleted.
LAST_APPLIED = frozenset({"kubectl.kubernetes.io/last-applied-configuration"})
UNREAD_SPEC_FIELDS = frozenset(
    {
        "automountServiceAccountToken",
        "dnsConfig",
        "dnsPolicy",
        "enableServiceLinks",
        "hostAliases",
        "hostname",
        "imagePullSecrets",
        "readinessGates",
        "serviceAccount",
        "serviceAccountName",
        "setHostnameAsFQDN",
        "subdomain",
        "terminationGracePeriodSeconds",
    }
)
UNREAD_CONTAINER_FIELDS = frozenset(
    {
        "args",
        "command",
        "env",
        "envFrom",
        "imagePullPolicy",
        "lifecycle",
        "livenessProbe",
        "readinessProbe",
        "startupProbe",
        "stdin",
        "stdinOnce",
        "terminationMessagePath",
        "terminationMessagePolicy",
        "tty",
        "volumeMounts",
        "workingDir",
    }
)
UNREAD_VOLUME_SOURCES = frozenset({"configMap", "downwardAPI", "emptyDir", "projected", "secret"})
UNREAD_STATUS_FIELDS = frozenset({"hostIP", "hostIPs", "podIP", "podIPs"})
# Preemption reads DisruptionTarget, in-place resizing PodResizePending, the status writer
# PodScheduled; of the kubelet's container statuses, what resizing has given each container.
READ_POD_CONDITIONS = frozenset({"DisruptionTarget", "PodResizePending", "PodScheduled"})
READ_CONTAINER_STATUS_FIELDS = frozenset({"name", "resources", "allocatedResources"})
CONTAINER_GROUPS = ("containers", "initContainers", "ephemeralContainers")
STATUS_GROUPS = ("containerStatuses", "initContainerStatuses", "ephemeralContainerStatuses")
MANAGED_FIELDS = frozenset({"managedFields"})


def trimmed(kind: str, item: dict[str, Any]) -> dict[str, Any]:
    """The object without what nothing in scheduling reads: metadata.managedFields (often the
    largest part of an object the API server sends), as kube-scheduler's pod informer drops
    them, and of a pod the fields above. Changed in place, as the object is the caller's
    fresh copy."""
    if isinstance(metadata := item.get("metadata"), dict):
        metadata = item["metadata"] = _without(metadata, MANAGED_FIELDS)
        if kind == PODS and isinstance(annotations := metadata.get("annotations"), dict):
            metadata["annotations"] = _without(annotations, LAST_APPLIED)
    if kind == PODS:
        _trim_pod(item)
    return item


def _trim_pod(pod: dict[str, Any]) -> None:
    if isinstance(spec := pod.get("spec"), dict):
        spec = pod["spec"] = _without(spec, UNREAD_SPEC_FIELDS)
        for group in CONTAINER_GROUPS:
            if isinstance(containers := spec.get(group), list):
                spec[group] = [_without(c, UNREAD_CONTAINER_FIELDS) for c in containers]
        if isinstance(volumes := spec.get("volumes"), list):
            spec["volumes"] = [
                v for v in volumes if not isinstance(v, dict) or UNREAD_VOLUME_SOURCES.isdisjoint(v)
            ]
    if isinstance(status := pod.get("status"), dict):
        status = pod["status"] = _without(status, UNREAD_STATUS_FIELDS)
        for group in STATUS_GROUPS:
            if isinstance(statuses := status.get(group), list):
                status[group] = [_only(s, READ_CONTAINER_STATUS_FIELDS) for s in statuses]
        if isinstance(conditions := status.get("conditions"), list):
            status["conditions"] = [
                c
                for c in conditions
                if not isinstance(c, dict) or c.get("type") in READ_POD_CONDITIONS
            ]


def _without(item: Any, unread: AbstractSet[str]) -> Any:
    """A dict without its `unread` keys (itself when it has none); anything else as it is (a
    state file's objects may hold anything where an API object holds a dict)."""
    if not isinstance(item, dict) or unread.isdisjoint(item):
        return item
    return {key: value for key, value in item.items() if key not in unread}


def _only(item: Any, read: AbstractSet[str]) -> Any:
    """A dict of only its `read` keys (itself when it has no others); anything else as it is."""
    return _without(item, item.keys() - read) if isinstance(item, dict) else item


def is_terminal(pod: dict[str, Any]) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def assigned_pod_update_action(old: dict[str, Any], new: dict[str, Any]) -> ActionType:
    """What changed of a bound pod that other pods' scheduling reads: its labels (affinity,
    spreading), or something else (a DisruptionTarget condition, say)."""
    labels = ((old.get("metadata") or {}).get("labels"), (new.get("metadata") or {}).get("labels"))
    return ActionType.UPDATE_POD_LABEL if labels[0] != labels[1] else ActionType.UPDATE_OTHER


class EventHandlers:
    """What each cluster event does to the cache, the queue, the nominator and the pod
    groups; `reject_waiting` ends the wait at Permit of a pod (by uid) that is deleted."""

    def __init__(
        self,
        cache: Cache,
        queue: SchedulingQueue,
        nominator: Nominator,
        scheduler_names: Collection[str],
        stores: Mapping[str, KindStore] | None = None,
        *,
        groups: PodGroups | None = None,
        reject_waiting: Callable[[str], None] | None = None,
    ) -> None:
        self.cache = cache
        self.queue = queue
        self.nominator = nominator
        self.scheduler_names = frozenset(scheduler_names)
        # Kinds whose state is kept elsewhere: they are handed to their store as they come.
        self.stores = dict(stores or {})
        self.groups = groups if groups is not None else PodGroups()
        self.reject_waiting = reject_waiting

    # ----- the Store

    def replace(self, kind: str, items: list[dict[str, Any]]) -> None:
        items = [trimmed(kind, item) for item in items]
        if (store := self.stores.get(kind)) is not None:
            store.replace(kind, items)
            return
        with self.cache.lock:
            if kind == NODES:
                self._replace_nodes(items)
            elif kind == PODS:
                self._replace_pods(items)
            elif kind in POD_GROUP_KINDS:
                self._replace_groups(kind, items)
            else:
                self._replace_objects(kind, items)

    def upsert(self, kind: str, item: dict[str, Any]) -> None:
        trimmed(kind, item)
        if (store := self.stores.get(kind)) is not None:
            store.upsert(kind, item)
            return
        with self.cache.lock:
            if kind == NODES:
                self._upsert_node(item)
            elif kind == PODS:
                self._upsert_pod(item)
            elif kind in POD_GROUP_KINDS:
                self._upsert_group(kind, item)
            else:
                self._upsert_object(kind, item)

    def delete(self, kind: str, item: dict[str, Any]) -> None:
        if (store := self.stores.get(kind)) is not None:
            store.delete(kind, item)
            return
        with self.cache.lock:
            if kind == NODES:
                self._delete_node(item["metadata"]["name"])
            elif kind == PODS:
                self._delete_pod(pod_id(item))
            elif kind in POD_GROUP_KINDS:
                self._delete_group(kind, item)
            else:
                self._delete_object(kind, item)

    # ----- other objects

    def _replace_objects(self, kind: str, items: list[dict[str, Any]]) -> None:
        objects = self.cache.snapshot.objects
        listed = {object_key(item) for item in items}
        for gone in [o for o in objects.all(kind) if object_key(o) not in listed]:
            self._delete_object(kind, gone)
        for item in items:
            self._upsert_object(kind, item)

    def _upsert_object(self, kind: str, item: dict[str, Any]) -> None:
        objects = self.cache.snapshot.objects
        previous = objects.get(kind, object_key(item))
        # List responses leave `kind` out of their items; the objects index needs it.
        kinded = item if item.get("kind") == kind else {**item, "kind": kind}
        objects.apply(kinded)
        resource = EVENT_RESOURCES.get(kind)
        if resource is not None:
            action = ActionType.ADD if previous is None else ActionType.UPDATE_OTHER
            self.queue.on_event(ClusterEvent(resource, action), previous, kinded)

    def _delete_object(self, kind: str, item: dict[str, Any]) -> None:
        objects = self.cache.snapshot.objects
        previous = objects.get(kind, object_key(item))
        objects.delete(kind, object_key(item))
        resource = EVENT_RESOURCES.get(kind)
        if resource is not None and previous is not None:
            self.queue.on_event(ClusterEvent(resource, ActionType.DELETE), previous, None)

    # ----- nodes

    def _replace_nodes(self, items: list[dict[str, Any]]) -> None:
        listed = {item["metadata"]["name"] for item in items}
        for name in self.cache.node_names():
            if name not in listed:
                self._delete_node(name)
        for item in items:
            self._upsert_node(item)

    def _upsert_node(self, node: dict[str, Any]) -> None:
        change = self.cache.upsert_node(node)
        if change is None:
            return
        old, new = change
        action = ActionType.ADD if old is None else node_update_action(old, new)
        if action:
            self.queue.on_event(ClusterEvent(events.NODE, action), old, new)

    def _delete_node(self, name: str) -> None:
        old = self.cache.remove_node(name)
        if old is not None:
            self.queue.on_event(ClusterEvent(events.NODE, ActionType.DELETE), old, None)

    # ----- pods

    def _replace_pods(self, items: list[dict[str, Any]]) -> None:
        """A relist, as an informer's Replace: every pod known here and missing from the list
        was deleted meanwhile, whether bound, assumed, nominated or waiting in the queue (by
        UID: a pod re-created under the same name meanwhile is another pod)."""
        listed = {pod_id(item) for item in items}
        known = {*self.cache.pod_ids(), *self.nominator.ids(), *self.queue.ids()}
        for key in known - listed:
            self._delete_pod(key)
        for item in items:
            self._upsert_pod(item)

    def _upsert_pod(self, pod: dict[str, Any]) -> None:
        key = pod_id(pod)
        joined = self.groups.upsert_pod(key, pod)
        if (pod.get("spec") or {}).get("nodeName"):
            self._bound_pod(pod, key)
        elif self.cache.is_assumed(key):
            # Our binding is in flight; its outcome decides what happens next, unless the
            # pod is being deleted while it waits at Permit (handleAssumedPodDeletion).
            if (pod.get("metadata") or {}).get("deletionTimestamp"):
                self._stop_waiting(pod)
            return
        elif self._pending_for_us(pod):
            info = pod_info(pod)
            self.nominator.nominate(info, info.nominated_node_name)
            self.queue.add(info)
        else:
            self.nominator.delete(key)
            self.queue.delete(key)
        for group in joined:
            self._group_event(group, ClusterEvent(events.POD, ActionType.ADD), pod)

    def _bound_pod(self, pod: dict[str, Any], key: str) -> None:
        self.queue.delete(key)
        self.nominator.delete(key)
        if is_terminal(pod):
            self._delete_pod(key, finished=True)
            return
        change = self.cache.add_bound_pod(pod, key)
        if change is None:
            return
        old, new = change
        action = ActionType.ADD if old is None else assigned_pod_update_action(old, new)
        self.queue.on_event(ClusterEvent(events.POD, action), old, new)

    def _delete_pod(self, key: str, *, finished: bool = False) -> None:
        """A pod is gone, or (`finished`) ran to completion: its groups count it apart."""
        self.queue.delete(key)
        self.nominator.delete(key)
        left = self.groups.groups_of(key) if finished else self.groups.delete_pod(key)
        for group in left:
            # Its siblings may no longer make up the group: they are held back again.
            state = self.groups.state(group)
            if state is not None:
                self.queue.recheck_gates(state.unscheduled)
        assumed = self.cache.is_assumed(key)
        old = self.cache.remove_pod(key)
        if old is not None:
            if assumed:
                self._stop_waiting(old)
            self.queue.on_event(ClusterEvent(events.POD, ActionType.DELETE), old, None)

    def _stop_waiting(self, pod: dict[str, Any]) -> None:
        uid = (pod.get("metadata") or {}).get("uid")
        if self.reject_waiting is not None and uid:
            self.reject_waiting(uid)

    # ----- PodGroups (both APIs)

    def _replace_groups(self, kind: str, items: list[dict[str, Any]]) -> None:
        listed = {object_key(item) for item in items}
        for gone in self.groups.group_objects(kind):
            if object_key(gone) not in listed:
                self._delete_group(kind, gone)
        for item in items:
            self._upsert_group(kind, item)

    def _upsert_group(self, kind: str, group: dict[str, Any]) -> None:
        metadata = group.get("metadata") or {}
        before = self.groups.object(
            GroupKey(
                POD_GROUP_KINDS[kind],
                str(metadata.get("namespace") or "default"),
                str(metadata.get("name") or ""),
            )
        )
        try:
            previous, policy = self.groups.upsert_group(kind, group)
        except PodGroupError as error:
            log.warning("ignoring %s %s: %s", kind, object_key(group), error)
            self._delete_group(kind, group)
            return
        if previous is None:
            self._group_event(policy.key, ClusterEvent(_resource(policy), ActionType.ADD), group)
        elif _asks(previous) != _asks(policy):
            event = ClusterEvent(_resource(policy), ActionType.UPDATE_OTHER)
            self._group_event(policy.key, event, group, before)

    def _delete_group(self, kind: str, group: dict[str, Any]) -> None:
        """A PodGroup is gone: its members still waiting at Permit are released (nothing
        stays reserved for a group without its policy)."""
        policy = self.groups.delete_group(kind, group)
        if policy is None:
            return
        state = self.groups.state(policy.key)
        if state is not None and self.reject_waiting is not None:
            for member in state.assumed:
                self.reject_waiting(state.uids.get(member, ""))
        self._group_event(policy.key, ClusterEvent(_resource(policy), ActionType.DELETE), None)

    def _group_event(self, group: GroupKey, event: ClusterEvent, obj: Any, old: Any = None) -> None:
        """An event only the group's unscheduled members can care about (a sibling or their
        PodGroup appeared or changed): only they are asked, not every pod in the queue."""
        state = self.groups.state(group)
        if state is not None and state.unscheduled:
            self.queue.on_event_for(state.unscheduled, event, old, obj)

    def _pending_for_us(self, pod: dict[str, Any]) -> bool:
        spec = pod.get("spec") or {}
        return (
            (spec.get("schedulerName") or "default-scheduler") in self.scheduler_names
            and not is_terminal(pod)
            and not (pod.get("metadata") or {}).get("deletionTimestamp")
        )


def _resource(policy: GroupPolicy) -> str:
    return GROUP_EVENT_RESOURCES[policy.key.api]


def _asks(policy: GroupPolicy) -> tuple[Any, ...]:
    """What scheduling reads of a PodGroup (not its status or bookkeeping)."""
    return (
        policy.gang,
        policy.min_count,
        policy.timeout,
        policy.min_resources,
        policy.topology_key,
    )
