"""NodeResourcesFit: the node must have room for the pod's requests (filter), and nodes are
scored by the configured strategy (LeastAllocated, MostAllocated, RequestedToCapacityRatio)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
from pydantic import BaseModel

from scheduler_runtime.config.args import NodeResourcesFitArgs
from scheduler_runtime.framework.dra import DEVICE_CLASS_PREFIX, explicit_resource_name
from scheduler_runtime.framework.events import (
    DEVICE_CLASS,
    NODE,
    POD,
    ActionType,
    ClusterEventWithHint,
    QueueingHint,
    on,
)
from scheduler_runtime.framework.interface import (
    CycleState,
    Handle,
    PluginBase,
    PreFilterResult,
    StateNeed,
)
from scheduler_runtime.framework.nodeinfo import NodeInfo
from scheduler_runtime.framework.podinfo import PodInfo
from scheduler_runtime.framework.quantity import CPU, EPHEMERAL_STORAGE, MEMORY, PODS
from scheduler_runtime.framework.snapshot import Int64s, Slots, Snapshot
from scheduler_runtime.framework.status import SUCCESS, NodeVerdicts, Status
from scheduler_runtime.plugins.noderesources.resources import (
    allocatable_and_requested,
    is_extended,
    is_scalar,
    pod_scoring_request,
)
from scheduler_runtime.plugins.noderesources.scorers import (
    least_allocated,
    most_allocated,
    requested_to_capacity_ratio,
    weighted_mean,
)

TOO_MANY_PODS = "Too many pods"
PRE_SCORE_KEY = "PreScoreNodeResourcesFit"


def _checked_requests(
    pod: PodInfo, ignored: frozenset[str], groups: frozenset[str]
) -> list[tuple[str, int]]:
    """The resources the filter compares, in upstream's order (cpu, memory, ephemeral
    storage, then scalar resources), skipping zero requests and ignored extended ones."""
    checked = [(name, pod.requests.get(name, 0)) for name in (CPU, MEMORY, EPHEMERAL_STORAGE)]
    for name, value in pod.requests.items():
        if name in (CPU, MEMORY, EPHEMERAL_STORAGE, PODS) or not is_scalar(name):
            continue
        if is_extended(name) and (name in ignored or name.split("/", 1)[0] in groups):
            continue
        checked.append((name, value))
    return [(name, value) for name, value in checked if value > 0]


def after_class_change(pod: PodInfo, old: Any, new: Any) -> QueueingHint:
    """isSchedulableAfterDeviceClassEvent: the class now backs an extended resource the
    pod asks for (its implicit name only when added: a class's name never changes)."""
    if old is not None:
        if explicit_resource_name(old) == explicit_resource_name(new):
            return QueueingHint.SKIP
    elif DEVICE_CLASS_PREFIX + str((new.get("metadata") or {}).get("name", "")) in pod.requests:
        return QueueingHint.QUEUE
    explicit = explicit_resource_name(new)
    if explicit is not None and explicit in pod.requests:
        return QueueingHint.QUEUE
    return QueueingHint.SKIP


class Fit(PluginBase[NodeResourcesFitArgs]):
    """Registered as NodeResourcesFit."""

    name: ClassVar[str] = "NodeResourcesFit"
    cluster_events: ClassVar[Sequence[ClusterEventWithHint]] = (
        on(POD, ActionType.DELETE | ActionType.UPDATE_POD_SCALE_DOWN),
        on(NODE, ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE),
    )
    state_needs: ClassVar[Mapping[str, StateNeed]] = {
        "filter": StateNeed(
            "preFilter", 'error reading "PreFilterNodeResourcesFit" from cycleState: not found'
        )
    }
    args_type = NodeResourcesFitArgs

    def __init__(self, args: BaseModel | None, handle: Handle) -> None:
        super().__init__(args, handle)
        self.ignored = frozenset(self.args.ignored_resources)
        self.ignored_groups = frozenset(self.args.ignored_resource_groups)
        self.strategy = self.args.scoring_strategy

    def _requests(self, state: CycleState, pod: PodInfo) -> list[tuple[str, int]]:
        cached = state.get(self.name)
        if cached is None:
            cached = _checked_requests(pod, self.ignored, self.ignored_groups)
            state.write(self.name, cached)
        return cached  # type: ignore[no-any-return]

    def pre_filter(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot
    ) -> tuple[PreFilterResult | None, Status]:
        state.write(self.name, _checked_requests(pod, self.ignored, self.ignored_groups))
        return None, SUCCESS

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        if not self.handle.features.dra_extended_resource:
            return self.cluster_events
        # A class may now back an extended resource the pod asks for.
        added = on(DEVICE_CLASS, ActionType.ADD | ActionType.UPDATE, after_class_change)
        return (*self.cluster_events, added)

    def _backed_by_dra(self, name: str) -> bool:
        """shouldDelegateResourceToDRA, but for the node's allocatable: a DeviceClass backs
        the resource (DRAExtendedResource), so a node that does not advertise it leaves it
        to DynamicResources."""
        dra = self.handle.dra
        if dra is None or not self.handle.features.dra_extended_resource:
            return False
        return dra.extended_resource_class(name) is not None

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        reasons = []
        unresolvable = False
        if len(node.pods) + 1 > node.allowed_pod_number:
            reasons.append(TOO_MANY_PODS)
        for name, value in self._requests(state, pod):
            allocatable = node.allocatable.get(name, 0)
            if allocatable <= 0 and self._backed_by_dra(name):
                continue
            if value > allocatable - node.requested.get(name, 0):
                reasons.append(f"Insufficient {name}")
                unresolvable = unresolvable or value > allocatable
        if not reasons:
            return SUCCESS
        if unresolvable:
            return Status.unresolvable(*reasons)
        return Status.unschedulable(*reasons)

    def filter_nodes(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, slots: Slots
    ) -> NodeVerdicts:
        too_many = snapshot.pod_count[slots] + 1 > snapshot.allowed_pods[slots]
        rejected = too_many.copy()
        unresolvable = np.zeros(len(slots), dtype=np.bool_)
        reasons = [(TOO_MANY_PODS, too_many)]
        for name, value in self._requests(state, pod):
            column = snapshot.column(name)
            if column is None:
                allocatable = np.zeros(len(slots), dtype=np.int64)
                free = allocatable
            else:
                allocatable = snapshot.allocatable[slots, column]
                free = allocatable - snapshot.requested[slots, column]
            short = value > free
            if self._backed_by_dra(name):
                short &= allocatable > 0  # DynamicResources allocates it where none is advertised
            rejected |= short
            unresolvable |= short & (value > allocatable)
            reasons.append((f"Insufficient {name}", short))
        return NodeVerdicts(rejected, unresolvable & rejected, reasons)

    def pre_score(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, slots: Slots
    ) -> Status:
        state.write(PRE_SCORE_KEY, self._scoring_requests(pod))
        return SUCCESS

    def _scoring_requests(self, pod: PodInfo) -> list[int]:
        return [
            pod_scoring_request(r.name, pod.requests, pod.non_zero_requests, use_requested=False)
            for r in self.strategy.resources
        ]

    def score_nodes(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, slots: Slots
    ) -> Int64s:
        requests = state.get(PRE_SCORE_KEY) or self._scoring_requests(pod)
        columns = [
            (*allocatable_and_requested(snapshot, slots, r.name, request, use_requested=False), r)
            for r, request in zip(self.strategy.resources, requests, strict=True)
        ]
        if self.strategy.type == "RequestedToCapacityRatio":
            shape = self.strategy.requested_to_capacity_ratio
            assert shape is not None  # guaranteed by the args validation
            return requested_to_capacity_ratio(
                shape.shape, [(req, alloc, r.weight) for alloc, req, r in columns]
            )
        scorer = least_allocated if self.strategy.type == "LeastAllocated" else most_allocated
        return weighted_mean([(scorer(req, alloc), alloc, r.weight) for alloc, req, r in columns])
