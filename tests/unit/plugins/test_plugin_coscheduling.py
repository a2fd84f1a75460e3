"""Coscheduling as scheduler-plugins' (its checks and words, seen from its own scheduler on the
local control plane), its groups placed whole by the runtime's pod group cycle: quorum,
gated members and minResources at PreFilter, with the resource gap printed as Go prints it."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler_runtime.config import FeatureGates, load_configuration
from scheduler_runtime.framework.nodeinfo import NodeInfo
from scheduler_runtime.framework.podinfo import pod_info
from scheduler_runtime.framework.quantity import QuantityError
from scheduler_runtime.plugins.coscheduling.resources import (
    BINARY_SI,
    DECIMAL_EXPONENT,
    DECIMAL_SI,
    Quantity,
    parse,
    resource_gap,
)
from scheduler_runtime.simulate import Simulation

LABEL = "scheduling.x-k8s.io/pod-group"


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("4", Quantity(4, 0, DECIMAL_SI)),
        ("500m", Quantity(500, -3, DECIMAL_SI)),
        ("1.5", Quantity(15, -1, DECIMAL_SI)),
        ("1.50", Quantity(150, -2, DECIMAL_SI)),
        ("2000", Quantity(2000, 0, DECIMAL_SI)),
        ("1G", Quantity(1, 9, DECIMAL_SI)),
        ("16Gi", Quantity(16 << 30, 0, BINARY_SI)),
        ("2e3", Quantity(2, 3, DECIMAL_EXPONENT)),
        ("0", Quantity(0, 0, DECIMAL_SI)),
        # Where Go keeps an inf.Dec: the exact value, without trailing zeros.
        ("1.5Gi", Quantity(1610612736, 0, BINARY_SI)),
        ("1234567890123456789", Quantity(1234567890123456789, 0, DECIMAL_SI)),
    ],
)
def test_quantities_are_kept_as_apimachinery_keeps_them(text: str, parsed: Quantity) -> None:
    assert parse(text) == parsed


@pytest.mark.parametrize("text", ["lots", "4X", "", "1e"])
def test_quantities_apimachinery_would_not_take_are_refused(text: str) -> None:
    with pytest.raises(QuantityError, match=r"quantit"):
        parse(text)


def node(name: str, cpu: str, *pods: dict[str, Any]) -> NodeInfo:
    info = NodeInfo(
        {
            "metadata": {"name": name},
            "status": {"allocatable": {"cpu": cpu, "memory": "16Gi", "pods": "110"}},
        }
    )
    for pod in pods:
        info.add_pod(pod_info(pod))
    return info


def pod(name: str, cpu: str, group: str = "") -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "ns", "labels": {LABEL: group} if group else {}},
        "spec": {
            "nodeName": "n",
            "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}],
        },
    }


def test_the_gap_prints_as_scheduler_plugins_prints_it() -> None:
    # Seen from scheduler-plugins' scheduler: minResources cpu 10 on two empty 4-CPU nodes.
    wanted = {"cpu": parse("10"), "pods": Quantity(2, 0, DECIMAL_SI)}
    nodes = [node("a", "4"), node("b", "4")]
    assert resource_gap(nodes, wanted, frozenset()) == "map[cpu:{{2000 -3} {<nil>}  DecimalSI}]"


def test_the_groups_own_pods_do_not_count_against_it_and_enough_room_is_no_gap() -> None:
    wanted = {"cpu": parse("7"), "pods": Quantity(2, 0, DECIMAL_SI)}
    busy = [node("a", "4", pod("other", "3")), node("b", "4", pod("mine", "3", "job"))]
    assert resource_gap(busy, wanted, frozenset()) == "map[cpu:{{5000 -3} {<nil>}  DecimalSI}]"
    assert resource_gap(busy, wanted, frozenset({"ns/mine"})) == (
        "map[cpu:{{2000 -3} {<nil>}  DecimalSI}]"
    )
    assert resource_gap([node("a", "4"), node("b", "4")], wanted, frozenset()) == ""


def configuration() -> Any:
    return load_configuration(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [
                {
                    "schedulerName": "cosched",
                    "plugins": {
                        "multiPoint": {"enabled": [{"name": "Coscheduling"}]},
                        "queueSort": {
                            "enabled": [{"name": "Coscheduling"}],
                            "disabled": [{"name": "*"}],
                        },
                    },
                }
            ],
        },
        # scheduler-plugins v0.35 is kube-scheduler 1.35's code: its words are that minor's.
        feature_gates=FeatureGates(version="1.35"),
    )


def state(*pods: tuple[str, str, str], min_member: int = 2, **spec: Any) -> list[dict[str, Any]]:
    objects: list[dict[str, Any]] = [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": f"n{i}"},
            "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"}},
        }
        for i in range(2)
    ]
    objects.append(
        {
            "apiVersion": "scheduling.x-k8s.io/v1alpha1",
            "kind": "PodGroup",
            "metadata": {"name": "job", "namespace": "ns"},
            "spec": {"minMember": min_member, **spec},
        }
    )
    for index, (name, cpu, group) in enumerate(pods):
        objects.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": name,
                    "namespace": "ns",
                    "uid": name,
                    "labels": {LABEL: group},
                    "creationTimestamp": f"2026-01-01T00:00:0{index}Z",
                },
                "spec": {
                    "schedulerName": "cosched",
                    "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}],
                },
            }
        )
    return objects


def run(*objects: dict[str, Any]) -> Simulation:
    made = Simulation(configuration(), seed=1)
    made.load(objects)
    made.run()
    return made


def test_a_v1alpha1_gang_is_placed_whole_by_the_group_cycle() -> None:
    made = run(*state(("a", "1", "job"), ("b", "1", "job")))
    assert all(p.node for p in made.placements.values())
    [report] = made.group_reports()
    assert (report.key.api, report.placed, report.bound) == ("scheduling.x-k8s.io", True, 2)


def test_too_few_members_are_told_as_scheduler_plugins_tells_them() -> None:
    made = run(*state(("a", "1", "job"), min_member=3))
    assert made.placements["ns/a"].message == (
        "0/2 nodes are available: pre-filter pod a cannot find enough sibling pods, current "
        "pods number: 1, minMember of group: 3. no new claims to deallocate, preemption: 0/2 "
        "nodes are available: 2 Preemption is not helpful for scheduling., PodGroup ns/job gets "
        "rejected due to Pod a is unschedulable even after PostFilter"
    )


def test_min_resources_keep_a_gang_from_every_node() -> None:
    made = run(*state(("a", "1", "job"), ("b", "1", "job"), minResources={"cpu": "10"}))
    assert not any(p.node for p in made.placements.values())
    assert {p.message.split(".")[0] for p in made.placements.values() if p.message} == {
        "0/2 nodes are available: resource gap: map[cpu:{{2000 -3} {<nil>}  DecimalSI}]"
    }


def test_a_min_resources_too_large_to_compute_with_is_refused_not_computed() -> None:
    """A tenant's minResources of 1e999999999 made the gap's subtraction build a number of a
    billion digits (the scheduler froze): the runtime's one quantity parser refuses to compute
    with it, the field is named, and the group's pods are told so."""
    huge = "1e999999999"
    with pytest.raises(QuantityError, match="too large to compare or compute with"):
        parse(huge)
    made = run(*state(("a", "1", "job"), ("b", "1", "job"), minResources={"cpu": huge}))
    assert not any(p.node for p in made.placements.values())
    assert all(
        "spec.minResources" in (p.message or "") and "too large" in (p.message or "")
        for p in made.placements.values()
    )


@pytest.mark.parametrize(
    ("text", "gap"),
    [
        # Past int64 Go prints its inf.Dec's pointer; here the exact amount.
        ("1e19", "{{9999999999999999992000 -3} {<nil>}  DecimalExponent}"),
        ("1e-999999999", ""),  # 1n: ParseQuantity rounds it up, and 8 CPUs hold it
    ],
)
def test_extreme_exponents_within_bounds_are_computed(text: str, gap: str) -> None:
    wanted = {"cpu": parse(text)}
    free = resource_gap([node("n1", "4"), node("n2", "4")], wanted, frozenset())
    assert free == (f"map[cpu:{gap}]" if gap else "")


def test_a_gang_that_does_not_fit_waits_for_nothing_and_holds_nothing() -> None:
    made = run(*state(("a", "3", "job"), ("b", "3", "job"), ("c", "3", "job"), min_member=3))
    messages = sorted(p.message or "" for p in made.placements.values())
    waiting = "pod group is unschedulable, one or more plugins asked to wait and no plugin "
    assert messages[-2:] == [f"{waiting}rejected pod"] * 2
    assert made.clock() < 60  # decided at once, not after permitWaitingTimeSeconds
    assert not any(made.backend.cache.is_assumed(key) for key in made.backend.cache.pod_ids())
