"""Pod groups as plugins see them: which group a pod names, what its PodGroup object asks
for, and how far the group has got. Two APIs name groups, and one gang mechanism serves both:

- upstream's `scheduling.k8s.io` PodGroup (gate GenericWorkload), served as `v1alpha2` by
  Kubernetes 1.36 and as `v1beta1` by 1.37 (which removed v1alpha2; `workload_api` says which a
  minor reads and writes): a pod names its group in `spec.schedulingGroup.podGroupName`; the
  group's policy is `spec.schedulingPolicy.gang.minCount` (or `basic`, no gang), optionally with
  `spec.schedulingConstraints.topology[0].key` (gate TopologyAwareWorkloadScheduling). Both
  versions read into one GroupPolicy (the fields v1beta1 renamed or reshaped normalised);
- scheduler-plugins' Coscheduling `scheduling.x-k8s.io/v1alpha1` PodGroup: a pod carries the
  label `scheduling.x-k8s.io/pod-group`; the group asks for `spec.minMember` pods,
  optionally `spec.minResources` and `spec.scheduleTimeoutSeconds`.

The backend keeps the groups (backend/podgroups.py) and lends them to plugins through
`Handle.pod_groups`, a `PodGroupLister`."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, NamedTuple, Protocol

from scheduler_runtime.framework.events import POD_GROUP, QueueingHint
from scheduler_runtime.framework.podinfo import PodInfo
from scheduler_runtime.framework.quantity import QuantityError, resource_list

# The API groups that define a PodGroup; a group's key says which one it is.
WORKLOAD_API = "scheduling.k8s.io"  # v1alpha2 (1.36) or v1beta1 (1.37): see workload_api
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


V1ALPHA2, V1BETA1 = "v1alpha2", "v1beta1"
WORKLOAD_VERSIONS: Final = (V1ALPHA2, V1BETA1)  # the versions of WORKLOAD_API read, oldest first


@dataclass(frozen=True, slots=True)
class WorkloadAPI:
    """The version of `scheduling.k8s.io` whose PodGroups a Kubernetes minor serves and its
    scheduler reads, and the condition its scheduler writes on them: 1.36's v1alpha2 and
    `PodGroupScheduled`; from 1.37, v1beta1 and `PodGroupInitiallyScheduled`."""

    version: str
    scheduled_condition: str

    @property
    def api_version(self) -> str:
        return f"{WORKLOAD_API}/{self.version}"

    def pod_groups_path(self, namespace: str | None = None) -> str:
        """The PodGroups collection (all namespaces, or one)."""
        where = f"/namespaces/{namespace}" if namespace is not None else ""
        return f"/apis/{self.api_version}{where}/podgroups"


WORKLOAD_APIS: Final = {
    V1ALPHA2: WorkloadAPI(V1ALPHA2, "PodGroupScheduled"),
    V1BETA1: WorkloadAPI(V1BETA1, "PodGroupInitiallyScheduled"),
}


def workload_api(minor: str) -> WorkloadAPI:
    """The workload API of a Kubernetes minor ("1.37"): v1beta1 from 1.37 on, v1alpha2 before
    (1.35 served neither PodGroup; the runtime reads 1.36's there)."""
    major, _, number = minor.partition(".")
    newer = (int(major), int(number)) >= (1, 37)
    return WORKLOAD_APIS[V1BETA1 if newer else V1ALPHA2]


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
    """The workload API group a pod names in `spec.schedulingGroup.podGroupName`, if any."""
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

    `gang`: all-or-nothing with at least `min_count` pods (`gang.minCount`, v1alpha1
    `minMember`); `timeout`: how long placed members may wait at Permit for the rest (None:
    the plugin's default); `min_resources`: v1alpha1's `minResources`, as written (checked
    to parse); `topology_key`: the workload API's topology constraint. The rest is the
    workload API's, normalised across its versions: `workload` (workload name, template
    name: v1alpha2 `podGroupTemplateRef.workload`, v1beta1 `workloadRef`); `disruption_mode`
    ("Single" or "All": v1alpha2's "Pod" or "PodGroup", v1beta1's `single` or `all`; "" when
    unset); `priority` (None: unset, upstream's PodGroupPriority reads 0) and its class;
    `preemption_policy` (v1beta1); `parent`: v1beta1's `parentCompositePodGroupName`."""

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
    version: str = ""  # the workload API version it was read as ("" for v1alpha1's)
    workload: tuple[str, str] | None = None
    disruption_mode: str = ""
    priority_class_name: str = ""
    priority: int | None = None
    preemption_policy: str | None = None
    parent: str | None = None
    # What events naming the PodGroup carry (its Preempted events' related object); not
    # part of what the group asks.
    resource_version: str = field(default="", compare=False)


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


def workload_policy(obj: Mapping[str, Any], version: str = V1ALPHA2) -> GroupPolicy:
    """A `scheduling.k8s.io` PodGroup's policy, read as the version its `apiVersion` names
    (objects listed from the API server carry none: then as `version`, the one watched)."""
    version = _workload_version(obj, version)
    key = _key_of(obj, WORKLOAD_API)
    spec = obj.get("spec") or {}
    if not isinstance(spec, Mapping):
        raise PodGroupError("spec must be an object")
    policy = spec.get("schedulingPolicy") or {}
    if not isinstance(policy, Mapping):
        raise PodGroupError("spec.schedulingPolicy must be an object")
    gang = policy.get("gang")
    if gang is not None and not isinstance(gang, Mapping):
        raise PodGroupError("spec.schedulingPolicy.gang must be an object")
    min_count = _count(
        (gang or {}).get("minCount"), "spec.schedulingPolicy.gang.minCount", minimum=1
    )
    constraints = spec.get("schedulingConstraints") or {}
    topology = constraints.get("topology") if isinstance(constraints, Mapping) else None
    topology_key = None
    if topology:
        first = topology[0] if isinstance(topology, Sequence) else None
        topology_key = first.get("key") if isinstance(first, Mapping) else None
        if not isinstance(topology_key, str) or not topology_key:
            raise PodGroupError("spec.schedulingConstraints.topology[0].key is required")
    read = _v1beta1_fields if version == V1BETA1 else _v1alpha2_fields
    return GroupPolicy(
        key,
        gang=gang is not None,
        min_count=min_count if gang is not None else 0,
        topology_key=topology_key,
        version=version,
        **read(spec),
        **_priority(spec),
        **_bookkeeping(obj),
    )


def _workload_version(obj: Mapping[str, Any], default: str) -> str:
    api_version = obj.get("apiVersion")
    if api_version is None:
        return default
    group, _, version = str(api_version).partition("/")
    if group != WORKLOAD_API or version not in WORKLOAD_VERSIONS:
        known = ", ".join(f"{WORKLOAD_API}/{v}" for v in WORKLOAD_VERSIONS)
        raise PodGroupError(f"apiVersion {api_version!r} is not one of {known}")
    return version


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise PodGroupError(f"{where} must be a non-empty string")
    return value


def _reference(ref: Any, where: str, template_field: str) -> tuple[str, str] | None:
    if ref is None:
        return None
    if not isinstance(ref, Mapping):
        raise PodGroupError(f"{where} must be an object")
    return (
        _text(ref.get("workloadName"), f"{where}.workloadName"),
        _text(ref.get(template_field), f"{where}.{template_field}"),
    )


# v1alpha2's disruption modes, as v1beta1 names them.
_V1ALPHA2_DISRUPTION = {"Pod": "Single", "PodGroup": "All"}


def _v1alpha2_fields(spec: Mapping[str, Any]) -> dict[str, Any]:
    """v1alpha2's reference and disruption mode (a string), normalised."""
    ref = spec.get("podGroupTemplateRef")
    if ref is not None and not isinstance(ref, Mapping):
        raise PodGroupError("spec.podGroupTemplateRef must be an object")
    workload = _reference(
        (ref or {}).get("workload"), "spec.podGroupTemplateRef.workload", "podGroupTemplateName"
    )
    mode = spec.get("disruptionMode")
    if mode is not None and (not isinstance(mode, str) or mode not in _V1ALPHA2_DISRUPTION):
        raise PodGroupError('spec.disruptionMode must be "Pod" or "PodGroup"')
    return {"workload": workload, "disruption_mode": _V1ALPHA2_DISRUPTION.get(mode or "", "")}


def _v1beta1_fields(spec: Mapping[str, Any]) -> dict[str, Any]:
    """v1beta1's reference, disruption mode (one of `single` and `all`), preemption policy
    and parent CompositePodGroup."""
    workload = _reference(spec.get("workloadRef"), "spec.workloadRef", "templateName")
    mode = spec.get("disruptionMode")
    disruption = ""
    if mode is not None:
        chosen = [name for name in ("single", "all") if isinstance(mode, Mapping) and name in mode]
        if len(chosen) != 1 or len(mode) != 1:
            raise PodGroupError("spec.disruptionMode must set exactly one of single and all")
        disruption = chosen[0].capitalize()
    policy = spec.get("preemptionPolicy")
    if policy is not None and policy not in ("PreemptLowerPriority", "Never"):
        raise PodGroupError('spec.preemptionPolicy must be "PreemptLowerPriority" or "Never"')
    parent = spec.get("parentCompositePodGroupName")
    return {
        "workload": workload,
        "disruption_mode": disruption,
        "preemption_policy": policy,
        "parent": None if parent is None else _text(parent, "spec.parentCompositePodGroupName"),
    }


INT32_MAX = 2**31 - 1


def _priority(spec: Mapping[str, Any]) -> dict[str, Any]:
    """`priorityClassName` and `priority` (the API server resolves the class to the number)."""
    name = spec.get("priorityClassName") or ""
    if not isinstance(name, str):
        raise PodGroupError("spec.priorityClassName must be a string")
    priority = spec.get("priority")
    if priority is not None and (
        isinstance(priority, bool)
        or not isinstance(priority, int)
        or not -INT32_MAX - 1 <= priority <= INT32_MAX
    ):
        raise PodGroupError("spec.priority must be a 32-bit integer")
    return {"priority_class_name": name, "priority": priority}


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
        "resource_version": str(metadata.get("resourceVersion") or ""),
        "generation": int(metadata.get("generation") or 0),
        "conditions": tuple(c for c in conditions if isinstance(c, Mapping)),
    }


def read_policy(api: str, obj: Mapping[str, Any], version: str = V1ALPHA2) -> GroupPolicy:
    """The policy of a PodGroup of `api` (`version`: the workload API version watched)."""
    if api == WORKLOAD_API:
        return workload_policy(obj, version)
    return coscheduling_policy(obj)


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
