"""The state a scheduler keeps between scheduling cycles (upstream's pkg/scheduler/backend):
the scheduling queue, the nominator, the cache of nodes with bound and assumed pods, and the
event handlers that keep them current. The live scheduler and simulate share it: only where
events come from (watches or a state file) and where outcomes go differ.

Layering: commands > live | simulate > backend > config > framework."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from scheduler_runtime.backend.cache import Cache
from scheduler_runtime.backend.claims import KINDS as DRA_KINDS
from scheduler_runtime.backend.claims import DRAState
from scheduler_runtime.backend.events import NODES, PODS, EventHandlers
from scheduler_runtime.backend.nominator import Nominator
from scheduler_runtime.backend.podgroups import PodGroups
from scheduler_runtime.backend.queue import QueuedPod, SchedulingQueue
from scheduler_runtime.config import SchedulerConfiguration
from scheduler_runtime.framework.events import ClusterEventWithHint
from scheduler_runtime.framework.interface import Handle
from scheduler_runtime.framework.podgroups import (
    GroupKey,
    coscheduling_group,
    scheduling_group,
    workload_api,
)
from scheduler_runtime.framework.podinfo import PodInfo
from scheduler_runtime.framework.runtime import Framework
from scheduler_runtime.framework.snapshot import Snapshot
from scheduler_runtime.framework.status import Status
from scheduler_runtime.framework.types import QueuedPodInfo

__all__ = [
    "DRA_KINDS",
    "NODES",
    "PODS",
    "Backend",
    "Cache",
    "DRAState",
    "EventHandlers",
    "Nominator",
    "PodGroups",
    "QueuedPod",
    "SchedulingQueue",
]


# The plugin whose profiles place scheduler-plugins' v1alpha1 pod groups together.
COSCHEDULING = "Coscheduling"


class Backend:
    """One scheduler's profiles (frameworks), queue, nominator, cache and pod groups, and the
    handlers that feed them. Built in two steps, because the frameworks' handle lends the
    plugins this backend's snapshot and nominator: `Backend(config)`, then
    `build_frameworks(handle)` (which lends them its pod groups and clock too)."""

    def __init__(
        self,
        config: SchedulerConfiguration,
        *,
        clock: Callable[[], float] = time.monotonic,
        on_change: Callable[[dict[str, int]], None] | None = None,
    ) -> None:
        self.config = config
        self.frameworks: dict[str, Framework] = {}
        self.cache = Cache(Snapshot())
        self.nominator = Nominator()
        # The workload API version the emulated minor serves: its PodGroups are read as it.
        self.workload_api = workload_api(config.feature_gates.version)
        self.groups = PodGroups(self.workload_api.version)
        self.queue = SchedulingQueue(
            less=self._unsorted,
            pre_enqueue=self._pre_enqueue,
            registrations=self._registrations,
            initial_backoff=config.pod_initial_backoff_seconds,
            max_backoff=config.pod_max_backoff_seconds,
            clock=clock,
            on_change=on_change,
        )
        # ResourceClaims, ResourceSlices, DeviceClasses (and DeviceTaintRules, whose taints the
        # slices are seen with): kept apart from the cache, as
        # upstream's DRA manager keeps them, their events queued like any other.
        self.dra = DRAState(
            self.queue.on_event,
            consumable_capacity=config.features.dra_consumable_capacity,
            device_taint_rules=config.features.dra_device_taint_rules,
        )
        names = [profile.scheduler_name for profile in config.profiles]
        self.events = EventHandlers(
            self.cache,
            self.queue,
            self.nominator,
            names,
            dict.fromkeys(DRA_KINDS, self.dra),
            groups=self.groups,
            reject_waiting=self._reject_waiting,
        )

    @property
    def snapshot(self) -> Snapshot:
        return self.cache.snapshot

    def build_frameworks(self, handle: Handle) -> dict[str, Framework]:
        """One framework per profile, its plugins built with `handle` (which must lend them
        this backend's snapshot and nominator); the plugins get this backend's DRA state."""
        assert handle.snapshot is self.snapshot
        assert handle.nominator is self.nominator
        handle = dataclasses.replace(
            handle, dra=self.dra, pod_groups=self.groups, clock=self.queue.clock
        )
        self.frameworks = {
            profile.scheduler_name: Framework(profile, handle) for profile in self.config.profiles
        }
        # Every profile of a scheduler has the same queueSort plugin (the configuration says
        # so): the queue asks the first one's directly, as its heap compares often.
        first = next(iter(self.frameworks.values()))
        self.queue.less = first.queue_sort()
        self.queue.sort_key = first.queue_sort_key()
        return self.frameworks

    def group_of(self, pod: PodInfo) -> GroupKey | None:
        """The pod group a pending pod is scheduled with: the workload API group it names
        in spec.schedulingGroup (with GenericWorkload on, as upstream's), else the v1alpha1 group
        its label names when its profile runs Coscheduling."""
        key = scheduling_group(pod.pod) if self.config.features.generic_workload else None
        if key is not None:
            return key
        framework = self.frameworks.get(pod.scheduler_name)
        if framework is not None and COSCHEDULING in framework.plugins:
            return coscheduling_group(pod.pod)
        return None

    def coschedules(self, pod: Mapping[str, Any]) -> bool:
        """Whether a profile of this scheduler places the pod with its v1alpha1 group."""
        name = (pod.get("spec") or {}).get("schedulerName") or "default-scheduler"
        framework = self.frameworks.get(name)
        return framework is not None and COSCHEDULING in framework.plugins

    def sizes(self) -> dict[str, int]:
        """How many objects each structure holds, by kind (scheduler_runtime_state_objects):
        read at scrape time, so scheduling pays nothing for it."""
        queued = {f"{queue}_pods": count for queue, count in self.queue.sizes().items()}
        return {
            **queued,
            **self.cache.sizes(),
            "nominated_pods": self.nominator.size(),
            **self.dra.sizes(),
            **self.groups.sizes(),
        }

    def _reject_waiting(self, uid: str) -> None:
        """A pod waiting at Permit was deleted: its binding cycle ends (RejectWaitingPod)."""
        for framework in self.frameworks.values():
            framework.reject_waiting_pod(uid)

    @staticmethod
    def _unsorted(first: QueuedPodInfo, second: QueuedPodInfo) -> bool:
        raise RuntimeError("the queue is used before the profiles are built")

    def _registrations(self, profile: str) -> Mapping[str, Sequence[ClusterEventWithHint]]:
        framework = self.frameworks.get(profile)
        return framework.event_registrations if framework is not None else {}

    def _pre_enqueue(self, pod: PodInfo) -> Status:
        framework = self.frameworks.get(pod.scheduler_name)
        if framework is None:  # the handlers queue only pods of our profiles
            return Status.unresolvable(f"no profile named {pod.scheduler_name!r}")
        return framework.run_pre_enqueue(pod)
