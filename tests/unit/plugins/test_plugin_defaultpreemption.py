"""DefaultPreemption against hand-computed upstream results: which node, which victims,
PodDisruptionBudgets, and the preemption part of the FailedScheduling message. Runs through
the default profile's real framework and the simulator (which evicts victims)."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler_runtime.config import load_configuration
from scheduler_runtime.config.args import DefaultPreemptionArgs
from scheduler_runtime.framework.interface import CycleState, Handle
from scheduler_runtime.framework.podinfo import pod_info
from scheduler_runtime.framework.snapshot import Snapshot
from scheduler_runtime.framework.types import FitError
from scheduler_runtime.plugins.defaultpreemption import (
    Candidate,
    DefaultPreemption,
    pick_one_node,
)
from scheduler_runtime.plugins.defaultpreemption.pdb import Budgets, split_by_pdb_violation
from scheduler_runtime.simulate import Simulation

CONFIG = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [{"schedulerName": "default-scheduler"}],
}


def node(name: str, cpu: str = "2", labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}},
    }


def pod(
    name: str,
    cpu: str,
    priority: int = 0,
    node_name: str = "",
    labels: dict[str, str] | None = None,
    start: str = "2024-01-01T00:00:00Z",
    **spec: Any,
) -> dict[str, Any]:
    return {
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "ns",
            "labels": labels or {},
            "creationTimestamp": start,
        },
        "spec": {
            "nodeName": node_name,
            "priority": priority,
            "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}],
            **spec,
        },
        "status": {"startTime": start} if node_name else {},
    }


def simulate(
    *objects: dict[str, Any],
) -> tuple[Simulation, dict[str, tuple[str | None, str | None]]]:
    simulation = Simulation(load_configuration(CONFIG), seed=1)
    simulation.load(objects)
    placements = simulation.run()
    return simulation, {p.name: (p.node, p.message) for p in placements}


def remaining(simulation: Simulation) -> set[str]:
    return {p.name for p in simulation.snapshot.pods()}


def test_preempts_on_the_node_with_the_lowest_priority_victims() -> None:
    simulation, placed = simulate(
        node("n1"),
        node("n2"),
        pod("low", "2", priority=1, node_name="n1"),
        pod("mid", "2", priority=5, node_name="n2"),
        pod("urgent", "1500m", priority=10),
    )
    assert placed["urgent"] == ("n1", None)
    assert remaining(simulation) == {"mid", "urgent"}


def test_keeps_every_victim_it_can_starting_with_the_most_important() -> None:
    simulation, placed = simulate(
        node("n1", cpu="4"),
        pod("p1", "1", priority=1, node_name="n1"),
        pod("p2", "1", priority=2, node_name="n1"),
        pod("p3", "2", priority=3, node_name="n1"),
        pod("urgent", "2", priority=10),
    )
    # Re-adding p3 (2) leaves room; then p2 and p1 (each 1) would not: both go.
    assert placed["urgent"] == ("n1", None)
    assert remaining(simulation) == {"p3", "urgent"}


def test_prefers_nodes_whose_victims_violate_no_disruption_budget() -> None:
    budget = {
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "keep-a", "namespace": "ns"},
        "spec": {"selector": {"matchLabels": {"app": "a"}}},
        "status": {"disruptionsAllowed": 0},
    }
    simulation, placed = simulate(
        node("n1"),
        node("n2"),
        budget,
        pod("a", "2", priority=0, node_name="n1", labels={"app": "a"}),
        pod("b", "2", priority=3, node_name="n2", labels={"app": "b"}),
        pod("urgent", "2", priority=10),
    )
    # n1's victim has the lower priority, but evicting it breaks the budget.
    assert placed["urgent"] == ("n2", None)
    assert remaining(simulation) == {"a", "urgent"}


def test_no_victims_message() -> None:
    _, placed = simulate(
        node("n1"),
        node("n2"),
        pod("high1", "2", priority=100, node_name="n1"),
        pod("high2", "2", priority=100, node_name="n2"),
        pod("urgent", "1", priority=10),
    )
    assert placed["urgent"] == (
        None,
        "0/2 nodes are available: 2 Insufficient cpu. "
        "preemption: 0/2 nodes are available: "
        "2 No preemption victims found for incoming pod.",
    )


def test_unresolvable_nodes_are_not_helped_by_preemption() -> None:
    _, placed = simulate(
        node("n1", cpu="1"),
        node("n2", labels={"disk": "ssd"}),
        pod("low", "2", priority=0, node_name="n2"),
        pod("urgent", "1500m", priority=10, nodeSelector={"disk": "hdd"}),
    )
    assert placed["urgent"] == (
        None,
        "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector. "
        "preemption: 0/2 nodes are available: "
        "2 Preemption is not helpful for scheduling.",
    )


def test_resource_beyond_the_node_is_not_helped_by_preemption() -> None:
    _, placed = simulate(
        node("n1"),
        node("n2"),
        pod("low", "1", priority=0, node_name="n1"),
        pod("urgent", "3", priority=10),
    )
    assert placed["urgent"][1] == (
        "0/2 nodes are available: 2 Insufficient cpu. "
        "preemption: 0/2 nodes are available: "
        "2 Preemption is not helpful for scheduling."
    )


def test_preemption_policy_never() -> None:
    _, placed = simulate(
        node("n1"),
        pod("low", "2", priority=0, node_name="n1"),
        pod("polite", "1", priority=10, preemptionPolicy="Never"),
    )
    assert placed["polite"] == (
        None,
        "0/1 nodes are available: 1 Insufficient cpu. "
        "preemption: not eligible due to preemptionPolicy=Never.",
    )


def candidate(name: str, priorities: list[int], violations: int = 0, start: str = "") -> Candidate:
    victims = tuple(
        pod_info(pod(f"{name}-{i}", "1", p, name, start=start or "2024-01-01T00:00:00Z"))
        for i, p in enumerate(sorted(priorities, reverse=True))
    )
    return Candidate(name, victims, violations)


@pytest.mark.parametrize(
    ("candidates", "chosen"),
    [
        ([candidate("a", [1], 1), candidate("b", [5], 0)], "b"),  # fewest PDB violations
        ([candidate("a", [5, 1]), candidate("b", [3, 3])], "b"),  # lowest highest priority
        ([candidate("a", [3, 2]), candidate("b", [3, 1])], "b"),  # smallest sum
        ([candidate("a", [3, -5, -5]), candidate("b", [3, -4])], "b"),  # sum shifted by 2^31
        (
            [candidate("a", [3, 0, 0]), candidate("b", [3, 0])],
            "b",
        ),  # more victims weigh more in the shifted sum
        (
            [
                candidate("a", [3], start="2024-01-01T00:00:00Z"),
                candidate("b", [3], start="2024-06-01T00:00:00Z"),
            ],
            "b",  # latest start of the most important victims
        ),
        ([candidate("a", [3]), candidate("b", [3])], "a"),  # then the first
    ],
)
def test_node_ordering(candidates: list[Candidate], chosen: str) -> None:
    assert pick_one_node(candidates).node == chosen


def test_pdb_budget_is_spent_in_order_and_disrupted_pods_do_not_count() -> None:
    snapshot = Snapshot()
    snapshot.objects.apply(
        {
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "web", "namespace": "ns"},
            "spec": {"selector": {"matchLabels": {"app": "web"}}},
            "status": {"disruptionsAllowed": 1, "disruptedPods": {"w0": "2024-01-01T00:00:00Z"}},
        }
    )
    web = [pod_info(pod(f"w{i}", "1", labels={"app": "web"})) for i in range(3)]
    other = pod_info(pod("x", "1", labels={"app": "x"}))
    violating, sparing = split_by_pdb_violation([*web, other], Budgets.of(snapshot))
    assert [p.name for p in violating] == ["w2"]
    assert [p.name for p in sparing] == ["w0", "w1", "x"]


@pytest.mark.parametrize(
    ("percentage", "absolute", "nodes", "wanted"),
    [(10, 100, 5000, 500), (10, 100, 50, 50), (10, 100, 2000, 200), (10, 0, 55, 5), (0, 3, 55, 3)],
)
def test_number_of_candidates(percentage: int, absolute: int, nodes: int, wanted: int) -> None:
    args = DefaultPreemptionArgs(
        min_candidate_nodes_percentage=percentage, min_candidate_nodes_absolute=absolute
    )
    plugin = DefaultPreemption(args, Handle(Snapshot()))
    assert plugin.candidates_to_find(nodes) == wanted


def test_result_names_the_victims_for_the_caller() -> None:
    simulation = Simulation(load_configuration(CONFIG), seed=1)
    simulation.load([node("n1"), pod("low", "2", priority=1, node_name="n1")])
    framework = simulation.frameworks["default-scheduler"]
    urgent = pod_info(pod("urgent", "1", priority=10))
    state = CycleState()
    with pytest.raises(FitError) as failure:
        simulation.algorithm.schedule_pod(framework, state, urgent)
    result, status = framework.run_post_filter(state, urgent, failure.value.diagnosis)
    assert status.is_success
    assert result is not None
    assert result.nominating is not None
    assert result.nominating.node_name == "n1"
    assert [v.name for v in result.victims] == ["low"]
