"""The benchmark's nodes and pods: shaped like a real cluster's, identical across runs."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from kubernetes.utils import parse_quantity

from benchmarks import workloads
from benchmarks.workloads import GROUP_SIZE, SHAPES, ZONES, node, pods


def labels(manifest: dict[str, Any]) -> dict[str, str]:
    return manifest["metadata"]["labels"]


def test_nodes_carry_hostname_zone_and_instance_type() -> None:
    first = node(0)
    assert first["metadata"]["name"] == "bench-node-00000"
    assert labels(first)["kubernetes.io/hostname"] == "bench-node-00000"
    assert labels(first)["topology.kubernetes.io/zone"] == ZONES[0]
    assert first["metadata"]["annotations"]["kwok.x-k8s.io/node"] == "fake"
    assert labels(first)["app.kubernetes.io/part-of"] == "scheduler-benchmark"


def test_every_zone_gets_every_shape() -> None:
    pairs = {
        (
            labels(node(i))["topology.kubernetes.io/zone"],
            labels(node(i))["node.kubernetes.io/instance-type"],
        )
        for i in range(len(ZONES) * len(SHAPES))
    }
    assert len(pairs) == len(ZONES) * len(SHAPES)


def test_allocatable_is_capacity_less_the_reservation() -> None:
    status = node(4)["status"]
    for resource in ("cpu", "memory"):
        capacity = parse_quantity(status["capacity"][resource])
        assert 0 < parse_quantity(status["allocatable"][resource]) < capacity
    assert status["allocatable"]["pods"] == "110"


def test_basic_pods_have_requests_and_the_scheduler_name() -> None:
    made = pods("basic", 8, "bench-x")
    assert [p["metadata"]["name"] for p in made][:2] == ["basic-00000", "basic-00001"]
    for pod in made:
        assert pod["spec"]["schedulerName"] == "bench-x"
        requests = pod["spec"]["containers"][0]["resources"]["requests"]
        assert set(requests) == {"cpu", "memory"}
        assert "affinity" not in pod["spec"]


def test_pods_are_the_same_for_every_run() -> None:
    assert pods("mixed", 40, "a") == pods("mixed", 40, "a")


def kind_of(pod: dict[str, Any]) -> str:
    spec = pod["spec"]
    if "topologySpreadConstraints" in spec:
        return "spread"
    affinity = spec.get("affinity", {})
    if "podAffinity" in affinity:
        return "affinity"
    if "podAntiAffinity" in affinity:
        return "anti-affinity"
    return "requests"


def test_mixed_workload_mixes_the_four_kinds_evenly() -> None:
    assert Counter(kind_of(p) for p in pods("mixed", 400, "s")) == {
        "requests": 100,
        "spread": 100,
        "anti-affinity": 100,
        "affinity": 100,
    }


def selectors(pod: dict[str, Any]) -> list[dict[str, Any]]:
    spec = pod["spec"]
    found = [c["labelSelector"] for c in spec.get("topologySpreadConstraints", [])]
    for rules in spec.get("affinity", {}).values():
        for terms in rules.values():
            found += [t.get("podAffinityTerm", t)["labelSelector"] for t in terms]
    return found


def test_rules_select_their_own_group_of_at_most_group_size() -> None:
    made = pods("mixed", 400, "s")
    groups = Counter(labels(p)["group"] for p in made)
    assert max(groups.values()) <= GROUP_SIZE
    for pod in made:
        for selector in selectors(pod):
            assert selector == {"matchLabels": {"group": labels(pod)["group"]}}


def test_anti_affinity_keeps_a_group_off_shared_hosts() -> None:
    pod = next(p for p in pods("mixed", 8, "s") if kind_of(p) == "anti-affinity")
    term = pod["spec"]["affinity"]["podAntiAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ][0]
    assert term["topologyKey"] == "kubernetes.io/hostname"


def test_unknown_workload_is_named_in_the_error() -> None:
    with pytest.raises(ValueError, match=r"workload 'gpu': expected one of basic, mixed"):
        pods("gpu", 1, "s")


def test_node_names_sort_in_creation_order() -> None:
    names = [workloads.node_name(i) for i in (2, 10, 100)]
    assert names == sorted(names)
