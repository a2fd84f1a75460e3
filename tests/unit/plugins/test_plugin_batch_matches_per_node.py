"""Every in-tree filter answers the same over all nodes at once as node by node (the per-node
path is what preemption dry runs and user plugins use), for generated nodes and pods."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from plugin_support import handle_of, make_node, make_pod, run_filter, run_score, snapshot_of

from scheduler_runtime.config.args import NodeResourcesFitArgs
from scheduler_runtime.framework.podinfo import pod_info
from scheduler_runtime.plugins.nodeaffinity import NodeAffinity
from scheduler_runtime.plugins.nodename import NodeName
from scheduler_runtime.plugins.nodeports import NodePorts
from scheduler_runtime.plugins.noderesources import Fit
from scheduler_runtime.plugins.nodeunschedulable import NodeUnschedulable
from scheduler_runtime.plugins.tainttoleration import TaintToleration

KEYS = ["a", "b", "c"]
VALUES = ["1", "2", "10", "x"]
EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"]

taints = st.lists(
    st.fixed_dictionaries(
        {
            "key": st.sampled_from(KEYS),
            "value": st.sampled_from(VALUES),
            "effect": st.sampled_from(EFFECTS),
        }
    ),
    max_size=3,
)
labels = st.dictionaries(st.sampled_from(KEYS), st.sampled_from(VALUES), max_size=3)
nodes = st.lists(
    st.builds(
        lambda cpu, pods, node_labels, node_taints, cordoned, gpus: {
            "cpu": f"{cpu}m",
            "pods": str(pods),
            "labels": node_labels,
            "taints": node_taints,
            "unschedulable": cordoned,
            "extra": {"example.com/gpu": str(gpus)} if gpus else None,
        },
        st.integers(0, 4000),
        st.integers(0, 3),
        labels,
        taints,
        st.booleans(),
        st.integers(0, 2),
    ),
    min_size=1,
    max_size=6,
)
requirement = st.fixed_dictionaries(
    {
        "key": st.sampled_from(KEYS),
        "operator": st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]),
        "values": st.lists(st.sampled_from(VALUES), max_size=2),
    }
)
tolerations = st.lists(
    st.fixed_dictionaries(
        {
            "key": st.sampled_from(["", *KEYS]),
            "operator": st.sampled_from(["Equal", "Exists"]),
            "value": st.sampled_from(VALUES),
            "effect": st.sampled_from(["", *EFFECTS]),
        }
    ),
    max_size=3,
)
pods = st.fixed_dictionaries(
    {
        "cpu": st.integers(0, 3000),
        "gpus": st.integers(0, 2),
        "selector": labels,
        "terms": st.lists(st.lists(requirement, min_size=1, max_size=2), max_size=2),
        "preferred": st.lists(st.tuples(st.integers(0, 100), requirement), max_size=3),
        "tolerations": tolerations,
        "port": st.sampled_from([0, 80, 443]),
        "node_name": st.sampled_from(["", "n0", "n1"]),
    }
)
existing = st.lists(
    st.tuples(st.integers(0, 5), st.integers(0, 1500), st.sampled_from([0, 80])), max_size=6
)


def build(node_specs: list[dict[str, Any]], placed: list[tuple[int, int, int]]) -> Any:
    built = [make_node(f"n{i}", **spec) for i, spec in enumerate(node_specs)]
    bound = []
    for index, (node_index, cpu, port) in enumerate(placed):
        if node_index >= len(built):
            continue
        pod = make_pod(f"old{index}", requests=[{"cpu": f"{cpu}m"}], node_name=f"n{node_index}")
        if port:
            pod.pod["spec"]["containers"][0]["ports"] = [{"hostPort": port}]
            pod = pod_info(pod.pod)
        bound.append(pod)
    return snapshot_of(*built, pods=bound)


def incoming(spec: dict[str, Any]) -> Any:
    requests = {"cpu": f"{spec['cpu']}m"}
    if spec["gpus"]:
        requests["example.com/gpu"] = str(spec["gpus"])
    affinity: dict[str, Any] = {"nodeAffinity": {}}
    if spec["terms"]:
        affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] = {
            "nodeSelectorTerms": [{"matchExpressions": term} for term in spec["terms"]]
        }
    if spec["preferred"]:
        affinity["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": weight, "preference": {"matchExpressions": [expression]}}
            for weight, expression in spec["preferred"]
        ]
    pod = make_pod(
        requests=[requests],
        nodeSelector=spec["selector"],
        affinity=affinity,
        tolerations=spec["tolerations"],
        node_name=spec["node_name"],
    )
    if spec["port"]:
        pod.pod["spec"]["containers"][0]["ports"] = [{"hostPort": spec["port"]}]
    return pod_info(pod.pod)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(nodes, existing, pods)
def test_filters_agree(
    node_specs: list[dict[str, Any]], placed: list[tuple[int, int, int]], spec: dict[str, Any]
) -> None:
    snapshot = build(node_specs, placed)
    pod = incoming(spec)
    handle = handle_of(snapshot)
    for plugin in (
        Fit(NodeResourcesFitArgs(), handle),
        TaintToleration(None, handle),
        NodeAffinity(None, handle),
        NodePorts(None, handle),
        NodeUnschedulable(None, handle),
        NodeName(None, handle),
    ):
        assert len(run_filter(plugin, snapshot, pod)) == len(node_specs)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(nodes, pods)
def test_scores_agree_and_stay_in_range(
    node_specs: list[dict[str, Any]], spec: dict[str, Any]
) -> None:
    snapshot = build(node_specs, [])
    pod = incoming(spec)
    for plugin in (
        TaintToleration(None, handle_of(snapshot)),
        NodeAffinity(None, handle_of(snapshot)),
    ):
        scores = run_score(plugin, snapshot, pod)
        assert scores is None or all(0 <= score <= 100 for score in scores.values())
