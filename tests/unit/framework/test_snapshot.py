"""The columnar snapshot: incremental updates, node-tree order, label and resource columns."""

from __future__ import annotations

from typing import Any

import numpy as np

from scheduler_runtime.framework.podinfo import pod_info
from scheduler_runtime.framework.snapshot import Snapshot


def node(name: str, zone: str = "", cpu: str = "4", labels: dict[str, str] | None = None) -> Any:
    all_labels = {"kubernetes.io/hostname": name, **(labels or {})}
    if zone:
        all_labels["topology.kubernetes.io/zone"] = zone
    return {
        "metadata": {"name": name, "labels": all_labels},
        "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}},
    }


def pod(name: str, node_name: str = "", cpu: str = "500m", **spec: Any) -> Any:
    return pod_info(
        {
            "metadata": {"name": name, "namespace": "ns"},
            "spec": {
                "nodeName": node_name,
                "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}],
                **spec,
            },
        }
    )


def test_node_tree_order_interleaves_zones() -> None:
    snapshot = Snapshot(capacity=2)
    for name, zone in [("a1", "a"), ("a2", "a"), ("b1", "b"), ("a3", "a"), ("c1", "c")]:
        snapshot.add_node(node(name, zone))
    assert snapshot.names(snapshot.order()) == ["a1", "b1", "c1", "a2", "a3"]
    snapshot.remove_node("b1")
    assert snapshot.names(snapshot.order()) == ["a1", "c1", "a2", "a3"]
    snapshot.add_node(node("b2", "b"))
    assert snapshot.names(snapshot.order()) == ["a1", "c1", "b2", "a2", "a3"]


def test_pods_count_incrementally_and_survive_node_churn() -> None:
    snapshot = Snapshot()
    snapshot.add_pod(pod("early", "n1"))  # its node is not known yet
    snapshot.add_node(node("n1"))
    slot = snapshot.slot("n1")
    assert slot is not None
    cpu = snapshot.column("cpu")
    assert cpu is not None
    assert snapshot.requested[slot, cpu] == 500
    snapshot.add_pod(pod("second", "n1", cpu="1"))
    assert snapshot.requested[slot, cpu] == 1500
    assert snapshot.pod_count[slot] == 2
    # Non-zero requests: memory missing counts 200Mi per container for scoring.
    assert snapshot.non_zero_requested[slot, 1] == 2 * 200 * 1024 * 1024
    snapshot.remove_pod("ns/early")
    assert snapshot.requested[slot, cpu] == 1000
    snapshot.update_node(node("n1", cpu="8"))
    assert snapshot.allocatable[slot, cpu] == 8000
    assert snapshot.requested[slot, cpu] == 1000
    snapshot.remove_node("n1")
    assert len(snapshot) == 0
    snapshot.add_node(node("n1"))
    again = snapshot.slot("n1")
    assert again is not None
    assert snapshot.requested[again, cpu] == 1000


def test_extended_resources_get_their_own_column() -> None:
    snapshot = Snapshot()
    gpu_node = node("g")
    gpu_node["status"]["allocatable"]["example.com/gpu"] = "2"
    snapshot.add_node(gpu_node)
    snapshot.add_node(node("plain"))
    column = snapshot.column("example.com/gpu")
    assert column is not None
    slots = snapshot.order()
    assert list(snapshot.allocatable[slots, column]) == [2, 0]


def test_label_columns() -> None:
    snapshot = Snapshot()
    snapshot.add_node(node("n1", labels={"tier": "gold", "rank": "10"}))
    snapshot.add_node(node("n2", labels={"tier": "silver", "rank": "x"}))
    snapshot.add_node(node("n3"))
    slots = snapshot.order()
    assert list(snapshot.label_equals("tier", "gold")[slots]) == [True, False, False]
    assert list(snapshot.label_in("tier", ["gold", "silver"])[slots]) == [True, True, False]
    assert list(snapshot.label_exists("rank")[slots]) == [True, True, False]
    column = snapshot.label("rank")
    assert column is not None
    numbers = column.numbers()[slots]
    assert numbers[0] == 10
    assert np.isnan(numbers[1])
    assert np.isnan(numbers[2])
    snapshot.update_node(node("n1"))
    assert not snapshot.label_equals("tier", "gold").any()


def test_growing_keeps_columns() -> None:
    snapshot = Snapshot(capacity=1)
    for index in range(9):
        snapshot.add_node(node(f"n{index}", labels={"i": str(index)}))
    assert snapshot.capacity >= 9
    assert snapshot.label_equals("i", "8")[snapshot.slot("n8") or 0]
    assert len(snapshot.order()) == 9
