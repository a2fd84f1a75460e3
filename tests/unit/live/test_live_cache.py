"""The cluster cache: what the reflectors' lists and events do to the snapshot and the queue,
assumed pods, nominations and the other objects plugins read."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler_runtime.framework.podinfo import pod_info
from scheduler_runtime.framework.snapshot import Snapshot
from scheduler_runtime.live.cache import NODES, PODS, ClusterCache
from scheduler_runtime.live.queue import SchedulingQueue

OURS = "ours"


def node(name: str, **labels: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **labels}},
        "status": {
            "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
            "conditions": [
                {"type": "Ready", "status": "True", "lastHeartbeatTime": "2026-01-01T00:00:00Z"}
            ],
        },
    }


def pod(
    name: str, node_name: str = "", scheduler: str = OURS, phase: str = "Pending", cpu: str = "1"
) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}"},
        "spec": {
            "schedulerName": scheduler,
            "nodeName": node_name,
            "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}],
        },
        "status": {"phase": phase},
    }


@pytest.fixture
def queue() -> SchedulingQueue:
    return SchedulingQueue()


@pytest.fixture
def cache(queue: SchedulingQueue) -> ClusterCache:
    made = ClusterCache(Snapshot(), queue, [OURS])
    made.replace(NODES, [node("n1"), node("n2")])
    return made


def cpu_requested(cache: ClusterCache, node_name: str) -> int:
    slot = cache.snapshot.slot(node_name)
    assert slot is not None
    return int(cache.snapshot.requested[slot, cache.snapshot.column("cpu")])


def fail_once(queue: SchedulingQueue) -> None:
    queued = queue.pop(timeout=0)
    assert queued is not None
    queue.requeue(queued, unschedulable=True)


def test_bound_pods_count_and_only_our_pending_pods_are_queued(
    cache: ClusterCache, queue: SchedulingQueue
) -> None:
    cache.replace(
        PODS,
        [
            pod("bound", "n1"),
            pod("done", "n1", phase="Succeeded"),
            pod("mine"),
            pod("theirs", scheduler="default-scheduler"),
        ],
    )
    assert cpu_requested(cache, "n1") == 1000
    assert "ns/mine" in queue
    assert "ns/theirs" not in queue
    assert queue.pending()["active"] == 1


def test_assumed_pod_counts_at_once_and_is_forgotten_when_binding_fails(
    cache: ClusterCache,
) -> None:
    pending = pod_info(pod("p"))
    cache.assume(pending, "n2")
    assert cpu_requested(cache, "n2") == 1000
    assert cache.is_assumed("ns/p")
    cache.forget(pending)
    assert cpu_requested(cache, "n2") == 0


def test_bound_pod_from_the_watch_confirms_the_assumption(cache: ClusterCache) -> None:
    pending = pod_info(pod("p"))
    cache.assume(pending, "n2")
    cache.upsert(PODS, pod("p", "n2"))
    assert not cache.is_assumed("ns/p")
    cache.forget(pending)  # a late failure report must not uncount the bound pod
    assert cpu_requested(cache, "n2") == 1000


def test_unbound_update_of_an_assumed_pod_is_not_queued_again(
    cache: ClusterCache, queue: SchedulingQueue
) -> None:
    cache.assume(pod_info(pod("p")), "n1")
    cache.upsert(PODS, pod("p"))
    assert "ns/p" not in queue


def test_heartbeats_do_not_wake_unschedulable_pods_but_label_changes_do(
    cache: ClusterCache, queue: SchedulingQueue
) -> None:
    cache.upsert(PODS, pod("p"))
    fail_once(queue)
    beat = node("n1")
    beat["status"]["conditions"][0]["lastHeartbeatTime"] = "2026-01-01T00:00:10Z"
    cache.upsert(NODES, beat)
    assert queue.pending()["unschedulable"] == 1
    cache.upsert(NODES, node("n1", disk="ssd"))
    assert queue.pending()["unschedulable"] == 0


def test_a_node_declaring_a_feature_wakes_unschedulable_pods_and_reaches_the_snapshot(
    cache: ClusterCache, queue: SchedulingQueue
) -> None:
    """Upstream's Node/UpdateNodeDeclaredFeature event, which NodeDeclaredFeatures waits for."""
    cache.upsert(PODS, pod("p"))
    fail_once(queue)
    declaring = node("n1")
    declaring["status"]["declaredFeatures"] = ["RestartAllContainersOnContainerExits"]
    cache.upsert(NODES, declaring)
    assert queue.pending()["unschedulable"] == 0
    info = cache.snapshot.get("n1")
    assert info is not None
    assert info.node["status"]["declaredFeatures"] == ["RestartAllContainersOnContainerExits"]


def test_deleting_a_bound_pod_frees_its_node_and_wakes_pods(
    cache: ClusterCache, queue: SchedulingQueue
) -> None:
    cache.upsert(PODS, pod("big", "n1"))
    cache.upsert(PODS, pod("waiting"))
    fail_once(queue)
    cache.delete(PODS, pod("big", "n1"))
    assert cpu_requested(cache, "n1") == 0
    assert queue.pending()["unschedulable"] == 0


def test_relist_drops_what_is_gone(cache: ClusterCache) -> None:
    cache.replace(PODS, [pod("a", "n1"), pod("b", "n1"), pod("c")])
    cache.assume(pod_info(pod("c")), "n1")
    cache.replace(PODS, [pod("a", "n1"), pod("c")])  # c's binding is still under way
    assert cpu_requested(cache, "n1") == 2000
    cache.replace(PODS, [pod("a", "n1")])  # c was deleted meanwhile: its assumption goes too
    assert cpu_requested(cache, "n1") == 1000
    assert not cache.is_assumed("ns/c")
    cache.replace(NODES, [node("n1")])
    assert "n2" not in cache.snapshot
    assert len(cache.snapshot) == 1


def test_relist_forgets_deleted_pending_pods_in_every_queue(
    cache: ClusterCache, queue: SchedulingQueue
) -> None:
    """An informer's Replace deletes what the list lacks: pods deleted while the watch was
    down leave activeQ, backoffQ, the unschedulable and gated pods, and the pending counts."""
    gated = pod("gated")
    gated["spec"]["schedulingGates"] = [{"name": "example.com/wait"}]
    cache.replace(PODS, [pod("unschedulable"), pod("backoff"), pod("active"), gated])
    fail_once(queue)  # the first popped (by name order of creation): unschedulable
    backing_off = queue.pop(timeout=0)
    assert backing_off is not None
    queue.requeue(backing_off, unschedulable=False)
    in_flight = queue.pop(timeout=0)
    assert in_flight is not None
    cache.nominate(pod_info(pod("unschedulable")), "n1")
    assert sum(queue.pending().values()) == 3

    cache.replace(PODS, [pod("kept")])

    assert queue.keys() == {"ns/kept"}
    assert queue.pending() == {"active": 1, "backoff": 0, "unschedulable": 0, "gated": 0}
    assert cache.nominated_node_names() == []
    queue.requeue(in_flight, unschedulable=True)  # its attempt ends after the relist
    assert queue.keys() == {"ns/kept"}


def test_terminal_pod_stops_counting(cache: ClusterCache) -> None:
    cache.upsert(PODS, pod("job", "n1"))
    cache.upsert(PODS, pod("job", "n1", phase="Succeeded"))
    assert cpu_requested(cache, "n1") == 0


def test_pod_bound_by_another_scheduler_leaves_the_queue(
    cache: ClusterCache, queue: SchedulingQueue
) -> None:
    cache.upsert(PODS, pod("p"))
    cache.upsert(PODS, pod("p", "n2"))
    assert "ns/p" not in queue
    assert cpu_requested(cache, "n2") == 1000


def test_nominations_follow_the_pod(cache: ClusterCache) -> None:
    nominated = pod("p")
    nominated["status"]["nominatedNodeName"] = "n1"
    cache.upsert(PODS, nominated)
    assert [p.key for p in cache.nominated_pods("n1")] == ["ns/p"]
    assert cache.nominated_node_names() == ["n1"]
    cache.nominate(pod_info(pod("p")), "n2")
    assert cache.nominated_pods("n1") == []
    assert [p.key for p in cache.nominated_pods("n2")] == ["ns/p"]
    assert cache.nominated_node_names() == ["n2"]
    cache.upsert(PODS, pod("p", "n2"))
    assert cache.nominated_pods("n2") == []
    assert cache.nominated_node_names() == []


def test_other_objects_are_indexed_by_kind(cache: ClusterCache, queue: SchedulingQueue) -> None:
    cache.replace("Namespace", [{"metadata": {"name": "a", "labels": {"team": "x"}}}])
    assert cache.snapshot.objects.namespace_labels("a") == {"team": "x"}
    cache.upsert(PODS, pod("p"))
    fail_once(queue)
    cache.upsert("Namespace", {"kind": "Namespace", "metadata": {"name": "b"}})
    assert queue.pending()["unschedulable"] == 0  # a namespace can satisfy namespaceSelector
    cache.replace("Namespace", [{"metadata": {"name": "b"}}])
    assert cache.snapshot.objects.get("Namespace", "a") is None
    cache.delete("Namespace", {"metadata": {"name": "b"}})
    assert list(cache.snapshot.objects.all("Namespace")) == []


def test_status_updates_of_bound_pods_leave_the_snapshot_alone(cache: ClusterCache) -> None:
    cache.upsert(PODS, pod("web", "n1"))
    generation = cache.snapshot.generation
    running = pod("web", "n1", phase="Running")
    running["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
    cache.upsert(PODS, running)
    assert cache.snapshot.generation == generation
    relabelled = pod("web", "n1", phase="Running")
    relabelled["metadata"]["labels"] = {"app": "web"}
    cache.upsert(PODS, relabelled)
    assert cache.snapshot.generation > generation
    placed = cache.snapshot.pod("ns/web")
    assert placed is not None
    assert placed.labels == {"app": "web"}
    generation = cache.snapshot.generation
    disrupted = pod("web", "n1", phase="Running")
    disrupted["metadata"]["labels"] = {"app": "web"}
    disrupted["status"]["conditions"] = [{"type": "DisruptionTarget", "status": "True"}]
    cache.upsert(PODS, disrupted)
    assert cache.snapshot.generation > generation
