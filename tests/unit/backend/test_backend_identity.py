"""Pods and PodGroups re-created under the same name are other objects: a pod deleted and
re-created while the first one's binding is in flight, a PodGroup deleted and re-created, and
the queue's heap when a group's sort time changes under it."""

from __future__ import annotations

import random
from concurrent.futures import Future
from typing import Any

from backend_support import OURS, node, pod

from scheduler_runtime.backend import NODES, PODS, Backend
from scheduler_runtime.backend.queue import QueuedPod, SchedulingQueue
from scheduler_runtime.backend.schedule_one import Attempt, GroupOutcome
from scheduler_runtime.backend.schedule_one_podgroup import PodGroupSequence
from scheduler_runtime.config import load_configuration
from scheduler_runtime.framework.algorithm import SchedulingAlgorithm
from scheduler_runtime.framework.explain import Explanation
from scheduler_runtime.framework.interface import CycleState, Handle
from scheduler_runtime.framework.podgroups import COSCHEDULING_POD_GROUP, POD_GROUP_LABEL
from scheduler_runtime.framework.podinfo import PodInfo, pod_info
from scheduler_runtime.framework.status import Status
from scheduler_runtime.framework.types import Diagnosis, NodeToStatus, ScheduleResult
from scheduler_runtime.plugins.coscheduling import Coscheduling


class Clock:
    def __init__(self) -> None:
        self.now = 10.0

    def __call__(self) -> float:
        return self.now


class Sink:
    """The outcomes, by pod uid."""

    def __init__(self) -> None:
        self.bound_uids: list[str] = []
        self.failed_uids: list[str] = []

    def node_found(self, attempt: Attempt, result: ScheduleResult) -> None:
        pass

    def post_filter_started(self, attempt: Attempt) -> None:
        pass

    def explained(self, explanation: Explanation) -> None:
        pass

    def bound(self, attempt: Attempt) -> None:
        self.bound_uids.append(attempt.pod.uid)

    def expecting(self, attempt: Attempt) -> None:
        pass

    def group_decided(self, outcome: GroupOutcome) -> None:
        pass

    def failed(self, attempt: Attempt, status: Status) -> None:
        self.failed_uids.append(attempt.pod.uid)


class Run:
    """A backend whose bindings wait until the test answers them."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.clock = Clock()
        self.sent: dict[str, tuple[PodInfo, Future[None]]] = {}  # by uid, until answered
        self.backend = Backend(load_configuration(config), clock=self.clock)
        self.backend.build_frameworks(
            Handle(
                snapshot=self.backend.snapshot, nominator=self.backend.nominator, binder=self.bind
            )
        )
        self.sink = Sink()
        self.sequence = PodGroupSequence(
            self.backend,
            SchedulingAlgorithm(self.backend.snapshot, 0, random.Random(0)),
            self.sink,
            explaining=False,
        )

    def bind(self, pod: PodInfo, node_name: str) -> Future[None]:
        sent: Future[None] = Future()
        self.sent[pod.uid] = (pod, sent)
        return sent

    def answer(self, uid: str, *, refused: bool = False) -> None:
        """The API server answers the pod's binding (refusing it: the uid is not the pod's)."""
        pod, sent = self.sent.pop(uid)
        if refused:
            message = f'Operation cannot be fulfilled on pods/binding "{pod.name}"'
            sent.set_exception(RuntimeError(message))
        else:
            sent.set_result(None)

    def schedule_next(self) -> None:
        queued = self.backend.queue.pop(timeout=0)
        assert queued is not None
        self.sequence.schedule_one(queued)

    def cpu_requested(self, node_name: str) -> int:
        info = self.backend.snapshot.get(node_name)
        assert info is not None
        return info.requested.get("cpu", 0)


def configuration(name: str = OURS, **profile: Any) -> dict[str, Any]:
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "leaderElection": {"leaderElect": False},
        "profiles": [{"schedulerName": name, **profile}],
    }


def web(uid: str, node_name: str = "") -> dict[str, Any]:
    """The StatefulSet's pod web-0, as one incarnation (by uid)."""
    made = pod("web-0", node_name, cpu="3")
    made["metadata"]["uid"] = uid
    return made


def test_a_pod_recreated_while_the_first_one_binds_is_scheduled_and_never_forgotten() -> None:
    run = Run(configuration())
    run.backend.events.upsert(NODES, node("n1"))  # 4 CPUs: room for one of them
    run.backend.events.upsert(PODS, web("old"))
    run.schedule_next()
    [(old_pod, _)] = run.sent.values()
    assert run.cpu_requested("n1") == 3000

    # Deleted while its PreBind is slow, and re-created under its name by the StatefulSet.
    run.backend.events.delete(PODS, web("old"))
    run.backend.events.upsert(PODS, web("new"))
    assert run.backend.queue.pending()["active"] == 1  # queued, not taken for the old one
    assert old_pod.uid == "old"  # the attempt keeps the pod it started with
    run.schedule_next()
    assert len(run.sent) == 2
    assert run.backend.cache.is_assumed("new")
    assert run.cpu_requested("n1") == 3000

    # The old binding fails (the API server refuses the old uid): what it undoes is its own.
    run.answer("old", refused=True)
    assert run.sink.failed_uids == ["old"]
    assert run.backend.cache.is_assumed("new")
    assert run.cpu_requested("n1") == 3000
    assert "old" not in run.backend.queue  # it is gone: not tried again

    run.answer("new")
    assert run.sink.bound_uids == ["new"]
    run.backend.events.upsert(PODS, web("new", "n1"))
    assert run.cpu_requested("n1") == 3000  # counted once: never over-committed
    assert run.backend.queue.ids() == set()


def test_a_relist_tells_a_pod_recreated_under_its_name_from_the_one_it_replaced() -> None:
    run = Run(configuration())
    run.backend.events.upsert(NODES, node("n1"))
    run.backend.events.upsert(PODS, web("old"))
    run.schedule_next()
    run.backend.events.replace(PODS, [web("new")])  # the watch missed the delete and the add
    assert not run.backend.cache.is_assumed("old")
    assert run.cpu_requested("n1") == 0
    assert run.backend.queue.ids() == {"new"}


# ----- PodGroups (scheduler-plugins' Coscheduling)

COSCHEDULED = "cosched"


def coscheduling() -> dict[str, Any]:
    return configuration(
        COSCHEDULED,
        plugins={
            "multiPoint": {"enabled": [{"name": "Coscheduling"}]},
            "queueSort": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "*"}]},
        },
        pluginConfig=[{"name": "Coscheduling", "args": {"podGroupBackoffSeconds": 30}}],
    )


def pod_group(uid: str, name: str = "job", min_member: int = 2) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "ns", "uid": uid},
        "spec": {"minMember": min_member, "minResources": {"cpu": "1"}},
    }


def member(name: str, group: str = "job", cpu: str = "1") -> dict[str, Any]:
    made = pod(name, scheduler=COSCHEDULED, cpu=cpu)
    made["metadata"]["labels"] = {POD_GROUP_LABEL: group}
    return made


def plugin_of(run: Run) -> Coscheduling:
    plugin = run.backend.frameworks[COSCHEDULED].plugins["Coscheduling"]
    assert isinstance(plugin, Coscheduling)
    return plugin


def kept(plugin: Coscheduling) -> list[int]:
    """How many groups each of Coscheduling's maps holds."""
    return [
        len(plugin._first_seen),
        len(plugin._failed_at),
        len(plugin._backoff_until),
        len(plugin._permitted_until),
    ]


def probe(run: Run, name: str) -> QueuedPod:
    """A member as the queue would hold it now."""
    return QueuedPod(pod_info(member(name, cpu="8")), timestamp=run.clock())


def test_a_podgroup_recreated_under_its_name_starts_afresh_and_a_deleted_one_leaves_nothing() -> (
    None
):
    run = Run(coscheduling())
    run.backend.events.upsert(NODES, node("n1"))
    run.backend.events.upsert(COSCHEDULING_POD_GROUP, pod_group("first"))
    for name in ("a", "b"):  # 8 CPUs each: the group fits nowhere
        run.backend.events.upsert(PODS, member(name, cpu="8"))
    run.schedule_next()
    plugin = plugin_of(run)
    assert kept(plugin) == [1, 1, 1, 0]  # sorted, failed, backing off (minResources passed)
    snapshot = run.backend.snapshot
    refused = plugin.pre_filter(CycleState(), probe(run, "a").pod_info, snapshot)[1]
    assert refused.message() == "podGroup ns/job failed recently"

    run.clock.now = 20.0
    run.backend.events.delete(COSCHEDULING_POD_GROUP, pod_group("first"))
    assert kept(plugin) == [0, 0, 0, 0]
    run.backend.events.upsert(COSCHEDULING_POD_GROUP, pod_group("second"))
    # Neither the old failure (its sort time) nor its backoff is inherited.
    assert plugin.pre_filter(CycleState(), probe(run, "a").pod_info, snapshot)[1].is_success
    assert kept(plugin) == [1, 0, 0, 1]  # sorted (members queued again), minResources passed

    # One replaced under its name while the watch looked away (a relist) is gone too.
    run.backend.events.replace(COSCHEDULING_POD_GROUP, [pod_group("third")])
    assert kept(plugin) == [1, 0, 0, 0]  # its members, queued again, sort by the new one
    assert [uid for _, uid in plugin._first_seen] == ["third"]


def check_heap(queue: SchedulingQueue) -> None:
    """heapq's invariant, by the entries' own comparison: no child sorts before its parent."""
    heap = queue._active_heap
    for child in range(1, len(heap)):
        assert not heap[child] < heap[(child - 1) // 2], f"entry {child} sorts before its parent"


def test_the_heap_holds_when_a_groups_sort_time_changes_while_its_members_wait() -> None:
    run = Run(coscheduling())
    queue = run.backend.queue
    run.backend.events.upsert(COSCHEDULING_POD_GROUP, pod_group("g", min_member=4))
    names = [f"m{i}" for i in range(4)]
    for name in names:  # t=10: the group's members, first in line
        run.backend.events.upsert(PODS, member(name))
    run.clock.now = 20.0
    for index in range(8):  # t=20: pods of groups without a PodGroup, behind them
        run.backend.events.upsert(PODS, member(f"s{index}", group=f"solo-{index}"))
    check_heap(queue)
    for count in range(100):  # events about the group that leave its order as it is
        run.backend.events.upsert(COSCHEDULING_POD_GROUP, pod_group("g", min_member=4 + count % 2))
    assert len(queue._active_heap) == 12  # nothing pushed again for them

    # The group fails (a member's PostFilter): it sorts at t=30 now, behind every other pod,
    # while its members sit in the heap.
    run.clock.now = 30.0
    diagnosis = Diagnosis(NodeToStatus(run.backend.snapshot))
    plugin_of(run).post_filter(CycleState(), pod_info(member(names[0])), diagnosis)
    check_heap(queue)

    # An event about the group (its PodGroup changed) puts its members in their new place.
    run.backend.events.upsert(COSCHEDULING_POD_GROUP, pod_group("g", min_member=3))
    check_heap(queue)
    popped = []
    while (queued := queue.pop(timeout=0)) is not None:
        popped.append(queued.pod_info.name)
        queue.done(queued.id)
    assert popped == [f"s{i}" for i in range(8)] + names
