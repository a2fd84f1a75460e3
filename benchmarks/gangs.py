"""Gangs as a watcher sees them, for the gang benchmark and the gang tests alike: which pods
belong to which pod group (either PodGroup API), when each was created and bound, and the
invariant a gang scheduler must keep: no group is left with fewer than its minimum bound
while others of it are bound (a partial gang), and none of a group's pending members keeps a
nominated node once the group is unschedulable (nothing reserved for a group that gave up).

Bindings of one gang land one after another, so a group is partly bound for the moment its
bindings take; the ledger records how long each group was partly bound, and which are partly
bound now."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

WORKLOAD_API = "scheduling.k8s.io"
COSCHEDULING_API = "scheduling.x-k8s.io"
POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"


def group_of(pod: Mapping[str, Any]) -> tuple[str, str, str] | None:
    """(api, namespace, name) of the group a pod names, in either API."""
    metadata = pod.get("metadata") or {}
    namespace = str(metadata.get("namespace") or "default")
    name = ((pod.get("spec") or {}).get("schedulingGroup") or {}).get("podGroupName")
    if name:
        return WORKLOAD_API, namespace, str(name)
    label = (metadata.get("labels") or {}).get(POD_GROUP_LABEL)
    return (COSCHEDULING_API, namespace, str(label)) if label else None


@dataclass
class GroupRecord:
    """One group's members as watched: each member's node (None: pending) and nominated
    node, and the moments its first and last members were bound."""

    minimum: int
    nodes: dict[str, str | None] = field(default_factory=dict)
    nominated: dict[str, str] = field(default_factory=dict)
    partial_since: float | None = None
    longest_partial: float = 0.0
    last_created: float | None = None
    last_bound: float | None = None

    @property
    def bound(self) -> int:
        return sum(1 for node in self.nodes.values() if node)

    @property
    def partial(self) -> bool:
        return 0 < self.bound < self.minimum


class GangLedger:
    """Pods of pod groups as a watch reports them (thread-safe); `minimums` gives each
    group's minimum (its PodGroup's minCount or minMember)."""

    def __init__(self, minimums: Mapping[tuple[str, str, str], int]) -> None:
        self.groups = {key: GroupRecord(minimum) for key, minimum in minimums.items()}
        self._lock = threading.Lock()

    def created(self, pod: Mapping[str, Any], at: float) -> None:
        """A member was created (at `at`, seconds on the caller's clock)."""
        key = group_of(pod)
        with self._lock:
            record = self.groups.get(key) if key else None
            if record is not None:
                record.last_created = max(record.last_created or at, at)

    def observe(self, pod: Mapping[str, Any], at: float) -> None:
        """A pod as the watch reports it (added or modified)."""
        key = group_of(pod)
        with self._lock:
            record = self.groups.get(key) if key else None
            if record is None:
                return
            name = str((pod.get("metadata") or {}).get("name"))
            node = (pod.get("spec") or {}).get("nodeName") or None
            if node and not record.nodes.get(name):
                record.last_bound = at
            record.nodes[name] = node
            nominated = (pod.get("status") or {}).get("nominatedNodeName")
            if nominated and not node:
                record.nominated[name] = nominated
            else:
                record.nominated.pop(name, None)
            self._track_partial(record, at)

    def deleted(self, pod: Mapping[str, Any], at: float) -> None:
        key = group_of(pod)
        with self._lock:
            record = self.groups.get(key) if key else None
            if record is not None:
                name = str((pod.get("metadata") or {}).get("name"))
                record.nodes.pop(name, None)
                record.nominated.pop(name, None)
                self._track_partial(record, at)

    @staticmethod
    def _track_partial(record: GroupRecord, at: float) -> None:
        if record.partial and record.partial_since is None:
            record.partial_since = at
        elif not record.partial and record.partial_since is not None:
            record.longest_partial = max(record.longest_partial, at - record.partial_since)
            record.partial_since = None

    # ----- what the watch has seen

    def partial_groups(self) -> list[tuple[str, str, str]]:
        """Groups with some but fewer than their minimum members bound now."""
        with self._lock:
            return [key for key, record in self.groups.items() if record.partial]

    def reserved_by_unplaced(self) -> dict[tuple[str, str, str], dict[str, str]]:
        """Pending members that keep a nominated node while their group has none bound."""
        with self._lock:
            return {
                key: dict(record.nominated)
                for key, record in self.groups.items()
                if record.nominated and record.bound == 0
            }

    def placed(self) -> list[tuple[str, str, str]]:
        with self._lock:
            return [
                key for key, record in self.groups.items() if record.bound >= max(record.minimum, 1)
            ]

    def longest_partial(self) -> float:
        """The longest time any group was partly bound (seconds)."""
        with self._lock:
            return max((r.longest_partial for r in self.groups.values()), default=0.0)

    def completion_delays(self) -> list[float]:
        """For each group placed, from its last member's creation to its last binding."""
        with self._lock:
            return [
                record.last_bound - record.last_created
                for record in self.groups.values()
                if record.last_bound is not None
                and record.last_created is not None
                and record.bound >= max(record.minimum, 1)
            ]


def minimums_of(pod_groups: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str, str], int]:
    """Each PodGroup's key and minimum, for either API."""
    found: dict[tuple[str, str, str], int] = {}
    for group in pod_groups:
        metadata = group.get("metadata") or {}
        spec = group.get("spec") or {}
        api = str(group.get("apiVersion", "")).split("/")[0]
        key = (api, str(metadata.get("namespace") or "default"), str(metadata.get("name")))
        if api == WORKLOAD_API:
            gang = (spec.get("schedulingPolicy") or {}).get("gang")
            found[key] = int(gang.get("minCount", 1)) if gang else 1
        else:
            found[key] = int(spec.get("minMember") or 0)
    return found
