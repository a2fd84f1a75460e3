"""The scheduling algorithm: feasible-node search as upstream (percentageOfNodesToScore,
round-robin start), PreFilter results, FitError messages and the random tie-break."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import numpy as np
import pytest

from scheduler_runtime.backend.nominator import Nominator
from scheduler_runtime.config import load_configuration
from scheduler_runtime.framework.algorithm import SchedulingAlgorithm, num_feasible_nodes_to_find
from scheduler_runtime.framework.interface import CycleState, Handle, Status
from scheduler_runtime.framework.podinfo import pod_info
from scheduler_runtime.framework.runtime import Framework
from scheduler_runtime.framework.snapshot import Snapshot
from scheduler_runtime.framework.types import (
    Diagnosis,
    FitError,
    NodeToStatus,
    NoNodesAvailableError,
    Rejection,
)

# The plugins of this core, without the volume, spreading, pod-affinity and preemption ones.
CORE_ONLY = [
    {"name": name}
    for name in (
        "VolumeRestrictions",
        "NodeVolumeLimits",
        "VolumeBinding",
        "VolumeZone",
        "PodTopologySpread",
        "InterPodAffinity",
        "DefaultPreemption",
    )
]


def framework(snapshot: Snapshot, seed: int = 0, **profile: Any) -> Framework:
    plugins = profile.pop("plugins", {})
    plugins.setdefault("multiPoint", {})["disabled"] = CORE_ONLY
    config = load_configuration(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [{"plugins": plugins, **profile}],
        }
    )
    return Framework(config.profiles[0], Handle(snapshot, rng=random.Random(seed)))


def node(name: str, cpu: str = "4", zone: str = "", **extra: Any) -> dict[str, Any]:
    labels = {"kubernetes.io/hostname": name}
    if zone:
        labels["topology.kubernetes.io/zone"] = zone
    return {
        "metadata": {"name": name, "labels": labels},
        "spec": extra,
        "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}},
    }


def pod(name: str = "p", cpu: str = "1", **spec: Any) -> Any:
    return pod_info(
        {
            "metadata": {"name": name, "namespace": "default"},
            "spec": {
                "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}],
                **spec,
            },
        }
    )


@pytest.mark.parametrize(
    ("percentage", "nodes", "expected"),
    [
        (0, 50, 50),
        (0, 99, 99),
        (0, 1000, 420),
        (0, 5000, 500),
        (0, 6000, 300),
        (0, 10000, 500),
        (10, 200, 100),
        (50, 1000, 500),
        (100, 300, 300),
    ],
)
def test_num_feasible_nodes_to_find(percentage: int, nodes: int, expected: int) -> None:
    assert num_feasible_nodes_to_find(percentage, nodes) == expected


def test_search_stops_after_enough_nodes_and_resumes_round_robin() -> None:
    snapshot = Snapshot()
    for index in range(150):
        snapshot.add_node(node(f"n{index:03}"))
    fwk = framework(snapshot, percentageOfNodesToScore=10)
    algorithm = SchedulingAlgorithm(snapshot, 0, random.Random(1))
    feasible, diagnosis = algorithm.find_nodes_that_fit(fwk, CycleState(), pod())
    assert len(feasible) == 100  # max(150 * 10%, 100)
    assert snapshot.names(feasible[:2]) == ["n000", "n001"]
    assert algorithm.next_start_node_index == 100
    feasible, _ = algorithm.find_nodes_that_fit(fwk, CycleState(), pod())
    assert snapshot.names(feasible[:1]) == ["n100"]
    assert snapshot.names(feasible[-1:]) == ["n049"]
    assert algorithm.next_start_node_index == 50
    assert len(diagnosis.node_to_status) == 0


def test_a_costly_filter_is_asked_about_no_more_nodes_than_needed() -> None:
    """A filter that costs much per node (DynamicResources') sees nodes in chunks of what is
    still needed; the nodes found, and where the search stops, stay as with one pass."""
    snapshot = Snapshot()
    for index in range(300):
        snapshot.add_node(node(f"n{index:03}", cpu="1" if index % 3 == 0 else "4"))
    found = {}
    for costly in (False, True):
        fwk = framework(snapshot, percentageOfNodesToScore=10)
        fit = fwk.plugins["NodeResourcesFit"]
        asked: list[int] = []
        original = fit.filter_nodes

        def counting(*args: Any, asked: list[int] = asked, original: Any = original) -> Any:
            asked.append(len(args[3]))
            return original(*args)

        fit.filter_nodes = counting
        fit.costly_filter = costly
        algorithm = SchedulingAlgorithm(snapshot, 0, random.Random(1))
        feasible, diagnosis = algorithm.find_nodes_that_fit(fwk, CycleState(), pod(cpu="2"))
        found[costly] = (
            snapshot.names(feasible),
            len(diagnosis.node_to_status),
            algorithm.next_start_node_index,
        )
        if costly:
            assert sum(asked) == 150  # up to the 100th node that fits (n149)
            assert len(asked) > 1
        else:
            assert asked == [300]
    assert found[True] == found[False]
    assert found[True][1:] == (50, 150)


def test_rejected_nodes_count_as_processed() -> None:
    snapshot = Snapshot()
    for index in range(120):
        snapshot.add_node(node(f"n{index:03}", cpu="1" if index < 30 else "4"))
    fwk = framework(snapshot, percentageOfNodesToScore=10)
    algorithm = SchedulingAlgorithm(snapshot, 0, random.Random(1))
    feasible, diagnosis = algorithm.find_nodes_that_fit(fwk, CycleState(), pod(cpu="2"))
    assert len(feasible) == 90  # all that fit: fewer than the 100 wanted
    assert len(diagnosis.node_to_status) == 30
    assert algorithm.next_start_node_index == 0  # (0 + 120) % 120


def test_fit_error_message_is_upstream_format() -> None:
    snapshot = Snapshot()
    snapshot.add_node(node("small-1", cpu="1"))
    snapshot.add_node(node("small-2", cpu="1"))
    taint = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}
    snapshot.add_node(node("tainted", taints=[taint]))
    snapshot.add_node(node("cordoned", unschedulable=True))
    fwk = framework(snapshot)
    algorithm = SchedulingAlgorithm(snapshot, 0, random.Random(1))
    with pytest.raises(FitError) as caught:
        algorithm.schedule_pod(fwk, CycleState(), pod(cpu="2"))
    assert str(caught.value) == (
        "0/4 nodes are available: 1 node(s) had untolerated taint(s), "
        "1 node(s) were unschedulable, 2 Insufficient cpu."
    )


def test_pre_filter_result_marks_other_nodes_absent() -> None:
    snapshot = Snapshot()
    for name in ("a", "b", "c"):
        snapshot.add_node(node(name, cpu="1"))
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["b"]}]}
                ]
            }
        }
    }
    algorithm = SchedulingAlgorithm(snapshot, 0, random.Random(1))
    with pytest.raises(FitError) as caught:
        algorithm.schedule_pod(framework(snapshot), CycleState(), pod(cpu="2", affinity=affinity))
    assert str(caught.value) == (
        "0/3 nodes are available: 1 Insufficient cpu, "
        "2 node(s) didn't satisfy plugin(s) [NodeAffinity]."
    )


def test_pre_filter_rejection_and_post_filter_messages() -> None:
    snapshot = Snapshot()
    snapshot.add_node(node("a"))
    diagnosis = Diagnosis(NodeToStatus(snapshot), pre_filter_msg="pod affinity terms conflict")
    diagnosis.post_filter_msg = "preemption: not eligible due to preemptionPolicy=Never."
    message = str(FitError(pod(), 5, diagnosis))
    assert message == (
        "0/5 nodes are available: pod affinity terms conflict. "
        "preemption: not eligible due to preemptionPolicy=Never."
    )


def test_reasons_are_counted_per_reason_and_sorted_as_strings() -> None:
    snapshot = Snapshot()
    for name in ("a", "b", "c"):
        snapshot.add_node(node(name))
    statuses = NodeToStatus(snapshot)
    slots = snapshot.order()
    mask = np.array([True, True, True])
    statuses.rejections.append(
        Rejection("X", slots, mask, [("Insufficient memory", mask), ("Insufficient cpu", mask)])
    )
    statuses.set("d", Status.unschedulable("Too many pods"))
    message = str(FitError(pod(), 12, Diagnosis(statuses)))
    assert (
        message
        == "0/12 nodes are available: 1 Too many pods, 3 Insufficient cpu, 3 Insufficient memory."
    )


def test_no_nodes() -> None:
    snapshot = Snapshot()
    algorithm = SchedulingAlgorithm(snapshot, 0, random.Random(1))
    with pytest.raises(NoNodesAvailableError, match="no nodes available to schedule pods"):
        algorithm.schedule_pod(framework(snapshot), CycleState(), pod())


def test_highest_score_wins() -> None:
    snapshot = Snapshot()
    snapshot.add_node(node("busy"))
    snapshot.add_node(node("idle"))
    snapshot.add_pod(pod("old", cpu="3", nodeName="busy"))
    algorithm = SchedulingAlgorithm(snapshot, 0, random.Random(1))
    result = algorithm.schedule_pod(framework(snapshot), CycleState(), pod())
    assert result.suggested_host == "idle"
    assert (result.evaluated_nodes, result.feasible_nodes) == (2, 2)


def test_ties_are_broken_uniformly_and_reproducibly() -> None:
    snapshot = Snapshot()
    for name in ("a", "b", "c"):
        snapshot.add_node(node(name))
    fwk = framework(snapshot)

    def picks(seed: int) -> list[str]:
        algorithm = SchedulingAlgorithm(snapshot, 0, random.Random(seed))
        return [algorithm.schedule_pod(fwk, CycleState(), pod()).suggested_host for _ in range(300)]

    first = picks(7)
    assert first == picks(7)
    counts = Counter(first)
    assert set(counts) == {"a", "b", "c"}
    assert all(70 <= count <= 130 for count in counts.values())


def test_weights_multiply_normalized_scores() -> None:
    snapshot = Snapshot()
    snapshot.add_node(node("soft-tainted", taints=[{"key": "k", "effect": "PreferNoSchedule"}]))
    snapshot.add_node(node("plain"))
    snapshot.add_pod(pod("old", cpu="2", nodeName="plain"))
    fwk = framework(snapshot)
    algorithm = SchedulingAlgorithm(snapshot, 0, random.Random(1))
    result = algorithm.schedule_pod(fwk, CycleState(), pod())
    placement = algorithm.last_placement
    assert placement is not None
    by_node = dict(zip(snapshot.names(placement.slots), placement.totals, strict=True))
    # TaintToleration (weight 3): 0 vs 100. Fit scores non-zero requests: cpu 75 vs 25,
    # memory (8Gi - 200Mi) -> 97 vs (8Gi - 400Mi) -> 95: (75+97)/2 = 86 vs (25+95)/2 = 60.
    # BalancedAllocation uses real requests (no memory) and scores the change the pod brings:
    # 50 + (50 + 87 - 100) / 2 = 68 on the empty node, 50 + (50 + 62 - 75) / 2 = 68 on the other.
    assert by_node == {"soft-tainted": 0 * 3 + 86 + 68, "plain": 100 * 3 + 60 + 68}
    assert result.suggested_host == "plain"


def test_pods_nominated_to_a_node_count_when_at_least_as_important() -> None:
    snapshot = Snapshot()
    snapshot.add_node(node("a", cpu="4"))
    snapshot.add_node(node("b", cpu="2"))
    nominator = Nominator()
    nominator.nominate(pod("preemptor", cpu="3", priority=10), "a")
    config = load_configuration(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [{"plugins": {"multiPoint": {"disabled": CORE_ONLY}}}],
        }
    )
    handle = Handle(snapshot, nominator=nominator)
    fwk = Framework(config.profiles[0], handle)
    algorithm = SchedulingAlgorithm(snapshot, 0, random.Random(1))
    feasible, diagnosis = algorithm.find_nodes_that_fit(fwk, CycleState(), pod(cpu="2", priority=5))
    assert snapshot.names(feasible) == ["b"]
    assert diagnosis.node_to_status.get("a").reasons == ("Insufficient cpu",)
    feasible, _ = algorithm.find_nodes_that_fit(fwk, CycleState(), pod(cpu="2", priority=50))
    assert sorted(snapshot.names(feasible)) == ["a", "b"]
