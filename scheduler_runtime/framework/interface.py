"""The framework's extension points, as upstream's pkg/scheduler/framework/interface.go.

A plugin is a class built as `Plugin(args, handle)` with a `name` (in-tree plugins derive
from `PluginBase`). It takes part in every extension point whose method it defines. In-tree
plugins also define the batch methods (`filter_nodes`, `score_nodes`) that work on all
candidate nodes of the columnar snapshot at once; user plugins may define only the per-node
`filter` / `score`, which the framework adapts.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final, Generic, Protocol, TypeVar, cast, runtime_checkable

import numpy as np
from prometheus_client import CollectorRegistry
from pydantic import BaseModel

from scheduler_runtime.framework.dra import ResourceClaimClient, SharedDRAManager
from scheduler_runtime.framework.events import EVERYTHING, ClusterEventWithHint
from scheduler_runtime.framework.features import Features
from scheduler_runtime.framework.nodeinfo import NodeInfo
from scheduler_runtime.framework.podgroups import (
    GroupKey,
    Placement,
    PodGroupAssignments,
    PodGroupLister,
)
from scheduler_runtime.framework.podinfo import PodInfo
from scheduler_runtime.framework.snapshot import Int64s, Slots, Snapshot
from scheduler_runtime.framework.status import (  # noqa: F401 - found here too, with the rest
    SKIP,
    SUCCESS,
    Code,
    NodeVerdicts,
    Status,
)
from scheduler_runtime.framework.types import Diagnosis, QueuedPodInfo
from scheduler_runtime.framework.volumes import ChosenVolumes
from scheduler_runtime.framework.waiting import WaitingPod

MAX_NODE_SCORE = 100
DEFAULT_PLUGIN_TIME_BUDGET = 1.0  # seconds an out-of-tree plugin may take per call
MIN_NODE_SCORE = 0


class PodGroupCycleState:
    """Data plugins share across one pod group scheduling cycle (upstream's
    PodGroupCycleState): the PodGroup scheduling sequence makes one per cycle of a group and
    hands it to the placement plugins and, through each member's CycleState, to every plugin
    trying a member; so what one member's plugins keep (DynamicResources' allocations in
    flight) the next member's can use. It ends with the cycle: binding never sees it."""

    __slots__ = ("_data", "key")

    def __init__(self, key: GroupKey) -> None:
        self._data: dict[str, Any] = {}
        self.key = key

    def read(self, key: str) -> Any:
        return self._data[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self._data.get(key, default)

    def write(self, key: str, value: Any) -> None:
        self._data[key] = value

    def delete(self, key: str) -> None:
        self._data.pop(key, None)


class CycleState:
    """Data plugins share within one scheduling cycle (upstream CycleState).
    `pod_group_cycle` is set while the cycle only tries a member in its group's cycle
    (upstream's IsPodGroupSchedulingCycle): what it assumes and reserves there is undone at
    the group cycle's end, and it is cleared before the member goes on to binding."""

    __slots__ = (
        "_data",
        "pod_group_cycle",
        "skip_filter_plugins",
        "skip_pre_bind_plugins",
        "skip_score_plugins",
    )

    def __init__(self, pod_group_cycle: PodGroupCycleState | None = None) -> None:
        self._data: dict[str, Any] = {}
        self.skip_filter_plugins: set[str] = set()
        self.skip_score_plugins: set[str] = set()
        self.skip_pre_bind_plugins: set[str] = set()  # their PreBindPreFlight said Skip
        self.pod_group_cycle = pod_group_cycle

    @property
    def pod_group(self) -> GroupKey | None:
        """The group whose cycle tries this pod; None outside a group cycle."""
        cycle = self.pod_group_cycle
        return None if cycle is None else cycle.key

    def read(self, key: str) -> Any:
        return self._data[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self._data.get(key, default)

    def write(self, key: str, value: Any) -> None:
        self._data[key] = value

    def delete(self, key: str) -> None:
        self._data.pop(key, None)

    def clone(self) -> CycleState:
        copy = CycleState(self.pod_group_cycle)  # the group's, shared as upstream's Clone does
        copy._data = {
            k: v.clone() if callable(getattr(v, "clone", None)) else v
            for k, v in self._data.items()
        }
        copy.skip_filter_plugins = set(self.skip_filter_plugins)
        copy.skip_score_plugins = set(self.skip_score_plugins)
        copy.skip_pre_bind_plugins = set(self.skip_pre_bind_plugins)
        return copy


@dataclass(frozen=True, slots=True)
class PreFilterResult:
    """Nodes a PreFilter plugin already knows are the only candidates (None: all nodes)."""

    node_names: frozenset[str] | None = None

    @property
    def all_nodes(self) -> bool:
        return self.node_names is None

    def merge(self, other: PreFilterResult | None) -> PreFilterResult:
        if other is None or other.node_names is None:
            return self
        if self.node_names is None:
            return other
        return PreFilterResult(self.node_names & other.node_names)


@dataclass(frozen=True, slots=True)
class NominatingInfo:
    """The node a pod is nominated to after preemption ("" clears the nomination)."""

    node_name: str
    override: bool = True


@dataclass(frozen=True, slots=True)
class PostFilterResult:
    """`victims` are the pods preemption evicts for the nominated node (already handed to
    the `delete_pod` service when the handle has one); `cleared` are lower-priority pods
    whose nomination to that node is withdrawn."""

    nominating: NominatingInfo | None = None
    victims: tuple[PodInfo, ...] = ()
    cleared: tuple[PodInfo, ...] = ()


@dataclass(frozen=True, slots=True)
class Preemptor:
    """Who evicts a victim (upstream's ExecutorPreemptor): a pod, or a pod group (kind
    "podgroup"); `node` is where it makes room (upstream's candidate name: the node, or
    "cluster" for a pod group); `related` is the object its victims' Preempted events name
    (apiVersion, kind, namespace, name, uid, resourceVersion)."""

    kind: str
    uid: str
    scheduler_name: str
    node: str
    related: Mapping[str, str]

    @classmethod
    def of_pod(cls, pod: PodInfo, node: str) -> Preemptor:
        metadata = pod.pod.get("metadata") or {}
        related = {
            "apiVersion": "v1",
            "kind": "Pod",
            "namespace": pod.namespace,
            "name": pod.name,
            "uid": pod.uid,
            "resourceVersion": str(metadata.get("resourceVersion", "")),
        }
        return cls("pod", pod.uid, pod.scheduler_name, node, related)


@dataclass(frozen=True, slots=True)
class ProposedAssignment:
    """A group member placed by a run of its group's algorithm (upstream's
    fwk.ProposedAssignment): the pod, its node and the cycle state it was placed with."""

    pod: PodInfo
    node: str
    state: CycleState


# Reruns the group's algorithm on the snapshot as it is (upstream's PodGroupSchedulingFunc):
# the members it placed, and the group's status. Everything it assumed is undone on return.
PodGroupSchedulingFunc = Callable[[], tuple[list[ProposedAssignment], Status]]


@dataclass(frozen=True, slots=True)
class PodGroupPostFilterResult:
    """The nominated node of each member preemption placed (by PodInfo.id; "" clears)."""

    nominations: Mapping[str, str] = field(default_factory=dict)


# Sends a pod's binding (pod, node): the future ends with the API's answer.
Binder = Callable[[PodInfo, str], "Future[None]"]


class PodNominator(Protocol):
    """The pending pods preemption nominated to nodes (upstream's framework.PodNominator)."""

    def pods_on(self, node_name: str) -> list[PodInfo]:
        """The pods nominated to `node_name`."""

    def nodes(self) -> Collection[str]:
        """The nodes some pod is nominated to (usually none)."""


# (extension point, status code, profile, seconds): upstream's
# scheduler_framework_extension_point_duration_seconds, which the live scheduler exports.
ExtensionPointRecorder = Callable[[str, Code, str, float], None]
PodAction = Callable[[PodInfo], None]
# (victim, preemptor): evicts a preemption victim on the preemptor's behalf.
Eviction = Callable[[PodInfo, Preemptor], None]
# (pod, node, the volumes VolumeBinding chose there, timeout in seconds) -> its PreBind status
VolumeBinder = Callable[[PodInfo, str, ChosenVolumes, float], Status]


@dataclass(frozen=True)
class Services:
    """What the scheduler around the framework does for plugins; None where it does not
    (a bare framework does nothing, simulate binds no volumes).

    `delete_pod` evicts a preemption victim for its preemptor; `clear_nomination` withdraws a
    lower-priority pod's nomination; `bind_pod_volumes` writes VolumeBinding's choice in PreBind;
    `metrics_registry` is where plugins register their own metrics (served on /metrics);
    `resource_claims` makes DynamicResources' API calls (claims' status, events).
    """

    delete_pod: Eviction | None = None
    clear_nomination: PodAction | None = None
    bind_pod_volumes: VolumeBinder | None = None
    metrics_registry: CollectorRegistry | None = None
    resource_claims: ResourceClaimClient | None = None


class FrameworkHandle(Protocol):
    """What a plugin may ask of its profile's framework (upstream's framework.Handle):
    preemption runs the filters again on node copies; Permit plugins manage waiting pods."""

    @property
    def scheduler_name(self) -> str: ...

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node: NodeInfo
    ) -> Status: ...

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node: NodeInfo
    ) -> Status: ...

    def run_filters_with_nominated_pods(
        self, state: CycleState, pod: PodInfo, node: NodeInfo
    ) -> Status: ...

    def run_reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status: ...

    def run_unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None: ...

    def get_waiting_pod(self, uid: str) -> WaitingPod | None: ...

    def iterate_over_waiting_pods(self, callback: Callable[[WaitingPod], None]) -> None: ...

    def reject_waiting_pod(self, uid: str) -> bool: ...


@dataclass
class Handle:
    """What the framework lends its plugins: the snapshot and the scheduler's services.

    `binder` sends a pod's binding to the API (the live scheduler provides it); `nominator` knows
    the pods nominated to nodes (after preemption); `services` are what else the scheduler
    does for plugins. `framework` is the profile's own framework (set when it builds its
    plugins). `plugin_time_budget` bounds each call of an out-of-tree plugin (a plugin class
    may set its own `time_budget`). `record_extension_point`, when given, is told how long
    each extension point took. `features` are the configuration's feature gates. `dra` is
    the scheduler's DRA state (ResourceClaims, ResourceSlices, DeviceClasses; upstream's
    SharedDRAManager), None without one. `pod_groups` are the scheduler's pod groups (None:
    a bare framework knows none); `clock` times waits at Permit (simulate's is virtual).
    """

    snapshot: Snapshot
    binder: Binder | None = None
    nominator: PodNominator | None = None
    rng: random.Random = field(default_factory=random.Random)
    parallelism: int = 16
    services: Services = field(default_factory=Services)
    framework: FrameworkHandle | None = None
    plugin_time_budget: float = DEFAULT_PLUGIN_TIME_BUDGET
    record_extension_point: ExtensionPointRecorder | None = None
    features: Features = field(default_factory=Features)
    dra: SharedDRAManager | None = None
    pod_groups: PodGroupLister | None = None
    clock: Callable[[], float] = time.monotonic


ArgsT = TypeVar("ArgsT", bound="BaseModel | None")


@dataclass(frozen=True)
class StateNeed:
    """What a plugin reads at one extension point that it writes at an earlier one
    (`written_at`): without that point it fails, as upstream's plugin does, with `missing`
    (upstream's words), and the configuration refuses the profile. `gate` names the Features
    flag without which the plugin reads nothing (it does nothing while its gate is off)."""

    written_at: str
    missing: str = "not found"
    gate: str = ""

    def needed(self, features: Features) -> bool:
        """Whether the plugin reads the state with these gates."""
        return not self.gate or bool(getattr(features, self.gate))


# How upstream words the failure of a plugin that misses its state, by extension point.
MISSING_STATE_FAILURES: Final[Mapping[str, str]] = {
    "filter": 'running "{plugin}" filter plugin: {missing}',
    "preScore": 'running PreScore plugin "{plugin}": {missing}',
    "score": 'running Score plugins: plugin "{plugin}" failed with: {missing}',
    "reserve": 'running Reserve plugin "{plugin}": {missing}',
    "preBind": 'running PreBindPreFlight "{plugin}": {missing}',
    "postFilter": "{missing}",
}


def missing_state_failure(point: str, plugin: str, need: StateNeed) -> str:
    """The error upstream reports when `plugin` runs at `point` without its state."""
    template = MISSING_STATE_FAILURES.get(point, "{missing}")
    return template.format(plugin=plugin, missing=need.missing)


class PluginBase(Generic[ArgsT]):
    """The constructor plugins share: `Plugin(args, handle)` keeps the validated args (the
    args model's defaults when the configuration gives none) and the handle.

        class Spread(PluginBase[SpreadArgs]):
            name = "Spread"
            args_type = SpreadArgs
    """

    name: ClassVar[str]
    args_type: ClassVar[type[BaseModel] | None] = None
    # Extension point -> the earlier point whose state the plugin reads there (see StateNeed).
    state_needs: ClassVar[Mapping[str, StateNeed]] = {}
    # Its Filter costs much per node (allocating devices, say): the search then asks it about
    # no more nodes than it still needs, as upstream's parallel search stops at enough.
    costly_filter: ClassVar[bool] = False
    # The cluster events that could help a pod this plugin rejected (framework/events.py);
    # plugins whose hints need their own state override events_to_register instead.
    cluster_events: ClassVar[Sequence[ClusterEventWithHint]] = EVERYTHING

    def __init__(self, args: BaseModel | None, handle: Handle) -> None:
        if args is None and self.args_type is not None:
            args = self.args_type()
        self.args = cast(ArgsT, args)
        self.handle = handle

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return self.cluster_events


class Plugin(Protocol):
    name: ClassVar[str]


@runtime_checkable
class PreEnqueuePlugin(Plugin, Protocol):
    def pre_enqueue(self, pod: PodInfo) -> Status: ...


@runtime_checkable
class QueueSortPlugin(Plugin, Protocol):
    """Less orders the queue. A plugin may also offer `sort_key(queued)`, a value whose `<`
    is the same order: the queue then compares frozen keys, so an order that depends on
    more than the pod (a pod group's state) cannot change under an entry in its heap."""

    def less(self, first: QueuedPodInfo, second: QueuedPodInfo) -> bool: ...


@runtime_checkable
class PreFilterPlugin(Plugin, Protocol):
    def pre_filter(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot
    ) -> tuple[PreFilterResult | None, Status]: ...


@runtime_checkable
class PreFilterExtensions(Protocol):
    """Optional on PreFilter plugins: keep the cycle state right when preemption adds or
    removes pods on a node copy."""

    def add_pod(
        self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node: NodeInfo
    ) -> Status: ...

    def remove_pod(
        self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node: NodeInfo
    ) -> Status: ...


@runtime_checkable
class FilterPlugin(Plugin, Protocol):
    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status: ...


@runtime_checkable
class BatchFilterPlugin(Plugin, Protocol):
    def filter_nodes(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, slots: Slots
    ) -> NodeVerdicts: ...


@runtime_checkable
class PostFilterPlugin(Plugin, Protocol):
    def post_filter(
        self, state: CycleState, pod: PodInfo, diagnosis: Diagnosis
    ) -> tuple[PostFilterResult | None, Status]: ...


@runtime_checkable
class PreScorePlugin(Plugin, Protocol):
    def pre_score(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, slots: Slots
    ) -> Status: ...


@runtime_checkable
class ScorePlugin(Plugin, Protocol):
    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status]: ...


@runtime_checkable
class BatchScorePlugin(Plugin, Protocol):
    def score_nodes(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, slots: Slots
    ) -> Int64s: ...


@runtime_checkable
class ScoreExtensions(Protocol):
    """Optional on Score plugins: rescale the scores of all nodes in place (int64 array)."""

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: Int64s) -> Status: ...


@runtime_checkable
class ReservePlugin(Plugin, Protocol):
    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status: ...

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None: ...


@runtime_checkable
class PermitPlugin(Plugin, Protocol):
    def permit(self, state: CycleState, pod: PodInfo, node_name: str) -> tuple[Status, float]: ...


@runtime_checkable
class PlacementGeneratePlugin(Plugin, Protocol):
    """Splits the nodes a pod group may use into placements to try the group in."""

    def generate_placements(
        self, state: PodGroupCycleState, group: GroupKey, parent: Placement
    ) -> tuple[list[Placement], Status]: ...


@runtime_checkable
class PlacementScorePlugin(Plugin, Protocol):
    """Scores a placement where the whole group fits; optional `normalize_placement_score`
    rescales the scores of all placements (a list, in place) to 0-100."""

    def score_placement(
        self, state: PodGroupCycleState, group: GroupKey, assignments: PodGroupAssignments
    ) -> tuple[int, Status]: ...


@runtime_checkable
class PreBindPlugin(Plugin, Protocol):
    def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status: ...


@runtime_checkable
class BindPlugin(Plugin, Protocol):
    def bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status: ...


@runtime_checkable
class PostBindPlugin(Plugin, Protocol):
    def post_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> None: ...


def default_normalize_score(scores: Int64s, *, reverse: bool) -> None:
    """helper.DefaultNormalizeScore, in place: scale to 0-100 by the maximum (reversed: 100
    minus that; all 100 when every score is 0)."""
    if len(scores) == 0:
        return
    highest = int(scores.max())
    if highest <= 0:
        if reverse:
            scores[:] = MAX_NODE_SCORE
        return
    scores *= MAX_NODE_SCORE
    scores //= highest
    if reverse:
        np.subtract(MAX_NODE_SCORE, scores, out=scores)
