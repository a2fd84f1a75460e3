"""The runtime as a process on the real cluster: pods that name its profile are placed for
the seed scenarios, failures are reported as upstream reports them, and pods of other
schedulers are left alone."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import kubernetes
import pytest
from cluster import Cluster, kwok_node, wait_for
from runtime_support import (
    Pods,
    RuntimeProcess,
    make_pod,
    scheduler_config,
    unique_scheduler_name,
)
from timing import settle

MiB = 1024 * 1024


@pytest.fixture
def runtime(start_runtime: Callable[..., RuntimeProcess]) -> RuntimeProcess:
    """A running runtime with the default plugins under a scheduler name of its own."""
    return start_runtime(scheduler_config(unique_scheduler_name()))


@pytest.fixture
def scheduler(runtime: RuntimeProcess) -> str:
    """The running runtime's scheduler name."""
    return runtime.scheduler_names[0]


def affinity(*expressions: dict[str, Any]) -> dict[str, Any]:
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": list(expressions)}]
            }
        }
    }


def test_pods_go_where_their_resources_fit(schedulable_nodes, pods: Pods, scheduler: str) -> None:
    schedulable_nodes(kwok_node("res-big", cpu="7"), kwok_node("res-small", cpu="2"))
    # Created together, so each is chosen before the previous binding is seen: the assumed
    # pods must already count against their nodes.
    pods.create(
        make_pod("large", scheduler, cpu="6"),
        make_pod("medium", scheduler, cpu="2"),
        make_pod("small", scheduler, cpu="1"),
    )
    assert pods.wait_placed("large", "medium", "small") == {
        "large": "res-big",
        "medium": "res-small",
        "small": "res-big",
    }


def test_least_allocated_spreads_equal_pods(schedulable_nodes, pods: Pods, scheduler: str) -> None:
    schedulable_nodes(kwok_node("spread-a", cpu="4"), kwok_node("spread-b", cpu="4"))
    pods.create(make_pod("first", scheduler, cpu="2", memory="1Gi"))
    pods.wait_placed("first")
    pods.create(make_pod("second", scheduler, cpu="2", memory="1Gi"))
    placed = pods.wait_placed("first", "second")
    assert {placed["first"], placed["second"]} == {"spread-a", "spread-b"}


def test_taints_and_prefer_no_schedule(schedulable_nodes, pods: Pods, scheduler: str) -> None:
    schedulable_nodes(
        kwok_node(
            "taint-hard", taints=[{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]
        ),
        kwok_node(
            "taint-soft", taints=[{"key": "spot", "value": "yes", "effect": "PreferNoSchedule"}]
        ),
        kwok_node("taint-none"),
    )
    gpu_toleration = {
        "key": "dedicated",
        "operator": "Equal",
        "value": "gpu",
        "effect": "NoSchedule",
    }
    pods.create(
        make_pod("plain-1", scheduler),
        make_pod("plain-2", scheduler),
        make_pod(
            "gpu",
            scheduler,
            tolerations=[gpu_toleration],
            nodeSelector={"kubernetes.io/hostname": "taint-hard"},
        ),
    )
    assert pods.wait_placed("plain-1", "plain-2", "gpu") == {
        "plain-1": "taint-none",
        "plain-2": "taint-none",
        "gpu": "taint-hard",
    }


def test_node_selector_and_node_affinity_operators(
    schedulable_nodes, pods: Pods, scheduler: str
) -> None:
    schedulable_nodes(
        kwok_node("aff-ssd", labels={"disk": "ssd", "cores": "16"}),
        kwok_node("aff-hdd", labels={"disk": "hdd", "cores": "4"}),
        kwok_node("aff-bare"),
    )
    preferred = {
        "nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": 100,
                    "preference": {
                        "matchExpressions": [{"key": "disk", "operator": "In", "values": ["hdd"]}]
                    },
                }
            ]
        }
    }
    pods.create(
        make_pod("selector", scheduler, nodeSelector={"disk": "ssd"}),
        make_pod(
            "in", scheduler, affinity=affinity({"key": "disk", "operator": "In", "values": ["hdd"]})
        ),
        make_pod(
            "notin-exists",
            scheduler,
            affinity=affinity(
                {"key": "disk", "operator": "NotIn", "values": ["ssd"]},
                {"key": "disk", "operator": "Exists"},
            ),
        ),
        make_pod(
            "absent", scheduler, affinity=affinity({"key": "disk", "operator": "DoesNotExist"})
        ),
        make_pod(
            "gt", scheduler, affinity=affinity({"key": "cores", "operator": "Gt", "values": ["8"]})
        ),
        make_pod("preferred", scheduler, affinity=preferred),
    )
    assert pods.wait_placed("selector", "in", "notin-exists", "absent", "gt", "preferred") == {
        "selector": "aff-ssd",
        "in": "aff-hdd",
        "notin-exists": "aff-hdd",
        "absent": "aff-bare",
        "gt": "aff-ssd",
        "preferred": "aff-hdd",
    }


def test_pod_affinity_and_anti_affinity_by_topology(
    schedulable_nodes, pods: Pods, scheduler: str
) -> None:
    schedulable_nodes(
        kwok_node("pa-1", zone="zone-a"),
        kwok_node("pa-2", zone="zone-a"),
        kwok_node("pa-3", zone="zone-b"),
    )
    pods.create(
        make_pod(
            "db", scheduler, labels={"app": "db"}, nodeSelector={"kubernetes.io/hostname": "pa-3"}
        )
    )
    pods.wait_placed("db")
    with_db = {
        "podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "labelSelector": {"matchLabels": {"app": "db"}},
                    "topologyKey": "topology.kubernetes.io/zone",
                }
            ]
        }
    }
    apart = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "labelSelector": {"matchLabels": {"app": "spread"}},
                    "topologyKey": "kubernetes.io/hostname",
                }
            ]
        }
    }
    pods.create(
        make_pod("web", scheduler, affinity=with_db),
        *(
            make_pod(f"spread-{i}", scheduler, labels={"app": "spread"}, affinity=apart)
            for i in range(3)
        ),
    )
    placed = pods.wait_placed("web", "spread-0", "spread-1", "spread-2")
    assert placed["web"] == "pa-3"
    assert {placed[f"spread-{i}"] for i in range(3)} == {"pa-1", "pa-2", "pa-3"}


def test_host_ports_keep_pods_apart(schedulable_nodes, pods: Pods, scheduler: str) -> None:
    schedulable_nodes(kwok_node("port-a"), kwok_node("port-b"))

    def with_port(name: str) -> dict[str, Any]:
        pod = make_pod(name, scheduler)
        pod["spec"]["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": 8080}]
        return pod

    pods.create(with_port("web-1"), with_port("web-2"), with_port("web-3"))
    ports_taken = (
        "0/2 nodes are available: 2 node(s) didn't have free ports for the requested pod ports."
    )

    def two_placed_one_refused() -> bool:
        nodes = pods.nodes()
        placed = sorted(str(n) for n in nodes.values() if n)
        refused = [name for name, node in nodes.items() if not node]
        return (
            placed == ["port-a", "port-b"]
            and len(refused) == 1
            and any(e["note"].startswith(ports_taken) for e in pods.events(refused[0]))
        )

    wait_for("two pods placed apart and the third refused for its port", two_placed_one_refused)


def test_image_locality_splits_two_versions(schedulable_nodes, pods: Pods, scheduler: str) -> None:
    schedulable_nodes(
        kwok_node("img-1", images=[("example.com/app:v1", 500 * MiB)]),
        kwok_node("img-2", images=[("example.com/app:v2", 500 * MiB)]),
    )
    pods.create(
        *(make_pod(f"v1-{i}", scheduler, image="example.com/app:v1") for i in range(2)),
        *(make_pod(f"v2-{i}", scheduler, image="example.com/app:v2") for i in range(2)),
    )
    assert pods.wait_placed("v1-0", "v1-1", "v2-0", "v2-1") == {
        "v1-0": "img-1",
        "v1-1": "img-1",
        "v2-0": "img-2",
        "v2-1": "img-2",
    }


def test_unschedulable_pod_gets_upstreams_message_then_fits_a_new_node(
    schedulable_nodes, pods: Pods, scheduler: str, runtime: RuntimeProcess
) -> None:
    schedulable_nodes(
        kwok_node("fail-small", cpu="1"),
        kwok_node(
            "fail-gpu", taints=[{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]
        ),
    )
    # The same pod for the cluster's own kube-scheduler tells what upstream reports.
    pods.create(
        make_pod("hungry", scheduler, cpu="2"),
        make_pod("hungry-upstream", "default-scheduler", cpu="2"),
    )
    upstream = pods.wait_event("hungry-upstream", "FailedScheduling")["note"]
    assert upstream.startswith("0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had")
    event = pods.wait_event("hungry", "FailedScheduling")
    assert event["note"] == upstream
    assert event["type"] == "Warning"
    assert event["reportingController"] == scheduler
    assert event["action"] == "Scheduling"
    ours, theirs = pods.condition("hungry"), pods.condition("hungry-upstream")
    assert ours is not None
    assert theirs is not None
    untimed = ("lastTransitionTime", "lastProbeTime")
    assert {k: v for k, v in ours.items() if k not in untimed} == {
        k: v for k, v in theirs.items() if k not in untimed
    }
    assert (ours["status"], ours["reason"], ours["message"]) == ("False", "Unschedulable", upstream)

    # A change to a taint (the pod's TaintToleration rejection registered taint changes, as
    # upstream's does) retries the pod; the same failure again extends one event's series.
    def retried() -> dict[str, Any] | None:
        touched = {"key": "touched", "value": str(time.time()), "effect": "PreferNoSchedule"}
        gpu = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}
        pods.core.patch_node("fail-gpu", {"spec": {"taints": [gpu, touched]}})
        failures = [e for e in pods.events("hungry") if e["reason"] == "FailedScheduling"]
        # The first event names the pod as created; the condition patch then changes its
        # resourceVersion, so the series forms from the second event on (as upstream's).
        return next((e for e in failures if (e.get("series") or {}).get("count", 0) >= 2), None)

    repeated = wait_for("a FailedScheduling series", retried, timeout=30, interval=1.5)
    assert repeated["note"] == upstream
    # A node that fits is a cluster event that sends the pod back to the active queue.
    schedulable_nodes(kwok_node("fail-big", cpu="4"))
    assert pods.wait_placed("hungry") == {"hungry": "fail-big"}
    scheduled = pods.wait_event("hungry", "Scheduled")
    assert scheduled["note"] == f"Successfully assigned {pods.namespace}/hungry to fail-big"
    assert (scheduled["type"], scheduled["action"]) == ("Normal", "Binding")
    assert scheduled["reportingController"] == scheduler

    code, metrics = runtime.get("/metrics", as_admin=True)
    assert code == 200
    for result in ("scheduled", "unschedulable"):
        assert (
            f'scheduler_schedule_attempts_total{{profile="{scheduler}",result="{result}"}}'
            in metrics
        )
    assert 'scheduler_pending_pods{queue="unschedulable"} 0.0' in metrics
    for point, status in (("Filter", "Success"), ("PostFilter", "Unschedulable")):
        assert (
            "scheduler_framework_extension_point_duration_seconds_count{"
            f'extension_point="{point}",profile="{scheduler}",status="{status}"}}'
        ) in metrics
    bound = (
        "scheduler_framework_extension_point_duration_seconds_count{"
        f'extension_point="Bind",profile="{scheduler}",status="Success"}} 1.0'
    )
    assert bound in metrics
    log = runtime.log()
    key = f'pod="{pods.namespace}/hungry"'
    assert f'Unable to schedule pod {key} profile="{scheduler}" result="unschedulable"' in log
    assert f'Successfully bound pod to node {key} profile="{scheduler}" node="fail-big"' in log


def test_pod_for_an_unknown_scheduler_stays_pending_without_events(
    schedulable_nodes, pods: Pods, scheduler: str
) -> None:
    schedulable_nodes(kwok_node("other-1"))
    pods.create(make_pod("not-ours", "no-such-scheduler"), make_pod("ours", scheduler))
    pods.wait_placed("ours")
    settle(3)
    assert pods.nodes()["not-ours"] is None
    assert pods.events("not-ours") == []
    assert pods.condition("not-ours") is None


def test_gated_pod_waits_for_its_gates(schedulable_nodes, pods: Pods, scheduler: str) -> None:
    schedulable_nodes(kwok_node("gate-1"))
    pods.create(make_pod("gated", scheduler, schedulingGates=[{"name": "example.com/quota"}]))
    settle(3)
    assert pods.nodes()["gated"] is None
    assert pods.events("gated") == []
    pods.core.patch_namespaced_pod("gated", pods.namespace, {"spec": {"schedulingGates": None}})
    assert pods.wait_placed("gated") == {"gated": "gate-1"}


def test_topology_spread_overrides_resource_preference(
    schedulable_nodes, pods: Pods, scheduler: str
) -> None:
    schedulable_nodes(kwok_node("ts-a", zone="zone-a"), kwok_node("ts-b", zone="zone-b"))
    on_a = {"kubernetes.io/hostname": "ts-a"}
    pods.create(
        *(
            make_pod(f"old-{i}", scheduler, labels={"app": "ts"}, nodeSelector=on_a)
            for i in range(2)
        ),
        make_pod("busy", scheduler, cpu="20", nodeSelector={"kubernetes.io/hostname": "ts-b"}),
    )
    pods.wait_placed("old-0", "old-1", "busy")
    spread = [
        {
            "maxSkew": 1,
            "topologyKey": "topology.kubernetes.io/zone",
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "ts"}},
        }
    ]
    # ts-a is far less loaded, but zone-a already holds two of the pods: skew forces zone-b.
    pods.create(make_pod("new", scheduler, labels={"app": "ts"}, topologySpreadConstraints=spread))
    assert pods.wait_placed("new") == {"new": "ts-b"}


@pytest.fixture
def priority_classes(cluster: Cluster, namespace: str) -> Iterator[dict[str, str]]:
    """A low and a high PriorityClass, named after the test's namespace."""
    api = kubernetes.client.SchedulingV1Api(cluster.api)
    names = {"low": f"{namespace}-low", "high": f"{namespace}-high"}
    for level, value in (("low", 100), ("high", 1000)):
        api.create_priority_class({"metadata": {"name": names[level]}, "value": value})
    yield names
    for name in names.values():
        api.delete_priority_class(name)


def test_preemption_evicts_a_lower_priority_pod(
    schedulable_nodes, pods: Pods, scheduler: str, priority_classes: dict[str, str]
) -> None:
    schedulable_nodes(kwok_node("pre-1", cpu="2"))
    hold = "example.com/hold"  # keeps a victim terminating until the test lets it go
    low = [
        make_pod(f"low-{i}", scheduler, cpu="1", priorityClassName=priority_classes["low"])
        for i in range(2)
    ]
    for pod in low:
        pod["metadata"]["finalizers"] = [hold]
    pods.create(*low)
    pods.wait_placed("low-0", "low-1")
    pods.create(make_pod("high", scheduler, cpu="1", priorityClassName=priority_classes["high"]))
    failed = pods.wait_event("high", "FailedScheduling")
    assert failed["note"].startswith("0/1 nodes are available: 1 Insufficient cpu.")

    def victims() -> list[str]:
        return [n for n, p in pods.all().items() if p["metadata"].get("deletionTimestamp")]

    (victim,) = wait_for("one victim to be evicted", victims)
    (survivor,) = {"low-0", "low-1"} - {victim}
    high = pods.all()["high"]
    assert high["status"].get("nominatedNodeName") == "pre-1"
    assert not high["spec"].get("nodeName")  # the victim still holds its place
    disruption = pods.condition(victim, "DisruptionTarget")
    assert disruption is not None
    assert (disruption["status"], disruption["reason"]) == ("True", "PreemptionByScheduler")
    preempted = pods.wait_event(victim, "Preempted")
    assert preempted["note"] == f"Preempted by pod {high['metadata']['uid']} on node pre-1"
    assert preempted["reportingController"] == scheduler

    for name in (victim, survivor):
        pods.core.patch_namespaced_pod(name, pods.namespace, {"metadata": {"finalizers": None}})
    assert pods.wait_placed("high") == {"high": "pre-1"}
    assert pods.nodes()[survivor] == "pre-1"


@pytest.fixture
def local_volume(cluster: Cluster, namespace: str) -> Iterator[dict[str, str]]:
    """A WaitForFirstConsumer StorageClass and a local PersistentVolume on node vol-2."""
    storage = kubernetes.client.StorageV1Api(cluster.api)
    core = kubernetes.client.CoreV1Api(cluster.api)
    names = {"class": f"{namespace}-local", "volume": f"{namespace}-pv"}
    storage.create_storage_class(
        {
            "metadata": {"name": names["class"]},
            "provisioner": "kubernetes.io/no-provisioner",
            "volumeBindingMode": "WaitForFirstConsumer",
        }
    )
    on_vol_2 = {"key": "kubernetes.io/hostname", "operator": "In", "values": ["vol-2"]}
    core.create_persistent_volume(
        {
            "metadata": {"name": names["volume"]},
            "spec": {
                "capacity": {"storage": "1Gi"},
                "accessModes": ["ReadWriteOnce"],
                "storageClassName": names["class"],
                "local": {"path": "/mnt/data"},
                "nodeAffinity": {
                    "required": {"nodeSelectorTerms": [{"matchExpressions": [on_vol_2]}]}
                },
            },
        }
    )
    yield names
    core.delete_persistent_volume(names["volume"])
    storage.delete_storage_class(names["class"])


def test_wait_for_first_consumer_claim_binds_to_the_local_volume(
    schedulable_nodes, pods: Pods, scheduler: str, local_volume: dict[str, str]
) -> None:
    schedulable_nodes(kwok_node("vol-1"), kwok_node("vol-2"))
    pods.core.create_namespaced_persistent_volume_claim(
        pods.namespace,
        {
            "metadata": {"name": "data"},
            "spec": {
                "storageClassName": local_volume["class"],
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "1Gi"}},
            },
        },
    )
    pods.create(
        make_pod(
            "db",
            scheduler,
            volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}],
        )
    )
    assert pods.wait_placed("db") == {"db": "vol-2"}
    claim = pods.core.read_namespaced_persistent_volume_claim("data", pods.namespace)
    assert claim.status.phase == "Bound"
    assert claim.spec.volume_name == local_volume["volume"]


def test_two_profiles_in_one_runtime_pack_and_spread(
    schedulable_nodes, pods: Pods, start_runtime: Callable[..., RuntimeProcess]
) -> None:
    schedulable_nodes(
        kwok_node("prof-a", cpu="4", memory="4Gi"), kwok_node("prof-b", cpu="4", memory="4Gi")
    )
    spread, pack = unique_scheduler_name(), unique_scheduler_name()
    config = scheduler_config(spread)
    most_allocated = {
        "name": "NodeResourcesFit",
        "args": {
            "scoringStrategy": {
                "type": "MostAllocated",
                "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
            }
        },
    }
    config["profiles"].append(
        {**config["profiles"][0], "schedulerName": pack, "pluginConfig": [most_allocated]}
    )
    start_runtime(config)

    def place(name: str, scheduler: str) -> str:
        pods.create(make_pod(name, scheduler, cpu="1", memory="1Gi"))
        return pods.wait_placed(name)[name]

    packed = place("pack-0", pack)  # two empty nodes: either
    other = ({"prof-a", "prof-b"} - {packed}).pop()
    assert place("pack-1", pack) == packed  # MostAllocated joins the busier node
    assert place("spread-0", spread) == other  # LeastAllocated takes the emptier one
    assert place("pack-2", pack) == packed
    expected = {"pack-0": pack, "pack-1": pack, "pack-2": pack, "spread-0": spread}

    def reporters() -> dict[str, str]:
        events = pods.events()
        return {
            e["regarding"]["name"]: e["reportingController"]
            for e in events
            if e["reason"] == "Scheduled"
        }

    wait_for("each profile to report its own pods", lambda: reporters() == expected)
