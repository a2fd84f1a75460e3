"""Pod group preemption (PodGroupEvaluator, framework/preemption/podgrouppreemption.go): a pod
group that found no room is one preemptor, of its PodGroup's priority, and the whole cluster is
its domain. Every lower-priority victim (a pod, or every scheduled pod of a PodGroup whose
disruptionMode is `all`) leaves the snapshot at once and the group's algorithm runs again (the
backend's PodGroupSchedulingFunc); if the group fits, victims are given back, most important
first (PDB-violating ones first), each one that leaves every member's node still fitting; the
rest are evicted and each placed member is nominated to its node.

1.36 (its alpha WorkloadAwarePreemption) differs in three ways: a single pod is a victim of its
own priority (not its PodGroup's), a victim given back stays only when the group's whole
algorithm still fits with it, and nobody is nominated (nor is an ongoing preemption looked for).

The snapshot is edited in place, as upstream's mutable snapshot is, and restored before
returning: the group's cycle holds the cache still meanwhile."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from scheduler_runtime.framework.interface import (
    FrameworkHandle,
    Handle,
    PodGroupPostFilterResult,
    PodGroupSchedulingFunc,
    Preemptor,
    ProposedAssignment,
)
from scheduler_runtime.framework.isolation import FrameworkError
from scheduler_runtime.framework.nodeinfo import NodeInfo
from scheduler_runtime.framework.podgroups import GroupKey, GroupPolicy, scheduling_group
from scheduler_runtime.framework.podinfo import PodInfo
from scheduler_runtime.framework.status import SUCCESS, Code, Status
from scheduler_runtime.plugins.defaultpreemption.pdb import Budgets, count_pdb_violations
from scheduler_runtime.plugins.defaultpreemption.util import start_time, terminating_by_preemption

NEVER = "not eligible due to preemptionPolicy=Never."
NO_GROUP_VICTIMS = "No preemption victims found for incoming preemptor"
ONGOING = "ongoing preemption on nominated nodes"
# The candidate a pod group's preemption names (the whole cluster is its domain).
CLUSTER = "cluster"
# Kinds of victims and preemptors (upstream's EntityKeyType), ranked as MoreImportantVictim
# ranks them.
POD, POD_GROUP = "pod", "podgroup"
RANK = {POD: 1, POD_GROUP: 2}


@dataclass(frozen=True, slots=True)
class Victim:
    """What preemption evicts whole (upstream's Victim): one pod, or the scheduled pods of a
    PodGroup whose disruptionMode is `all`. A pod naming a group is of kind podgroup."""

    pods: tuple[PodInfo, ...]
    priority: int
    kind: str

    @property
    def earliest_start(self) -> str:
        return min(start_time(pod) for pod in self.pods)

    def importance(self) -> tuple[int, int, int, str]:
        """MoreImportantVictim as a sort key: higher priority, then groups before pods, then
        larger groups, then the earliest start first."""
        return (-self.priority, -RANK[self.kind], -len(self.pods), self.earliest_start)


@dataclass(frozen=True, slots=True)
class Evaluation:
    """What selectVictimsOnDomain chose: the pods to evict (most important first), how
    many of them a PDB protects, and the node of each member placed."""

    victims: tuple[PodInfo, ...]
    pdb_violations: int
    nominations: Mapping[str, str]


class PodGroupEvaluator:
    """Chooses and evicts victims for a pod group (upstream's PodGroupEvaluator)."""

    def __init__(self, handle: Handle, evict: Callable[[PodInfo, Preemptor], None]) -> None:
        self.handle = handle
        self.evict = evict
        # 1.37's evaluator, else 1.36's (the module doc says how they differ).
        self.since_137 = handle.features.since(1, 37)

    # ----- priorities, as the PodGroups say

    def _policy(self, key: GroupKey | None) -> GroupPolicy | None:
        groups = self.handle.pod_groups
        return groups.policy(key) if key is not None and groups is not None else None

    def pod_priority(self, pod: PodInfo) -> int:
        """GetPodPriority: the priority of the PodGroup a pod names (its spec.priority, else
        0), or the pod's own when it names none or the PodGroup does not exist."""
        policy = self._policy(scheduling_group(pod.pod))
        return pod.priority if policy is None else policy.priority or 0

    def preemption_policy(self, group: GroupPolicy | None, pods: Sequence[PodInfo]) -> str:
        """resolvePreemptionPolicy: the PodGroup's with PodGroupPreemptionPolicy, else Never
        when any member says so."""
        if self.handle.features.pod_group_preemption_policy:
            if group is not None and group.preemption_policy:
                return group.preemption_policy
        elif any(pod.preemption_policy == "Never" for pod in pods):
            return "Never"
        return "PreemptLowerPriority"

    # ----- Preempt

    def preempt(
        self,
        group: GroupPolicy | None,
        members: Sequence[PodInfo],
        schedule: PodGroupSchedulingFunc,
    ) -> tuple[PodGroupPostFilterResult | None, Status]:
        """PodGroupEvaluator.Preempt: not eligible, ongoing, or victims chosen and evicted
        (the members' nominated nodes in the result)."""
        priority = (group.priority or 0) if group is not None else 0
        if self.preemption_policy(group, members) == "Never":
            return None, Status.unschedulable(NEVER)
        if self.since_137 and self._ongoing(members, priority):
            current = {pod.id: pod.nominated_node_name for pod in members}
            return PodGroupPostFilterResult(current), Status(Code.SUCCESS, (ONGOING,))
        evaluation, status = self.evaluate(priority, schedule)
        if evaluation is None:
            return None, status
        self._actuate(group, members, priority, evaluation)
        if not self.since_137:
            return None, SUCCESS
        found = f"found a placement for podgroup, preempting {len(evaluation.victims)} victims"
        return PodGroupPostFilterResult(evaluation.nominations), Status(Code.SUCCESS, (found,))

    def _ongoing(self, members: Sequence[PodInfo], priority: int) -> bool:
        """isOngoingPreemption: a member's nominated node holds a lower-priority pod being
        deleted by preemption."""
        snapshot = self.handle.snapshot
        for name in {pod.nominated_node_name for pod in members if pod.nominated_node_name}:
            node = snapshot.get(name)
            if node is not None and any(
                self.pod_priority(p) < priority and terminating_by_preemption(p)
                for p in node.pods.values()
            ):
                return True
        return False

    def victims(self) -> list[Victim]:
        """getCrossNodesVictims: every pod on a node, as a victim of its own or, for a
        member of a PodGroup whose disruptionMode is `all`, in its group's victim."""
        seen: set[object] = set()
        found: list[Victim] = []
        for node in self.handle.snapshot.node_infos():
            for pod in node.pods.values():
                key = scheduling_group(pod.pod)
                policy = self._policy(key)
                if policy is None or policy.disruption_mode != "All":
                    if pod.key not in seen:
                        seen.add(pod.key)
                        named = key is not None and self.handle.pod_groups is not None
                        kind = POD_GROUP if named else POD
                        priority = self.pod_priority(pod) if self.since_137 else pod.priority
                        found.append(Victim((pod,), priority, kind))
                elif policy.key not in seen:
                    seen.add(policy.key)
                    found.append(self._group_victim(policy.key, pod))
        return found

    def _group_victim(self, key: GroupKey, pod: PodInfo) -> Victim:
        """searchCrossNodesVictimPods: the group's scheduled pods (as counted on nodes), or
        the pod alone when the scheduler knows none."""
        groups = self.handle.pod_groups
        state = groups.state(key) if groups is not None else None
        snapshot = self.handle.snapshot
        scheduled = [*state.assigned, *state.assumed] if state is not None else []
        pods = tuple(p for p in (snapshot.pod(i) for i in scheduled) if p is not None)
        kind = POD_GROUP if groups is not None else POD
        if not pods:
            return Victim((pod,), self.pod_priority(pod), kind)
        return Victim(pods, self.pod_priority(pod), POD_GROUP)

    def evaluate(
        self, priority: int, schedule: PodGroupSchedulingFunc
    ) -> tuple[Evaluation | None, Status]:
        """selectVictimsOnDomain: all lower-priority victims out, the group's algorithm run
        again, then as many victims reprieved as still leave every member placed. The
        snapshot is as it was on return."""
        potential = [v for v in self.victims() if v.priority < priority]
        if not potential:
            return None, Status.unresolvable(NO_GROUP_VICTIMS)
        with self._mutations() as snapshot_edits:
            for victim in potential:
                snapshot_edits.remove(victim)
            assignments, status = schedule()
            if not status.is_success:
                return None, status
            potential.sort(key=Victim.importance)
            budgets = Budgets.of(self.handle.snapshot)
            violating, sparing = count_pdb_violations([v.pods for v in potential], budgets)
            placed = [a for a in assignments if a.node]

            def reprieved(victim: Victim) -> bool:
                if self.since_137:
                    return snapshot_edits.reprieve(victim, placed)
                return snapshot_edits.reprieve_by_scheduling(victim, schedule)

            evicted: list[Victim] = []
            violations = 0
            try:
                for index, count in violating:
                    if not reprieved(potential[index]):
                        evicted.append(potential[index])
                        violations += count
                for index in sparing:
                    if not reprieved(potential[index]):
                        evicted.append(potential[index])
            except FrameworkError as error:
                return None, Status.as_error(error)
        evicted.sort(key=Victim.importance)
        pods = tuple(pod for victim in evicted for pod in victim.pods)
        nominations = {a.pod.id: a.node for a in placed}
        return Evaluation(pods, violations, nominations), Status()

    @contextmanager
    def _mutations(self) -> Iterator[_SnapshotEdits]:
        """StartMutations/EndMutations: the snapshot's edits undone at the end."""
        framework = self.handle.framework
        assert framework is not None, "DefaultPreemption runs inside a profile's framework"
        edits = _SnapshotEdits(self.handle, framework)
        try:
            yield edits
        finally:
            edits.restore()

    # ----- prepareCandidate

    def _actuate(
        self,
        group: GroupPolicy | None,
        members: Sequence[PodInfo],
        priority: int,
        evaluation: Evaluation,
    ) -> None:
        """actuatePodGroupPreemption: each victim not already being deleted is evicted in
        the group's name; lower-priority pods nominated to the candidate (upstream looks on
        a node named "cluster") lose their nomination."""
        preemptor = self._preemptor(group, members)
        for victim in evaluation.victims:
            if not (victim.pod.get("metadata") or {}).get("deletionTimestamp"):
                self.evict(victim, preemptor)
        nominator, clear = self.handle.nominator, self.handle.services.clear_nomination
        if nominator is None or clear is None:
            return
        for pod in nominator.pods_on(CLUSTER):
            if pod.priority < priority and pod.nominated_node_name:
                clear(pod)

    @staticmethod
    def _preemptor(group: GroupPolicy | None, members: Sequence[PodInfo]) -> Preemptor:
        """podGroupExecutorPreemptor: the PodGroup, under its members' scheduler name."""
        key = group.key if group is not None else None
        related = {
            "apiVersion": f"{key.api}/{group.version}" if key and group else "",
            "kind": "PodGroup",
            "namespace": key.namespace if key else "",
            "name": key.name if key else "",
            "uid": group.uid if group else "",
            "resourceVersion": group.resource_version if group else "",
        }
        uid = group.uid if group else ""
        return Preemptor(POD_GROUP, uid, members[0].scheduler_name, CLUSTER, related)


class _SnapshotEdits:
    """The victims taken out of the snapshot and the members put in, each undone once."""

    def __init__(self, handle: Handle, framework: FrameworkHandle) -> None:
        self.snapshot = handle.snapshot
        self.framework = framework
        self.removed: dict[str, PodInfo] = {}

    def remove(self, victim: Victim) -> None:
        for pod in victim.pods:
            if self.snapshot.remove_pod(pod.id) is not None:
                self.removed[pod.id] = pod

    def restore(self) -> None:
        for pod in self.removed.values():
            self.snapshot.add_pod(pod)
        self.removed.clear()

    def _node(self, name: str) -> NodeInfo:
        node = self.snapshot.get(name)
        if node is None:
            raise FrameworkError(f"node {name!r} not found in the snapshot")
        return node

    def _put_back(self, victim: Victim, placed: Sequence[ProposedAssignment]) -> None:
        """addVictimPodsWithPreFilter."""
        for pod in victim.pods:
            self.snapshot.add_pod(pod)
            self.removed.pop(pod.id, None)
            node = self._node(pod.node_name)
            for assignment in placed:
                status = self.framework.run_pre_filter_extension_add_pod(
                    assignment.state, assignment.pod, pod, node
                )
                if not status.is_success:
                    raise FrameworkError(status.message())

    def _take_out(self, victim: Victim, placed: Sequence[ProposedAssignment]) -> None:
        """removeVictimPodsWithPreFilter."""
        for pod in victim.pods:
            if self.snapshot.remove_pod(pod.id) is not None:
                self.removed[pod.id] = pod
            node = self._node(pod.node_name)
            for assignment in placed:
                status = self.framework.run_pre_filter_extension_remove_pod(
                    assignment.state, assignment.pod, pod, node
                )
                if not status.is_success:
                    raise FrameworkError(status.message())

    def reprieve_by_scheduling(self, victim: Victim, schedule: PodGroupSchedulingFunc) -> bool:
        """1.36's reprieveVictim: the victim back on its nodes; it stays when the group's
        algorithm, run again, still fits."""
        for pod in victim.pods:
            self.snapshot.add_pod(pod)
            self.removed.pop(pod.id, None)
        _, status = schedule()
        if not status.is_success:
            self.remove(victim)
        return status.is_success

    def reprieve(self, victim: Victim, placed: Sequence[ProposedAssignment]) -> bool:
        """reprieveVictim: the victim back on its nodes; it stays when every member still
        passes the filters on its node, each member assumed and reserved after passing (and
        undone before returning), so the next sees it."""
        self._put_back(victim, placed)
        undo: list[ProposedAssignment] = []
        try:
            for assignment in placed:
                node = self._node(assignment.node)
                state, pod = assignment.state, assignment.pod
                if not self.framework.run_filters_with_nominated_pods(state, pod, node).is_success:
                    self._take_out(victim, placed)
                    return False
                self.snapshot.add_pod(pod.with_node(assignment.node))
                self.framework.run_reserve(state, pod, assignment.node)
                undo.append(assignment)
            return True
        finally:
            for assignment in reversed(undo):
                self.framework.run_unreserve(assignment.state, assignment.pod, assignment.node)
                self.snapshot.remove_pod(assignment.pod.id)
