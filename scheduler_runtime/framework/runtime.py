"""One profile's plugins, run extension point by extension point (upstream's
pkg/scheduler/framework/runtime/framework.go)."""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Callable, Sequence
from typing import Any, Concatenate, ParamSpec, TypeVar

import numpy as np

from scheduler_runtime.framework.events import registered_events
from scheduler_runtime.framework.interface import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    CycleState,
    Handle,
    PodGroupCycleState,
    PodGroupPostFilterResult,
    PodGroupSchedulingFunc,
    PostFilterResult,
    PreFilterResult,
    missing_state_failure,
)
from scheduler_runtime.framework.isolation import FrameworkError, GuardedPlugin
from scheduler_runtime.framework.nodeinfo import NodeInfo
from scheduler_runtime.framework.podgroups import (
    GroupKey,
    GroupPolicy,
    Placement,
    PodGroupAssignments,
)
from scheduler_runtime.framework.podinfo import PodInfo
from scheduler_runtime.framework.profile import ResolvedProfile
from scheduler_runtime.framework.registry import EXTENSION_POINT_METHODS, registry
from scheduler_runtime.framework.snapshot import Int64s, Slots
from scheduler_runtime.framework.status import SKIP, SUCCESS, Code, NodeVerdicts, Status
from scheduler_runtime.framework.types import Diagnosis, QueuedPodInfo, Rejection
from scheduler_runtime.framework.waiting import WaitingPod, WaitingPods

__all__ = ["Framework", "FrameworkError", "verdicts_from_statuses"]

# The plugin upstream's framework asks at PlacementFeasible (names.GangScheduling).
GANG_SCHEDULING = "GangScheduling"
# 1.36's only pod group PostFilter plugin (names.DefaultPreemption).
DEFAULT_PREEMPTION = "DefaultPreemption"

# Upstream's maxTimeout: no plugin may keep a pod waiting at Permit longer.
MAX_PERMIT_TIMEOUT = 15 * 60.0


P = ParamSpec("P")
R = TypeVar("R")


def _implements(plugin: Any, point: str) -> bool:
    return any(callable(getattr(plugin, m, None)) for m in EXTENSION_POINT_METHODS[point])


def _code_of(result: object) -> Code:
    """The status code a run_* method returned (alone or in a tuple); Success otherwise."""
    if isinstance(result, Status):
        return result.code
    if isinstance(result, tuple):
        for item in result:
            if isinstance(item, Status):
                return item.code
    return Code.SUCCESS


def extension_point(
    point: str,
) -> Callable[[Callable[Concatenate[Framework, P], R]], Callable[Concatenate[Framework, P], R]]:
    """Times a run_* method, as upstream's frameworkImpl times each extension point."""

    def decorate(
        method: Callable[Concatenate[Framework, P], R],
    ) -> Callable[Concatenate[Framework, P], R]:
        def timed(self: Framework, /, *args: P.args, **kwargs: P.kwargs) -> R:
            return self.timed(point, lambda: method(self, *args, **kwargs))

        functools.update_wrapper(timed, method)
        return timed

    return decorate


class Framework:
    """The plugins of one profile, instantiated once, in the configured order."""

    def __init__(self, profile: ResolvedProfile, handle: Handle) -> None:
        self.profile = profile
        self.handle = handle
        entries = registry()
        self.plugins: dict[str, Any] = {}
        own_handle = dataclasses.replace(handle, framework=self)
        for name in profile.plugin_names:
            entry = entries[name]
            plugin_class = entry.load()
            # A user's constructor may fail in any way; ours only on bad arguments.
            failures = (TypeError, ValueError) if entry.in_tree else (Exception,)
            try:
                plugin = plugin_class(profile.plugin_args.get(name), own_handle)
            except failures as error:
                raise FrameworkError(f"plugin {name!r} cannot be built: {error}") from error
            self.plugins[name] = (
                plugin
                if entry.in_tree
                else GuardedPlugin(plugin, handle.plugin_time_budget, verdicts_from_statuses)
            )
        self.points: dict[str, list[Any]] = {}
        for point, names in profile.plugins.items():
            for name in names:
                if not _implements(self.plugins[name], point):
                    raise FrameworkError(f"plugin {name!r} does not implement {point}")
            self.points[point] = [self.plugins[name] for name in names]
        self.score_weights = dict(profile.score_weights)
        # The cluster events that could help a pod each plugin rejected (queueing hints).
        self.event_registrations = {
            name: registered_events(plugin) for name, plugin in self.plugins.items()
        }
        self.waiting_pods = WaitingPods()
        # (point, plugin) -> (upstream's reason, its whole error) for a plugin that reads at
        # `point` what it writes at a point the profile does not run it at: it fails there,
        # as upstream's does (the configuration refuses such profiles unless told not to).
        self.missing_state: dict[tuple[str, str], tuple[str, str]] = {}
        for point, names in profile.plugins.items():
            for name in names:
                need = entries[name].state_needs.get(point)
                if need is None or not need.needed(handle.features):
                    continue
                if name not in profile.plugins.get(need.written_at, ()):
                    failure = missing_state_failure(point, name, need)
                    self.missing_state[(point, name)] = (need.missing, failure)

    def _missing(self, point: str, plugin: str) -> str | None:
        """Upstream's whole error when `plugin` lacks its state at `point`, else None."""
        if not self.missing_state:
            return None
        found = self.missing_state.get((point, plugin))
        return None if found is None else found[1]

    @property
    def scheduler_name(self) -> str:
        return self.profile.scheduler_name

    @property
    def percentage_of_nodes_to_score(self) -> int | None:
        return self.profile.percentage_of_nodes_to_score

    def has(self, point: str) -> bool:
        return bool(self.points.get(point))

    def timed(self, point: str, run: Callable[[], R]) -> R:
        """run(), its duration told to the handle's recorder under `point` with the status
        code it returned (an exception counts as Error)."""
        record = self.handle.record_extension_point
        if record is None:
            return run()
        started, code = time.perf_counter(), Code.ERROR
        try:
            result = run()
            code = _code_of(result)
            return result
        finally:
            record(point, code, self.scheduler_name, time.perf_counter() - started)

    # ----- queue

    def until_failure(self, point: str, call: Callable[[Any], Status]) -> Status:
        """Calls each plugin of `point` in order; the first status that is not Success ends
        the run, named after its plugin (how most extension points run)."""
        for plugin in self.points.get(point, ()):
            status = call(plugin)
            if not status.is_success:
                return status.with_plugin(plugin.name)
        return SUCCESS

    def run_pre_enqueue(self, pod: PodInfo) -> Status:
        return self.until_failure("preEnqueue", lambda plugin: plugin.pre_enqueue(pod))

    def less(self, first: QueuedPodInfo, second: QueuedPodInfo) -> bool:
        result: bool = self.points["queueSort"][0].less(first, second)
        return result

    def queue_sort(self) -> Callable[[QueuedPodInfo, QueuedPodInfo], bool]:
        """The queueSort plugin's `less` itself."""
        less: Callable[[QueuedPodInfo, QueuedPodInfo], bool] = self.points["queueSort"][0].less
        return less

    def queue_sort_key(self) -> Callable[[QueuedPodInfo], Any] | None:
        """The queueSort plugin's `sort_key`, when it has one: the order `less` gives, as a
        value the queue freezes into each heap entry."""
        sort_key: Callable[[QueuedPodInfo], Any] | None = getattr(
            self.points["queueSort"][0], "sort_key", None
        )
        return sort_key

    # ----- filtering

    @extension_point("PreFilter")
    def run_pre_filter(
        self, state: CycleState, pod: PodInfo
    ) -> tuple[PreFilterResult | None, Status, list[str]]:
        """RunPreFilterPlugins: Skip marks the plugin's filter as skipped; an Unschedulable
        status lets the other PreFilters run (preemption needs their state)."""
        result: PreFilterResult | None = None
        returned = SUCCESS
        with_nodes: list[str] = []
        for plugin in self.points.get("preFilter", ()):
            outcome, status = plugin.pre_filter(state, pod, self.handle.snapshot)
            if status.is_skip:
                state.skip_filter_plugins.add(plugin.name)
                continue
            if not status.is_success:
                status = status.with_plugin(plugin.name)
                if status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                    return None, status, []
                if status.code == Code.UNSCHEDULABLE:
                    returned = status
                    continue
                raise FrameworkError(
                    f"running PreFilter plugin {plugin.name!r}: {status.message()}"
                )
            if outcome is not None and not outcome.all_nodes:
                with_nodes.append(plugin.name)
            result = (result or PreFilterResult()).merge(outcome)
            if result.node_names is not None and not result.node_names:
                message = (
                    f"node(s) didn't satisfy plugin(s) [{' '.join(with_nodes)}] simultaneously"
                )
                if len(with_nodes) == 1:
                    message = f"node(s) didn't satisfy plugin {with_nodes[0]}"
                return result, Status.unresolvable(message), with_nodes
        return result, returned, with_nodes

    def costly_filter(self, state: CycleState) -> bool:
        """Whether a filter plugin that costs much per node (`costly_filter`) runs for the
        pod (its PreFilter did not skip it)."""
        return any(
            getattr(plugin, "costly_filter", False) and plugin.name not in state.skip_filter_plugins
            for plugin in self.points.get("filter", ())
        )

    def run_filters(
        self, state: CycleState, pod: PodInfo, slots: Slots
    ) -> tuple[Slots, list[Rejection]]:
        """RunFilterPlugins over many nodes: each plugin sees the nodes every earlier plugin
        passed, so a node's status comes from the first plugin that rejects it."""
        snapshot = self.handle.snapshot
        rejections: list[Rejection] = []
        remaining = slots
        for plugin in self.points.get("filter", ()):
            if plugin.name in state.skip_filter_plugins or len(remaining) == 0:
                continue
            if (missing := self._missing("filter", plugin.name)) is not None:
                raise FrameworkError(missing)
            if callable(getattr(plugin, "filter_nodes", None)):
                verdicts = plugin.filter_nodes(state, pod, snapshot, remaining)
            else:
                verdicts = self._filter_one_by_one(plugin, state, pod, remaining)
            if verdicts.rejected.any():
                rejections.append(Rejection.from_verdicts(plugin.name, remaining, verdicts))
                remaining = remaining[~verdicts.rejected]
        return remaining, rejections

    def _filter_one_by_one(
        self, plugin: Any, state: CycleState, pod: PodInfo, slots: Slots
    ) -> NodeVerdicts:
        snapshot = self.handle.snapshot
        statuses = [plugin.filter(state, pod, snapshot.info(int(slot))) for slot in slots]
        return verdicts_from_statuses(plugin.name, statuses)

    def run_filters_on_node(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        """RunFilterPlugins for one node, through each plugin's per-node `filter` (used on
        node copies by preemption and for nominated pods)."""

        def run(plugin: Any) -> Status:
            if plugin.name in state.skip_filter_plugins:
                return SUCCESS
            if (missing := self._missing("filter", plugin.name)) is not None:
                raise FrameworkError(missing)
            status: Status = plugin.filter(state, pod, node)
            if status.code == Code.ERROR:
                raise FrameworkError(f'running "{plugin.name}" filter plugin: {status.message()}')
            return status

        return self.until_failure("filter", run)

    def run_filters_with_nominated_pods(
        self, state: CycleState, pod: PodInfo, node: NodeInfo
    ) -> Status:
        """RunFilterPluginsWithNominatedPods for one node: the pod must fit both with the
        pods nominated to the node (of at least its priority) counted and without them."""
        nominator = self.handle.nominator
        others = [
            p
            for p in (nominator.pods_on(node.name) if nominator is not None else ())
            if p.priority >= pod.priority and p.id != pod.id
        ]
        if others:
            with_others = node.clone()
            scratch = state.clone()
            for other in others:
                with_others.add_pod(other)
                status = self.run_pre_filter_extension_add_pod(scratch, pod, other, with_others)
                if not status.is_success:
                    return status
            status = self.run_filters_on_node(scratch, pod, with_others)
            if not status.is_success:
                return status
        return self.run_filters_on_node(state, pod, node)

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node: NodeInfo
    ) -> Status:
        return self._pre_filter_extension("add_pod", state, pod, pod_to_add, node)

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node: NodeInfo
    ) -> Status:
        return self._pre_filter_extension("remove_pod", state, pod, pod_to_remove, node)

    def _pre_filter_extension(
        self, method: str, state: CycleState, pod: PodInfo, other: PodInfo, node: NodeInfo
    ) -> Status:

        def run(plugin: Any) -> Status:
            extension = getattr(plugin, method, None)
            if plugin.name in state.skip_filter_plugins or not callable(extension):
                return SUCCESS
            status: Status = extension(state, pod, other, node)
            return status

        return self.until_failure("preFilter", run)

    @extension_point("PostFilter")
    def run_post_filter(
        self, state: CycleState, pod: PodInfo, diagnosis: Diagnosis
    ) -> tuple[PostFilterResult | None, Status]:
        result: PostFilterResult | None = None
        reasons: list[str] = []
        rejector = ""
        for plugin in self.points.get("postFilter", ()):
            outcome, status = plugin.post_filter(state, pod, diagnosis)
            if status.is_success:
                return outcome, status
            if status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return outcome, status.with_plugin(plugin.name)
            if not status.is_rejected:
                return None, Status(Code.ERROR, status.reasons, plugin.name, status.error)
            if outcome is not None and outcome.nominating is not None:
                result = outcome
            reasons.extend(status.reasons)
            rejector = rejector or plugin.name
        return result, Status(Code.UNSCHEDULABLE, tuple(reasons), rejector)

    # ----- scoring

    @extension_point("PreScore")
    def run_pre_score(self, state: CycleState, pod: PodInfo, slots: Slots) -> Status:
        for plugin in self.points.get("preScore", ()):
            if (missing := self._missing("preScore", plugin.name)) is not None:
                raise FrameworkError(missing)
            status: Status = plugin.pre_score(state, pod, self.handle.snapshot, slots)
            if status.is_skip:
                state.skip_score_plugins.add(plugin.name)
            elif not status.is_success:
                return Status(Code.ERROR, status.reasons, plugin.name, status.error)
        return SUCCESS

    @extension_point("Score")
    def run_score(
        self, state: CycleState, pod: PodInfo, slots: Slots
    ) -> tuple[Int64s, dict[str, Int64s]]:
        """Weighted sum of every score plugin's normalized scores, per candidate slot."""
        totals = np.zeros(len(slots), dtype=np.int64)
        by_plugin: dict[str, Int64s] = {}
        for plugin in self.points.get("score", ()):
            if plugin.name in state.skip_score_plugins:
                continue
            if (missing := self._missing("score", plugin.name)) is not None:
                raise FrameworkError(missing)
            scores = self._raw_scores(plugin, state, pod, slots)
            normalize = getattr(plugin, "normalize_score", None)
            if callable(normalize):
                status: Status = normalize(state, pod, scores)
                if not status.is_success:
                    raise FrameworkError(
                        f"running normalize score plugin {plugin.name!r}: {status.message()}"
                    )
            if len(scores) and (scores.max() > MAX_NODE_SCORE or scores.min() < MIN_NODE_SCORE):
                bad = int(scores.max() if scores.max() > MAX_NODE_SCORE else scores.min())
                raise FrameworkError(
                    f"plugin {plugin.name!r} returns an invalid score {bad}, it should in the "
                    f"range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing"
                )
            by_plugin[plugin.name] = scores
            totals += scores * self.score_weights.get(plugin.name, 1)
        return totals, by_plugin

    def _raw_scores(self, plugin: Any, state: CycleState, pod: PodInfo, slots: Slots) -> Int64s:
        snapshot = self.handle.snapshot
        if callable(getattr(plugin, "score_nodes", None)):
            scores: Int64s = np.asarray(
                plugin.score_nodes(state, pod, snapshot, slots), dtype=np.int64
            ).copy()
            return scores
        values = []
        for slot in slots:
            score, status = plugin.score(state, pod, snapshot.info(int(slot)))
            if not status.is_success:
                raise FrameworkError(f"running score plugin {plugin.name!r}: {status.message()}")
            values.append(score)
        return np.array(values, dtype=np.int64)

    # ----- binding cycle

    @extension_point("Reserve")
    def run_reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:

        def run(plugin: Any) -> Status:
            if self.missing_state and ("reserve", plugin.name) in self.missing_state:
                reason = self.missing_state[("reserve", plugin.name)][0]
                return Status(Code.ERROR, (reason,))
            status: Status = plugin.reserve(state, pod, node_name)
            return status

        return self.until_failure("reserve", run)

    @extension_point("Unreserve")
    def run_unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        for plugin in reversed(self.points.get("reserve", ())):
            plugin.unreserve(state, pod, node_name)

    @extension_point("Permit")
    def run_permit(
        self, state: CycleState, pod: PodInfo, node_name: str, *, wait: bool = True
    ) -> Status:
        """A rejection ends the pod's cycle; when plugins answer Wait, Wait comes back with
        the last waiting plugin's reasons and upstream's note, and (with `wait`) the pod
        joins the waiting pods (see wait_on_permit). A pod group's cycle only asks (`wait`
        False): its members wait once the whole group is placed."""
        timeouts: dict[str, float] = {}
        waiting = SUCCESS
        for plugin in self.points.get("permit", ()):
            status, timeout = plugin.permit(state, pod, node_name)
            if status.code == Code.WAIT:
                timeouts[plugin.name] = min(timeout, MAX_PERMIT_TIMEOUT)
                waiting = status.with_plugin(plugin.name)
            elif not status.is_success:
                rejected: Status = status.with_plugin(plugin.name)
                return rejected
        if not timeouts:
            return SUCCESS
        if wait:
            self.waiting_pods.add(WaitingPod(pod, timeouts, self.handle.clock))
        reasons = (*waiting.reasons, "one or more plugins asked to wait and no plugin rejected pod")
        return Status(Code.WAIT, reasons, waiting.plugin)

    def will_wait_on_permit(self, pod: PodInfo) -> bool:
        """WillWaitOnPermit: whether the pod's binding cycle will wait at Permit. A pod its
        plugins already allowed (a gang's members, once the last one is placed) will not:
        upstream counts it as waiting still, and so writes a nominated node its binding
        replaces a moment later."""
        waiting = self.waiting_pods.get(pod.uid)
        return waiting is not None and waiting.verdict() is None

    def wait_on_permit(self, pod: PodInfo) -> Status:
        """WaitOnPermit: blocks (in the binding cycle) until a waiting pod is allowed or
        rejected; a pod that did not wait passes at once."""
        waiting = self.waiting_pods.get(pod.uid)
        if waiting is None:
            return SUCCESS
        try:
            return waiting.wait()
        finally:
            self.waiting_pods.remove(pod.uid)

    # Upstream's Handle methods for Permit plugins (a gang scheduler allows its group).
    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        return self.waiting_pods.get(uid)

    def iterate_over_waiting_pods(self, callback: Callable[[WaitingPod], None]) -> None:
        self.waiting_pods.iterate(callback)

    def reject_waiting_pod(self, uid: str) -> bool:
        waiting = self.waiting_pods.get(uid)
        if waiting is None:
            return False
        waiting.reject("", "removed")  # upstream's words for a pod rejected from outside
        return True

    def run_pre_bind_pre_flight(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        """RunPreBindPreFlights, before the pod waits on Permit: Success when some preBind
        plugin will have work to do in PreBind (its `pre_bind_pre_flight` says Success),
        Skip when none will; an Error names a plugin that lacks the state it needs. PreBind
        skips the plugins that said Skip. A plugin without `pre_bind_pre_flight` (upstream's
        interface requires one) is not skipped, and is not taken to have work either."""
        returned = SKIP
        skipped = state.skip_pre_bind_plugins
        for plugin in self.points.get("preBind", ()):
            if (missing := self._missing("preBind", plugin.name)) is not None:
                return Status(Code.ERROR, (missing,))
            flight = getattr(plugin, "pre_bind_pre_flight", None)
            if not callable(flight):
                continue
            status: Status = flight(state, pod, node_name)
            if status.code == Code.ERROR:
                message = f'running PreBindPreFlight "{plugin.name}": {status.message()}'
                return Status(Code.ERROR, (message,), plugin.name, status.error)
            if status.is_success:
                returned = SUCCESS
            elif status.is_skip:
                skipped.add(plugin.name)
        return returned

    def binds_at_once(self, state: CycleState, pod: PodInfo) -> bool:
        """Whether the pod's binding cycle, after its pre-flight, has nothing to wait for but
        the binding's answer: every PreBind plugin skips, the pod does not wait at Permit,
        and the first bind plugin can send the binding without waiting (`bind_async`)."""
        bind = self.points.get("bind", [])
        return (
            bool(bind)
            and callable(getattr(bind[0], "bind_async", None))
            and len(state.skip_pre_bind_plugins) == len(self.points.get("preBind", ()))
            and not self.will_wait_on_permit(pod)
        )

    @extension_point("PreBind")
    def run_pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        """The PreBind plugins whose pre-flight did not skip, in order."""
        skipped = state.skip_pre_bind_plugins
        return self.until_failure(
            "preBind",
            lambda plugin: (
                SUCCESS if plugin.name in skipped else plugin.pre_bind(state, pod, node_name)
            ),
        )

    @extension_point("Bind")
    def run_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        """The first bind plugin that does not Skip binds the pod."""
        for plugin in self.points.get("bind", ()):
            status: Status = plugin.bind(state, pod, node_name)
            if status.is_skip:
                continue
            return status if status.is_success else status.with_plugin(plugin.name)
        return Status(Code.SKIP)

    def run_bind_async(
        self, state: CycleState, pod: PodInfo, node_name: str, done: Callable[[Status], None]
    ) -> None:
        """run_bind for a pod that binds at once (binds_at_once): the first bind plugin sends
        the binding and `done` is told its status when the API answers, on the thread that
        received the answer; the Bind extension point is timed until then."""
        plugin = self.points["bind"][0]
        record, started = self.handle.record_extension_point, time.perf_counter()

        def answered(status: Status) -> None:
            if record is not None:
                seconds = time.perf_counter() - started
                record("Bind", status.code, self.scheduler_name, seconds)
            done(status if status.is_success else status.with_plugin(plugin.name))

        plugin.bind_async(state, pod, node_name, answered)

    @extension_point("PostBind")
    def run_post_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        for plugin in self.points.get("postBind", ()):
            plugin.post_bind(state, pod, node_name)

    # ----- the pod group cycle's placements

    @extension_point("PlacementGenerate")
    def run_placement_generate(
        self, state: PodGroupCycleState, group: GroupKey, nodes: tuple[str, ...]
    ) -> tuple[list[Placement], Status]:
        """RunPlacementGeneratePlugins: the first plugin splits all nodes into placements
        (none: all nodes are the one placement)."""
        parent = Placement("", nodes)
        plugins = self.points.get("placementGenerate", ())
        if not plugins:
            return [parent], SUCCESS
        plugin = plugins[0]
        placements, status = plugin.generate_placements(state, group, parent)
        if not status.is_success:
            return [], status.with_plugin(plugin.name)
        if not placements:
            return [], Status.unschedulable("no feasible placements found", plugin=plugin.name)
        return list(placements), SUCCESS

    @extension_point("PlacementFeasible")
    def run_placement_feasible(
        self, state: PodGroupCycleState, group: GroupKey, remaining: int, scheduled: int
    ) -> Status:
        """RunPlacementFeasiblePlugins (1.37): whether the group can still meet its minimum
        with `scheduled` members placed and `remaining` to try (Wait: not yet, Unschedulable:
        it cannot). GangScheduling is the only such plugin, wherever the profile runs it, once
        GenericWorkload is on; without it every placement is feasible."""
        on = self.handle.features.generic_workload
        plugin = self.plugins.get(GANG_SCHEDULING) if on else None
        feasible = getattr(plugin, "placement_feasible", None)
        if plugin is None or feasible is None:
            return SUCCESS
        status: Status = feasible(state, group, remaining, scheduled)
        if status.is_success:
            return SUCCESS
        if status.code in (Code.WAIT, Code.UNSCHEDULABLE):
            return status.with_plugin(plugin.name)
        if status.code == Code.ERROR:
            message = f"running PlacementFeasible plugin: {status.message()}"
        else:
            code = status.code.upstream_name
            message = f"unexpected status from PlacementFeasible plugin: {code}"
        return Status(Code.ERROR, (message,), plugin.name)

    @extension_point("PodGroupPostFilter")
    def run_pod_group_post_filter(
        self,
        state: PodGroupCycleState,
        group: GroupPolicy | None,
        unscheduled: Sequence[PodInfo],
        schedule: PodGroupSchedulingFunc,
    ) -> tuple[PodGroupPostFilterResult | None, Status]:
        """RunPodGroupPostFilterPlugins (1.37): after a group's cycle found no room, each
        plugin in turn (the profile's postFilter plugins that have a pod group half:
        DynamicResources, DefaultPreemption) until one succeeds or rules the group out; the
        others' reasons gathered. An error ends it in upstream's words. `schedule` reruns
        the group's algorithm (preemption's dry run)."""
        if not self.handle.features.generic_workload:
            disabled = "generic workload feature is disabled, cannot perform PodGroupPostFilter"
            return None, Status.unschedulable(disabled)
        reasons: list[str] = []
        rejector = ""
        for plugin in self.points.get("postFilter", ()):
            run = getattr(plugin, "pod_group_post_filter", None)
            if run is None:
                continue
            result: PodGroupPostFilterResult | None
            result, status = run(state, group, unscheduled, schedule)
            if status.is_success:
                return result, status
            if status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return result, status.with_plugin(plugin.name)
            if status.code != Code.UNSCHEDULABLE:
                message = f'error in "{plugin.name}" PodGroupPostFilter plugins: {status.message()}'
                return None, Status(Code.ERROR, (message,), plugin.name)
            reasons += status.reasons
            rejector = rejector or plugin.name
        return None, Status(Code.UNSCHEDULABLE, tuple(reasons), rejector)

    def run_workload_aware_preemption(
        self,
        state: PodGroupCycleState,
        group: GroupPolicy | None,
        unscheduled: Sequence[PodInfo],
        schedule: PodGroupSchedulingFunc,
    ) -> Status:
        """1.36's runWorkloadAwarePreemption (gate WorkloadAwarePreemption), after a group's
        cycle found no room: DefaultPreemption's pod group half, wherever the profile enables
        it, for a PodGroup without topology constraints."""
        plugin = self.plugins.get(DEFAULT_PREEMPTION)
        run = getattr(plugin, "pod_group_post_filter", None)
        if run is None:
            disabled = (
                "default preemption plugin is not registered, workload aware preemption is disabled"
            )
            return Status.unschedulable(disabled)
        if group is None:
            missing = f'podgroup.scheduling.k8s.io "{state.key.name}" not found'
            return Status(Code.ERROR, (f"failed to get pod group object: {missing}",))
        if group.topology_key is not None:
            constrained = "pod groups with scheduling constraints"
            return Status.unschedulable(
                f"workload aware preemption is not supported for {constrained}"
            )
        status: Status = run(state, group, unscheduled, schedule)[1]
        return status

    @extension_point("PlacementScore")
    def run_placement_score(
        self, state: PodGroupCycleState, group: GroupKey, assignments: Sequence[PodGroupAssignments]
    ) -> list[int]:
        """RunPlacementScorePlugins: each placement's weighted sum of normalized scores.
        Raises FrameworkError with upstream's words when a plugin fails."""
        totals = [0] * len(assignments)
        for plugin in self.points.get("placementScore", ()):
            scores = []
            for assignment in assignments:
                score, status = plugin.score_placement(state, group, assignment)
                if not status.is_success:
                    raise FrameworkError(
                        f'running PlacementScore plugins: plugin "{plugin.name}" failed with: '
                        f"{status.message()}"
                    )
                scores.append(score)
            normalize = getattr(plugin, "normalize_placement_score", None)
            if callable(normalize):
                status = normalize(state, group, scores)
                if not status.is_success:
                    raise FrameworkError(
                        "running NormalizePlacementScore on PlacementScore plugins: plugin "
                        f'"{plugin.name}" failed with: {status.message()}'
                    )
            weight = self.profile.placement_score_weights.get(plugin.name, 1)
            for index, score in enumerate(scores):
                if not MIN_NODE_SCORE <= score <= MAX_NODE_SCORE:
                    raise FrameworkError(
                        f'plugin "{plugin.name}" returns an invalid score {score}, it should in '
                        f"the range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing"
                    )
                totals[index] += score * weight
        return totals


def verdicts_from_statuses(plugin: str, statuses: Sequence[Status]) -> NodeVerdicts:
    """Per-node statuses as columnar verdicts; an Error status fails the cycle."""
    count = len(statuses)
    rejected = np.zeros(count, dtype=np.bool_)
    unresolvable = np.zeros(count, dtype=np.bool_)
    reasons: dict[str, np.ndarray] = {}
    for position, status in enumerate(statuses):
        if status.is_success:
            continue
        if status.code == Code.ERROR:
            raise FrameworkError(f'running "{plugin}" filter plugin: {status.message()}')
        rejected[position] = True
        unresolvable[position] = status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        for reason in status.reasons:
            mask = reasons.get(reason)
            if mask is None:
                mask = reasons[reason] = np.zeros(count, dtype=np.bool_)
            mask[position] = True
    return NodeVerdicts(rejected, unresolvable, list(reasons.items()))
