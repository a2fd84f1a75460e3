"""The nominator (upstream's backend/queue/nominator.go): the node each pending pod was
nominated to by preemption, so the filters count nominated pods of at least the same priority
on that node and preemption can withdraw lower-priority nominations. Pods are known by
PodInfo.id (the UID), as upstream's nominatedPodToNode. Thread-safe."""

from __future__ import annotations

import threading

from scheduler_runtime.framework.podinfo import PodInfo


class Nominator:
    """Pending pods by the node they are nominated to."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_node: dict[str, dict[str, PodInfo]] = {}
        self._node_of: dict[str, str] = {}

    def nominate(self, pod: PodInfo, node_name: str) -> None:
        """Records the pod's nomination to `node_name`; "" withdraws it."""
        with self._lock:
            self._remove(pod.id)
            if node_name:
                self._node_of[pod.id] = node_name
                self._by_node.setdefault(node_name, {})[pod.id] = pod

    def delete(self, pod_id: str) -> None:
        """The pod is bound, gone, or no longer ours: it waits for no node."""
        with self._lock:
            self._remove(pod_id)

    def pods_on(self, node_name: str) -> list[PodInfo]:
        """The pods nominated to `node_name` (upstream's NominatedPodsForNode)."""
        with self._lock:
            return list(self._by_node.get(node_name, {}).values())

    def nodes(self) -> list[str]:
        """The nodes some pod is nominated to, so the filters need not ask about every
        feasible node (usually there are none)."""
        with self._lock:
            return list(self._by_node)

    def ids(self) -> set[str]:
        with self._lock:
            return set(self._node_of)

    def size(self) -> int:
        """How many pods it holds nominated (for /metrics)."""
        with self._lock:
            return len(self._node_of)

    def node_of(self, pod_id: str) -> str | None:
        with self._lock:
            return self._node_of.get(pod_id)

    def _remove(self, pod_id: str) -> None:
        node_name = self._node_of.pop(pod_id, None)
        if node_name is None:
            return
        on_node = self._by_node.get(node_name, {})
        on_node.pop(pod_id, None)
        if not on_node:
            self._by_node.pop(node_name, None)
