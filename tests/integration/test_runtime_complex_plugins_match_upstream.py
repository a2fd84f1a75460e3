"""InterPodAffinity, PodTopologySpread, VolumeBinding and DefaultPreemption on the real
cluster, side by side with the cluster's own kube-scheduler: each scenario is built twice,
once for the runtime and once for upstream (labels apart, so the two never see each other's
pods as matches), and the outcomes must be the same, FailedScheduling messages byte for byte."""

from __future__ import annotations

import contextlib
import re
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

UPSTREAM = "default-scheduler"
HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"


@pytest.fixture
def scheduler(start_runtime: Callable[..., RuntimeProcess]) -> str:
    name = unique_scheduler_name()
    start_runtime(scheduler_config(name))
    return name


def both(scheduler: str) -> dict[str, str]:
    """Scenario tag -> scheduler name."""
    return {"ours": scheduler, "up": UPSTREAM}


def on(node: str) -> dict[str, str]:
    return {HOST: node}


def term(labels: dict[str, str], key: str) -> dict[str, Any]:
    return {"labelSelector": {"matchLabels": labels}, "topologyKey": key}


def required(kind: str, *terms: dict[str, Any]) -> dict[str, Any]:
    return {kind: {"requiredDuringSchedulingIgnoredDuringExecution": list(terms)}}


def failure_notes(pods: Pods, names: dict[str, str]) -> dict[str, str]:
    """Each scheduler's FailedScheduling note, its own nodes' names made alike (1.37 names the
    node a preemption made room on: `pts-ours-b` for one is `pts-up-b` for the other)."""
    notes = {tag: pods.wait_event(name, "FailedScheduling")["note"] for tag, name in names.items()}
    return {tag: re.sub(rf"(on node \S+)-{tag}\b", r"\1-TAG", note) for tag, note in notes.items()}


def test_anti_affinity_failures_read_as_upstreams(
    schedulable_nodes, pods: Pods, scheduler: str
) -> None:
    schedulable_nodes(kwok_node("ipa-1", zone="ipa-x"), kwok_node("ipa-2", zone="ipa-y"))
    for tag, name in both(scheduler).items():
        guard = required("podAntiAffinity", term({"app": f"web-{tag}"}, HOST))
        pods.create(
            make_pod(
                f"guard-{tag}",
                name,
                labels={"app": f"guard-{tag}"},
                affinity=guard,
                nodeSelector=on("ipa-1"),
            ),
            make_pod(f"db-{tag}", name, labels={"app": f"db-{tag}"}, nodeSelector=on("ipa-2")),
        )
    pods.wait_placed("guard-ours", "db-ours", "guard-up", "db-up")
    for tag, name in both(scheduler).items():
        apart = required("podAntiAffinity", term({"app": f"db-{tag}"}, HOST))
        near = required("podAffinity", term({"app": f"db-{tag}"}, ZONE))
        pods.create(
            make_pod(f"web-{tag}", name, labels={"app": f"web-{tag}"}, affinity=apart),
            make_pod(f"near-{tag}", name, labels={"app": f"near-{tag}"}, affinity=near),
            make_pod(
                f"lonely-{tag}",
                name,
                affinity=required("podAffinity", term({"app": f"nobody-{tag}"}, ZONE)),
            ),
        )
    notes = failure_notes(pods, {"ours": "web-ours", "up": "web-up"})
    assert notes["ours"] == notes["up"]
    assert notes["ours"].startswith(
        "0/2 nodes are available: 1 node(s) didn't match pod anti-affinity rules, "
        "1 node(s) didn't satisfy existing pods anti-affinity rules."
    )
    lonely = failure_notes(pods, {"ours": "lonely-ours", "up": "lonely-up"})
    assert lonely["ours"] == lonely["up"]
    assert "2 node(s) didn't match pod affinity rules" in lonely["ours"]
    assert pods.wait_placed("near-ours", "near-up") == {"near-ours": "ipa-2", "near-up": "ipa-2"}


def test_topology_spread_failures_read_as_upstreams(
    schedulable_nodes, pods: Pods, scheduler: str
) -> None:
    tainted = [{"key": "pts", "value": "no", "effect": "NoSchedule"}]
    schedulable_nodes(
        kwok_node("pts-x", zone="pts-x"),
        kwok_node("pts-y", zone="pts-y", taints=tainted),
        kwok_node("pts-bare"),
    )
    for tag, name in both(scheduler).items():
        pods.create(
            *(
                make_pod(
                    f"old-{tag}-{i}", name, labels={"app": f"s-{tag}"}, nodeSelector=on("pts-x")
                )
                for i in range(2)
            )
        )
    pods.wait_placed("old-ours-0", "old-ours-1", "old-up-0", "old-up-1")
    for tag, name in both(scheduler).items():
        spread = [
            {
                "maxSkew": 1,
                "topologyKey": ZONE,
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": f"s-{tag}"}},
            }
        ]
        pods.create(
            make_pod(
                f"new-{tag}", name, labels={"app": f"s-{tag}"}, topologySpreadConstraints=spread
            )
        )
    notes = failure_notes(pods, {"ours": "new-ours", "up": "new-up"})
    assert notes["ours"] == notes["up"]
    assert (
        "1 node(s) didn't match pod topology spread constraints (missing required label)"
        in (notes["ours"])
    )


BoundClaims = Callable[..., str]


@pytest.fixture
def bound_claims(cluster: Cluster, namespace: str) -> Iterator[BoundClaims]:
    """Makes a PersistentVolume from a volume source (with node affinity, labels, access mode
    as given) and a claim bound to it, waits until the controller manager has bound them, and
    deletes the volumes afterwards."""
    core = kubernetes.client.CoreV1Api(cluster.api)
    made: list[str] = []

    def make(
        name: str,
        source: dict[str, Any],
        *,
        access_mode: str = "ReadWriteOnce",
        labels: dict[str, str] | None = None,
    ) -> str:
        volume = f"{namespace}-{name}"
        core.create_persistent_volume(
            {
                "metadata": {"name": volume, "labels": labels or {}},
                "spec": {
                    "capacity": {"storage": "1Gi"},
                    "accessModes": [access_mode],
                    "storageClassName": "",
                    "claimRef": {"namespace": namespace, "name": name},
                    **source,
                },
            }
        )
        made.append(volume)
        core.create_namespaced_persistent_volume_claim(
            namespace,
            {
                "metadata": {"name": name},
                "spec": {
                    "accessModes": [access_mode],
                    "storageClassName": "",
                    "volumeName": volume,
                    "resources": {"requests": {"storage": "1Gi"}},
                },
            },
        )
        wait_for(
            f"claim {name} to be bound",
            lambda: (
                core.read_namespaced_persistent_volume_claim(name, namespace).status.phase
                == "Bound"
            ),
        )
        return name

    yield make
    for volume in made:
        core.delete_persistent_volume(volume)


def local_volume(*terms: dict[str, Any]) -> dict[str, Any]:
    return {
        "local": {"path": "/mnt/data"},
        "nodeAffinity": {"required": {"nodeSelectorTerms": list(terms)}},
    }


def claim_volume(claim: str) -> dict[str, Any]:
    return {"name": "data", "persistentVolumeClaim": {"claimName": claim}}


def test_bound_volumes_node_affinity_as_upstream(
    schedulable_nodes, pods: Pods, scheduler: str, bound_claims: BoundClaims
) -> None:
    schedulable_nodes(kwok_node("vb-1", zone="vb-a"), kwok_node("vb-2", zone="vb-b"))
    local = bound_claims(
        "local",
        local_volume({"matchExpressions": [{"key": HOST, "operator": "In", "values": ["vb-2"]}]}),
    )
    elsewhere = bound_claims(
        "elsewhere",
        local_volume(
            {"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["vb-nowhere"]}]}
        ),
    )
    for tag, name in both(scheduler).items():
        pods.create(
            make_pod(f"local-{tag}", name, volumes=[claim_volume(local)]),
            make_pod(f"stuck-{tag}", name, volumes=[claim_volume(elsewhere)]),
        )
    assert pods.wait_placed("local-ours", "local-up") == {"local-ours": "vb-2", "local-up": "vb-2"}
    notes = failure_notes(pods, {"ours": "stuck-ours", "up": "stuck-up"})
    assert notes["ours"] == notes["up"]
    assert "node(s) didn't match PersistentVolume's node affinity" in notes["ours"]


@pytest.fixture
def priority_classes(cluster: Cluster, namespace: str) -> Iterator[dict[str, str]]:
    api = kubernetes.client.SchedulingV1Api(cluster.api)
    names = {"low": f"{namespace}-low", "mid": f"{namespace}-mid", "high": f"{namespace}-high"}
    for level, value in (("low", 100), ("mid", 500), ("high", 1000)):
        api.create_priority_class({"metadata": {"name": names[level]}, "value": value})
    yield names
    for name in names.values():
        api.delete_priority_class(name)


def test_preemption_spares_disruption_budgets_as_upstream(
    cluster: Cluster,
    schedulable_nodes,
    pods: Pods,
    scheduler: str,
    priority_classes: dict[str, str],
) -> None:
    """Two nodes, one lower-priority victim each; the lower one is covered by a budget that
    allows no disruption, so both schedulers evict the other one."""
    policy = kubernetes.client.PolicyV1Api(cluster.api)
    for tag in ("ours", "up"):
        policy.create_namespaced_pod_disruption_budget(
            pods.namespace,
            {
                "metadata": {"name": f"keep-{tag}"},
                "spec": {"maxUnavailable": 0, "selector": {"matchLabels": {"keep": tag}}},
            },
        )
    for tag, name in both(scheduler).items():
        schedulable_nodes(kwok_node(f"pdb-{tag}-1", cpu="2"), kwok_node(f"pdb-{tag}-2", cpu="2"))
        guarded = {"kubernetes.io/hostname": f"pdb-{tag}-1"}
        free = {"kubernetes.io/hostname": f"pdb-{tag}-2"}
        pods.create(
            make_pod(
                f"kept-{tag}",
                name,
                cpu="2",
                labels={"keep": tag},
                nodeSelector=guarded,
                priorityClassName=priority_classes["low"],
            ),
            make_pod(
                f"evictable-{tag}",
                name,
                cpu="2",
                nodeSelector=free,
                priorityClassName=priority_classes["mid"],
            ),
        )
    pods.wait_placed("kept-ours", "evictable-ours", "kept-up", "evictable-up")
    for tag, name in both(scheduler).items():
        either = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {
                                    "key": HOST,
                                    "operator": "In",
                                    "values": [f"pdb-{tag}-1", f"pdb-{tag}-2"],
                                }
                            ]
                        }
                    ]
                }
            }
        }
        pods.create(
            make_pod(
                f"urgent-{tag}",
                name,
                cpu="2",
                affinity=either,
                priorityClassName=priority_classes["high"],
            )
        )
    placed = pods.wait_placed("urgent-ours", "urgent-up", timeout=120)
    assert placed == {"urgent-ours": "pdb-ours-2", "urgent-up": "pdb-up-2"}
    remaining = pods.nodes()
    assert remaining["kept-ours"] == "pdb-ours-1"
    assert remaining["kept-up"] == "pdb-up-1"
    assert "evictable-ours" not in remaining
    assert "evictable-up" not in remaining


def test_missing_claim_reads_as_upstream(schedulable_nodes, pods: Pods, scheduler: str) -> None:
    schedulable_nodes(kwok_node("mc-1"))
    for tag, name in both(scheduler).items():
        pods.create(make_pod(f"orphan-{tag}", name, volumes=[claim_volume("no-such-claim")]))
    notes = failure_notes(pods, {"ours": "orphan-ours", "up": "orphan-up"})
    assert notes["ours"] == notes["up"]
    assert 'persistentvolumeclaim "no-such-claim" not found' in notes["ours"]


@pytest.fixture
def immediate_class(cluster: Cluster, namespace: str) -> Iterator[str]:
    """A StorageClass binding immediately through a provisioner nobody runs."""
    storage = kubernetes.client.StorageV1Api(cluster.api)
    name = f"{namespace}-immediate"
    storage.create_storage_class(
        {
            "metadata": {"name": name},
            "provisioner": "example.com/nobody",
            "volumeBindingMode": "Immediate",
        }
    )
    yield name
    storage.delete_storage_class(name)


def test_unbound_immediate_claim_reads_as_upstream(
    schedulable_nodes, pods: Pods, scheduler: str, immediate_class: str
) -> None:
    schedulable_nodes(kwok_node("ic-1"))
    pods.core.create_namespaced_persistent_volume_claim(
        pods.namespace,
        {
            "metadata": {"name": "pending"},
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "storageClassName": immediate_class,
                "resources": {"requests": {"storage": "1Gi"}},
            },
        },
    )
    for tag, name in both(scheduler).items():
        pods.create(make_pod(f"waiting-{tag}", name, volumes=[claim_volume("pending")]))
    notes = failure_notes(pods, {"ours": "waiting-ours", "up": "waiting-up"})
    assert notes["ours"] == notes["up"]
    assert "pod has unbound immediate PersistentVolumeClaims" in notes["ours"]


def test_preemption_for_anti_affinity_as_upstream(
    schedulable_nodes, pods: Pods, scheduler: str, priority_classes: dict[str, str]
) -> None:
    """A pod whose anti-affinity only lower-priority pods violate evicts them, on both
    schedulers (the dry run removes them through InterPodAffinity's remove_pod)."""
    for tag, name in both(scheduler).items():
        schedulable_nodes(kwok_node(f"paa-{tag}"))
        pods.create(
            make_pod(
                f"squatter-{tag}",
                name,
                labels={"app": f"sq-{tag}"},
                nodeSelector=on(f"paa-{tag}"),
                priorityClassName=priority_classes["low"],
            )
        )
    pods.wait_placed("squatter-ours", "squatter-up")
    for tag, name in both(scheduler).items():
        apart = required("podAntiAffinity", term({"app": f"sq-{tag}"}, HOST))
        pods.create(
            make_pod(
                f"owner-{tag}",
                name,
                affinity=apart,
                nodeSelector=on(f"paa-{tag}"),
                priorityClassName=priority_classes["high"],
            )
        )
    notes = failure_notes(pods, {"ours": "owner-ours", "up": "owner-up"})
    assert notes["ours"] == notes["up"]
    assert pods.wait_placed("owner-ours", "owner-up", timeout=120) == {
        "owner-ours": "paa-ours",
        "owner-up": "paa-up",
    }
    remaining = pods.nodes()
    assert "squatter-ours" not in remaining
    assert "squatter-up" not in remaining


def test_preemption_for_topology_spread_as_upstream(
    schedulable_nodes, pods: Pods, scheduler: str, priority_classes: dict[str, str]
) -> None:
    """Zone a is full of a pod nobody may evict; zone b holds two lower-priority pods of the
    spread group, so a new one there skews by 3: both schedulers evict both (putting one
    back would still skew by 2) and place the new pod in zone b."""
    for tag, name in both(scheduler).items():
        group = {"set": tag}
        schedulable_nodes(
            kwok_node(f"pts-{tag}-a", cpu="1", zone=f"pts-{tag}-a", labels=group),
            kwok_node(f"pts-{tag}-b", zone=f"pts-{tag}-b", labels=group),
        )
        pods.create(
            make_pod(
                f"filler-{tag}",
                name,
                cpu="1",
                nodeSelector=on(f"pts-{tag}-a"),
                priorityClassName=priority_classes["high"],
            ),
            *(
                make_pod(
                    f"old-{tag}-{i}",
                    name,
                    labels={"app": f"sp-{tag}"},
                    nodeSelector=on(f"pts-{tag}-b"),
                    priorityClassName=priority_classes["low"],
                )
                for i in range(2)
            ),
        )
    pods.wait_placed("filler-ours", "old-ours-0", "old-ours-1", "filler-up", "old-up-0", "old-up-1")
    for tag, name in both(scheduler).items():
        spread = [
            {
                "maxSkew": 1,
                "topologyKey": ZONE,
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": f"sp-{tag}"}},
            }
        ]
        pods.create(
            make_pod(
                f"new-{tag}",
                name,
                cpu="500m",
                labels={"app": f"sp-{tag}"},
                nodeSelector={"set": tag},
                topologySpreadConstraints=spread,
                priorityClassName=priority_classes["mid"],
            )
        )
    notes = failure_notes(pods, {"ours": "new-ours", "up": "new-up"})
    assert notes["ours"] == notes["up"]
    assert pods.wait_placed("new-ours", "new-up", timeout=120) == {
        "new-ours": "pts-ours-b",
        "new-up": "pts-up-b",
    }
    remaining = set(pods.nodes())
    assert not remaining & {"old-ours-0", "old-ours-1", "old-up-0", "old-up-1"}


@pytest.fixture
def labelled_namespace(cluster: Cluster, namespace: str) -> Iterator[str]:
    """A second namespace, labelled team=<namespace>, deleted after the test."""
    core = kubernetes.client.CoreV1Api(cluster.api)
    name = f"{namespace}-other"
    core.create_namespace({"metadata": {"name": name, "labels": {"team": namespace}}})
    yield name
    core.delete_namespace(name)


def test_namespace_selector_as_upstream(
    cluster: Cluster,
    schedulable_nodes,
    pods: Pods,
    scheduler: str,
    labelled_namespace: str,
) -> None:
    """Affinity to pods of another namespace, chosen by its labels, and anti-affinity that
    an empty namespaceSelector extends to every namespace."""
    schedulable_nodes(kwok_node("ns-1", zone="ns-x"), kwok_node("ns-2", zone="ns-y"))
    other = Pods(cluster, labelled_namespace)
    for tag, name in both(scheduler).items():
        other.create(
            make_pod(f"db-{tag}", name, labels={"app": f"db-{tag}"}, nodeSelector=on("ns-2"))
        )
    other.wait_placed("db-ours", "db-up")
    team = {"matchLabels": {"team": pods.namespace}}
    for tag, name in both(scheduler).items():
        near = required(
            "podAffinity", term({"app": f"db-{tag}"}, ZONE) | {"namespaceSelector": team}
        )
        apart = required(
            "podAntiAffinity", term({"app": f"db-{tag}"}, HOST) | {"namespaceSelector": {}}
        )
        local_only = required("podAffinity", term({"app": f"db-{tag}"}, ZONE))
        pods.create(
            make_pod(f"near-{tag}", name, affinity=near),
            make_pod(f"apart-{tag}", name, affinity=apart),
            make_pod(f"local-{tag}", name, affinity=local_only),
        )
    assert pods.wait_placed("near-ours", "near-up", "apart-ours", "apart-up") == {
        "near-ours": "ns-2",
        "near-up": "ns-2",
        "apart-ours": "ns-1",
        "apart-up": "ns-1",
    }
    notes = failure_notes(pods, {"ours": "local-ours", "up": "local-up"})
    assert notes["ours"] == notes["up"]


@pytest.fixture
def local_volumes(cluster: Cluster, namespace: str) -> Iterator[Callable[[str, str, str], str]]:
    """A WaitForFirstConsumer class without provisioner; makes local PVs of that class."""
    core = kubernetes.client.CoreV1Api(cluster.api)
    storage = kubernetes.client.StorageV1Api(cluster.api)
    storage_class = f"{namespace}-local"
    storage.create_storage_class(
        {
            "metadata": {"name": storage_class},
            "provisioner": "kubernetes.io/no-provisioner",
            "volumeBindingMode": "WaitForFirstConsumer",
        }
    )
    made: list[str] = []

    def make(name: str, size: str, node: str) -> str:
        volume = f"{namespace}-{name}"
        core.create_persistent_volume(
            {
                "metadata": {"name": volume},
                "spec": {
                    "capacity": {"storage": size},
                    "accessModes": ["ReadWriteOnce"],
                    "storageClassName": storage_class,
                    "local": {"path": "/mnt/data"},
                    "nodeAffinity": {
                        "required": {
                            "nodeSelectorTerms": [
                                {
                                    "matchExpressions": [
                                        {"key": HOST, "operator": "In", "values": [node]}
                                    ]
                                }
                            ]
                        }
                    },
                },
            }
        )
        made.append(volume)
        return storage_class

    yield make
    for volume in made:
        core.delete_persistent_volume(volume)
    storage.delete_storage_class(storage_class)


def test_wait_for_first_consumer_picks_the_volume_upstream_picks(
    schedulable_nodes, pods: Pods, scheduler: str, local_volumes: Callable[[str, str, str], str]
) -> None:
    """Each scheduler's node holds a 5Gi and a 2Gi volume: a 1Gi claim gets the smaller one,
    a second 1Gi claim the other, a third finds none, as upstream's binder decides."""
    core = pods.core
    for tag in both(scheduler):
        schedulable_nodes(kwok_node(f"wf-{tag}"))
        storage_class = local_volumes(f"big-{tag}", "5Gi", f"wf-{tag}")
        local_volumes(f"small-{tag}", "2Gi", f"wf-{tag}")
        for index in range(3):
            core.create_namespaced_persistent_volume_claim(
                pods.namespace,
                {
                    "metadata": {"name": f"c{index}-{tag}"},
                    "spec": {
                        "accessModes": ["ReadWriteOnce"],
                        "storageClassName": storage_class,
                        "resources": {"requests": {"storage": "1Gi"}},
                    },
                },
            )
    for index in range(3):
        for tag, name in both(scheduler).items():
            pods.create(
                make_pod(
                    f"p{index}-{tag}",
                    name,
                    nodeSelector=on(f"wf-{tag}"),
                    volumes=[claim_volume(f"c{index}-{tag}")],
                )
            )
        if index < 2:
            pods.wait_placed(f"p{index}-ours", f"p{index}-up", timeout=120)

    def volume_of(claim: str) -> str:
        return str(
            wait_for(
                f"claim {claim} to be bound",
                lambda: (
                    core.read_namespaced_persistent_volume_claim(
                        claim, pods.namespace
                    ).spec.volume_name
                ),
            )
        )

    for tag in ("ours", "up"):
        assert volume_of(f"c0-{tag}") == f"{pods.namespace}-small-{tag}"
        assert volume_of(f"c1-{tag}") == f"{pods.namespace}-big-{tag}"
    notes = failure_notes(pods, {"ours": "p2-ours", "up": "p2-up"})
    assert notes["ours"] == notes["up"]
    assert "didn't find available persistent volumes to bind" in notes["ours"]


def test_read_write_once_pod_claim_as_upstream(
    schedulable_nodes, pods: Pods, scheduler: str, bound_claims: BoundClaims
) -> None:
    """A ReadWriteOncePod claim in use keeps a second pod out, with upstream's message."""
    schedulable_nodes(kwok_node("rwop-1"), kwok_node("rwop-2"))
    for tag, name in both(scheduler).items():
        claim = bound_claims(
            f"solo-{tag}", {"hostPath": {"path": "/mnt/solo"}}, access_mode="ReadWriteOncePod"
        )
        pods.create(make_pod(f"first-{tag}", name, volumes=[claim_volume(claim)]))
    pods.wait_placed("first-ours", "first-up")
    for tag, name in both(scheduler).items():
        pods.create(make_pod(f"second-{tag}", name, volumes=[claim_volume(f"solo-{tag}")]))
    notes = failure_notes(pods, {"ours": "second-ours", "up": "second-up"})
    assert notes["ours"] == notes["up"]
    assert "ReadWriteOncePod access mode already in-use by another pod" in notes["ours"]


def test_disk_conflict_as_upstream(schedulable_nodes, pods: Pods, scheduler: str) -> None:
    """Two pods mounting the same iSCSI disk read-write cannot share a node."""
    schedulable_nodes(kwok_node("disk-1"))
    for tag, name in both(scheduler).items():
        disk = {
            "name": "disk",
            "iscsi": {
                "targetPortal": "10.0.0.1:3260",
                "iqn": f"iqn.2024-01.example:{tag}",
                "lun": 0,
            },
        }
        pods.create(make_pod(f"holder-{tag}", name, volumes=[disk]))
        pods.wait_placed(f"holder-{tag}")
        pods.create(make_pod(f"rival-{tag}", name, volumes=[disk]))
    notes = failure_notes(pods, {"ours": "rival-ours", "up": "rival-up"})
    assert notes["ours"] == notes["up"]
    assert "node(s) had no available disk" in notes["ours"]


def test_csi_attach_limits_as_upstream(
    cluster: Cluster, schedulable_nodes, pods: Pods, scheduler: str, bound_claims: BoundClaims
) -> None:
    """A node whose CSINode allows one volume of a driver takes one pod with such a volume."""
    storage = kubernetes.client.StorageV1Api(cluster.api)
    driver = "csi.example.com"
    try:
        for tag in both(scheduler):
            node = f"lim-{tag}"
            schedulable_nodes(kwok_node(node))
            storage.create_csi_node(
                {
                    "metadata": {"name": node},
                    "spec": {
                        "drivers": [{"name": driver, "nodeID": node, "allocatable": {"count": 1}}]
                    },
                }
            )
            for index in range(2):
                claim = f"vol{index}-{tag}"
                bound_claims(claim, {"csi": {"driver": driver, "volumeHandle": claim}})
        for tag, name in both(scheduler).items():
            pods.create(
                make_pod(
                    f"one-{tag}",
                    name,
                    nodeSelector=on(f"lim-{tag}"),
                    volumes=[claim_volume(f"vol0-{tag}")],
                )
            )
            pods.wait_placed(f"one-{tag}")
            pods.create(
                make_pod(
                    f"two-{tag}",
                    name,
                    nodeSelector=on(f"lim-{tag}"),
                    volumes=[claim_volume(f"vol1-{tag}")],
                )
            )
        notes = failure_notes(pods, {"ours": "two-ours", "up": "two-up"})
        assert notes["ours"] == notes["up"]
        assert "exceed max volume count" in notes["ours"]
    finally:
        for tag in ("ours", "up"):
            with contextlib.suppress(kubernetes.client.ApiException):
                storage.delete_csi_node(f"lim-{tag}")


def test_volume_zone_as_upstream(
    schedulable_nodes, pods: Pods, scheduler: str, bound_claims: BoundClaims
) -> None:
    """Volumes labelled with a zone keep their pods in it; a zone without nodes leaves the
    pod pending with upstream's message."""
    schedulable_nodes(kwok_node("vz-1", zone="vz-a"), kwok_node("vz-2", zone="vz-b"))
    for claim, zone in (("in-b", "vz-b"), ("in-c", "vz-c")):
        bound_claims(claim, {"hostPath": {"path": "/mnt/zonal"}}, labels={ZONE: zone})
    for tag, name in both(scheduler).items():
        pods.create(
            make_pod(f"zonal-{tag}", name, volumes=[claim_volume("in-b")]),
            make_pod(f"lost-{tag}", name, volumes=[claim_volume("in-c")]),
        )
    assert pods.wait_placed("zonal-ours", "zonal-up") == {
        "zonal-ours": "vz-2",
        "zonal-up": "vz-2",
    }
    notes = failure_notes(pods, {"ours": "lost-ours", "up": "lost-up"})
    assert notes["ours"] == notes["up"]
    assert "node(s) had no available volume zone" in notes["ours"]


def test_csi_driver_missing_from_the_node_as_upstream(
    cluster: Cluster,
    namespace: str,
    schedulable_nodes,
    pods: Pods,
    scheduler: str,
    bound_claims: BoundClaims,
) -> None:
    """VolumeLimitScaling (on from 1.37): a CSIDriver with preventPodSchedulingIfMissing keeps
    pods with its volumes off nodes whose CSINode lacks the driver, here the idler of two
    nodes; where the gate is off (1.36) the API server drops the field, and the idler node
    wins. Whatever the cluster's release, the runtime picks the node its kube-scheduler
    picks."""
    storage = kubernetes.client.StorageV1Api(cluster.api)
    driver = f"{namespace}.prevent.example.com"
    storage.create_csi_driver(
        {"metadata": {"name": driver}, "spec": {"preventPodSchedulingIfMissing": True}}
    )
    try:
        for tag, name in both(scheduler).items():
            with_driver, without = f"vls-in-{tag}", f"vls-out-{tag}"
            schedulable_nodes(
                kwok_node(with_driver, labels={"vls": tag}),
                kwok_node(without, labels={"vls": tag}),
            )
            storage.create_csi_node(
                {
                    "metadata": {"name": with_driver},
                    "spec": {"drivers": [{"name": driver, "nodeID": with_driver}]},
                }
            )
            # A quarter of the node with the driver taken: NodeResourcesFit prefers the other.
            pods.create(make_pod(f"busy-{tag}", name, cpu="8", memory="64Gi", nodeName=with_driver))
            claim = bound_claims(f"vls-{tag}", {"csi": {"driver": driver, "volumeHandle": tag}})
            pods.wait_placed(f"busy-{tag}")
            pods.create(
                make_pod(
                    f"vls-{tag}", name, nodeSelector={"vls": tag}, volumes=[claim_volume(claim)]
                )
            )
        placed = pods.wait_placed("vls-ours", "vls-up")
        assert placed["vls-ours"].removesuffix("-ours") == placed["vls-up"].removesuffix("-up")
    finally:
        for tag in both(scheduler):
            with contextlib.suppress(kubernetes.client.ApiException):
                storage.delete_csi_node(f"vls-in-{tag}")
        with contextlib.suppress(kubernetes.client.ApiException):
            storage.delete_csi_driver(driver)


def test_storage_capacity_scoring_as_upstream(
    cluster: Cluster,
    namespace: str,
    schedulable_nodes,
    pods: Pods,
    scheduler: str,
) -> None:
    """StorageCapacityScoring (on from 1.37): a claim to provision goes where the
    CSIStorageCapacity leaves the most room (5Gi of 100Gi beats 5Gi of 10Gi), outweighing a
    busier node; with the gate off (1.36) the volumes do not score and the idler node wins.
    The node each scheduler picks is the one it writes as the claim's selected node (nobody
    provisions, so the pods are never bound)."""
    storage = kubernetes.client.StorageV1Api(cluster.api)
    core = kubernetes.client.CoreV1Api(cluster.api)
    driver = f"{namespace}.capacity.example.com"
    storage_class = f"{namespace}-tracked"
    storage.create_csi_driver({"metadata": {"name": driver}, "spec": {"storageCapacity": True}})
    storage.create_storage_class(
        {
            "metadata": {"name": storage_class},
            "provisioner": driver,
            "volumeBindingMode": "WaitForFirstConsumer",
        }
    )
    try:
        for tag, name in both(scheduler).items():
            small, big = f"scs-small-{tag}", f"scs-big-{tag}"
            schedulable_nodes(
                kwok_node(small, labels={"scs": tag}), kwok_node(big, labels={"scs": tag})
            )
            for node, size in ((small, "10Gi"), (big, "100Gi")):
                storage.create_namespaced_csi_storage_capacity(
                    namespace,
                    {
                        "metadata": {"name": node},
                        "storageClassName": storage_class,
                        "nodeTopology": {"matchLabels": {HOST: node}},
                        "capacity": size,
                    },
                )
            # A quarter of the big node taken: NodeResourcesFit prefers the small one by 25.
            pods.create(make_pod(f"busy-{tag}", name, cpu="8", memory="64Gi", nodeName=big))
            core.create_namespaced_persistent_volume_claim(
                namespace,
                {
                    "metadata": {"name": f"data-{tag}"},
                    "spec": {
                        "accessModes": ["ReadWriteOnce"],
                        "storageClassName": storage_class,
                        "resources": {"requests": {"storage": "5Gi"}},
                    },
                },
            )
        pods.wait_placed("busy-ours", "busy-up")
        for tag, name in both(scheduler).items():
            pods.create(
                make_pod(
                    f"scs-{tag}",
                    name,
                    nodeSelector={"scs": tag},
                    volumes=[claim_volume(f"data-{tag}")],
                )
            )

        def selected() -> dict[str, str] | None:
            chosen = {}
            for tag in both(scheduler):
                claim = core.read_namespaced_persistent_volume_claim(f"data-{tag}", namespace)
                node = (claim.metadata.annotations or {}).get("volume.kubernetes.io/selected-node")
                if not node:
                    return None
                chosen[tag] = node.removesuffix(f"-{tag}")
            return chosen

        chosen = wait_for("each claim's selected node", selected)
        assert chosen["ours"] == chosen["up"]
    finally:
        for tag in both(scheduler):
            with contextlib.suppress(kubernetes.client.ApiException):
                core.delete_namespaced_pod(f"scs-{tag}", namespace, grace_period_seconds=0)
        with contextlib.suppress(kubernetes.client.ApiException):
            storage.delete_storage_class(storage_class)
        with contextlib.suppress(kubernetes.client.ApiException):
            storage.delete_csi_driver(driver)
