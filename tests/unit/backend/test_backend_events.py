"""The backend's event handlers and cache: what the reflectors' lists and events do to the
snapshot, the queue and the nominator, assumed pods, and the other objects plugins read."""

from __future__ import annotations

from typing import Any

import pytest
from backend_support import OURS, backend_of, node, pod

from scheduler_runtime.backend import NODES, PODS, Backend, SchedulingQueue
from scheduler_runtime.framework.podinfo import pod_info


@pytest.fixture
def backend() -> Backend:
    made = backend_of(OURS)
    made.events.replace(NODES, [node("n1"), node("n2")])
    return made


@pytest.fixture
def queue(backend: Backend) -> SchedulingQueue:
    return backend.queue


def cpu_requested(backend: Backend, node_name: str) -> int:
    snapshot = backend.snapshot
    slot = snapshot.slot(node_name)
    assert slot is not None
    return int(snapshot.requested[slot, snapshot.column("cpu")])


def fail_once(queue: SchedulingQueue) -> None:
    queued = queue.pop(timeout=0)
    assert queued is not None
    queue.requeue(queued, unschedulable=True)


def test_bound_pods_count_and_only_our_pending_pods_are_queued(
    backend: Backend, queue: SchedulingQueue
) -> None:
    backend.events.replace(
        PODS,
        [
            pod("bound", "n1"),
            pod("done", "n1", phase="Succeeded"),
            pod("mine"),
            pod("theirs", scheduler="default-scheduler"),
        ],
    )
    assert cpu_requested(backend, "n1") == 1000
    assert "uid-mine" in queue
    assert "uid-theirs" not in queue
    assert queue.pending()["active"] == 1


def test_assumed_pod_counts_at_once_and_is_forgotten_when_binding_fails(
    backend: Backend,
) -> None:
    pending = pod_info(pod("p"))
    backend.cache.assume(pending, "n2")
    assert cpu_requested(backend, "n2") == 1000
    assert backend.cache.is_assumed("uid-p")
    backend.cache.forget(pending)
    assert cpu_requested(backend, "n2") == 0


def test_bound_pod_from_the_watch_confirms_the_assumption(backend: Backend) -> None:
    pending = pod_info(pod("p"))
    backend.cache.assume(pending, "n2")
    backend.events.upsert(PODS, pod("p", "n2"))
    assert not backend.cache.is_assumed("uid-p")
    backend.cache.forget(pending)  # a late failure report must not uncount the bound pod
    assert cpu_requested(backend, "n2") == 1000


def test_unbound_update_of_an_assumed_pod_is_not_queued_again(
    backend: Backend, queue: SchedulingQueue
) -> None:
    backend.cache.assume(pod_info(pod("p")), "n1")
    backend.events.upsert(PODS, pod("p"))
    assert "uid-p" not in queue


def test_heartbeats_do_not_wake_unschedulable_pods_but_label_changes_do(
    backend: Backend, queue: SchedulingQueue
) -> None:
    backend.events.upsert(PODS, pod("p"))
    fail_once(queue)
    beat = node("n1")
    beat["status"]["conditions"][0]["lastHeartbeatTime"] = "2026-01-01T00:00:10Z"
    backend.events.upsert(NODES, beat)
    assert queue.pending()["unschedulable"] == 1
    backend.events.upsert(NODES, node("n1", disk="ssd"))
    assert queue.pending()["unschedulable"] == 0


def test_a_node_declaring_a_feature_wakes_unschedulable_pods_and_reaches_the_snapshot(
    backend: Backend, queue: SchedulingQueue
) -> None:
    """Upstream's Node/UpdateNodeDeclaredFeature event, which NodeDeclaredFeatures waits for."""
    backend.events.upsert(PODS, pod("p"))
    fail_once(queue)
    declaring = node("n1")
    declaring["status"]["declaredFeatures"] = ["RestartAllContainersOnContainerExits"]
    backend.events.upsert(NODES, declaring)
    assert queue.pending()["unschedulable"] == 0
    info = backend.snapshot.get("n1")
    assert info is not None
    assert info.node["status"]["declaredFeatures"] == ["RestartAllContainersOnContainerExits"]


def test_deleting_a_bound_pod_frees_its_node_and_wakes_pods(
    backend: Backend, queue: SchedulingQueue
) -> None:
    backend.events.upsert(PODS, pod("big", "n1"))
    backend.events.upsert(PODS, pod("waiting"))
    fail_once(queue)
    backend.events.delete(PODS, pod("big", "n1"))
    assert cpu_requested(backend, "n1") == 0
    assert queue.pending()["unschedulable"] == 0


def test_relist_drops_what_is_gone(backend: Backend) -> None:
    backend.events.replace(PODS, [pod("a", "n1"), pod("b", "n1"), pod("c")])
    backend.cache.assume(pod_info(pod("c")), "n1")
    backend.events.replace(PODS, [pod("a", "n1"), pod("c")])  # c's binding is still under way
    assert cpu_requested(backend, "n1") == 2000
    backend.events.replace(
        PODS, [pod("a", "n1")]
    )  # c was deleted meanwhile: its assumption goes too
    assert cpu_requested(backend, "n1") == 1000
    assert not backend.cache.is_assumed("uid-c")
    backend.events.replace(NODES, [node("n1")])
    assert "n2" not in backend.snapshot
    assert len(backend.snapshot) == 1


def test_relist_forgets_deleted_pending_pods_in_every_queue(
    backend: Backend, queue: SchedulingQueue
) -> None:
    """An informer's Replace deletes what the list lacks: pods deleted while the watch was
    down leave activeQ, backoffQ, the unschedulable and gated pods, and the pending counts."""
    gated = pod("gated")
    gated["spec"]["schedulingGates"] = [{"name": "example.com/wait"}]
    backend.events.replace(PODS, [pod("unschedulable"), pod("backoff"), pod("active"), gated])
    fail_once(queue)  # the first popped (by name order of creation): unschedulable
    backing_off = queue.pop(timeout=0)
    assert backing_off is not None
    queue.requeue(backing_off, unschedulable=False)
    in_flight = queue.pop(timeout=0)
    assert in_flight is not None
    backend.nominator.nominate(pod_info(pod("unschedulable")), "n1")
    assert sum(queue.pending().values()) == 3

    backend.events.replace(PODS, [pod("kept")])

    assert queue.ids() == {"uid-kept"}
    assert queue.pending() == {"active": 1, "backoff": 0, "unschedulable": 0, "gated": 0}
    assert backend.nominator.nodes() == []
    queue.requeue(in_flight, unschedulable=True)  # its attempt ends after the relist
    assert queue.ids() == {"uid-kept"}


def test_terminal_pod_stops_counting(backend: Backend) -> None:
    backend.events.upsert(PODS, pod("job", "n1"))
    backend.events.upsert(PODS, pod("job", "n1", phase="Succeeded"))
    assert cpu_requested(backend, "n1") == 0


def test_pod_bound_by_another_scheduler_leaves_the_queue(
    backend: Backend, queue: SchedulingQueue
) -> None:
    backend.events.upsert(PODS, pod("p"))
    backend.events.upsert(PODS, pod("p", "n2"))
    assert "uid-p" not in queue
    assert cpu_requested(backend, "n2") == 1000


def test_nominations_follow_the_pod(backend: Backend) -> None:
    nominated = pod("p")
    nominated["status"]["nominatedNodeName"] = "n1"
    backend.events.upsert(PODS, nominated)
    assert [p.key for p in backend.nominator.pods_on("n1")] == ["ns/p"]
    assert backend.nominator.nodes() == ["n1"]
    backend.nominator.nominate(pod_info(pod("p")), "n2")
    assert backend.nominator.pods_on("n1") == []
    assert [p.key for p in backend.nominator.pods_on("n2")] == ["ns/p"]
    assert backend.nominator.nodes() == ["n2"]
    backend.events.upsert(PODS, pod("p", "n2"))
    assert backend.nominator.pods_on("n2") == []
    assert backend.nominator.nodes() == []


def test_other_objects_are_indexed_by_kind(backend: Backend, queue: SchedulingQueue) -> None:
    backend.events.replace("Namespace", [{"metadata": {"name": "a", "labels": {"team": "x"}}}])
    assert backend.snapshot.objects.namespace_labels("a") == {"team": "x"}
    backend.events.upsert(PODS, pod("p"))
    fail_once(queue)
    backend.events.upsert("Namespace", {"kind": "Namespace", "metadata": {"name": "b"}})
    assert queue.pending()["unschedulable"] == 0  # a namespace can satisfy namespaceSelector
    backend.events.replace("Namespace", [{"metadata": {"name": "b"}}])
    assert backend.snapshot.objects.get("Namespace", "a") is None
    backend.events.delete("Namespace", {"metadata": {"name": "b"}})
    assert list(backend.snapshot.objects.all("Namespace")) == []


def test_status_updates_of_bound_pods_leave_the_snapshot_alone(backend: Backend) -> None:
    backend.events.upsert(PODS, pod("web", "n1"))
    generation = backend.snapshot.generation
    running = pod("web", "n1", phase="Running")
    running["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
    backend.events.upsert(PODS, running)
    assert backend.snapshot.generation == generation
    relabelled = pod("web", "n1", phase="Running")
    relabelled["metadata"]["labels"] = {"app": "web"}
    backend.events.upsert(PODS, relabelled)
    assert backend.snapshot.generation > generation
    placed = backend.snapshot.pod("uid-web")
    assert placed is not None
    assert placed.labels == {"app": "web"}
    generation = backend.snapshot.generation
    disrupted = pod("web", "n1", phase="Running")
    disrupted["metadata"]["labels"] = {"app": "web"}
    disrupted["status"]["conditions"] = [{"type": "DisruptionTarget", "status": "True"}]
    backend.events.upsert(PODS, disrupted)
    assert backend.snapshot.generation > generation


def test_managed_fields_are_not_kept_of_any_object(
    backend: Backend, queue: SchedulingQueue
) -> None:
    """As kube-scheduler's pod informer drops them: nothing in scheduling reads them."""
    entry = [{"manager": "kubectl", "operation": "Update", "fieldsV1": {"f:spec": {}}}]

    def managed(obj: dict[str, object]) -> dict[str, object]:
        obj["metadata"]["managedFields"] = list(entry)  # type: ignore[index]
        return obj

    backend.events.upsert(NODES, managed(node("n3")))
    backend.events.replace(PODS, [managed(pod("bound", "n1"))])
    backend.events.upsert(PODS, managed(pod("mine")))
    queued = queue.pop(timeout=0)
    assert queued is not None
    kept = [
        backend.cache.remove_node("n3"),
        backend.cache.remove_pod("uid-bound"),
        queued.pod_info.pod,
    ]
    assert all(obj is not None and "managedFields" not in obj["metadata"] for obj in kept)
    assert cpu_requested(backend, "n1") == 0  # the bound pod counted until removed


def running_pod_as_the_kubelet_reports_it(name: str, node_name: str) -> dict[str, Any]:
    """A pod as a Deployment, the admission chain and the kubelet leave it."""
    made = pod(name, node_name, phase="Running")
    made["metadata"]["annotations"] = {
        "kubectl.kubernetes.io/last-applied-configuration": '{"kind": "Pod"}',
        "team": "a",
    }
    container = made["spec"]["containers"][0]
    container.update(
        env=[{"name": "A", "value": "1"}],
        command=["sleep"],
        volumeMounts=[{"name": "kube-api-access-x", "mountPath": "/var/run/secrets"}],
        livenessProbe={"exec": {"command": ["true"]}},
        terminationMessagePath="/dev/termination-log",
        imagePullPolicy="IfNotPresent",
        ports=[{"containerPort": 80, "hostPort": 8080}],
        restartPolicyRules=[{"action": "RestartAllContainers"}],
    )
    made["spec"] |= {"serviceAccountName": "default", "dnsPolicy": "ClusterFirst", "priority": 5}
    made["status"] |= {
        "podIP": "10.0.0.1",
        "qosClass": "Burstable",
        "conditions": [
            {"type": "Ready", "status": "True"},
            {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"},
        ],
    }
    made["spec"]["volumes"] = [
        {"name": "kube-api-access-x", "projected": {"sources": [{"serviceAccountToken": {}}]}},
        {"name": "cache", "emptyDir": {}},
        {"name": "data", "persistentVolumeClaim": {"claimName": "data"}},
    ]
    made["status"]["containerStatuses"] = [
        {
            "name": "c",
            "image": "busybox",
            "imageID": "sha256:0",
            "ready": True,
            "restartCount": 0,
            "state": {"running": {"startedAt": "2026-01-01T00:00:00Z"}},
            "resources": {"requests": {"cpu": "2"}},
            "allocatedResources": {"cpu": "2"},
        }
    ]
    return made


def test_what_no_plugin_reads_of_a_pod_is_not_kept(backend: Backend) -> None:
    backend.events.upsert(PODS, running_pod_as_the_kubelet_reports_it("web", "n1"))
    kept = backend.cache.remove_pod("uid-web")
    assert kept is not None
    assert kept["metadata"]["annotations"] == {"team": "a"}
    assert kept["spec"]["containers"] == [
        {
            "name": "c",
            "resources": {"requests": {"cpu": "1"}},
            "ports": [{"containerPort": 80, "hostPort": 8080}],
            "restartPolicyRules": [{"action": "RestartAllContainers"}],
        }
    ]
    assert kept["spec"]["volumes"] == [
        {"name": "data", "persistentVolumeClaim": {"claimName": "data"}}
    ]
    assert "serviceAccountName" not in kept["spec"]
    assert "dnsPolicy" not in kept["spec"]
    assert kept["spec"]["priority"] == 5
    assert kept["status"]["conditions"] == [
        {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}
    ]
    assert "podIP" not in kept["status"]
    assert kept["status"]["qosClass"] == "Burstable"
    assert kept["status"]["containerStatuses"] == [
        {"name": "c", "resources": {"requests": {"cpu": "2"}}, "allocatedResources": {"cpu": "2"}}
    ]


def test_a_bound_pod_resized_in_place_counts_what_its_containers_were_given(
    backend: Backend,
) -> None:
    """Scaled down, the kubelet reports the smaller resources after the spec changed: the pod
    counts at the larger of the two until then, and at the new size from then on."""
    backend.events.upsert(PODS, running_pod_as_the_kubelet_reports_it("web", "n1"))
    assert cpu_requested(backend, "n1") == 2000  # the status's 2 CPUs over the spec's 1
    generation = backend.snapshot.generation
    restarted = running_pod_as_the_kubelet_reports_it("web", "n1")
    restarted["status"]["containerStatuses"][0]["restartCount"] = 1
    backend.events.upsert(PODS, restarted)
    assert backend.snapshot.generation == generation  # nothing that is counted changed
    resized = running_pod_as_the_kubelet_reports_it("web", "n1")
    resized["status"]["containerStatuses"][0]["resources"] = {"requests": {"cpu": "1"}}
    resized["status"]["containerStatuses"][0]["allocatedResources"] = {"cpu": "1"}
    backend.events.upsert(PODS, resized)
    assert cpu_requested(backend, "n1") == 1000


def test_a_bound_pod_reads_as_the_watch_last_sent_it_without_being_counted_again(
    backend: Backend,
) -> None:
    """Its start time, which preemption orders victims by, comes with the kubelet's update."""
    backend.events.upsert(PODS, pod("web", "n1"))
    generation = backend.snapshot.generation
    running = pod("web", "n1", phase="Running")
    running["status"]["startTime"] = "2026-01-01T00:00:01Z"
    backend.events.upsert(PODS, running)
    assert backend.snapshot.generation == generation
    counted = backend.snapshot.pod("uid-web")
    assert counted is not None
    assert counted.pod is running
    assert counted.pod["status"]["startTime"] == "2026-01-01T00:00:01Z"
