"""Builders for plugin tests: API-shaped nodes and pods, a snapshot, and both ways of running
a filter (over all nodes at once, and node by node) so each test checks they agree."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from scheduler_runtime.framework.interface import Code, CycleState, Handle, Status
from scheduler_runtime.framework.podinfo import PodInfo, pod_info
from scheduler_runtime.framework.snapshot import Int64s, Snapshot


def make_node(
    name: str,
    *,
    cpu: str = "4",
    memory: str = "8Gi",
    pods: str = "110",
    labels: dict[str, str] | None = None,
    taints: Sequence[dict[str, str]] = (),
    images: Sequence[tuple[list[str], int]] = (),
    unschedulable: bool = False,
    extra: dict[str, str] | None = None,
) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "spec": {"taints": list(taints), "unschedulable": unschedulable},
        "status": {
            "allocatable": {"cpu": cpu, "memory": memory, "pods": pods, **(extra or {})},
            "images": [{"names": names, "sizeBytes": size} for names, size in images],
        },
    }


def make_pod(
    name: str = "p",
    *,
    requests: Sequence[dict[str, str]] = ({},),
    init_requests: Sequence[dict[str, str]] = (),
    node_name: str = "",
    image: str = "nginx:1.25",
    **spec: Any,
) -> PodInfo:
    containers = [
        {"name": f"c{i}", "image": image, "resources": {"requests": dict(r)} if r else {}}
        for i, r in enumerate(requests)
    ]
    init = [
        {"name": f"i{i}", "image": image, "resources": {"requests": dict(r)}}
        for i, r in enumerate(init_requests)
    ]
    return pod_info(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "uid": name},
            "spec": {
                "containers": containers,
                "initContainers": init,
                "nodeName": node_name,
                **spec,
            },
        }
    )


def snapshot_of(*nodes: dict[str, Any], pods: Sequence[PodInfo] = ()) -> Snapshot:
    snapshot = Snapshot(capacity=4)
    for node in nodes:
        snapshot.add_node(node)
    for pod in pods:
        snapshot.add_pod(pod)
    return snapshot


def handle_of(snapshot: Snapshot) -> Handle:
    return Handle(snapshot=snapshot)


def run_filter(plugin: Any, snapshot: Snapshot, pod: PodInfo) -> dict[str, Status]:
    """Runs preFilter (if any) then the filter both ways; asserts the two agree, returns the
    per-node statuses by node name (Success included)."""
    state = CycleState()
    if hasattr(plugin, "pre_filter"):
        _, status = plugin.pre_filter(state, pod, snapshot)
        if status.is_skip:
            return {info.name: Status() for info in snapshot.node_infos()}
    slots = snapshot.order()
    verdicts = plugin.filter_nodes(state, pod, snapshot, slots)
    one_by_one = {info.name: plugin.filter(state, pod, info) for info in snapshot.node_infos()}
    for position, slot in enumerate(slots):
        status = one_by_one[snapshot.name(int(slot))]
        assert bool(verdicts.rejected[position]) == (not status.is_success)
        assert bool(verdicts.unresolvable[position]) == (
            status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        )
        batch_reasons = tuple(r for r, mask in verdicts.reasons if mask[position])
        assert batch_reasons == status.reasons
    return one_by_one


def run_score(plugin: Any, snapshot: Snapshot, pod: PodInfo) -> dict[str, int] | None:
    """preScore, score over all nodes, normalize; None when the plugin skips the pod."""
    state = CycleState()
    slots = snapshot.order()
    if hasattr(plugin, "pre_score"):
        status = plugin.pre_score(state, pod, snapshot, slots)
        if status.is_skip:
            return None
        assert status.is_success
    scores: Int64s = np.asarray(plugin.score_nodes(state, pod, snapshot, slots)).copy()
    if hasattr(plugin, "score"):
        single = [plugin.score(state, pod, info)[0] for info in snapshot.node_infos()]
        assert single == list(scores)
    if hasattr(plugin, "normalize_score"):
        assert plugin.normalize_score(state, pod, scores).is_success
    return dict(zip(snapshot.names(slots), (int(s) for s in scores), strict=True))
