"""Pod groups as plugins see them: which group a pod names, what its PodGroup object asks
for, and how far the group has got. Two APIs name groups, and one gang mechanism serves both:

- upstream's `scheduling.k8s.io/v1alpha2` PodGroup (Kubernetes 1.36, gate GenericWorkload):
  a pod names its group in `spec.schedulingGroup.podGroupName`; the group's policy is
  `spec.schedulingPolicy.gang.minCount` (or `basic`, no gang), optionally with
  `spec.schedulingConstraints.topology[0].key` (gate TopologyAwareWorkloadScheduling);
- scheduler-plugins' Coscheduling `scheduling.x-k8s.io/v1alpha1` PodGroup: a pod carries the
  label `scheduling.x-k8s.io/pod-group`; the group asks for `spec.minMember` pods,
  optionally `spec.minResources` and `spec.scheduleTimeoutSeconds`.

The backend keeps the groups (backend/podgroups.py) and lends them to plugins through
`Handle.pod_groups`, a `PodGroupLister`."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

from scheduler_runtime.framework.events import POD_GROUP, QueueingHint
from scheduler_runtime.framework.podinfo import PodInfo
from scheduler_runtime.framework.quantity import QuantityError, resource_list

# The API groups that define a PodGroup; a group's key says which one it is.
WORKLOAD_API = "scheduling.k8s.io"  # v1alpha2
COSCHEDULING_API = "scheduling.x-k8s.io"  # v1alpha1
# The kinds the backend's event handlers take the PodGroup objects of each API as.
WORKLOAD_POD_GROUP = "PodGroup.scheduling.k8s.io"
COSCHEDULING_POD_GROUP = "PodGroup.scheduling.x-k8s.io"
POD_GROUP_KINDS = {WORKLOAD_POD_GROUP: WORKLOAD_API, COSCHEDULING_POD_GROUP: COSCHEDULING_API}
POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
# The resource cluster events about each API's PodGroups are about (upstream's fwk.PodGroup;
# scheduler-plugins registers its PodGroups under their own group).
COSCHEDULING_POD_GROUP_EVENTS = "scheduling.x-k8s.io/PodGroup"
EVENT_RESOURCES = {WORKLOAD_API: POD_GROUP, COSCHEDULING_API: COSCHEDULING_POD_GROUP_EVENTS}


class GroupKey(NamedTuple):
    """One pod group: the API that defines it, its namespace and name."""

    api: str
    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"


def _namespace(pod: Mapping[str, Any]) -> str:
    return str((pod.get("metadata") or {}).get("namespace") or "default")


def scheduling_group(pod: Mapping[str, Any]) -> GroupKey | None:
    """The v1alpha2 group a pod names in `spec.schedulingGroup.podGroupName`, if any."""
    group = (pod.get("spec") or {}).get("schedulingGroup") or {}
    name = group.get("podGroupName") if isinstance(group, Mapping) else None
    return GroupKey(WORKLOAD_API, _namespace(pod), name) if isinstance(name, str) and name else None


def coscheduling_group(pod: Mapping[str, Any]) -> GroupKey | None:
    """The v1alpha1 group a pod names in its `scheduling.x-k8s.io/pod-group` label, if any."""
    name = ((pod.get("metadata") or {}).get("labels") or {}).get(POD_GROUP_LABEL)
    return (
        GroupKey(COSCHEDULING_API, _namespace(pod), name)
        if isinstance(name, str) and name
        else None
    )


def group_keys(pod: Mapping[str, Any]) -> tuple[GroupKey, ...]:
    """Every group a pod names, in either API."""
    return tuple(key for key in (scheduling_group(pod), coscheduling_group(pod)) if key)


class PodGroupError(ValueError):
    """A PodGroup object that cannot be read; the message names the field."""


@dataclass(frozen=True, slots=True)
class GroupPolicy:
    """What a PodGroup object asks of the scheduler, in either API.

    `gang`: all-or-nothing with at least `min_count` pods (v1alpha2 `gang.minCount`, v1alpha1
    `minMember`); `timeout`: how long placed members may wait at Permit for the rest (None:
    the plugin's default); `min_resources`: v1alpha1's `minResources`, as written (checked
    to parse); `topology_key`: v1alpha2's topology constraint."""

    key: GroupKey
    gang: bool
    min_count: int
    timeout: float | None = None
    min_resources: Mapping[str, str] | None = None
    topology_key: str | None = None
    created: str = ""
    generation: int = 0
    uid: str = ""  # a PodGroup re-created under the same name is another group
    conditions: Sequence[Mapping[str, Any]] = ()


def _key_of(obj: Mapping[str, Any], api: str) -> GroupKey:
    metadata = obj.get("metadata") or {}
    name = metadata.get("name")
    if not isinstance(name, str) or not name:
        raise PodGroupError("metadata.name is required")
    return GroupKey(api, str(metadata.get("namespace") or "default"), name)


def _count(value: Any, where: str, *, minimum: int) -> int:
    if value is None:
        return minimum
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise PodGroupError(f"{where} must be an integer of at least {minimum}")
    return value


def workload_policy(obj: Mapping[str, Any]) -> GroupPolicy:
    """A `scheduling.k8s.io/v1alpha2` PodGroup's policy."""
    key = _key_of(obj, WORKLOAD_API)
    spec = obj.get("spec") or {}
    policy = spec.get("schedulingPolicy") or {}
    gang = policy.get("gang")
    if gang is not None and not isinstance(gang, Mapping):
        raise PodGroupError("spec.schedulingPolicy.gang must be an object")
    min_count = _count(
        (gang or {}).get("minCount"), "spec.schedulingPolicy.gang.minCount", minimum=1
    )
    topology = (spec.get("schedulingConstraints") or {}).get("topology") or ()
    topology_key = None
    if topology:
        topology_key = (topology[0] or {}).get("key") if isinstance(topology[0], Mapping) else None
        if not isinstance(topology_key, str) or not topology_key:
            raise PodGroupError("spec.schedulingConstraints.topology[0].key is required")
    return GroupPolicy(
        key,
        gang=gang is not None,
        min_count=min_count if gang is not None else 0,
        topology_key=topology_key,
        **_bookkeeping(obj),
    )


def coscheduling_policy(obj: Mapping[str, Any]) -> GroupPolicy:
    """A `scheduling.x-k8s.io/v1alpha1` PodGroup's policy (minMember 0 or unset: no minimum)."""
    key = _key_of(obj, COSCHEDULING_API)
    spec = obj.get("spec") or {}
    min_member = _count(spec.get("minMember"), "spec.minMember", minimum=0)
    timeout = spec.get("scheduleTimeoutSeconds")
    if timeout is not None:
        timeout = float(_count(timeout, "spec.scheduleTimeoutSeconds", minimum=0))
    min_resources = spec.get("minResources")
    resources = None
    if min_resources is not None:
        if not isinstance(min_resources, Mapping):
            raise PodGroupError("spec.minResources must be an object of quantities")
        try:
            resource_list(dict(min_resources))
        except (QuantityError, TypeError, ValueError) as error:
            raise PodGroupError(f"spec.minResources: {error}") from None
        resources = {str(name): str(value) for name, value in min_resources.items()}
    return GroupPolicy(
        key,
        gang=True,
        min_count=min_member,
        timeout=timeout,
        min_resources=resources,
        **_bookkeeping(obj),
    )


def _bookkeeping(obj: Mapping[str, Any]) -> dict[str, Any]:
    metadata = obj.get("metadata") or {}
    conditions = (obj.get("status") or {}).get("conditions") or ()
    return {
        "created": str(metadata.get("creationTimestamp") or ""),
        "uid": str(metadata.get("uid") or ""),
        "generation": int(metadata.get("generation") or 0),
        "conditions": tuple(c for c in conditions if isinstance(c, Mapping)),
    }


POLICY_READERS = {WORKLOAD_API: workload_policy, COSCHEDULING_API: coscheduling_policy}


@dataclass(frozen=True, slots=True)
class GroupState:
    """A group's members as the scheduler knows them at one moment (upstream's
    PodGroupState): all of them, those not yet placed, those assumed on a node (placed in a
    cycle, not yet bound) and those bound."""

    key: GroupKey
    all: frozenset[str]  # pod ids (PodInfo.id: the UID)
    unscheduled: tuple[str, ...]  # in the order the scheduler saw them
    assumed: Mapping[str, str]  # pod id -> the node it is assumed on
    assigned: Mapping[str, str]  # pod id -> the node it is bound to
    uids: Mapping[str, str]  # pod id -> uid (waiting pods are found by uid)
    gated: int = 0  # members held by scheduling gates (spec.schedulingGates)
    names: Mapping[str, str] = field(default_factory=dict)  # pod id -> namespace/name

    @property
    def all_count(self) -> int:
        return len(self.all)

    @property
    def scheduled_count(self) -> int:
        """Members assumed or bound."""
        return len(self.assumed) + len(self.assigned)


class PodGroupLister(Protocol):
    """The scheduler's pod groups (upstream's PodGroupManager and PodGroup lister), lent to
    plugins by the backend. Cheap to call; every answer is a copy."""

    def policy(self, key: GroupKey) -> GroupPolicy | None:
        """The group's PodGroup object as a policy; None while it does not exist."""

    def state(self, key: GroupKey) -> GroupState | None:
        """The group's members; None when the scheduler knows none and no PodGroup."""

    def watch_deletions(self, callback: Callable[[GroupPolicy], None]) -> None:
        """`callback` is told of each PodGroup gone (deleted, or re-created under its name
        with another UID), so plugins can drop what they keep per group."""


@dataclass(frozen=True, slots=True)
class Placement:
    """A set of nodes a pod group's cycle tries to place the whole group within (upstream's
    fwk.Placement); `name` is the topology domain it stands for ("" for all nodes)."""

    name: str
    nodes: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class PodGroupAssignments:
    """Where one placement's trial put the group's members (upstream's PodGroupAssignments):
    (pod id, node) for every member that found a node there."""

    placement: Placement
    proposed: tuple[tuple[str, str], ...]


def member_of(pod: PodInfo, api: str) -> GroupKey | None:
    """The group of `api` the pod names."""
    return scheduling_group(pod.pod) if api == WORKLOAD_API else coscheduling_group(pod.pod)


GroupOf = Callable[[Mapping[str, Any]], "GroupKey | None"]
Hint = Callable[[PodInfo, Any, Any], QueueingHint]


def sibling_hint(group_of: GroupOf) -> Hint:
    """A queueing hint: a pod added to the same group (by `group_of`) may complete it."""

    def hint(pod: PodInfo, old: Any, new: Any) -> QueueingHint:
        group = group_of(pod.pod)
        same = group is not None and isinstance(new, dict) and group_of(new) == group
        return QueueingHint.QUEUE if same else QueueingHint.SKIP

    return hint


def group_object_hint(group_of: GroupOf) -> Hint:
    """A queueing hint: the pod's own PodGroup object (by namespace and name) came or changed."""

    def hint(pod: PodInfo, old: Any, new: Any) -> QueueingHint:
        group = group_of(pod.pod)
        metadata = (new or {}).get("metadata") or {}
        named = (metadata.get("namespace") or "default", metadata.get("name"))
        same = group is not None and (group.namespace, group.name) == named
        return QueueingHint.QUEUE if same else QueueingHint.SKIP

    return hint
