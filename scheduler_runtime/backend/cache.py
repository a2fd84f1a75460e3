"""The scheduler's cache (upstream's backend/cache): nodes and the pods counted against them in
the columnar Snapshot, bound pods as the watch reports them and assumed pods (chosen, not yet
bound) from the moment a cycle picks their node.

State machine of a pod here, as upstream's: Assume -> (Add confirms | Forget drops); a pod
bound by anyone else is simply added; Remove drops bound and assumed pods alike.

One lock serialises cluster events and scheduling cycles, because the Snapshot must not change
during a cycle (`frozen`)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from scheduler_runtime.framework.podinfo import PodInfo, pod_info
from scheduler_runtime.framework.snapshot import Snapshot


def pod_identity(pod: dict[str, Any]) -> tuple[Any, Any]:
    """What upstream's isPodUpdated compares: the pod minus status and bookkeeping fields."""
    metadata = {
        k: v
        for k, v in (pod.get("metadata") or {}).items()
        if k not in ("resourceVersion", "generation", "managedFields")
    }
    return metadata, pod.get("spec")


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


class Cache:
    """Nodes, bound pods and assumed pods, counted in one Snapshot."""

    def __init__(self, snapshot: Snapshot | None = None) -> None:
        self.snapshot = snapshot if snapshot is not None else Snapshot()
        self.lock = threading.RLock()
        self._nodes: dict[str, tuple[Any, ...]] = {}
        self._bound: dict[str, tuple[Any, ...]] = {}  # bound pods and their fingerprints
        self._assumed: dict[str, PodInfo] = {}  # as counted on the node chosen for them

    @contextmanager
    def frozen(self) -> Iterator[Snapshot]:
        """The snapshot, unchanged by cluster events for as long as the block runs."""
        with self.lock:
            yield self.snapshot

    # ----- assumed pods

    def assume(self, pod: PodInfo, node_name: str) -> None:
        """Counts a pod against the node chosen for it, before it is bound."""
        with self.lock:
            assumed = pod.with_node(node_name)
            self.snapshot.add_pod(assumed)
            self._assumed[pod.key] = assumed

    def forget(self, pod: PodInfo) -> None:
        """Binding failed: the assumed pod no longer counts (unless the watch confirmed it)."""
        with self.lock:
            if self._assumed.pop(pod.key, None) is not None and pod.key not in self._bound:
                self.snapshot.remove_pod(pod.key)

    def is_assumed(self, key: str) -> bool:
        with self.lock:
            return key in self._assumed

    def assumed_pod(self, key: str) -> dict[str, Any]:
        """The assumed pod as the API server would hold it once bound (KeyError if none)."""
        with self.lock:
            return self._assumed[key].pod

    # ----- nodes

    def upsert_node(self, node: dict[str, Any]) -> bool | None:
        """Adds or updates a node: True when it is new, False when it changed in a way that
        matters to scheduling, None when nothing that matters changed."""
        with self.lock:
            name = node["metadata"]["name"]
            fingerprint = node_fingerprint(node)
            previous = self._nodes.get(name)
            if previous == fingerprint:
                return None
            self._nodes[name] = fingerprint
            self.snapshot.add_node(node)
            return previous is None

    def remove_node(self, name: str) -> None:
        with self.lock:
            if self._nodes.pop(name, None) is not None:
                self.snapshot.remove_node(name)

    def node_names(self) -> list[str]:
        with self.lock:
            return list(self._nodes)

    # ----- bound pods

    def add_bound_pod(self, pod: dict[str, Any], key: str) -> bool:
        """A pod the watch reports bound: confirms an assumption, or counts it anew (again only
        when what plugins read of it changed). True when the pod was not bound before."""
        with self.lock:
            assumed = self._assumed.pop(key, None)
            fingerprint = bound_pod_fingerprint(pod)
            previous = self._bound.get(key)
            if assumed is not None and assumed.pod is pod:
                pass  # confirmed as it was assumed: it already counts as it is
            elif assumed is not None or previous != fingerprint:
                self.snapshot.add_pod(pod_info(pod))
            self._bound[key] = fingerprint
            return previous is None

    def remove_pod(self, key: str) -> bool:
        """Drops a bound or assumed pod; True when it counted on a node."""
        with self.lock:
            was_bound = self._bound.pop(key, None) is not None
            if was_bound or self._assumed.pop(key, None) is not None:
                self.snapshot.remove_pod(key)
                return True
            return False

    def pod_keys(self) -> set[str]:
        """Every pod counted on a node, bound or assumed."""
        with self.lock:
            return {*self._bound, *self._assumed}
