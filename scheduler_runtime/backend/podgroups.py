"""The scheduler's pod groups (upstream's backend/cache/podgroupstate.go and its PodGroup
lister, for both PodGroup APIs): each group's PodGroup object as a policy, and its members,
each unscheduled, assumed (placed by a cycle, not bound yet) or assigned (bound).

Transitions, as upstream's: a pending member is added unscheduled and a bound one assigned;
Assume moves an unscheduled member to assumed, Forget back; the watch reporting it bound
moves it to assigned; deletion removes it wherever it is. Members are known by PodInfo.id
(the UID), the key the queue and the cache use; `named` finds a member by namespace/name
for people.

Fed by the event handlers (backend/events.py) and the scheduling sequence; read by plugins
through `Handle.pod_groups`. Its lock is a leaf: nothing is called while it is held, so
plugins may read it from under the queue's or the cache's lock."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from scheduler_runtime.framework.podgroups import (
    POD_GROUP_KINDS,
    V1ALPHA2,
    GroupKey,
    GroupPolicy,
    GroupState,
    group_keys,
    read_policy,
)
from scheduler_runtime.framework.podinfo import PodInfo


def _node(pod: Mapping[str, Any]) -> str:
    return str((pod.get("spec") or {}).get("nodeName") or "")


def _uid(pod: Mapping[str, Any]) -> str:
    return str((pod.get("metadata") or {}).get("uid") or "")


def _name(pod: Mapping[str, Any]) -> str:
    metadata = pod.get("metadata") or {}
    return f"{metadata.get('namespace') or 'default'}/{metadata.get('name') or ''}"


def _finished(pod: Mapping[str, Any]) -> str:
    """The pod's phase when it is Succeeded or Failed, else ""."""
    phase = (pod.get("status") or {}).get("phase")
    return str(phase) if phase in ("Succeeded", "Failed") else ""


@dataclass
class _Members:
    """One group's members (upstream's podGroupStateData), by pod id."""

    pods: dict[str, dict[str, Any]] = field(default_factory=dict)
    unscheduled: dict[str, None] = field(default_factory=dict)  # ordered set
    assumed: dict[str, str] = field(default_factory=dict)  # id -> node
    assigned: dict[str, str] = field(default_factory=dict)  # id -> node
    # Members that ran to completion (id -> Succeeded or Failed): no longer members to
    # schedule (as upstream's cache drops terminal pods), still counted in a group's status.
    finished: dict[str, str] = field(default_factory=dict)

    def upsert(self, key: str, pod: dict[str, Any]) -> None:
        phase = _finished(pod)
        if phase:
            self.delete(key)
            self.finished[key] = phase
            return
        previous = self.pods.get(key)
        self.pods[key] = pod
        node = _node(pod)
        if previous is None:
            if node:
                self.assigned[key] = node
            else:
                self.unscheduled[key] = None
        elif node and not _node(previous):
            self.assigned[key] = node
            self.unscheduled.pop(key, None)
            self.assumed.pop(key, None)

    def delete(self, key: str) -> None:
        self.pods.pop(key, None)
        self.unscheduled.pop(key, None)
        self.assumed.pop(key, None)
        self.assigned.pop(key, None)
        self.finished.pop(key, None)

    def assume(self, key: str, node: str) -> None:
        stored = self.pods.get(key)
        if stored is None:  # deleted meanwhile: nothing to count
            return
        if _node(stored):
            self.assigned[key] = _node(stored)
        else:
            self.assumed[key] = node
        self.unscheduled.pop(key, None)

    def forget(self, key: str) -> None:
        stored = self.pods.get(key)
        if stored is None:
            return
        self.assumed.pop(key, None)
        if _node(stored):
            self.assigned[key] = _node(stored)
        elif key not in self.unscheduled:
            self.unscheduled[key] = None

    def state(self, group: GroupKey) -> GroupState:
        return GroupState(
            key=group,
            all=frozenset(self.pods),
            unscheduled=tuple(self.unscheduled),
            assumed=dict(self.assumed),
            assigned=dict(self.assigned),
            uids={key: _uid(pod) for key, pod in self.pods.items()},
            names={key: _name(pod) for key, pod in self.pods.items()},
            gated=sum(
                1 for pod in self.pods.values() if (pod.get("spec") or {}).get("schedulingGates")
            ),
        )


class PodGroups:
    """Every pod group the scheduler knows of, in both APIs (a PodGroupLister).
    `on_change`, when set, is told (outside the lock) of each group whose members or
    PodGroup the cluster changed; those `watch_deletions` subscribes, of each PodGroup gone
    (deleted, or replaced by one of another UID under its name). `workload_version`: the
    version of the workload API watched, which its PodGroups are read as."""

    def __init__(self, workload_version: str = V1ALPHA2) -> None:
        self.workload_version = workload_version
        self.on_change: Callable[[Iterable[GroupKey]], None] | None = None
        self._on_deleted: list[Callable[[GroupPolicy], None]] = []
        self._lock = threading.Lock()
        self._members: dict[GroupKey, _Members] = {}
        self._policies: dict[GroupKey, GroupPolicy] = {}
        self._objects: dict[GroupKey, dict[str, Any]] = {}
        self._groups_of: dict[str, tuple[GroupKey, ...]] = {}  # pod id -> its groups
        self._named: dict[str, str] = {}  # namespace/name -> the id of the member so named
        self._names: dict[str, str] = {}  # and back

    def watch_deletions(self, callback: Callable[[GroupPolicy], None]) -> None:
        """`callback` is told (outside the lock) of each PodGroup gone, as its policy was."""
        self._on_deleted.append(callback)

    # ----- members (the event handlers and the scheduling sequence)

    def upsert_pod(self, key: str, pod: dict[str, Any]) -> list[GroupKey]:
        """A pod (by id) was added or changed; the groups it joined with this change."""
        groups = group_keys(pod)
        with self._lock:
            if groups:
                self._named[_name(pod)] = key
                self._names[key] = _name(pod)
            previous = self._groups_of.get(key, ())
            for left in previous:
                if left not in groups:
                    self._leave(left, key)
            for group in groups:
                self._members.setdefault(group, _Members()).upsert(key, pod)
            if groups:
                self._groups_of[key] = groups
            else:
                self._groups_of.pop(key, None)
                self._unname(key)
        self._changed((*previous, *groups))
        return [group for group in groups if group not in previous]

    def delete_pod(self, key: str) -> tuple[GroupKey, ...]:
        """A pod (by id) was deleted; the groups it was a member of."""
        with self._lock:
            groups = self._groups_of.pop(key, ())
            self._unname(key)
            for group in groups:
                self._leave(group, key)
        self._changed(groups)
        return groups

    def assume(self, pod: PodInfo, node: str) -> None:
        """A cycle placed the pod on `node` (before binding)."""
        with self._lock:
            for group in self._groups_of.get(pod.id, ()):
                self._members[group].assume(pod.id, node)

    def forget(self, pod: PodInfo) -> None:
        """The placement was undone: the pod is unscheduled again (unless bound meanwhile)."""
        with self._lock:
            for group in self._groups_of.get(pod.id, ()):
                self._members[group].forget(pod.id)

    # ----- PodGroup objects

    def upsert_group(
        self, kind: str, obj: dict[str, Any]
    ) -> tuple[GroupPolicy | None, GroupPolicy]:
        """A PodGroup of `kind` was added or changed: its policy before and now. Raises
        PodGroupError (naming the field) for an object that cannot be read."""
        policy = read_policy(POD_GROUP_KINDS[kind], obj, self.workload_version)
        with self._lock:
            previous = self._policies.get(policy.key)
            self._policies[policy.key] = policy
            self._objects[policy.key] = obj
        if previous is not None and previous.uid != policy.uid:
            self._deleted(previous)  # re-created under its name while the watch looked away
            previous = None
        self._changed((policy.key,))
        return previous, policy

    def delete_group(self, kind: str, obj: dict[str, Any]) -> GroupPolicy | None:
        """A PodGroup was deleted: its policy as it was (None when it was not known)."""
        metadata = obj.get("metadata") or {}
        key = GroupKey(
            POD_GROUP_KINDS[kind],
            metadata.get("namespace") or "default",
            metadata.get("name") or "",
        )
        with self._lock:
            self._objects.pop(key, None)
            policy = self._policies.pop(key, None)
            self._drop_if_empty(key)
        if policy is not None:
            self._deleted(policy)
        return policy

    def group_objects(self, kind: str) -> list[dict[str, Any]]:
        """The PodGroup objects of `kind` known now (to find those a relist no longer has)."""
        api = POD_GROUP_KINDS[kind]
        with self._lock:
            return [obj for key, obj in self._objects.items() if key.api == api]

    # ----- reads (PodGroupLister)

    def policy(self, key: GroupKey) -> GroupPolicy | None:
        with self._lock:
            return self._policies.get(key)

    def state(self, key: GroupKey) -> GroupState | None:
        with self._lock:
            members = self._members.get(key)
            if members is None:
                return None if key not in self._policies else _Members().state(key)
            return members.state(key)

    def object(self, key: GroupKey) -> dict[str, Any] | None:
        """The PodGroup object as last seen."""
        with self._lock:
            return self._objects.get(key)

    def member_pods(self, key: GroupKey) -> list[dict[str, Any]]:
        """The group's members as last seen, by name (those that ran to completion aside)."""
        with self._lock:
            members = self._members.get(key)
            return sorted(members.pods.values(), key=_name) if members is not None else []

    def phases(self, key: GroupKey) -> list[str]:
        """The phase of each of the group's pods, those that ran to completion included."""
        with self._lock:
            members = self._members.get(key)
            if members is None:
                return []
            running = [
                str((pod.get("status") or {}).get("phase") or "") for pod in members.pods.values()
            ]
            return [*running, *members.finished.values()]

    def member(self, key: str) -> dict[str, Any] | None:
        """A member pod (by id) as last seen (None: not a member of any group)."""
        with self._lock:
            groups = self._groups_of.get(key, ())
            return self._members[groups[0]].pods.get(key) if groups else None

    def named(self, name: str) -> str | None:
        """The id of the member pod named `name` (namespace/name), if one is."""
        with self._lock:
            return self._named.get(name)

    def groups_of(self, key: str) -> tuple[GroupKey, ...]:
        """The groups of the pod (by id)."""
        with self._lock:
            return self._groups_of.get(key, ())

    def known(self) -> list[GroupKey]:
        """Every group known, by members or by its PodGroup object."""
        with self._lock:
            return list(dict.fromkeys([*self._members, *self._policies]))

    def members(self, keys: Iterable[GroupKey]) -> dict[GroupKey, GroupState]:
        """The states of several groups at once."""
        with self._lock:
            return {key: self._members[key].state(key) for key in keys if key in self._members}

    def sizes(self) -> dict[str, int]:
        """How many groups (by members or PodGroup), PodGroup objects, member pods and
        assumed members it holds (for /metrics)."""
        with self._lock:
            return {
                "pod_groups": len(self._members.keys() | self._policies.keys()),
                "pod_group_objects": len(self._objects),
                "pod_group_members": len(self._groups_of),
                "pod_group_assumed_members": sum(len(m.assumed) for m in self._members.values()),
            }

    def _changed(self, groups: Iterable[GroupKey]) -> None:
        if self.on_change is not None and groups:
            self.on_change(groups)

    def _deleted(self, policy: GroupPolicy) -> None:
        for callback in self._on_deleted:
            callback(policy)

    # ----- internals (lock held)

    def _unname(self, key: str) -> None:
        name = self._names.pop(key, None)
        if name is not None and self._named.get(name) == key:
            del self._named[name]

    def _leave(self, group: GroupKey, key: str) -> None:
        members = self._members.get(group)
        if members is not None:
            members.delete(key)
            self._drop_if_empty(group)

    def _drop_if_empty(self, group: GroupKey) -> None:
        members = self._members.get(group)
        empty = members is not None and not members.pods and not members.finished
        if empty and group not in self._policies:
            del self._members[group]


@dataclass(frozen=True)
class GroupReport:
    """Where a pod group stands, for people (simulate's report, the live /explain): its
    members existing against its minimum, placed, waiting at Permit, bound, and why it
    waits when it does."""

    key: GroupKey
    gang: bool
    minimum: int
    members: int
    waiting: int  # assumed: placed by a cycle, waiting at Permit or binding
    bound: int
    placed: bool
    reason: str | None

    def as_json(self) -> dict[str, Any]:
        return {
            "namespace": self.key.namespace,
            "name": self.key.name,
            "api": self.key.api,
            "gang": self.gang,
            "minimum": self.minimum,
            "members": self.members,
            "waitingAtPermit": self.waiting,
            "bound": self.bound,
            "placed": self.placed,
            "reason": self.reason,
        }


def report(
    groups: PodGroups,
    key: GroupKey,
    gated: Callable[[str], str | None],
    last_cycle: str | None,
) -> GroupReport:
    """Where group `key` stands: `gated` says why a member is held out of the queue (its
    preEnqueue verdict), `last_cycle` how the group's last cycle ended."""
    state = groups.state(key) or _Members().state(key)
    policy = groups.policy(key)
    gang = policy is not None and policy.gang
    minimum = policy.min_count if policy is not None and gang else state.all_count
    bound = len(state.assigned)
    placed = bound >= max(minimum, 1) if gang else bool(state.all) and not state.unscheduled
    reason = None
    if not placed:
        held = next((why for member in state.unscheduled if (why := gated(member))), None)
        if policy is None:
            reason = held or f"no PodGroup {key} exists"
        elif held:
            reason = f"{held} ({state.all_count} of {minimum} members exist)"
        elif state.assumed:
            reason = f"{len(state.assumed)} members placed, waiting at Permit for the rest"
        else:
            reason = last_cycle or "not tried yet"
    return GroupReport(
        key, gang, minimum, state.all_count, len(state.assumed), bound, placed, reason
    )
