"""Cluster events and queueing hints (upstream's fwk.ClusterEvent, ActionType, QueueingHint):
which changes to the cluster can make a pod that a plugin rejected schedulable.

A plugin may define `events_to_register()`, returning the events that could help a pod it
rejected, each with an optional hint that looks at the change and the pod and says whether
to try the pod again. A plugin that does not define it is taken to care about every event,
as upstream takes a plugin without EnqueueExtensions."""

from __future__ import annotations

import enum
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scheduler_runtime.framework.podinfo import PodInfo

log = logging.getLogger(__name__)


class ActionType(enum.IntFlag):
    """What changed; the Update flags narrow an update down to the part that changed."""

    ADD = enum.auto()
    DELETE = enum.auto()
    UPDATE_NODE_ALLOCATABLE = enum.auto()
    UPDATE_NODE_LABEL = enum.auto()
    UPDATE_NODE_TAINT = enum.auto()  # taints or spec.unschedulable
    UPDATE_NODE_CONDITION = enum.auto()
    UPDATE_NODE_ANNOTATION = enum.auto()
    UPDATE_NODE_DECLARED_FEATURE = enum.auto()
    UPDATE_POD_LABEL = enum.auto()
    UPDATE_POD_SCALE_DOWN = enum.auto()
    UPDATE_POD_TOLERATION = enum.auto()
    UPDATE_POD_SCHEDULING_GATES_ELIMINATED = enum.auto()
    UPDATE_POD_GENERATED_RESOURCE_CLAIM = enum.auto()
    # Any other update (an object without finer update kinds).
    UPDATE_OTHER = enum.auto()

    # Every update, and every change at all.
    UPDATE = (
        UPDATE_NODE_ALLOCATABLE
        | UPDATE_NODE_LABEL
        | UPDATE_NODE_TAINT
        | UPDATE_NODE_CONDITION
        | UPDATE_NODE_ANNOTATION
        | UPDATE_NODE_DECLARED_FEATURE
        | UPDATE_POD_LABEL
        | UPDATE_POD_SCALE_DOWN
        | UPDATE_POD_TOLERATION
        | UPDATE_POD_SCHEDULING_GATES_ELIMINATED
        | UPDATE_POD_GENERATED_RESOURCE_CLAIM
        | UPDATE_OTHER
    )
    ALL = ADD | DELETE | UPDATE


# The resources events are about, named as upstream names them.
POD = "Pod"
NODE = "Node"
PERSISTENT_VOLUME = "PersistentVolume"
PERSISTENT_VOLUME_CLAIM = "PersistentVolumeClaim"
CSI_NODE = "storage.k8s.io/CSINode"
CSI_DRIVER = "storage.k8s.io/CSIDriver"
CSI_STORAGE_CAPACITY = "storage.k8s.io/CSIStorageCapacity"
STORAGE_CLASS = "storage.k8s.io/StorageClass"
RESOURCE_CLAIM = "resource.k8s.io/ResourceClaim"
RESOURCE_SLICE = "resource.k8s.io/ResourceSlice"
DEVICE_CLASS = "resource.k8s.io/DeviceClass"
POD_GROUP = "scheduling.k8s.io/PodGroup"
NAMESPACE = "Namespace"
WILDCARD = "*"


@dataclass(frozen=True, slots=True)
class ClusterEvent:
    resource: str
    action: ActionType

    def matches(self, registered: ClusterEvent) -> bool:
        """Whether this event is one `registered` asks for."""
        return (registered.resource in (WILDCARD, self.resource)) and bool(
            registered.action & self.action
        )

    def __str__(self) -> str:
        return f"{self.resource}{self.action.name or int(self.action)}"


class QueueingHint(enum.Enum):
    SKIP = "QueueSkip"
    QUEUE = "Queue"


# (the pod the plugin rejected, the object before, after) -> whether to try the pod again.
QueueingHintFn = Callable[[PodInfo, Any, Any], QueueingHint]


@dataclass(frozen=True, slots=True)
class ClusterEventWithHint:
    event: ClusterEvent
    hint: QueueingHintFn | None = None  # None: every such event may help


def on(
    resource: str, action: ActionType, hint: QueueingHintFn | None = None
) -> ClusterEventWithHint:
    """A registration: `action`s on `resource` may help, when `hint` (if any) says so."""
    return ClusterEventWithHint(ClusterEvent(resource, action), hint)


EVERYTHING = (on(WILDCARD, ActionType.ALL),)


def registered_events(plugin: Any) -> Sequence[ClusterEventWithHint]:
    """What the plugin registered, or every event when it registers none."""
    register = getattr(plugin, "events_to_register", None)
    if not callable(register):
        return EVERYTHING
    events: Sequence[ClusterEventWithHint] = register()
    return events


def may_help(
    registrations: Mapping[str, Sequence[ClusterEventWithHint]],
    plugins: set[str],
    pod: PodInfo,
    change: tuple[ClusterEvent, Any, Any],
) -> bool:
    """isPodWorthRequeuing: whether `event` could help a pod the `plugins` rejected. A pod
    no plugin rejected (an error, say) is always worth another try; a hint that fails counts
    as Queue, as upstream's does."""
    if not plugins:
        return True
    event = change[0]
    return any(
        hints_allow(plugin, matching(registrations.get(plugin, EVERYTHING), event), pod, change)
        for plugin in plugins
    )


def matching(
    registered: Sequence[ClusterEventWithHint], event: ClusterEvent
) -> list[ClusterEventWithHint]:
    """The registrations `event` is one of."""
    return [r for r in registered if event.matches(r.event)]


def hints_allow(
    plugin: str,
    registered: Sequence[ClusterEventWithHint],
    pod: PodInfo,
    change: tuple[ClusterEvent, Any, Any],
) -> bool:
    """Whether one of the plugin's registrations the event matches says Queue (one without
    a hint always does; a hint that fails counts as Queue, as upstream's does)."""
    event, old, new = change
    for each in registered:
        if each.hint is None:
            return True
        try:
            if each.hint(pod, old, new) is QueueingHint.QUEUE:
                return True
        except Exception:
            log.exception("queueing hint of %s failed on %s; trying the pod again", plugin, event)
            return True
    return False


def node_update_action(old: Mapping[str, Any], new: Mapping[str, Any]) -> ActionType:
    """nodeSchedulingPropertiesChange: the parts of a node update that matter to scheduling
    (none for a heartbeat)."""
    action = ActionType(0)
    old_meta, new_meta = old.get("metadata") or {}, new.get("metadata") or {}
    old_spec, new_spec = old.get("spec") or {}, new.get("spec") or {}
    old_status, new_status = old.get("status") or {}, new.get("status") or {}
    if old_status.get("allocatable") != new_status.get("allocatable"):
        action |= ActionType.UPDATE_NODE_ALLOCATABLE
    if old_meta.get("labels") != new_meta.get("labels"):
        action |= ActionType.UPDATE_NODE_LABEL
    if old_spec.get("taints") != new_spec.get("taints") or bool(
        old_spec.get("unschedulable")
    ) != bool(new_spec.get("unschedulable")):
        action |= ActionType.UPDATE_NODE_TAINT
    if _conditions(old_status) != _conditions(new_status):
        action |= ActionType.UPDATE_NODE_CONDITION
    if old_meta.get("annotations") != new_meta.get("annotations"):
        action |= ActionType.UPDATE_NODE_ANNOTATION
    if old_status.get("declaredFeatures") != new_status.get("declaredFeatures"):
        action |= ActionType.UPDATE_NODE_DECLARED_FEATURE
    return action


def _conditions(status: Mapping[str, Any]) -> list[tuple[str, str]]:
    return sorted((c.get("type", ""), c.get("status", "")) for c in status.get("conditions") or ())


def pod_update_action(old: PodInfo, new: PodInfo) -> ActionType:
    """The parts of an unscheduled pod's update that can make it schedulable."""
    action = ActionType(0)
    if old.labels != new.labels:
        action |= ActionType.UPDATE_POD_LABEL
    if new.tolerations != old.tolerations:
        action |= ActionType.UPDATE_POD_TOLERATION
    if old.scheduling_gates and not new.scheduling_gates:
        action |= ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED
    if _claim_statuses(old) != _claim_statuses(new):
        action |= ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM
    if any(new.requests.get(name, 0) < amount for name, amount in old.requests.items()):
        action |= ActionType.UPDATE_POD_SCALE_DOWN
    return action or ActionType.UPDATE_OTHER


def _claim_statuses(pod: PodInfo) -> Any:
    return (pod.pod.get("status") or {}).get("resourceClaimStatuses")
