"""The cluster as the scheduler sees it: every node in columns (numpy arrays indexed by a
node's slot) so filters and scores run over all candidate nodes at once, kept up to date
incrementally as nodes and pods come and go. Assumed pods count like bound ones.

Callers serialise access: mutations happen between scheduling cycles, never during one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Protocol, TypeVar

import numpy as np
import numpy.typing as npt

from scheduler_runtime.framework.labelselector import LabelSelector
from scheduler_runtime.framework.nodeinfo import NodeInfo, zone_key
from scheduler_runtime.framework.objects import ClusterObjects
from scheduler_runtime.framework.podinfo import PodInfo, Taint
from scheduler_runtime.framework.quantity import CPU, EPHEMERAL_STORAGE, MEMORY, PODS

Slots = npt.NDArray[np.intp]
Mask = npt.NDArray[np.bool_]
Int64s = npt.NDArray[np.int64]
Names = npt.NDArray[np.object_]

NATIVE_COLUMNS = (CPU, MEMORY, EPHEMERAL_STORAGE)
ABSENT = -1


class LabelColumn:
    """One label key across all nodes: a value code per slot (-1 where the key is absent)."""

    __slots__ = ("codes", "ids", "values")

    def __init__(self, capacity: int) -> None:
        self.codes = np.full(capacity, ABSENT, dtype=np.int32)
        self.ids: dict[str, int] = {}
        self.values: list[str] = []

    def code(self, value: str) -> int:
        found = self.ids.get(value)
        if found is None:
            found = self.ids[value] = len(self.values)
            self.values.append(value)
        return found

    def numbers(self) -> npt.NDArray[np.float64]:
        """Each slot's value as an integer (NaN when absent or not an integer), for Gt/Lt."""
        parsed = np.array([_as_int(v) for v in self.values] + [np.nan], dtype=np.float64)
        return parsed[self.codes]  # code -1 picks the trailing NaN


class PodIndex(Protocol):
    """A plugin's own aggregate over the pods on known nodes (by their node's labels), kept
    up to date by the snapshot so the plugin need not walk every pod in each cycle."""

    def add(self, pod: PodInfo, node_labels: Mapping[str, str]) -> None: ...

    def remove(self, pod: PodInfo, node_labels: Mapping[str, str]) -> None: ...


Index = TypeVar("Index", bound=PodIndex)


def _as_int(value: str) -> float:
    try:
        return float(int(value))
    except ValueError:
        return np.nan


class Snapshot:
    """All nodes, columnar, with the pods bound or assumed on them."""

    def __init__(self, capacity: int = 64) -> None:
        self.capacity = capacity
        self.generation = 0
        self.infos: list[NodeInfo | None] = [None] * capacity
        self.alive = np.zeros(capacity, dtype=np.bool_)
        self.resource_index: dict[str, int] = {name: i for i, name in enumerate(NATIVE_COLUMNS)}
        self.allocatable = np.zeros((capacity, len(NATIVE_COLUMNS)), dtype=np.int64)
        self.requested = np.zeros((capacity, len(NATIVE_COLUMNS)), dtype=np.int64)
        self.non_zero_requested = np.zeros((capacity, 2), dtype=np.int64)
        self.pod_count = np.zeros(capacity, dtype=np.int64)
        self.allowed_pods = np.zeros(capacity, dtype=np.int64)
        self.unschedulable = np.zeros(capacity, dtype=np.bool_)
        self.port_count = np.zeros(capacity, dtype=np.int64)
        self.taint_set = np.zeros(capacity, dtype=np.int32)
        self.taint_sets: list[tuple[Taint, ...]] = [()]
        self._taint_set_ids: dict[tuple[Taint, ...], int] = {(): 0}
        self.labels: dict[str, LabelColumn] = {}
        self.image_sizes: dict[str, Int64s] = {}
        self.image_node_count: dict[str, int] = {}
        self._slot_of: dict[str, int] = {}
        self._free: list[int] = list(range(capacity - 1, -1, -1))
        self._zones: dict[str, list[str]] = {}
        self._order: Slots | None = None
        self._names: Names | None = None
        self._pod_node: dict[str, str] = {}
        self._waiting: dict[str, dict[str, PodInfo]] = {}
        # Pods on known nodes with pod (anti-)affinity, so InterPodAffinity skips the rest.
        self.pods_with_affinity: dict[str, PodInfo] = {}
        # Pods on known nodes by label, so selectors find their pods without a full scan.
        self.pods_by_label: dict[tuple[str, str], dict[str, PodInfo]] = {}
        self._indexes: dict[str, PodIndex] = {}
        self.objects = ClusterObjects()

    # ----- reading

    def __len__(self) -> int:
        return len(self._slot_of)

    def __contains__(self, node_name: object) -> bool:
        return node_name in self._slot_of

    def slot(self, node_name: str) -> int | None:
        return self._slot_of.get(node_name)

    def info(self, slot: int) -> NodeInfo:
        info = self.infos[slot]
        if info is None:
            raise KeyError(f"no node in slot {slot}")
        return info

    def get(self, node_name: str) -> NodeInfo | None:
        slot = self._slot_of.get(node_name)
        return None if slot is None else self.infos[slot]

    def name(self, slot: int) -> str:
        return self.info(slot).name

    def names(self, slots: Iterable[int]) -> list[str]:
        return [self.info(int(slot)).name for slot in slots]

    def order(self) -> Slots:
        """Slots in upstream's node-tree order: zones interleaved round-robin, each zone's
        nodes in the order they were added. The round-robin start index walks this list."""
        if self._order is None:
            zones = list(self._zones.values())
            depth = max((len(names) for names in zones), default=0)
            ordered = [
                self._slot_of[names[i]] for i in range(depth) for names in zones if i < len(names)
            ]
            self._order = np.array(ordered, dtype=np.intp)
        return self._order

    def node_names(self) -> Names:
        """Each slot's node name (None for a free slot), to name many slots at once. A change
        of the node set replaces the array, never edits it: holders keep the names they saw."""
        if self._names is None:
            names = np.full(self.capacity, None, dtype=object)
            # An object array of the names themselves: each name is shared, not copied.
            names[list(self._slot_of.values())] = np.array(list(self._slot_of), dtype=object)
            self._names = names
        return self._names

    def node_infos(self) -> list[NodeInfo]:
        """Every node, in node-tree order."""
        return [self.info(int(slot)) for slot in self.order()]

    def pod(self, pod_id: str) -> PodInfo | None:
        """A pod counted on a node, by PodInfo.id."""
        node_name = self._pod_node.get(pod_id)
        if node_name is None:
            return None
        info = self.get(node_name)
        if info is not None:
            return info.pods.get(pod_id)
        return self._waiting.get(node_name, {}).get(pod_id)

    def pods(self) -> Iterator[PodInfo]:
        """Every pod on a known node."""
        for info in self.infos:
            if info is not None:
                yield from info.pods.values()

    def column(self, resource: str) -> int | None:
        return self.resource_index.get(resource)

    def label(self, key: str) -> LabelColumn | None:
        return self.labels.get(key)

    def label_equals(self, key: str, value: str) -> Mask:
        column = self.labels.get(key)
        if column is None or value not in column.ids:
            return np.zeros(self.capacity, dtype=np.bool_)
        equal: Mask = column.codes == column.ids[value]
        return equal

    def label_in(self, key: str, values: Iterable[str]) -> Mask:
        column = self.labels.get(key)
        if column is None:
            return np.zeros(self.capacity, dtype=np.bool_)
        codes = [column.ids[v] for v in values if v in column.ids]
        return np.isin(column.codes, codes)

    def label_exists(self, key: str) -> Mask:
        column = self.labels.get(key)
        if column is None:
            return np.zeros(self.capacity, dtype=np.bool_)
        present: Mask = column.codes != ABSENT
        return present

    def pod_index(self, name: str, build: Callable[[], Index]) -> Index:
        """The pod index registered under `name`, built (and filled with the pods already
        placed) on first use; every later pod and node change keeps it current."""
        index = self._indexes.get(name)
        if index is None:
            index = self._indexes[name] = built = build()
            for info in self.infos:
                if info is not None:
                    for pod in info.pods.values():
                        built.add(pod, info.labels)
        return index  # type: ignore[return-value]

    # ----- nodes

    def add_node(self, node: dict[str, Any]) -> None:
        """Adds a node, or updates it when it is already known."""
        name = node["metadata"]["name"]
        if name in self._slot_of:
            self.update_node(node)
            return
        slot = self._take_slot()
        info = NodeInfo(node)
        self._slot_of[name] = slot
        self.infos[slot] = info
        self.alive[slot] = True
        self._write_node_columns(slot, info)
        self._zones.setdefault(zone_key(info.labels), []).append(name)
        self._order = None
        self._names = None
        for pod in self._waiting.pop(name, {}).values():
            self._place(slot, pod)
        self.generation += 1

    def update_node(self, node: dict[str, Any]) -> None:
        name = node["metadata"]["name"]
        slot = self._slot_of.get(name)
        if slot is None:
            self.add_node(node)
            return
        info = self.info(slot)
        old_labels = info.labels
        old_zone = zone_key(old_labels)
        self._clear_node_columns(slot, info)
        info.set_node(node)
        self._write_node_columns(slot, info)
        if self._indexes and info.labels != old_labels:
            for pod in info.pods.values():
                self._index_pod(pod, old_labels, -1)
                self._index_pod(pod, info.labels, 1)
        new_zone = zone_key(info.labels)
        if new_zone != old_zone:
            self._leave_zone(old_zone, name)
            self._zones.setdefault(new_zone, []).append(name)
            self._order = None
        self.generation += 1

    def remove_node(self, name: str) -> None:
        """Forgets a node; its pods wait (as upstream's cache keeps them) until they go too."""
        slot = self._slot_of.pop(name, None)
        if slot is None:
            return
        info = self.info(slot)
        if info.pods:
            self._waiting[name] = dict(info.pods)
            for pod in info.pods.values():
                self.pods_with_affinity.pop(pod.id, None)
                self._index_labels(pod, -1)
                self._index_pod(pod, info.labels, -1)
        self._clear_node_columns(slot, info)
        self._leave_zone(zone_key(info.labels), name)
        self.infos[slot] = None
        self.alive[slot] = False
        self.requested[slot] = 0
        self.non_zero_requested[slot] = 0
        self.pod_count[slot] = 0
        self.port_count[slot] = 0
        self._free.append(slot)
        self._order = None
        self._names = None
        self.generation += 1

    # ----- pods

    def add_pod(self, pod: PodInfo) -> None:
        """Counts a bound or assumed pod (`pod.node_name` set) against its node."""
        if not pod.node_name:
            raise ValueError(f"pod {pod.key} has no node")
        if pod.id in self._pod_node:
            self.remove_pod(pod.id)
        self._pod_node[pod.id] = pod.node_name
        slot = self._slot_of.get(pod.node_name)
        if slot is None:
            self._waiting.setdefault(pod.node_name, {})[pod.id] = pod
        else:
            self._place(slot, pod)
        self.generation += 1

    def remove_pod(self, pod_id: str) -> PodInfo | None:
        node_name = self._pod_node.pop(pod_id, None)
        if node_name is None:
            return None
        slot = self._slot_of.get(node_name)
        if slot is None:
            waiting = self._waiting.get(node_name, {})
            pod = waiting.pop(pod_id, None)
            if not waiting:
                self._waiting.pop(node_name, None)
        else:
            info = self.info(slot)
            pod = info.remove_pod(pod_id)
            if pod is not None:
                self._count_pod(slot, pod, -1)
                self._index_pod(pod, info.labels, -1)
        self.generation += 1
        return pod

    def _place(self, slot: int, pod: PodInfo) -> None:
        info = self.info(slot)
        info.add_pod(pod)
        self._count_pod(slot, pod, 1)
        self._index_pod(pod, info.labels, 1)

    def _count_pod(self, slot: int, pod: PodInfo, sign: int) -> None:
        for name, value in pod.requests.items():
            if name == PODS:
                continue
            column = self._resource(name)  # may widen the arrays: index them after
            self.requested[slot, column] += sign * value
        self.non_zero_requested[slot, 0] += sign * pod.non_zero_cpu
        self.non_zero_requested[slot, 1] += sign * pod.non_zero_memory
        self.pod_count[slot] += sign
        self.port_count[slot] += sign * len(pod.host_ports)
        if pod.has_pod_affinity:
            if sign > 0:
                self.pods_with_affinity[pod.id] = pod
            else:
                self.pods_with_affinity.pop(pod.id, None)
        self._index_labels(pod, sign)

    def _index_labels(self, pod: PodInfo, sign: int) -> None:
        for label in pod.labels.items():
            if sign > 0:
                self.pods_by_label.setdefault(label, {})[pod.id] = pod
                continue
            bucket = self.pods_by_label.get(label)
            if bucket is not None:
                bucket.pop(pod.id, None)
                if not bucket:
                    del self.pods_by_label[label]

    def _index_pod(self, pod: PodInfo, node_labels: Mapping[str, str], sign: int) -> None:
        for index in self._indexes.values():
            if sign > 0:
                index.add(pod, node_labels)
            else:
                index.remove(pod, node_labels)

    def pods_matching(self, selector: LabelSelector) -> list[PodInfo]:
        """The pods on known nodes whose labels `selector` matches, looked up through the
        label index by the selector's narrowest `In` requirement when it has one (only the
        other requirements are then checked pod by pod)."""
        if selector.nothing:
            return []
        narrowest: list[dict[str, PodInfo]] | None = None
        used = None
        for requirement in selector.requirements:
            if requirement.operator != "In":
                continue
            buckets = [self.pods_by_label.get((requirement.key, v), {}) for v in requirement.values]
            if narrowest is None or sum(map(len, buckets)) < sum(map(len, narrowest)):
                narrowest, used = buckets, requirement
        if narrowest is None:
            return [pod for pod in self.pods() if selector.matches(pod.labels)]
        rest = [r for r in selector.requirements if r is not used]
        found = [pod for bucket in narrowest for pod in bucket.values()]
        if not rest:
            return found
        return [pod for pod in found if all(r.matches(pod.labels) for r in rest)]

    # ----- columns

    def _take_slot(self) -> int:
        if not self._free:
            self._grow()
        return self._free.pop()

    def _grow(self) -> None:
        old = self.capacity
        new = old * 2
        self.infos.extend([None] * (new - old))

        def wider(array: npt.NDArray[Any], fill: int = 0) -> npt.NDArray[Any]:
            shape = (new, *array.shape[1:])
            grown = np.full(shape, fill, dtype=array.dtype)
            grown[:old] = array
            return grown

        self.alive = wider(self.alive)
        self.allocatable = wider(self.allocatable)
        self.requested = wider(self.requested)
        self.non_zero_requested = wider(self.non_zero_requested)
        self.pod_count = wider(self.pod_count)
        self.allowed_pods = wider(self.allowed_pods)
        self.unschedulable = wider(self.unschedulable)
        self.port_count = wider(self.port_count)
        self.taint_set = wider(self.taint_set)
        for column in self.labels.values():
            column.codes = wider(column.codes, ABSENT)
        for image, sizes in self.image_sizes.items():
            self.image_sizes[image] = wider(sizes)
        self._free.extend(range(new - 1, old - 1, -1))
        self.capacity = new

    def _resource(self, name: str) -> int:
        index = self.resource_index.get(name)
        if index is None:
            index = self.resource_index[name] = len(self.resource_index)
            extra = np.zeros((self.capacity, 1), dtype=np.int64)
            self.allocatable = np.hstack([self.allocatable, extra])
            self.requested = np.hstack([self.requested, extra])
        return index

    def _write_node_columns(self, slot: int, info: NodeInfo) -> None:
        self.allocatable[slot] = 0
        for name, quantity in info.allocatable.items():
            if name != PODS:
                index = self._resource(name)  # may widen the arrays: index them after
                self.allocatable[slot, index] = quantity
        self.allowed_pods[slot] = info.allowed_pod_number
        self.unschedulable[slot] = info.unschedulable
        self.taint_set[slot] = self._taint_set_id(info.taints)
        for key, value in info.labels.items():
            column = self.labels.get(key)
            if column is None:
                column = self.labels[key] = LabelColumn(self.capacity)
            column.codes[slot] = column.code(value)
        for image, size in info.images.items():
            sizes = self.image_sizes.get(image)
            if sizes is None:
                sizes = self.image_sizes[image] = np.zeros(self.capacity, dtype=np.int64)
            sizes[slot] = size
            self.image_node_count[image] = self.image_node_count.get(image, 0) + 1

    def _clear_node_columns(self, slot: int, info: NodeInfo) -> None:
        for key in info.labels:
            self.labels[key].codes[slot] = ABSENT
        for image in info.images:
            self.image_sizes[image][slot] = 0
            remaining = self.image_node_count[image] - 1
            if remaining:
                self.image_node_count[image] = remaining
            else:
                del self.image_node_count[image]
                del self.image_sizes[image]

    def _taint_set_id(self, taints: tuple[Taint, ...]) -> int:
        found = self._taint_set_ids.get(taints)
        if found is None:
            found = self._taint_set_ids[taints] = len(self.taint_sets)
            self.taint_sets.append(taints)
        return found

    def _leave_zone(self, zone: str, name: str) -> None:
        names = self._zones.get(zone)
        if names is None or name not in names:
            return
        names.remove(name)
        if not names:
            del self._zones[zone]
