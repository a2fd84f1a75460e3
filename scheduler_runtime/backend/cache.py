"""The scheduler's cache (upstream's backend/cache): nodes and the pods counted against them in
the columnar Snapshot, bound pods as the watch reports them and assumed pods (chosen, not yet
bound) from the moment a cycle picks their node.

State machine of a pod here, as upstream's: Assume -> (Add confirms | Forget drops); a pod
bound by anyone else is simply added; Remove drops bound and assumed pods alike. Pods are
known by PodInfo.id (the UID, as upstream's podStates): a pod re-created under the same
name while the first one's binding is in flight is another pod, never confused with it.

One lock serialises cluster events and scheduling cycles, because the Snapshot must not change
during a cycle (`frozen`)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from scheduler_runtime.backend.queue import pod_identity
from scheduler_runtime.framework.podinfo import PodInfo, pod_info
from scheduler_runtime.framework.snapshot import Snapshot

# An object before and after a change that matters to scheduling (before is None when added).
Change = tuple[dict[str, Any] | None, dict[str, Any]]


def bound_pod_fingerprint(pod: dict[str, Any]) -> tuple[Any, ...]:
    """What plugins read of a bound pod: kwok's and the kubelet's status updates (phase,
    readiness, IPs) leave it unchanged and so cost nothing; a DisruptionTarget condition
    (preemption checks it) counts, and so does what in-place resizing has given the
    containers (their statuses' resources and a PodResizePending condition), which the
    pod's requests are computed from."""
    status = pod.get("status") or {}
    conditions = [c for c in status.get("conditions") or () if c.get("type") in _COUNTED_CONDITIONS]
    resized = [
        (s.get("name"), s.get("resources"), s.get("allocatedResources"))
        for group in ("containerStatuses", "initContainerStatuses")
        for s in status.get(group) or ()
        if s.get("resources") is not None
    ]
    return (*pod_identity(pod), conditions, resized)


# The conditions of a bound pod that change how it counts or how preemption treats it.
_COUNTED_CONDITIONS = ("DisruptionTarget", "PodResizePending")


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
        # Nodes and bound pods as last counted, with what scheduling reads of them.
        self._nodes: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {}
        self._bound: dict[str, tuple[tuple[Any, ...] | None, dict[str, Any]]] = {}
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
            self._assumed[pod.id] = assumed

    def forget(self, pod: PodInfo) -> None:
        """Binding failed: the assumed pod no longer counts (unless the watch confirmed it)."""
        with self.lock:
            if self._assumed.pop(pod.id, None) is not None and pod.id not in self._bound:
                self.snapshot.remove_pod(pod.id)

    def is_assumed(self, pod_id: str) -> bool:
        with self.lock:
            return pod_id in self._assumed

    def assumed_pod(self, pod_id: str) -> dict[str, Any]:
        """The assumed pod as the API server would hold it once bound (KeyError if none)."""
        with self.lock:
            return self._assumed[pod_id].pod

    # ----- nodes

    def upsert_node(self, node: dict[str, Any]) -> Change | None:
        """Adds or updates a node; the change, or None when nothing that matters changed."""
        with self.lock:
            name = node["metadata"]["name"]
            fingerprint = node_fingerprint(node)
            previous = self._nodes.get(name)
            if previous is not None and previous[0] == fingerprint:
                return None
            self._nodes[name] = (fingerprint, node)
            self.snapshot.add_node(node)
            return (None if previous is None else previous[1]), node

    def remove_node(self, name: str) -> dict[str, Any] | None:
        """Drops a node; the node as it was, or None when it was not known."""
        with self.lock:
            previous = self._nodes.pop(name, None)
            if previous is None:
                return None
            self.snapshot.remove_node(name)
            return previous[1]

    def node_names(self) -> list[str]:
        with self.lock:
            return list(self._nodes)

    # ----- bound pods

    def add_bound_pod(self, pod: dict[str, Any], pod_id: str) -> Change | None:
        """A pod the watch reports bound: confirms an assumption, or counts it anew (again only
        when what plugins read of it changed). The change (before is None when the pod was
        not bound before), or None when nothing that plugins read changed."""
        with self.lock:
            assumed = self._assumed.pop(pod_id, None)
            previous = self._bound.get(pod_id)
            if assumed is not None and assumed.pod is pod:
                # Confirmed as it was assumed: it already counts as it is (its fingerprint is
                # taken when the next update needs it).
                self._bound[pod_id] = (None, pod)
                return None, pod
            fingerprint = bound_pod_fingerprint(pod)
            self._bound[pod_id] = (fingerprint, pod)
            if assumed is not None and bound_pod_fingerprint(assumed.pod) == fingerprint:
                # Bound as it was assumed (the watch's copy of it): it counts as it is.
                self._take_newer_copy(pod_id, pod)
                return None, pod
            if assumed is None and previous is not None:
                before = previous[0] or bound_pod_fingerprint(previous[1])
                if before == fingerprint:
                    self._take_newer_copy(pod_id, pod)
                    return None
            self.snapshot.add_pod(pod_info(pod))
            return (None if previous is None else previous[1]), pod

    def _take_newer_copy(self, pod_id: str, pod: dict[str, Any]) -> None:
        """The counted pod becomes the watch's newer copy, whose counted fields are the same:
        what plugins read beyond them (its start time, for preemption) is current, and one
        copy of the pod is kept, not two."""
        counted = self.snapshot.pod(pod_id)
        if counted is not None:
            counted.pod = pod

    def remove_pod(self, pod_id: str) -> dict[str, Any] | None:
        """Drops a bound or assumed pod; the pod as it counted, or None when it did not."""
        with self.lock:
            bound = self._bound.pop(pod_id, None)
            assumed = self._assumed.pop(pod_id, None)
            if bound is None and assumed is None:
                return None
            self.snapshot.remove_pod(pod_id)
            return bound[1] if bound is not None else assumed.pod if assumed else None

    def sizes(self) -> dict[str, int]:
        """How many nodes, bound pods and assumed pods it holds (for /metrics)."""
        with self.lock:
            return {
                "nodes": len(self._nodes),
                "bound_pods": len(self._bound),
                "assumed_pods": len(self._assumed),
            }

    def pod_ids(self) -> set[str]:
        """Every pod counted on a node, bound or assumed (by PodInfo.id)."""
        with self.lock:
            return {*self._bound, *self._assumed}
