"""The scheduling queue, shaped like upstream's PriorityQueue (backend/queue): activeQ ordered
by the profiles' queueSort plugin, backoffQ for pods waiting out their exponential backoff, the
unschedulable pods waiting for a cluster event that could help them, and the pods a preEnqueue
plugin (SchedulingGates, ...) holds outside all of them.

Pods are known by PodInfo.id (the UID): a pod deleted and re-created under the same name
while the first one is in flight is another pod, queued on its own.

Time comes from the clock it is given: the live scheduler's is the monotonic clock and `pop`
blocks until a pod is ready; simulate's is virtual and moves to `next_ready_in()` when only
backoff is left. All methods are thread-safe."""

from __future__ import annotations

import copy
import heapq
import itertools
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scheduler_runtime.framework.events import (
    EVERYTHING,
    POD,
    ClusterEvent,
    ClusterEventWithHint,
    hints_allow,
    matching,
    may_help,
    pod_update_action,
)
from scheduler_runtime.framework.podinfo import PodInfo
from scheduler_runtime.framework.status import Status
from scheduler_runtime.framework.types import QueuedPodInfo

log = logging.getLogger(__name__)

# Upstream's podMaxInUnschedulablePodsDuration: after this long a pod is retried anyway.
MAX_UNSCHEDULABLE_SECONDS = 300.0
# Events kept while pods are in flight, to judge once an attempt ends; a pod whose events
# were dropped (it waited at Permit while this many happened) is simply tried again.
IN_FLIGHT_EVENTS = 4096
ACTIVE, BACKOFF, UNSCHEDULABLE, GATED = "active", "backoff", "unschedulable", "gated"
# Stale activeQ heap entries (of pods updated, re-sorted or taken with their group) kept
# before the heap is rebuilt from the live ones.
STALE_ENTRIES = 64

IN_FLIGHT = "in_flight"


# A cluster event seen while pods were in flight: (event, old, new, the one pod it concerns or
# None for all); an event of None is a change no hint can judge (every pod is tried again).
InFlightEvent = tuple[ClusterEvent | None, Any, Any, str | None]


class InFlightEvents:
    """Upstream's inFlightEvents: one log of the cluster events seen while pods are in flight,
    each pod remembering where its attempt started, so an event costs one append however many
    pods are in flight. The log holds the events from the oldest pod in flight on, at most
    `limit`: a pod whose events were dropped is tried again, as after a change no hint can
    judge. Not thread-safe: the queue's lock guards it."""

    def __init__(self, limit: int = IN_FLIGHT_EVENTS) -> None:
        self.limit = limit
        self._log: deque[InFlightEvent] = deque()
        self._start = 0  # the position of the log's first event

    def __len__(self) -> int:
        return len(self._log)

    def position(self) -> int:
        """Where the next event will be: a pod going in flight sees the events from here."""
        return self._start + len(self._log)

    def add(self, event: ClusterEvent | None, old: Any, new: Any, only: str | None = None) -> None:
        self._log.append((event, old, new, only))
        if len(self._log) > self.limit:
            self._log.popleft()
            self._start += 1

    def since(self, position: int, pod_id: str) -> list[InFlightEvent] | None:
        """The events from `position` on that concern pod `pod_id`; None when some of them
        were dropped."""
        if position < self._start:
            return None
        newer = itertools.islice(self._log, position - self._start, None)
        return [seen for seen in newer if seen[3] is None or seen[3] == pod_id]

    def trim(self, oldest: int | None) -> None:
        """Drops the events before `oldest`, where the oldest pod in flight sees them from
        (None: no pod is in flight)."""
        end = self.position() if oldest is None else oldest
        while self._start < end and self._log:
            self._log.popleft()
            self._start += 1


@dataclass(eq=False, slots=True)
class QueuedPod(QueuedPodInfo):
    """A pending pod and its history in the queue, with the live queue's bookkeeping."""

    failed_at: float = 0.0
    deleted: bool = False
    # Where the cluster events seen while it is in flight start (InFlightEvents.position).
    events_from: int = 0
    gated_by: Status | None = None  # the preEnqueue verdict that holds it, while it does
    order: int = 0  # when it last entered activeQ, to keep equal pods in arrival order
    entry: _Entry | None = None  # its live activeQ heap entry; any other one is stale

    @property
    def key(self) -> str:
        """namespace/name, for people."""
        return self.pod_info.key

    @property
    def id(self) -> str:
        """What the queue knows it by (PodInfo.id)."""
        return self.pod_info.id


# The profiles' queueSort plugin, and its sort key when it has one (QueueSortPlugin.sort_key).
Less = Callable[[QueuedPodInfo, QueuedPodInfo], bool]
SortKey = Callable[[QueuedPodInfo], Any]
# The pod's profile's preEnqueue plugins: anything but Success holds it outside activeQ.
PreEnqueue = Callable[[PodInfo], Status]
# A profile's plugins' cluster events (queueing hints), by plugin name.
Registrations = Callable[[str], Mapping[str, Sequence[ClusterEventWithHint]]]


def every_event(profile: str) -> Mapping[str, Sequence[ClusterEventWithHint]]:
    return {}


def pod_identity(pod: dict[str, Any]) -> tuple[Any, Any, Any, Any]:
    """What upstream's isPodUpdated compares: the pod minus its bookkeeping fields and its
    status, but for the claims made for it (a generated claim's name lets the pod in)."""
    metadata = {
        k: v
        for k, v in (pod.get("metadata") or {}).items()
        if k not in ("resourceVersion", "generation", "managedFields", "finalizers")
    }
    status = pod.get("status") or {}
    claims = status.get("resourceClaimStatuses"), status.get("extendedResourceClaimStatus")
    return metadata, pod.get("spec"), *claims


class _Entry:
    """An activeQ heap entry: the queueSort order, then the order pods entered, so equal pods
    leave in a reproducible order. What it compares is frozen when it is pushed (the sort
    key, or a copy of the pod's queue record for a plugin with only `less`): a pod's
    timestamp, or its group's sort time, changing later must not move an entry already in
    the heap, which would break the heap's invariant; a new order means a new entry."""

    __slots__ = ("less", "order", "pod", "sort", "view")

    def __init__(self, pod: QueuedPod, less: Less, sort_key: SortKey | None) -> None:
        self.pod = pod
        self.less = less
        self.order = pod.order
        self.sort = sort_key(pod) if sort_key is not None else None
        self.view = copy.copy(pod) if sort_key is None else pod

    def __lt__(self, other: _Entry) -> bool:
        if self.sort is not None:
            if self.sort != other.sort:
                return bool(self.sort < other.sort)
            return self.order < other.order
        if self.less(self.view, other.view):
            return True
        return not self.less(other.view, self.view) and self.order < other.order


class SchedulingQueue:
    """activeQ, backoffQ, unschedulable and gated pods, keyed by PodInfo.id (the UID)."""

    def __init__(
        self,
        *,
        less: Less,
        pre_enqueue: PreEnqueue,
        registrations: Registrations = every_event,
        initial_backoff: float = 1.0,
        max_backoff: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
        on_change: Callable[[dict[str, int]], None] | None = None,
    ) -> None:
        self.less = less
        self.sort_key: SortKey | None = None
        self.pre_enqueue = pre_enqueue
        self.registrations = registrations
        self.initial_backoff = initial_backoff
        self.max_backoff = max_backoff
        self.clock = clock
        self.on_change = on_change
        self._lock = threading.Condition()
        self._active_heap: list[_Entry] = []
        self._active: dict[str, QueuedPod] = {}
        self._backoff_heap: list[tuple[float, int, QueuedPod]] = []
        self._backoff: dict[str, QueuedPod] = {}
        self._unschedulable: dict[str, QueuedPod] = {}
        self._gated: dict[str, QueuedPod] = {}
        self._in_flight: dict[str, QueuedPod] = {}  # in the order they went in flight
        self._in_flight_events = InFlightEvents()
        self._sequence = 0
        self._closed = False

    # ----- pods coming and going

    def add(self, pod: PodInfo) -> None:
        """A pending pod was created or changed. A pod in flight keeps its attempt's pod
        (Attempt.pod); the newer one is what goes back to the queue if the attempt fails."""
        with self._lock:
            flying = self._in_flight.get(pod.id)
            if flying is not None:
                self._update_in_flight(flying, pod)
                return
            queued = self._find(pod.id)
            if queued is None:
                self._enqueue(QueuedPod(pod, timestamp=self.clock()))
            else:
                self._update(queued, pod)
            self._changed()

    def delete(self, pod_id: str) -> None:
        """A pending pod was deleted, or bound by someone else."""
        with self._lock:
            flying = self._in_flight.get(pod_id)
            if flying is not None:
                flying.deleted = True
            self._take_active(pod_id)
            self._backoff.pop(pod_id, None)
            self._unschedulable.pop(pod_id, None)
            self._gated.pop(pod_id, None)
            self._changed()

    def ids(self) -> set[str]:
        """Every pod the queue holds, in any of its queues or in flight (unless deleted)."""
        with self._lock:
            flying = (key for key, queued in self._in_flight.items() if not queued.deleted)
            return {*self._active, *self._backoff, *self._unschedulable, *self._gated, *flying}

    def __contains__(self, pod_id: object) -> bool:
        with self._lock:
            return isinstance(pod_id, str) and (
                self._find(pod_id) is not None or pod_id in self._in_flight
            )

    # ----- the scheduling loop's side

    def pop(self, timeout: float | None = None) -> QueuedPod | None:
        """The next pod to schedule (it is then in flight); None on timeout or close."""
        deadline = None if timeout is None else self.clock() + timeout
        with self._lock:
            while True:
                if self._closed:
                    return None
                self._flush_backoff()
                queued = self._pop_active()
                if queued is not None:
                    self._fly(queued)
                    self._changed()
                    return queued
                wait = self._next_backoff_in()
                if deadline is not None:
                    remaining = deadline - self.clock()
                    if remaining <= 0:
                        return None
                    wait = remaining if wait is None else min(wait, remaining)
                self._lock.wait(wait)

    def done(self, pod_id: str) -> None:
        """The in-flight pod was assumed (or dropped): the queue forgets it."""
        with self._lock:
            if self._in_flight.pop(pod_id, None) is not None:
                self._landed()

    def requeue(self, queued: QueuedPod, *, unschedulable: bool) -> None:
        """Returns an in-flight pod after a failed attempt (or a failed binding).

        Unschedulable pods wait for a cluster event that could help them, unless one already
        happened while they were in flight; errors go to backoff, as upstream's
        AddUnschedulableIfNotPresent."""
        with self._lock:
            flying = self._in_flight.get(queued.id) is queued
            if flying:
                del self._in_flight[queued.id]
            if not queued.deleted and self._find(queued.id) is None:
                queued.timestamp = queued.failed_at = self.clock()
                if unschedulable and not self._helped_in_flight(queued):
                    self._unschedulable[queued.id] = queued
                else:
                    self._to_backoff(queued)
                self._changed()
            if flying:
                self._landed()  # once its events were read

    def on_event(
        self, event: ClusterEvent, old: Any = None, new: Any = None, *, skip: str = ""
    ) -> None:
        """A cluster event: the unschedulable pods it could help are tried again (through
        backoff when theirs has not expired), the gated pods whose gate it could lift are
        checked again, and pods in flight remember it for when their attempt ends. `skip`
        is the id of a pod the event is about, which it cannot help."""
        with self._lock:
            helped = [
                q
                for q in self._unschedulable.values()
                if q.id != skip and self._may_help(q, event, old, new)
            ]
            self._move(helped)
            lifted = self._lifted((event, old, new), self._gated.values())
            for queued in lifted:
                del self._gated[queued.id]
                self._enqueue(queued)
            if self._in_flight:
                self._in_flight_events.add(event, old, new)
            if helped or lifted:
                log.debug("%s: %d pods tried again, %d let in", event, len(helped), len(lifted))
            self._changed()

    def on_event_for(
        self, keys: Iterable[str], event: ClusterEvent, old: Any = None, new: Any = None
    ) -> None:
        """A cluster event that can concern only the pods named, by id (a pod group's
        members, when a member or the PodGroup appears): as on_event, without looking at any
        other pod. Those waiting in activeQ are pushed again, as such an event may change
        their sort key (Coscheduling sorts a group by its PodGroup)."""
        with self._lock:
            for key in keys:
                active = self._active.get(key)
                if active is not None:
                    self._resort(active)
                queued = self._unschedulable.get(key)
                if queued is not None and self._may_help(queued, event, old, new):
                    self._move([queued])
                gated = self._gated.get(key)
                for queued in self._lifted((event, old, new), () if gated is None else (gated,)):
                    del self._gated[key]
                    self._enqueue(queued)
                if key in self._in_flight:
                    self._in_flight_events.add(event, old, new, only=key)
            self._changed()

    def recheck_gates(self, keys: Iterable[str]) -> None:
        """Asks the preEnqueue plugins again about the pods named (by id) that wait in the
        queue (a pod group lost a member): those they now hold back leave for the gated pods."""
        with self._lock:
            for key in keys:
                for queue in (self._active, self._backoff, self._unschedulable):
                    queued = queue.get(key)
                    if queued is None:
                        continue
                    verdict = self.pre_enqueue(queued.pod_info)
                    if not verdict.is_success:
                        del queue[key]
                        queued.gated_by = verdict
                        self._gated[key] = queued
                    break
            self._changed()

    def pop_members(self, keys: Iterable[str]) -> list[QueuedPod]:
        """PopSpecificPod for each pod named (by id): the ones waiting in activeQ, backoffQ or
        among the unschedulable pods, and let in by their preEnqueue plugins, leave the queue
        in flight with the pod group whose cycle pulls them (gated pods stay)."""
        with self._lock:
            popped = []
            for key in keys:
                queued = (
                    self._take_active(key)
                    or self._backoff.pop(key, None)
                    or self._unschedulable.pop(key, None)
                )
                if queued is None:
                    continue
                verdict = self.pre_enqueue(queued.pod_info)
                if not verdict.is_success:
                    queued.gated_by = verdict
                    self._gated[key] = queued
                    continue
                self._fly(queued)
                popped.append(queued)
            self._changed()
            return popped

    def move_all(self, reason: str) -> None:
        """Tries every unschedulable pod again (a change no hint can judge)."""
        with self._lock:
            if self._in_flight:
                self._in_flight_events.add(None, None, None)  # tried again, whatever failed
            self._move(list(self._unschedulable.values()))
            self._changed()

    def flush_unschedulable(self) -> None:
        """Retries pods that have waited longer than upstream's five minutes."""
        with self._lock:
            now = self.clock()
            stale = [
                q
                for q in self._unschedulable.values()
                if now - q.timestamp > MAX_UNSCHEDULABLE_SECONDS
            ]
            self._move(stale)
            self._changed()

    def next_ready_in(self) -> float | None:
        """Seconds until the first pod in backoff may be tried again (None: none waits)."""
        with self._lock:
            return self._next_backoff_in()

    def gated(self, pod_id: str) -> Status | None:
        """The preEnqueue verdict holding the pod back, or None when nothing holds it."""
        with self._lock:
            queued = self._gated.get(pod_id)
            return None if queued is None else queued.gated_by

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._lock.notify_all()

    def pending(self) -> dict[str, int]:
        with self._lock:
            return self._counts()

    def sizes(self) -> dict[str, int]:
        """How many pods each of its structures holds, in flight included (for /metrics)."""
        with self._lock:
            return {**self._counts(), IN_FLIGHT: len(self._in_flight)}

    def backoff_seconds(self, attempts: int) -> float:
        """calculateBackoffDuration: initial, doubled per further attempt, capped."""
        duration = self.initial_backoff
        for _ in range(1, attempts):
            duration *= 2
            if duration >= self.max_backoff:
                return self.max_backoff
        return min(duration, self.max_backoff)

    # ----- internals (lock held)

    def _find(self, pod_id: str) -> QueuedPod | None:
        for queue in (self._active, self._backoff, self._unschedulable, self._gated):
            found = queue.get(pod_id)
            if found is not None:
                return found
        return None

    def _enqueue(self, queued: QueuedPod) -> None:
        verdict = self.pre_enqueue(queued.pod_info)
        if not verdict.is_success:
            queued.gated_by = verdict
            self._gated[queued.id] = queued
            return
        queued.gated_by = None
        self._active[queued.id] = queued
        self._sequence += 1
        queued.order = self._sequence
        self._push(queued)
        self._lock.notify()

    def _push(self, queued: QueuedPod, entry: _Entry | None = None) -> None:
        """A fresh heap entry for a pod in activeQ; the one it had is stale, skipped on pop.
        Stale entries past as many as the live ones are dropped, so the heap stays bounded."""
        queued.entry = entry or _Entry(queued, self.less, self.sort_key)
        heapq.heappush(self._active_heap, queued.entry)
        if len(self._active_heap) > 2 * len(self._active) + STALE_ENTRIES:
            self._active_heap = [q.entry for q in self._active.values() if q.entry is not None]
            heapq.heapify(self._active_heap)

    def _resort(self, queued: QueuedPod) -> None:
        """Pushes the pod again only when its place in the order changed."""
        fresh = _Entry(queued, self.less, self.sort_key)
        entry = queued.entry
        if entry is None or fresh < entry or entry < fresh:
            self._push(queued, fresh)

    def _update(self, queued: QueuedPod, pod: PodInfo) -> None:
        previous = queued.pod_info
        queued.pod_info = pod
        key = queued.id
        if key in self._gated:
            del self._gated[key]
            self._enqueue(queued)  # gated again unless its preEnqueue plugins now let it in
            return
        if key in self._active:
            self._push(queued)  # priority may have changed
        elif key in self._unschedulable and pod_identity(previous.pod) != pod_identity(pod.pod):
            event = ClusterEvent(POD, pod_update_action(previous, pod))
            if self._may_help(queued, event, previous.pod, pod.pod):
                self._move([queued])

    def _update_in_flight(self, flying: QueuedPod, pod: PodInfo) -> None:
        """addEventsIfPodInFlight: an update of the pod during its attempt is remembered as
        one of the events seen meanwhile, judged like them should the attempt fail."""
        previous = flying.pod_info
        flying.pod_info = pod
        if pod_identity(previous.pod) == pod_identity(pod.pod):
            return
        event = ClusterEvent(POD, pod_update_action(previous, pod))
        self._in_flight_events.add(event, previous.pod, pod.pod, only=flying.id)

    def _may_help(self, queued: QueuedPod, event: ClusterEvent, old: Any, new: Any) -> bool:
        pod = queued.pod_info
        registrations = self.registrations(pod.scheduler_name)
        return may_help(registrations, queued.unschedulable_plugins, pod, (event, old, new))

    def _lifted(
        self, change: tuple[ClusterEvent, Any, Any], gated: Iterable[QueuedPod]
    ) -> list[QueuedPod]:
        """Those of the `gated` pods whose gate the change could lift: their preEnqueue
        plugin's hints for it say so. What the event matches is worked out once per profile
        and plugin, as thousands of pods may wait for their claims."""
        by_gate: dict[tuple[str, str], list[ClusterEventWithHint]] = {}
        lifted = []
        for queued in gated:
            gate = queued.gated_by
            if gate is None or not gate.plugin:
                continue
            pod = queued.pod_info
            key = (pod.scheduler_name, gate.plugin)
            registered = by_gate.get(key)
            if registered is None:
                plugins = self.registrations(pod.scheduler_name)
                registered = matching(plugins.get(gate.plugin, EVERYTHING), change[0])
                by_gate[key] = registered
            if registered and hints_allow(gate.plugin, registered, pod, change):
                lifted.append(queued)
        return lifted

    def _helped_in_flight(self, queued: QueuedPod) -> bool:
        seen = self._in_flight_events.since(queued.events_from, queued.id)
        if seen is None:
            return True
        return any(
            event is None or self._may_help(queued, event, old, new) for event, old, new, _ in seen
        )

    def _fly(self, queued: QueuedPod) -> None:
        """The pod leaves the queue for its attempt: it sees the cluster events from now."""
        queued.attempts += 1
        if queued.initial_attempt_timestamp is None:
            queued.initial_attempt_timestamp = self.clock()
        queued.events_from = self._in_flight_events.position()
        self._in_flight[queued.id] = queued

    def _landed(self) -> None:
        """A pod left flight: the events no pod in flight still needs are dropped."""
        oldest = next(iter(self._in_flight.values()), None)
        self._in_flight_events.trim(None if oldest is None else oldest.events_from)

    def _move(self, pods: Iterable[QueuedPod]) -> None:
        now = self.clock()
        for queued in pods:
            self._unschedulable.pop(queued.id, None)
            if now < self._backoff_expiry(queued):
                self._to_backoff(queued)
            else:
                self._enqueue(queued)

    def _backoff_expiry(self, queued: QueuedPod) -> float:
        return queued.failed_at + self.backoff_seconds(queued.attempts)

    def _to_backoff(self, queued: QueuedPod) -> None:
        self._backoff[queued.id] = queued
        self._sequence += 1
        heapq.heappush(self._backoff_heap, (self._backoff_expiry(queued), self._sequence, queued))
        self._lock.notify()

    def _flush_backoff(self) -> None:
        now = self.clock()
        while self._backoff_heap and self._backoff_heap[0][0] <= now:
            _, _, queued = heapq.heappop(self._backoff_heap)
            if self._backoff.get(queued.id) is queued:
                del self._backoff[queued.id]
                self._enqueue(queued)
                self._changed()

    def _next_backoff_in(self) -> float | None:
        while self._backoff_heap:
            expiry, _, queued = self._backoff_heap[0]
            if self._backoff.get(queued.id) is queued:
                return max(0.0, expiry - self.clock())
            heapq.heappop(self._backoff_heap)
        return None

    def _pop_active(self) -> QueuedPod | None:
        while self._active_heap:
            entry = heapq.heappop(self._active_heap)
            queued = entry.pod
            if self._active.get(queued.id) is queued and queued.entry is entry:
                return self._take_active(queued.id)
        return None

    def _take_active(self, pod_id: str) -> QueuedPod | None:
        """Out of activeQ. Its heap entry, stale from now on, points at the pod, and the pod no
        longer at it: no cycle is left for the garbage collector to find."""
        queued = self._active.pop(pod_id, None)
        if queued is not None:
            queued.entry = None
        return queued

    def _counts(self) -> dict[str, int]:
        return {
            ACTIVE: len(self._active),
            BACKOFF: len(self._backoff),
            UNSCHEDULABLE: len(self._unschedulable),
            GATED: len(self._gated),
        }

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change(self._counts())
