"""TaintToleration, NodeUnschedulable, NodeName, NodePorts, SchedulingGates, PrioritySort,
ImageLocality, DefaultBinder against upstream's messages and formulas."""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import replace
from typing import Any

import pytest
from plugin_support import handle_of, make_node, make_pod, run_filter, run_score, snapshot_of

from scheduler_runtime.backend.podgroups import PodGroups
from scheduler_runtime.framework.features import Features
from scheduler_runtime.framework.interface import Code, CycleState, Handle, Status
from scheduler_runtime.framework.podgroups import V1BETA1, WORKLOAD_POD_GROUP
from scheduler_runtime.framework.podinfo import PodInfo, pod_info
from scheduler_runtime.framework.snapshot import Snapshot
from scheduler_runtime.framework.types import QueuedPodInfo
from scheduler_runtime.plugins.defaultbinder import DefaultBinder
from scheduler_runtime.plugins.imagelocality import ImageLocality
from scheduler_runtime.plugins.nodename import NodeName
from scheduler_runtime.plugins.nodeports import NodePorts
from scheduler_runtime.plugins.nodeunschedulable import NodeUnschedulable
from scheduler_runtime.plugins.queuesort import PrioritySort
from scheduler_runtime.plugins.schedulinggates import SchedulingGates
from scheduler_runtime.plugins.tainttoleration import TaintToleration

MB = 1024 * 1024


def taint(key: str, value: str, effect: str) -> dict[str, str]:
    return {"key": key, "value": value, "effect": effect}


def test_taint_filter_names_the_first_untolerated_taint() -> None:
    snapshot = snapshot_of(
        make_node(
            "tainted", taints=[taint("a", "1", "PreferNoSchedule"), taint("b", "2", "NoSchedule")]
        ),
        make_node("clean"),
        make_node("exec", taints=[taint("c", "", "NoExecute")]),
    )
    statuses = run_filter(TaintToleration(None, handle_of(snapshot)), snapshot, make_pod())
    assert statuses["tainted"].reasons == ("node(s) had untolerated taint(s)",)
    assert statuses["tainted"].code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert statuses["exec"].reasons == ("node(s) had untolerated taint(s)",)
    assert statuses["clean"].is_success


@pytest.mark.parametrize(
    ("toleration", "tolerated"),
    [
        ({"key": "b", "operator": "Equal", "value": "2", "effect": "NoSchedule"}, True),
        ({"key": "b", "operator": "Exists"}, True),
        ({"operator": "Exists"}, True),
        ({"key": "b", "operator": "Equal", "value": "3"}, False),
        ({"key": "b", "value": "2", "effect": "NoExecute"}, False),
    ],
)
def test_tolerations(toleration: dict[str, str], tolerated: bool) -> None:
    snapshot = snapshot_of(make_node("n", taints=[taint("b", "2", "NoSchedule")]))
    pod = make_pod(tolerations=[toleration])
    statuses = run_filter(TaintToleration(None, handle_of(snapshot)), snapshot, pod)
    assert statuses["n"].is_success == tolerated


def test_taint_score_counts_prefer_no_schedule_in_reverse() -> None:
    soft = "PreferNoSchedule"
    snapshot = snapshot_of(
        make_node("two", taints=[taint("x", "1", soft), taint("y", "1", soft)]),
        make_node("one", taints=[taint("x", "1", soft), taint("z", "1", "NoSchedule")]),
        make_node("none"),
    )
    pod = make_pod(tolerations=[{"key": "z", "operator": "Exists"}])
    scores = run_score(TaintToleration(None, handle_of(snapshot)), snapshot, pod)
    assert scores == {"two": 0, "one": 50, "none": 100}
    tolerant = make_pod(tolerations=[{"key": "y", "operator": "Exists", "effect": soft}])
    assert run_score(TaintToleration(None, handle_of(snapshot)), snapshot, tolerant) == {
        "two": 0,
        "one": 0,
        "none": 100,
    }


def test_untainted_cluster_scores_all_100() -> None:
    snapshot = snapshot_of(make_node("a"), make_node("b"))
    assert run_score(TaintToleration(None, handle_of(snapshot)), snapshot, make_pod()) == {
        "a": 100,
        "b": 100,
    }


def test_node_unschedulable() -> None:
    snapshot = snapshot_of(make_node("cordoned", unschedulable=True), make_node("open"))
    plugin = NodeUnschedulable(None, handle_of(snapshot))
    statuses = run_filter(plugin, snapshot, make_pod())
    assert statuses["cordoned"].reasons == ("node(s) were unschedulable",)
    assert statuses["cordoned"].code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert statuses["open"].is_success
    tolerant = make_pod(
        tolerations=[{"key": "node.kubernetes.io/unschedulable", "operator": "Exists"}]
    )
    assert run_filter(plugin, snapshot, tolerant)["cordoned"].is_success


def test_node_name() -> None:
    snapshot = snapshot_of(make_node("a"), make_node("b"))
    statuses = run_filter(NodeName(None, handle_of(snapshot)), snapshot, make_pod(node_name="b"))
    assert statuses["a"].reasons == ("node(s) didn't match the requested node name",)
    assert statuses["b"].is_success


def ports_pod(name: str, *ports: dict[str, Any], node_name: str = "") -> PodInfo:
    pod = make_pod(name, node_name=node_name)
    pod.pod["spec"]["containers"][0]["ports"] = list(ports)
    return pod_info(pod.pod)


@pytest.mark.parametrize(
    ("used", "wanted", "conflict"),
    [
        ({"hostPort": 80}, {"hostPort": 80}, True),
        ({"hostPort": 80}, {"hostPort": 81}, False),
        ({"hostPort": 80, "protocol": "UDP"}, {"hostPort": 80}, False),
        ({"hostPort": 80, "hostIP": "10.0.0.1"}, {"hostPort": 80, "hostIP": "10.0.0.2"}, False),
        ({"hostPort": 80, "hostIP": "10.0.0.1"}, {"hostPort": 80}, True),
        ({"hostPort": 80}, {"hostPort": 80, "hostIP": "10.0.0.2"}, True),
        ({"containerPort": 80}, {"hostPort": 80}, False),
    ],
)
def test_node_ports(used: dict[str, Any], wanted: dict[str, Any], conflict: bool) -> None:
    snapshot = snapshot_of(make_node("n"), pods=[ports_pod("old", used, node_name="n")])
    statuses = run_filter(NodePorts(None, handle_of(snapshot)), snapshot, ports_pod("new", wanted))
    if conflict:
        assert statuses["n"].reasons == (
            "node(s) didn't have free ports for the requested pod ports",
        )
        assert statuses["n"].code == Code.UNSCHEDULABLE
    else:
        assert statuses["n"].is_success


def test_scheduling_gates() -> None:
    plugin = SchedulingGates(None, Handle(Snapshot()))
    gated = make_pod(schedulingGates=[{"name": "a"}, {"name": "b"}])
    status = plugin.pre_enqueue(gated)
    assert status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert status.message() == "waiting for scheduling gates: [a b]"
    assert plugin.pre_enqueue(make_pod()).is_success


def test_priority_sort() -> None:
    plugin = PrioritySort(None, Handle(Snapshot()))
    high = QueuedPodInfo(make_pod("high", priority=10), timestamp=2.0)
    low_early = QueuedPodInfo(make_pod("low-early", priority=1), timestamp=1.0)
    low_late = QueuedPodInfo(make_pod("low-late", priority=1), timestamp=3.0)
    assert plugin.less(high, low_early)
    assert plugin.less(low_early, low_late)
    assert not plugin.less(low_late, low_early)


@pytest.mark.parametrize(
    ("release", "generic_workload", "first"),
    [
        ((1, 37), True, "member"),  # queued at its PodGroup's priority, 20
        ((1, 37), False, "loner"),  # without the gate, at its own, 1
        ((1, 36), True, "loner"),  # 1.36 queues members as pods
    ],
)
def test_priority_sort_queues_a_podgroup_member_at_its_groups_priority(
    release: tuple[int, int], generic_workload: bool, first: str
) -> None:
    groups = PodGroups(workload_version=V1BETA1)
    group = {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "gang", "namespace": "default"},
        "spec": {"schedulingPolicy": {"gang": {"minCount": 1}}, "priority": 20},
    }
    groups.upsert_group(WORKLOAD_POD_GROUP, group)
    features = Features(release=release, generic_workload=generic_workload)
    plugin = PrioritySort(None, Handle(Snapshot(), features=features, pod_groups=groups))
    pods = {
        "member": QueuedPodInfo(
            make_pod("member", priority=1, schedulingGroup={"podGroupName": "gang"}), 2.0
        ),
        "loner": QueuedPodInfo(make_pod("loner", priority=10), 1.0),
    }
    second = "loner" if first == "member" else "member"
    assert plugin.less(pods[first], pods[second])
    assert plugin.sort_key(pods[first]) < plugin.sort_key(pods[second])


def image_nodes() -> Snapshot:
    return snapshot_of(
        make_node("has-v1", images=[(["repo/app:v1"], 250 * MB)]),
        make_node("has-both", images=[(["repo/app:v1"], 250 * MB), (["repo/app:v2"], 300 * MB)]),
        make_node("has-latest", images=[(["nginx:latest", "nginx@sha256:abc"], 100 * MB)]),
        make_node("empty"),
    )


def test_image_locality_spread_and_threshold() -> None:
    snapshot = image_nodes()
    plugin = ImageLocality(None, handle_of(snapshot))
    # v1 is on 2 of 4 nodes: int(250MB * 2/4) = 125MB; (125MB - 23MB) * 100 / (1000MB - 23MB)
    v1 = run_score(plugin, snapshot, make_pod(image="repo/app:v1"))
    assert v1 == {"has-v1": 10, "has-both": 10, "has-latest": 0, "empty": 0}
    # v2 only on one node: int(300MB / 4) = 75MB -> (75 - 23) * 100 / 977 = 5
    v2 = run_score(plugin, snapshot, make_pod(image="repo/app:v2"))
    assert v2 == {"has-v1": 0, "has-both": 5, "has-latest": 0, "empty": 0}


def test_image_locality_untagged_means_latest() -> None:
    snapshot = image_nodes()
    plugin = ImageLocality(None, handle_of(snapshot))
    # int(100MB / 4) = 25MB -> (25 - 23) * 100 / 977 = 0; with 2 containers the cap doubles.
    assert run_score(plugin, snapshot, make_pod(image="nginx"))["has-latest"] == 0
    big = snapshot_of(
        make_node("a", images=[(["nginx:latest"], 900 * MB)]),
    )
    scores = run_score(ImageLocality(None, handle_of(big)), big, make_pod(image="nginx"))
    assert scores == {"a": (900 - 23) * 100 // (1000 - 23)}


@pytest.mark.parametrize(
    ("release", "expected"),
    [
        ((1, 35), 0),  # image volumes are not scored
        ((1, 36), (900 - 23) * 100 // (1000 - 23)),  # scored, the cap one container's
        ((1, 37), (900 - 23) * 100 // (2000 - 23)),  # the volume raises the cap too
    ],
)
def test_image_locality_image_volumes_by_release(release: tuple[int, int], expected: int) -> None:
    snapshot = snapshot_of(make_node("a", images=[(["repo/model:v1"], 900 * MB)]))
    handle = replace(handle_of(snapshot), features=Features(release=release))
    volume = {"name": "model", "image": {"reference": "repo/model:v1"}}
    pod = make_pod(image="nginx:1.25", volumes=[volume, {"name": "scratch", "emptyDir": {}}])
    assert run_score(ImageLocality(None, handle), snapshot, pod) == {"a": expected}


def test_default_binder_uses_the_binder() -> None:
    bound: list[tuple[str, str]] = []

    def send(pod: PodInfo, node: str) -> Future[None]:
        bound.append((pod.key, node))
        return answered(None)

    pod = make_pod("web")
    assert (
        DefaultBinder(None, Handle(Snapshot(), binder=send))
        .bind(CycleState(), pod, "n1")
        .is_success
    )
    assert bound == [("default/web", "n1")]

    def refuse(pod: PodInfo, node: str) -> Future[None]:
        raise RuntimeError('pods "web" is forbidden')

    status = DefaultBinder(None, Handle(Snapshot(), binder=refuse)).bind(CycleState(), pod, "n1")
    assert status.code == Code.ERROR
    assert status.message() == 'pods "web" is forbidden'
    forbidden = RuntimeError('pods "web" is forbidden')
    binder = DefaultBinder(None, Handle(Snapshot(), binder=lambda pod, node: answered(forbidden)))
    assert binder.bind(CycleState(), pod, "n1").message() == 'pods "web" is forbidden'


def test_default_binder_binds_without_waiting_and_tells_the_answer() -> None:
    sent: Future[None] = Future()
    binder = DefaultBinder(None, Handle(Snapshot(), binder=lambda pod, node: sent))
    told: list[Status] = []
    binder.bind_async(CycleState(), make_pod("web"), "n1", told.append)
    assert told == []  # the API has not answered yet
    sent.set_exception(RuntimeError('pods "web" not found'))
    [status] = told
    assert status.code == Code.ERROR
    assert status.plugin == "DefaultBinder"
    assert status.message() == 'pods "web" not found'


def answered(error: Exception | None) -> Future[None]:
    done: Future[None] = Future()
    if error is None:
        done.set_result(None)
    else:
        done.set_exception(error)
    return done
