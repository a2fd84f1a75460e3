"""The API objects besides nodes and pods that some plugins read: Namespaces (their labels,
for namespaceSelector), PodDisruptionBudgets (preemption), PersistentVolumeClaims,
PersistentVolumes, StorageClasses, CSINodes, CSIDrivers and CSIStorageCapacities (volume
plugins), and the Services,
ReplicaSets, StatefulSets and ReplicationControllers whose selectors give PodTopologySpread
its system default constraints. Objects are plain dicts keyed by kind and namespace/name."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from scheduler_runtime.framework.labelselector import (
    LabelSelector,
    SelectorError,
    parse_selector,
    selector_from_labels,
)

KINDS = (
    "Namespace",
    "PodDisruptionBudget",
    "PersistentVolumeClaim",
    "PersistentVolume",
    "StorageClass",
    "CSINode",
    "CSIDriver",
    "CSIStorageCapacity",
    "Service",
    "ReplicaSet",
    "StatefulSet",
    "ReplicationController",
)
# Owners whose selectors become a pod's default spreading selector (upstream's
# helper.DefaultSelector lists Services, ReplicationControllers, ReplicaSets, StatefulSets).
SELECTING_KINDS = ("Service", "ReplicationController", "ReplicaSet", "StatefulSet")


def object_key(obj: Mapping[str, Any]) -> str:
    metadata = obj.get("metadata") or {}
    namespace = metadata.get("namespace") or ""
    name = metadata.get("name") or ""
    return f"{namespace}/{name}" if namespace else name


def _controller(pod: Mapping[str, Any]) -> Mapping[str, Any] | None:
    for owner in (pod.get("metadata") or {}).get("ownerReferences") or ():
        if owner.get("controller"):
            return owner  # type: ignore[no-any-return]
    return None


class ClusterObjects:
    """The extra objects, by kind; callers apply and delete them as they watch them."""

    def __init__(self) -> None:
        self.by_kind: dict[str, dict[str, dict[str, Any]]] = {kind: {} for kind in KINDS}
        self.generation = 0

    def apply(self, obj: dict[str, Any]) -> bool:
        """Adds or replaces an object of a known kind; False for other kinds."""
        kind = obj.get("kind") or ""
        if kind not in self.by_kind:
            return False
        self.by_kind[kind][object_key(obj)] = obj
        self.generation += 1
        return True

    def delete(self, kind: str, key: str) -> None:
        if self.by_kind.get(kind, {}).pop(key, None) is not None:
            self.generation += 1

    def get(self, kind: str, key: str) -> dict[str, Any] | None:
        return self.by_kind.get(kind, {}).get(key)

    def all(self, kind: str) -> Iterator[dict[str, Any]]:
        yield from self.by_kind.get(kind, {}).values()

    def namespace_labels(self, namespace: str) -> Mapping[str, str] | None:
        """A namespace's labels (None when the namespace is not known)."""
        found = self.by_kind["Namespace"].get(namespace)
        if found is None:
            return None
        labels: Mapping[str, str] = (found.get("metadata") or {}).get("labels") or {}
        return labels

    def default_selector(self, pod: Mapping[str, Any]) -> LabelSelector:
        """helper.DefaultSelector: the merged selectors of the Services selecting the pod,
        plus its controlling ReplicationController, ReplicaSet or StatefulSet."""
        metadata = pod.get("metadata") or {}
        namespace = metadata.get("namespace") or "default"
        pod_labels = metadata.get("labels") or {}
        label_set: dict[str, str] = {}
        for service in self.by_kind["Service"].values():
            if ((service.get("metadata") or {}).get("namespace") or "default") != namespace:
                continue
            selector = (service.get("spec") or {}).get("selector")
            if selector is not None and selector_from_labels(selector).matches(pod_labels):
                label_set.update(selector)
        owner = _controller(pod)
        kind = (owner or {}).get("kind")
        if owner is None or kind not in SELECTING_KINDS[1:]:
            return selector_from_labels(label_set)
        controller = self.get(str(kind), f"{namespace}/{owner.get('name')}")
        selector = ((controller or {}).get("spec") or {}).get("selector")
        if selector is None:
            return selector_from_labels(label_set)
        if kind == "ReplicationController":
            return selector_from_labels({**label_set, **selector})
        try:
            extra = parse_selector(selector, "spec.selector")
        except SelectorError:
            return selector_from_labels(label_set)
        if extra.nothing:
            return selector_from_labels(label_set)
        base = selector_from_labels(label_set)
        return LabelSelector(base.requirements + extra.requirements)
