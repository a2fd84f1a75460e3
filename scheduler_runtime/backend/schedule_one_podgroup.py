"""Upstream's scheduleOnePodGroup (pkg/scheduler/schedule_one_podgroup.go), for both PodGroup
APIs: when the queue hands out a member of a pod group, the group's other unscheduled members
leave the queue with it and the whole group is tried against one snapshot (the cache, held
still). Each member in turn is filtered, scored, assumed and reserved, so the next sees it
placed; Permit only says whether the group would be complete. Then everything is undone, and
only when the group is feasible are its placed members assumed again, reserved and permitted
for real and sent to binding together: all or nothing, nothing reserved by a group that does
not fit. With placement plugins (TopologyAwareWorkloadScheduling) the group is tried within
each placement and the best placement wins. Each cycle has a state of its own for plugins
(PodGroupCycleState, upstream's podGroupCycleState): the placement plugins get it, and every
member's CycleState points to it while the member is tried (DynamicResources keeps there the
claims' allocations the members share); members sent to binding no longer see it.

Where this goes past upstream: a group that does not fit waits, as one, for the cluster events
that could help any of its members (their rejecting plugins' events, and its Permit plugin's:
a new member, the PodGroup), with the members' backoff; kube-scheduler 1.36 puts it straight
back in backoff, and pops it from there whenever nothing else is ready, so it retries in a
tight loop. And when a placed member fails before binding (its Permit wait times out, it is
deleted, PreBind fails), its siblings still waiting at Permit are released at once."""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass, field

import numpy as np

from scheduler_runtime.backend.queue import QueuedPod
from scheduler_runtime.backend.schedule_one import (
    Attempt,
    GroupOutcome,
    ScheduleOne,
    fields,
    located,
    permit_rejection,
)
from scheduler_runtime.config.features import version_key
from scheduler_runtime.framework.explain import explain
from scheduler_runtime.framework.interface import (
    CycleState,
    PodGroupCycleState,
    ProposedAssignment,
)
from scheduler_runtime.framework.isolation import FrameworkError
from scheduler_runtime.framework.podgroups import (
    WORKLOAD_API,
    GroupKey,
    Placement,
    PodGroupAssignments,
)
from scheduler_runtime.framework.podinfo import pod_info
from scheduler_runtime.framework.runtime import Framework
from scheduler_runtime.framework.status import SUCCESS, Code, Status
from scheduler_runtime.framework.types import FitError, NoNodesAvailableError

log = logging.getLogger("scheduler_runtime.scheduler")

# Upstream's errPodGroupUnschedulable: the reason every member of a group that does not fit
# is given first.
POD_GROUP_UNSCHEDULABLE = "pod group is unschedulable"
WAITING_ON_PREEMPTION = "pod group is waiting for preemption to complete"
# The first minor whose group cycle asks PlacementFeasible instead of Permit.
PLACEMENT_FEASIBLE_SINCE = (1, 37)


def unschedulable_group(*reasons: str) -> Status:
    return Status(Code.UNSCHEDULABLE, (POD_GROUP_UNSCHEDULABLE, *reasons))


def _as_error_text(status: Status) -> str:
    """Status.AsError().Error(): a status made with errPodGroupUnschedulable (the group's
    own refusal, first of its reasons here) reads as that error alone."""
    if status.reasons and status.reasons[0] == POD_GROUP_UNSCHEDULABLE:
        return POD_GROUP_UNSCHEDULABLE
    return status.message()


def _unfit(queued: QueuedPod, error: FitError) -> Status:
    """A member no node fits in 1.37's group cycle: no PostFilter of its own (the group's
    comes after the cycle), so the FitError's message alone."""
    queued.unschedulable_plugins = set(error.diagnosis.unschedulable_plugins)
    return Status(Code.UNSCHEDULABLE, (str(error),), "", error)


def _feasibility_error(status: Status) -> Status:
    message = f"failed to evaluate placement feasibility: {status.message()}"
    return Status(Code.ERROR, (message,), status.plugin)


@dataclass
class MemberResult:
    """One member's try within the group's cycle (upstream's algorithmResult): `status` of
    the algorithm; `permit` when it found a node (or needs preemption for one); whether it is
    assumed and reserved now, to be undone at the cycle's end."""

    attempt: Attempt
    status: Status = SUCCESS
    permit: Status = SUCCESS
    requires_preemption: bool = False
    reserved: bool = False


@dataclass
class GroupResult:
    """The whole group's try (upstream's podGroupAlgorithmResult)."""

    members: list[MemberResult] = field(default_factory=list)
    status: Status = field(default_factory=unschedulable_group)
    waiting_on_preemption: bool = False
    # What the members the cycle did not get to are told (None: `status`): 1.37 gives them
    # the group's status as it was before PodGroupPostFilter added its part.
    untried: Status | None = None
    # Pod group preemption's nominated node of each member it placed (by pod id; None: no
    # pod group preemption ran).
    nominations: dict[str, str] | None = None


class PodGroupSequence(ScheduleOne):
    """The scheduling sequence with pod groups: a member of a group is scheduled with its
    group (schedule_pod_group); every other pod as ScheduleOne schedules it."""

    # Whether a member no node fits runs the PostFilter plugins (1.36's cycle); preemption's
    # reruns of the group's algorithm do not.
    post_filtering = True

    def _placement_feasible(self, key: GroupKey) -> bool:
        """Whether the group's cycle is 1.37's: a workload API group, emulating 1.37 or
        later. There PlacementFeasible (GangScheduling) says after each member whether the
        gang can still meet its minimum, members get no PostFilter of their own and Permit
        waits for the binding cycle; before, Permit answers in the cycle (and Coscheduling's
        groups keep that cycle at every minor)."""
        minor = self.backend.config.feature_gates.version
        return key.api == WORKLOAD_API and version_key(minor) >= PLACEMENT_FEASIBLE_SINCE

    def schedule_one(self, queued: QueuedPod) -> None:
        key = self.backend.group_of(queued.pod_info)
        if key is None:
            super().schedule_one(queued)
        else:
            self.schedule_pod_group(queued, key)

    # ----- the group's cycle

    def schedule_pod_group(self, first: QueuedPod, key: GroupKey) -> None:
        """scheduleOnePodGroup: the group's unscheduled members leave the queue with
        `first`, the group is tried against one snapshot, and its members are sent to
        binding or back to the queue."""
        members = self._members(first, key)
        if not members:
            return
        framework, problem = self._framework(members)
        if problem is None and self._placement_feasible(key):
            problem = self._validate(key, members)
        started = self.clock()
        with self.backend.cache.frozen():
            if problem is not None:
                result = GroupResult([], problem)
            else:
                try:
                    # The group's cycle state (upstream's podGroupCycleState), one per cycle.
                    cycle = PodGroupCycleState(key)
                    result = self._group_algorithm(framework, cycle, members)
                    if result.status.code == Code.UNSCHEDULABLE:
                        self._preempt_for_group(framework, cycle, members, result)
                except Exception as bug:
                    if not self.contains_bugs:
                        raise
                    log.exception("Error scheduling pod group %s", fields(podGroup=str(key)))
                    self.on_bug("pod_group_cycle")
                    result = GroupResult([], Status.as_error(bug))
            tried = self.clock() - started
            outcome, prepared, failures = self._submit(framework, key, members, result)
        outcome = dataclasses.replace(
            outcome, profile=framework.scheduler_name, started=started, algorithm_seconds=tried
        )
        for attempt, status in failures:
            self._failed(attempt, status)
        for attempt in prepared:
            self._start_binding(attempt)
        self.sink.group_decided(outcome)

    def _preempt_for_group(
        self,
        framework: Framework,
        cycle: PodGroupCycleState,
        members: list[QueuedPod],
        result: GroupResult,
    ) -> None:
        """A workload API group that found no room preempts as one: from 1.37 through the
        PodGroupPostFilter plugins (applyPodGroupPostFilterResult: the members it placed are
        nominated, and the members the cycle did not get to are told the group's status
        without its part), in 1.36 when WorkloadAwarePreemption is on. A success means the
        group waits for preemption; an error becomes the group's status; otherwise its
        message is added to the group's reasons (1.37's success message too)."""
        policy = self.backend.groups.policy(cycle.key)
        unscheduled = [queued.pod_info for queued in members]

        def schedule() -> tuple[list[ProposedAssignment], Status]:
            return self._rerun(framework, cycle.key, members)

        features = framework.handle.features
        if self._placement_feasible(cycle.key):
            post_filtered, status = framework.run_pod_group_post_filter(
                cycle, policy, unscheduled, schedule
            )
            result.untried = result.status
            if status.is_success:
                result.nominations = dict(post_filtered.nominations) if post_filtered else {}
        elif cycle.key.api == WORKLOAD_API and features.workload_aware_preemption:
            status = framework.run_workload_aware_preemption(cycle, policy, unscheduled, schedule)
            if status.is_success:  # 1.36 adds nothing to the group's status then
                result.waiting_on_preemption = True
                return
        else:
            return
        if status.is_success:
            result.waiting_on_preemption = True
        if status.code == Code.ERROR:
            result.status = status
        else:
            reasons = (*result.status.reasons, status.message())
            result.status = Status(result.status.code, reasons, result.status.plugin)

    def _rerun(
        self, framework: Framework, key: GroupKey, members: list[QueuedPod]
    ) -> tuple[list[ProposedAssignment], Status]:
        """The pgSchedulingFunc pod group preemption calls: the group's algorithm again, in
        a cycle state of its own, on the snapshot as preemption left it; the members it
        placed (with their cycle states) and the group's status. It runs no PostFilter
        (upstream's runWithoutPostFilters) and tells nobody anything: the members keep what
        rejected them in the cycle that counts."""
        rejected = [set(queued.unschedulable_plugins) for queued in members]
        explaining, self.explaining = self.explaining, False
        self.post_filtering = False
        try:
            rerun = self._group_algorithm(framework, PodGroupCycleState(key), members)
        finally:
            self.explaining, self.post_filtering = explaining, True
            for queued, plugins in zip(members, rejected, strict=True):
                queued.unschedulable_plugins = plugins
        placed = [
            ProposedAssignment(m.attempt.pod, m.attempt.node, m.attempt.state)
            for m in rerun.members
            if m.status.is_success and m.attempt.node
        ]
        return placed, rerun.status

    def _members(self, first: QueuedPod, key: GroupKey) -> list[QueuedPod]:
        """podGroupInfoForPod: `first` and the group's other unscheduled members still in
        the queue, by priority, then by when each was first tried; without those being
        deleted or already assumed (skipPodGroupPodSchedule)."""
        state = self.backend.groups.state(key)
        others = [k for k in (state.unscheduled if state else ()) if k != first.id]
        pulled = [first, *self.backend.queue.pop_members(others)]
        pulled.sort(
            key=lambda q: (-q.pod_info.priority, q.initial_attempt_timestamp or 0.0, q.order)
        )
        kept = []
        for queued in pulled:
            if self._skip(queued.pod_info):
                self.backend.queue.done(queued.id)
            else:
                kept.append(queued)
        return kept

    def _framework(self, members: list[QueuedPod]) -> tuple[Framework, Status | None]:
        """frameworkForPodGroup: every member must name the same profile."""
        names = list(dict.fromkeys(q.pod_info.scheduler_name for q in members))
        framework = self.backend.frameworks[names[0]]
        if len(names) == 1:
            return framework, None
        message = (
            "all pods in a single pod group should have the same .spec.schedulerName set, "
            f'got: "{names[1]}" and "{names[0]}"'
        )
        return framework, Status(Code.ERROR, (message,))

    def _validate(self, key: GroupKey, members: list[QueuedPod]) -> Status | None:
        """1.37's validatePodGroup: the members in the queue, then those already placed,
        name one profile, have the PodGroup's priority (its spec.priority, else 0) and one
        preemption policy (the first member's: the PodGroupPreemptionPolicy gate is off)."""
        policy = self.backend.groups.policy(key)
        group_priority = (policy.priority or 0) if policy is not None else 0
        state = self.backend.groups.state(key)
        placed = [*state.assumed, *state.assigned] if state is not None else []
        found = (self.backend.groups.member(member) for member in placed)
        pods = [q.pod_info for q in members] + [pod_info(pod) for pod in found if pod]
        name, preemption = pods[0].scheduler_name, pods[0].preemption_policy
        for pod in pods:
            message = ""
            if pod.scheduler_name != name:
                message = (
                    "all pods in a single pod group should have the same .spec.schedulerName "
                    f'set, got: "{pod.scheduler_name}" and "{name}"'
                )
            elif pod.priority != group_priority:
                message = (
                    "all pods in a single pod group should have the same priority as the pod "
                    f"group's priority, got {pod.priority} and {group_priority}"
                )
            elif pod.preemption_policy != preemption:
                message = (
                    "all pods in a single pod group should have the same preemption policy, "
                    f"got {pod.preemption_policy} and {preemption}"
                )
            if message:
                return Status(Code.ERROR, (message,))
        return None

    def _group_algorithm(
        self, framework: Framework, cycle: PodGroupCycleState, members: list[QueuedPod]
    ) -> GroupResult:
        """podGroupSchedulingAlgorithm: with TopologyAwareWorkloadScheduling, within each
        placement the placement plugins make (all nodes when none run), the best placement
        where the group fits; without it, within all nodes."""
        if not framework.handle.features.topology_aware_workload_scheduling:
            return self._default_algorithm(framework, cycle, members)
        snapshot = self.backend.snapshot
        names = tuple(snapshot.names(snapshot.order()))
        placements, status = framework.run_placement_generate(cycle, cycle.key, names)
        if not status.is_success:
            return GroupResult([], status)
        first: GroupResult | None = None
        fitting: list[tuple[Placement, GroupResult]] = []
        for placement in placements:
            result = self._within(framework, cycle, members, placement)
            if result.status.code == Code.ERROR:
                return result
            first = first or result
            if result.status.is_success or result.waiting_on_preemption:
                fitting.append((placement, result))
        if not fitting:
            assert first is not None
            message = (
                f"0/{len(placements)} placements are available, first placement status: "
                f"{_as_error_text(first.status)}"
            )
            # 1.37 marks it as the group's own refusal (errPodGroupUnschedulable).
            feasible = self._placement_feasible(cycle.key)
            first.status = (
                unschedulable_group(message) if feasible else Status.unschedulable(message)
            )
            return first
        if len(fitting) == 1:
            return fitting[0][1]
        return self._best_placement(framework, cycle, fitting)

    def _within(
        self,
        framework: Framework,
        cycle: PodGroupCycleState,
        members: list[QueuedPod],
        placement: Placement,
    ) -> GroupResult:
        snapshot = self.backend.snapshot
        slots = [snapshot.slot(name) for name in placement.nodes]
        self.algorithm.placement = np.array([s for s in slots if s is not None], dtype=np.intp)
        try:
            return self._default_algorithm(framework, cycle, members)
        finally:
            self.algorithm.placement = None

    def _best_placement(
        self,
        framework: Framework,
        cycle: PodGroupCycleState,
        fitting: list[tuple[Placement, GroupResult]],
    ) -> GroupResult:
        """findBestPlacement: the highest PlacementScore total; ties broken at random."""
        assignments = [
            PodGroupAssignments(
                placement,
                tuple(
                    (member.attempt.pod.id, member.attempt.node)
                    for member in result.members
                    if member.attempt.node
                ),
            )
            for placement, result in fitting
        ]
        try:
            totals = framework.run_placement_score(cycle, cycle.key, assignments)
        except FrameworkError as error:
            return GroupResult([], Status.as_error(error))
        best = [index for index, total in enumerate(totals) if total == max(totals)]
        return fitting[best[self.algorithm.rng.randrange(len(best))]][1]

    def _default_algorithm(
        self, framework: Framework, cycle: PodGroupCycleState, members: list[QueuedPod]
    ) -> GroupResult:
        """podGroupSchedulingDefaultAlgorithm: each member in order, seeing the ones before
        it placed; the group fits once a member's Permit says the group is complete (1.37:
        once PlacementFeasible does). All that was assumed and reserved is undone before
        returning."""
        if self._placement_feasible(cycle.key):
            return self._feasible_algorithm(framework, cycle, members)
        result = GroupResult()
        preemption = False
        try:
            for queued in members:
                member = self._try_member(framework, cycle, queued)
                result.members.append(member)
                if not member.status.is_success and not member.requires_preemption:
                    if member.status.is_rejected:
                        continue  # the group may still be complete without it
                    why = member.status.message()
                    message = f"failed to schedule other pod from a pod group: {why}"
                    result.status = Status(Code.ERROR, (message,))
                    result.waiting_on_preemption = False
                    break
                preemption = preemption or member.requires_preemption
                if member.permit.is_success:
                    if preemption:
                        result.status = unschedulable_group(WAITING_ON_PREEMPTION)
                        result.waiting_on_preemption = True
                    else:
                        result.status = SUCCESS
        finally:
            self._unreserve_members(result)
        return result

    def _feasible_algorithm(
        self, framework: Framework, cycle: PodGroupCycleState, members: list[QueuedPod]
    ) -> GroupResult:
        """1.37's podGroupSchedulingDefaultAlgorithm: PlacementFeasible before any member and
        after each; the cycle stops once it says the minimum cannot be met, and succeeds
        only when it is met with at least one member placed. Undone before returning."""
        result = GroupResult()
        state = self.backend.groups.state(cycle.key)
        remaining, scheduled = len(members), state.scheduled_count if state else 0
        try:
            status = framework.run_placement_feasible(cycle, cycle.key, remaining, scheduled)
            if status.code == Code.ERROR:
                result.status = _feasibility_error(status)
                return result
            if status.code == Code.UNSCHEDULABLE:
                result.status = unschedulable_group(*status.reasons)
                return result
            result.status, placed = status, False
            for queued in members:
                member = self._try_member(framework, cycle, queued, permit_in_cycle=False)
                result.members.append(member)
                if not member.status.is_success and not member.status.is_rejected:
                    why = member.status.message()
                    message = f"failed to schedule other pod from a pod group: {why}"
                    result.status = Status(Code.ERROR, (message,))
                    break
                remaining -= 1
                scheduled += int(member.status.is_success)
                status = framework.run_placement_feasible(cycle, cycle.key, remaining, scheduled)
                if status.code == Code.ERROR:
                    result.status = _feasibility_error(status)
                    break
                result.status = status
                if status.code == Code.UNSCHEDULABLE:
                    break
                placed = placed or member.status.is_success
            if result.status.code == Code.WAIT:
                result.status = unschedulable_group(*result.status.reasons)
            elif result.status.is_success and not placed:
                result.status = unschedulable_group()
        finally:
            self._unreserve_members(result)
        return result

    def _unreserve_members(self, result: GroupResult) -> None:
        """The cycle's reservations undone, last first (the members are only simulated)."""
        for member in reversed(result.members):
            if member.reserved:
                self._revert(member.attempt)
                member.reserved = False

    def _explain_unfit(self, attempt: Attempt, error: FitError) -> None:
        """/explain for a member no node fits in 1.37's cycle: the FitError, as told."""
        if not self.explaining:
            return
        why = explain(
            attempt.pod,
            attempt.framework,
            self.algorithm,
            node=None,
            diagnosis=error.diagnosis,
            state=attempt.state,
        )
        self._explained(attempt, dataclasses.replace(why, message=str(error)))

    def _try_member(
        self,
        framework: Framework,
        cycle: PodGroupCycleState,
        queued: QueuedPod,
        *,
        permit_in_cycle: bool = True,
    ) -> MemberResult:
        """podGroupPodSchedulingAlgorithm: find a node (or the node preemption would free),
        assume and reserve the member there, and ask Permit; its plugins see the group's
        cycle state (what the members before it kept there). Without `permit_in_cycle`
        (1.37), no Permit, and a member no node fits gets no PostFilter of its own."""
        state = CycleState(cycle)
        queued.unschedulable_plugins = set()  # what rejects it now, not in an earlier try
        attempt = Attempt(queued, framework, state, self.clock())
        member = MemberResult(attempt)
        pod = attempt.pod
        try:
            found = self.algorithm.schedule_pod(framework, state, pod)
        except FitError as error:
            if permit_in_cycle and self.post_filtering:
                member.status = self._post_filter(attempt, error)
            else:
                member.status = _unfit(queued, error)
                self._explain_unfit(attempt, error)
            if not attempt.nomination:
                return member
            attempt.node, member.requires_preemption = attempt.nomination, True
        except NoNodesAvailableError as error:
            member.status = Status.unresolvable(str(error))
            return member
        except FrameworkError as error:
            member.status = Status.as_error(error)
            return member
        else:
            attempt.node = found.suggested_host
            if self.explaining:
                self._explained(attempt, explain(pod, framework, self.algorithm, node=attempt.node))
        self._assume(attempt)
        reserved = located(framework.run_reserve(state, pod, attempt.node), "Reserve")
        if not reserved.is_success:
            self._revert(attempt)
            member.status = (
                permit_rejection(attempt, reserved) if reserved.is_rejected else reserved
            )
            return member
        member.reserved = True
        if not permit_in_cycle:
            return member
        member.permit = located(
            framework.run_permit(state, pod, attempt.node, wait=False), "Permit"
        )
        if member.permit.code not in (Code.WAIT, Code.SUCCESS):
            self._revert(attempt)
            member.reserved = False
            permit = member.permit
            member.status = permit_rejection(attempt, permit) if permit.is_rejected else permit
            member.permit = SUCCESS
        return member

    def _revert(self, attempt: Attempt) -> None:
        """unreserveAndForget in the group's cycle: the member is unscheduled again, with
        the nomination it came with."""
        attempt.framework.run_unreserve(attempt.state, attempt.pod, attempt.node)
        self._forget(attempt)
        nominated = attempt.pod.nominated_node_name
        if nominated:
            self.backend.nominator.nominate(attempt.pod, nominated)

    # ----- the group's outcome

    def _submit(
        self, framework: Framework, key: GroupKey, members: list[QueuedPod], result: GroupResult
    ) -> tuple[GroupOutcome, list[Attempt], list[tuple[Attempt, Status]]]:
        """submitPodGroupAlgorithmResult: a feasible group's placed members are assumed,
        reserved and permitted for real (prepared, for binding); every other member goes
        back to the queue (with its failure), waiting for what could help the group."""
        prepared: list[Attempt] = []
        failures: list[tuple[Attempt, Status]] = []
        group_status = result.status
        tried = {m.attempt.queued.id: m for m in result.members}
        retry_on = self._rejecting_plugins(result)
        placed: list[tuple[str, str]] = []
        failed: list[tuple[str, str]] = []
        for queued in members:
            member = tried.get(queued.id)
            if member is None:
                attempt = Attempt(queued, framework, CycleState(), self.clock())
                member = MemberResult(attempt, result.untried or group_status)
            attempt = member.attempt
            status = self._member_status(member, result, self._placement_feasible(key))
            if status is None:
                attempt.state.pod_group_cycle = None  # for real now: binding never sees it
                status = self.reserve_and_permit(attempt)
                if status.is_success:
                    prepared.append(attempt)
                    placed.append((attempt.pod.key, attempt.node))
                    continue
            if status.code != Code.ERROR:
                attempt.queued.unschedulable_plugins |= retry_on
            self._nominate(attempt, member, result)
            failures.append((attempt, status))
            failed.append((attempt.pod.key, status.message()))
        outcome = GroupOutcome(
            key, group_status, tuple(placed), tuple(failed), result.waiting_on_preemption
        )
        return outcome, prepared, failures

    def _nominate(self, attempt: Attempt, member: MemberResult, result: GroupResult) -> None:
        """The nomination a member goes back to the queue with (None: as it was): while the
        group waits for preemption, the node each placed member has; none ("") for members
        placed in a group that does not fit or fails."""
        node: str | None
        if result.nominations is not None and result.status.code != Code.ERROR:
            node = result.nominations.get(attempt.pod.id)  # preemption placed it; else as is
        elif result.waiting_on_preemption and result.status.code != Code.ERROR:
            placed = member.status.is_success or member.requires_preemption
            node = (attempt.node or None) if placed else None
        elif member.status.is_success or member.requires_preemption:
            node = ""
        else:
            node = "" if result.status.code == Code.ERROR else None
        attempt.nomination, attempt.node = node, ""
        if node:
            self.backend.nominator.nominate(attempt.pod, node)
        elif node == "":
            self.backend.nominator.delete(attempt.pod.id)

    @staticmethod
    def _member_status(
        member: MemberResult, result: GroupResult, feasible: bool = False
    ) -> Status | None:
        """What a member is told; None for a member of a feasible group that found a node
        (it goes on to binding). A member placed in a group that does not fit is told the
        group's status: in 1.36 with its own Permit's reasons, from 1.37 (`feasible`) with
        the group's message."""
        group = result.status
        if group.code == Code.ERROR:
            return member.status if member.status.code == Code.ERROR else group
        if member.status.is_success and group.is_success:
            return None
        if not (member.status.is_success or member.requires_preemption):
            return member.status
        # Placed in this cycle (or would be, after preemption), yet the group is not. While the
        # group waits for preemption, a member that preempted for itself (1.36) keeps its own.
        if result.waiting_on_preemption:
            return group if member.status.is_success else member.status
        reasons = (group.message(),) if feasible else member.permit.reasons
        return unschedulable_group(*reasons)

    @staticmethod
    def _rejecting_plugins(result: GroupResult) -> set[str]:
        """The plugins whose events could help the group: every member's rejecting plugins,
        and the Permit plugins that found the group incomplete. A member of a group that
        does not fit waits for any of them, so any one can bring the whole group back."""
        plugins: set[str] = set()
        for member in result.members:
            plugins |= member.attempt.queued.unschedulable_plugins
            if member.permit.code == Code.WAIT and member.permit.plugin:
                plugins.add(member.permit.plugin)
        return plugins

    # ----- members placed, and their siblings

    def _assume(self, attempt: Attempt) -> None:
        super()._assume(attempt)
        self.backend.groups.assume(attempt.pod, attempt.node)

    def _forget(self, attempt: Attempt) -> None:
        self.backend.groups.forget(attempt.pod)
        super()._forget(attempt)

    def _failed(self, attempt: Attempt, status: Status) -> None:
        try:
            super()._failed(attempt, status)
        finally:  # siblings waiting at Permit are released whatever the report met
            self._release_siblings(attempt)

    def _release_siblings(self, attempt: Attempt) -> None:
        """A member that was not placed after all (its binding cycle failed) releases the
        siblings still waiting at Permit for it: nothing stays reserved for a group that
        gave up. Members already allowed go on binding."""
        pod = attempt.pod
        key = self.backend.group_of(pod)  # from the pod itself: it may be deleted already
        state = self.backend.groups.state(key) if key is not None else None
        if state is not None:
            for sibling in state.assumed:
                waiting = attempt.framework.get_waiting_pod(state.uids.get(sibling, ""))
                if sibling == pod.id or waiting is None or waiting.verdict() is not None:
                    continue
                plugins = waiting.pending_plugins()
                waiting.reject(
                    plugins[0] if plugins else "",
                    f"rejected because pod {pod.key} of pod group {key} was not placed",
                )
