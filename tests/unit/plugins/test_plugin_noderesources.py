"""NodeResourcesFit and BalancedAllocation against hand-computed upstream results."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from plugin_support import handle_of, make_node, make_pod, run_filter, run_score, snapshot_of

from scheduler_runtime.config.args import (
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
)
from scheduler_runtime.framework.features import Features
from scheduler_runtime.framework.interface import Code
from scheduler_runtime.framework.podinfo import pod_info
from scheduler_runtime.framework.snapshot import Snapshot
from scheduler_runtime.plugins.noderesources import BalancedAllocation, Fit

MI = 1024 * 1024


def fit(snapshot: Snapshot, **args: object) -> Fit:
    return Fit(NodeResourcesFitArgs.model_validate(args), handle_of(snapshot))


def test_fit_filter_reports_every_insufficient_resource() -> None:
    snapshot = snapshot_of(
        make_node("n1", cpu="2", memory="1Gi"),
        pods=[make_pod("old", requests=[{"cpu": "1500m", "memory": "512Mi"}], node_name="n1")],
    )
    statuses = run_filter(
        fit(snapshot), snapshot, make_pod(requests=[{"cpu": "1", "memory": "600Mi"}])
    )
    assert statuses["n1"].reasons == ("Insufficient cpu", "Insufficient memory")
    assert statuses["n1"].code == Code.UNSCHEDULABLE


def test_fit_request_beyond_allocatable_is_unresolvable() -> None:
    snapshot = snapshot_of(make_node("n1", cpu="2"))
    statuses = run_filter(fit(snapshot), snapshot, make_pod(requests=[{"cpu": "2001m"}]))
    assert statuses["n1"].reasons == ("Insufficient cpu",)
    assert statuses["n1"].code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def test_fit_counts_pods() -> None:
    snapshot = snapshot_of(
        make_node("full", pods="1"),
        make_node("free", pods="2"),
        pods=[make_pod("old", node_name="full"), make_pod("old2", node_name="free")],
    )
    statuses = run_filter(fit(snapshot), snapshot, make_pod())
    assert statuses["full"].reasons == ("Too many pods",)
    assert statuses["free"].is_success


def test_fit_init_containers_and_overhead() -> None:
    # Requests are max(sum(containers), max(init)) + overhead: max(1, 3) + 0.5 = 3.5 cpu.
    pod = make_pod(
        requests=[{"cpu": "500m"}, {"cpu": "500m"}],
        init_requests=[{"cpu": "3"}],
        overhead={"cpu": "500m"},
    )
    assert pod.requests["cpu"] == 3500
    snapshot = snapshot_of(make_node("n3", cpu="3"), make_node("n4", cpu="4"))
    statuses = run_filter(fit(snapshot), snapshot, pod)
    assert statuses["n3"].reasons == ("Insufficient cpu",)
    assert statuses["n4"].is_success


def test_fit_sidecars_add_up() -> None:
    pod = make_pod(requests=[{"cpu": "1"}], init_requests=[{"cpu": "2"}])
    pod.pod["spec"]["initContainers"][0]["restartPolicy"] = "Always"
    assert pod_info(pod.pod).requests["cpu"] == 3000


def test_fit_extended_resources_and_ignored_groups() -> None:
    snapshot = snapshot_of(make_node("gpu", extra={"example.com/gpu": "1"}), make_node("plain"))
    pod = make_pod(requests=[{"cpu": "1", "example.com/gpu": "1"}])
    statuses = run_filter(fit(snapshot), snapshot, pod)
    assert statuses["gpu"].is_success
    assert statuses["plain"].reasons == ("Insufficient example.com/gpu",)
    assert statuses["plain"].code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    ignoring = fit(snapshot, ignoredResourceGroups=["example.com"])
    assert run_filter(ignoring, snapshot, pod)["plain"].is_success


def test_quantities_round_up_like_go() -> None:
    pod = make_pod(requests=[{"cpu": "0.0001", "memory": "1.5"}])
    assert pod.requests == {"cpu": 1, "memory": 2}


def test_least_allocated_upstream_example() -> None:
    # least_allocated_test.go "nothing scheduled, resources requested, differently sized nodes"
    snapshot = snapshot_of(
        make_node("node1", cpu="4000m", memory="10000"),
        make_node("node2", cpu="6000m", memory="10000"),
    )
    pod = make_pod(requests=[{"cpu": "1000m", "memory": "2000"}])
    assert run_score(fit(snapshot), snapshot, pod) == {
        "node1": (75 + 80) // 2,
        "node2": (83 + 80) // 2,
    }


def test_least_allocated_uses_non_zero_defaults_and_weights() -> None:
    snapshot = snapshot_of(make_node("n", cpu="1", memory="1Gi"))
    pod = make_pod()  # no requests: scored as 100m cpu and 200Mi memory
    assert run_score(fit(snapshot), snapshot, pod) == {"n": (90 + 80) // 2}
    weighted = fit(
        snapshot,
        scoringStrategy={
            "type": "LeastAllocated",
            "resources": [{"name": "cpu", "weight": 3}, {"name": "memory", "weight": 1}],
        },
    )
    assert run_score(weighted, snapshot, pod) == {"n": (90 * 3 + 80) // 4}


def test_least_allocated_counts_existing_pods_non_zero() -> None:
    snapshot = snapshot_of(
        make_node("n", cpu="1", memory="1Gi"), pods=[make_pod("old", node_name="n")]
    )
    # cpu: (1000 - 200) * 100 / 1000 = 80; memory: (1Gi - 400Mi) * 100 / 1Gi = 60
    assert run_score(fit(snapshot), snapshot, make_pod()) == {"n": 70}


def test_most_allocated() -> None:
    snapshot = snapshot_of(make_node("n", cpu="4000m", memory="10000"))
    pod = make_pod(requests=[{"cpu": "1000m", "memory": "2000"}])
    scorer = fit(snapshot, scoringStrategy={"type": "MostAllocated"})
    assert run_score(scorer, snapshot, pod) == {"n": (25 + 20) // 2}


def test_requested_to_capacity_ratio_rounds_half_away_from_zero() -> None:
    snapshot = snapshot_of(make_node("n", cpu="4000m", memory="10000"))
    pod = make_pod(requests=[{"cpu": "1000m", "memory": "2000"}])
    scorer = fit(
        snapshot,
        scoringStrategy={
            "type": "RequestedToCapacityRatio",
            "requestedToCapacityRatio": {
                "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]
            },
        },
    )
    assert run_score(scorer, snapshot, pod) == {"n": 23}  # round((25 + 20) / 2)


def test_requested_to_capacity_ratio_truncates_toward_zero() -> None:
    # Shape (0 -> 100), (30 -> 30): at 25% utilization 100 + (-70 * 25) / 30 = 100 - 58 = 42.
    snapshot = snapshot_of(make_node("n", cpu="4000m"))
    scorer = fit(
        snapshot,
        scoringStrategy={
            "type": "RequestedToCapacityRatio",
            "resources": [{"name": "cpu", "weight": 1}],
            "requestedToCapacityRatio": {
                "shape": [{"utilization": 0, "score": 10}, {"utilization": 30, "score": 3}]
            },
        },
    )
    assert run_score(scorer, snapshot, make_pod(requests=[{"cpu": "1000m"}])) == {"n": 42}


def balanced(snapshot: Snapshot, release: tuple[int, int] = (1, 37)) -> BalancedAllocation:
    handle = replace(handle_of(snapshot), features=Features(release=release))
    return BalancedAllocation(NodeResourcesBalancedAllocationArgs(), handle)


def test_balanced_allocation() -> None:
    snapshot = snapshot_of(
        make_node("n1", cpu="4000m", memory="10000"),
        make_node("n2", cpu="4000m", memory="20000"),
    )
    pod = make_pod(requests=[{"cpu": "1000m", "memory": "5000"}])
    # The change in balance the pod brings, 50 + (50 + with - without) / 2 (upstream 1.36):
    # n1: with the pod fractions 0.25 and 0.5 -> std 0.125 -> 87, empty -> 100: 50 + 37 / 2 = 68;
    # n2: 0.25 and 0.25 -> 100, empty 100: 50 + 50 / 2 = 75.
    assert run_score(balanced(snapshot), snapshot, pod) == {"n1": 68, "n2": 75}


def test_balanced_allocation_uses_real_requests_of_existing_pods() -> None:
    snapshot = snapshot_of(
        make_node("n1", cpu="4000m", memory="10000"),
        pods=[make_pod("best-effort", node_name="n1")],
    )
    pod = make_pod(requests=[{"cpu": "1000m", "memory": "5000"}])
    assert run_score(balanced(snapshot), snapshot, pod) == {"n1": 68}


def test_balanced_allocation_rewards_evening_out_a_node() -> None:
    snapshot = snapshot_of(
        make_node("lopsided", cpu="4000m", memory="10000"),
        make_node("empty", cpu="4000m", memory="10000"),
        pods=[make_pod("cpu-heavy", requests=[{"cpu": "2000m"}], node_name="lopsided")],
    )
    pod = make_pod(requests=[{"cpu": "1000m", "memory": "7500"}])
    # lopsided: without (0.5, 0) -> 75, with (0.75, 0.75) -> 100: 50 + 75 / 2 = 87;
    # empty: without 100, with (0.25, 0.75) -> 75: 50 + 25 / 2 = 62.
    assert run_score(balanced(snapshot), snapshot, pod) == {"lopsided": 87, "empty": 62}


def test_balanced_allocation_at_1_35_scores_the_balance_with_the_pod_alone() -> None:
    snapshot = snapshot_of(
        make_node("lopsided", cpu="4000m", memory="10000"),
        make_node("empty", cpu="4000m", memory="10000"),
        pods=[make_pod("cpu-heavy", requests=[{"cpu": "2000m"}], node_name="lopsided")],
    )
    pod = make_pod(requests=[{"cpu": "1000m", "memory": "7500"}])
    # 1.35's balancedResourceScorer: lopsided (0.75, 0.75) -> 100; empty (0.25, 0.75) -> 75.
    scorer = balanced(snapshot, release=(1, 35))
    assert run_score(scorer, snapshot, pod) == {"lopsided": 100, "empty": 75}


def test_balanced_allocation_skips_best_effort_pods() -> None:
    snapshot = snapshot_of(make_node("n1"))
    assert run_score(balanced(snapshot), snapshot, make_pod()) is None


@pytest.mark.parametrize(
    ("cpu", "memory", "expected"),
    [("4000m", "4000", 56), ("4000m", "40000", 71), ("500m", "8000", 62)],
)
def test_balanced_allocation_caps_fractions_at_one(cpu: str, memory: str, expected: int) -> None:
    # pod 1000m / 4000 on an empty node (balance 100 without it): (0.25, 1.0) -> 62 -> 56;
    # (0.25, 0.1) -> 92 -> 71; cpu 2.0 capped to 1 with 0.5 -> 75 -> 62
    snapshot = snapshot_of(make_node("n", cpu=cpu, memory=memory))
    pod = make_pod(requests=[{"cpu": "1000m", "memory": "4000"}])
    assert run_score(balanced(snapshot), snapshot, pod) == {"n": expected}


def resized(status_cpu: str, allocated_cpu: str, *, infeasible: bool = False) -> Any:
    pod = make_pod("resized", requests=[{"cpu": "1"}], node_name="n1").pod
    pod["status"] = {
        "containerStatuses": [
            {
                "name": "c0",
                "resources": {"requests": {"cpu": status_cpu}},
                "allocatedResources": {"cpu": allocated_cpu},
            }
        ],
        "conditions": [{"type": "PodResizePending", "reason": "Infeasible"}] if infeasible else [],
    }
    return pod_info(pod)


def test_bound_pods_count_what_in_place_resizing_gave_them() -> None:
    # Larger of spec (1), status and allocated; only status and allocated if infeasible.
    assert resized("2", "1500m").requests["cpu"] == 2000
    assert resized("500m", "250m").requests["cpu"] == 1000
    assert resized("500m", "250m", infeasible=True).requests["cpu"] == 500
    snapshot = snapshot_of(make_node("n1", cpu="4"), pods=[resized("3", "3")])
    statuses = run_filter(fit(snapshot), snapshot, make_pod(requests=[{"cpu": "2"}]))
    assert statuses["n1"].reasons == ("Insufficient cpu",)
