"""Explanations: every filtered-out node with its plugin and reason, the chosen node's score
breakdown first, as JSON (simulate, /explain), as tables (`explain`) and as an annotation."""

from __future__ import annotations

import dataclasses
import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import pytest
from prometheus_client import CollectorRegistry

from scheduler_runtime.cli import main
from scheduler_runtime.config import load_configuration
from scheduler_runtime.framework.algorithm import Placement
from scheduler_runtime.framework.explain import (
    Rejected,
    annotation,
    format_explanation,
    rejected_nodes,
    top_candidates,
)
from scheduler_runtime.framework.interface import Code, Status
from scheduler_runtime.framework.snapshot import Snapshot
from scheduler_runtime.framework.types import Diagnosis, NodeToStatus, Rejection
from scheduler_runtime.live.explanations import ExplanationStore, annotation_patch
from scheduler_runtime.live.server import HealthServer
from scheduler_runtime.simulate import Simulation, simulate


def node(name: str, cpu: str = "4", taint: bool = False, label: str = "") -> dict[str, Any]:
    return {
        "kind": "Node",
        "metadata": {"name": name, "labels": {"disk": label} if label else {}},
        "spec": {"taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]}
        if taint
        else {},
        "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "10"}},
    }


def pod(name: str, cpu: str, **spec: Any) -> dict[str, Any]:
    return {
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "creationTimestamp": name},
        "spec": {
            "schedulerName": "explained",
            "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}],
            **spec,
        },
    }


CONFIG = load_configuration(
    {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "explained",
                "plugins": {
                    "multiPoint": {
                        "disabled": [{"name": "*"}],
                        "enabled": [
                            {"name": "PrioritySort"},
                            {"name": "TaintToleration", "weight": 3},
                            {"name": "NodeAffinity", "weight": 2},
                            {"name": "NodeResourcesFit"},
                            {"name": "DefaultBinder"},
                        ],
                    }
                },
            }
        ],
    }
)
NODES = [node("busy", "1"), node("tainted", taint=True), node("a", "4"), node("b", "8")]


def placements(*pods: dict[str, Any]) -> list[dict[str, Any]]:
    return [p.as_json() for p in simulate(CONFIG, [*NODES, *pods], seed=1)]


def test_a_placement_lists_every_filtered_node_and_the_chosen_nodes_scores() -> None:
    [placed] = placements(pod("web", "2"))
    assert placed["node"] == "b"
    why = placed["explanation"]
    assert why["pod"] == "default/web"
    assert (why["evaluatedNodes"], why["feasibleNodes"]) == (4, 2)
    assert why["filtered"] == [
        {
            "plugin": "TaintToleration",
            "reason": "node(s) had untolerated taint(s)",
            "nodes": ["tainted"],
        },
        {"plugin": "NodeResourcesFit", "reason": "Insufficient cpu", "nodes": ["busy"]},
    ]
    chosen, other = why["candidates"]
    assert chosen["node"] == "b"
    assert other["node"] == "a"
    assert chosen["total"] > other["total"]
    scores = chosen["scores"]
    assert scores["TaintToleration"] == {"score": 100, "weight": 3, "weighted": 300}
    assert scores["NodeResourcesFit"]["weight"] == 1
    assert chosen["total"] == sum(s["weighted"] for s in scores.values())


def test_a_failure_lists_every_node_with_its_reason() -> None:
    [failed] = placements(pod("huge", "16"))
    why = failed["explanation"]
    assert failed["node"] is None
    assert why["message"] == failed["message"]
    assert why["candidates"] == []
    nodes = {n: group["plugin"] for group in why["filtered"] for n in group["nodes"]}
    assert nodes == {
        "busy": "NodeResourcesFit",
        "a": "NodeResourcesFit",
        "b": "NodeResourcesFit",
        "tainted": "TaintToleration",
    }


def test_nodes_a_prefilter_ruled_out_are_listed_with_its_reason() -> None:
    by_name = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["ssd"]}]}
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [by_name]}
        }
    }
    NODES.append(node("ssd", label="ssd"))
    try:
        [placed] = placements(pod("picky", "1", affinity=affinity))
    finally:
        NODES.pop()
    why = placed["explanation"]
    assert placed["node"] == "ssd"
    [group] = why["filtered"]
    assert group["plugin"] == ""
    assert group["reason"] == "node(s) didn't satisfy plugin(s) [NodeAffinity]"
    assert sorted(group["nodes"]) == ["a", "b", "busy", "tainted"]


def test_the_table_shows_each_filtered_node_and_the_breakdown() -> None:
    [placed] = placements(pod("web", "2"))
    text = format_explanation(placed["explanation"])
    lines = text.splitlines()
    assert lines[0] == "Pod default/web (profile explained): scheduled on b"
    assert lines[1] == "Nodes evaluated: 4, fit: 2"
    assert lines[3].split() == ["FILTERED", "OUT", "PLUGIN", "REASON"]
    assert lines[4].split()[:2] == ["tainted", "TaintToleration"]
    assert lines[5].split() == ["busy", "NodeResourcesFit", "Insufficient", "cpu"]
    header = lines[7].split()
    assert header[:2] == ["CANDIDATE", "TOTAL"]
    assert lines[8].startswith("b *")
    assert "100x3=300" in lines[8]
    assert lines[-1] == "(score x weight = weighted; * the chosen node)"


def test_the_annotation_is_one_compact_line() -> None:
    [placed] = simulate(CONFIG, [*NODES, pod("web", "2")], seed=1)
    assert placed.explanation is not None
    text = annotation(placed.explanation)
    assert text.startswith("node=b total=")
    assert "TaintToleration=100x3" in text
    assert text.endswith("| rejected: TaintToleration 1, NodeResourcesFit 1")
    long = annotation_patch("x" * 5000)["metadata"]["annotations"]
    assert len(next(iter(long.values()))) == 1024


MANY = [node(f"n{i:03}") for i in range(200)]  # one zone: node-tree order is this order
TAINTED = "node(s) had untolerated taint(s)"


def test_nodes_a_stopped_search_never_evaluated_are_counted_not_named() -> None:
    """200 nodes that all fit: the search stops after 100, the first pod's at n000."""
    [placed] = simulate(CONFIG, [*MANY, pod("web", "1")], seed=1)
    why = placed.explanation
    assert why is not None
    assert (why.evaluated_nodes, why.feasible_nodes, why.not_evaluated_nodes) == (100, 100, 100)
    assert why.filtered == ()
    assert why.as_json()["notEvaluatedNodes"] == 100
    assert "not evaluated: 100 (enough nodes fit)" in format_explanation(why.as_json())


def mostly_tainted() -> tuple[Simulation, Rejected]:
    """200 nodes of which 150 carry a taint the pod does not tolerate."""
    nodes = [node(f"n{i:03}", taint=i >= 50) for i in range(200)]
    simulation = Simulation(CONFIG, seed=1)
    simulation.load([*nodes, pod("web", "1")])
    [placed] = simulation.run()
    why = placed.explanation
    assert why is not None
    assert (why.evaluated_nodes, why.feasible_nodes, why.not_evaluated_nodes) == (200, 50, 0)
    [group] = why.filtered
    return simulation, group


def test_a_large_group_of_filtered_nodes_is_named_when_read() -> None:
    _, group = mostly_tainted()
    eager = Rejected("TaintToleration", TAINTED, tuple(f"n{i:03}" for i in range(50, 200)))
    assert group == eager
    assert hash(group) == hash(eager)
    assert repr(group) == repr(eager)
    assert group.as_json() == eager.as_json()
    assert group.nodes is not group.nodes  # kept as slots: each read names them anew
    with pytest.raises(dataclasses.FrozenInstanceError):
        group.plugin = "other"


def test_an_older_explanation_keeps_the_names_it_saw_when_a_slot_is_reused() -> None:
    simulation, group = mostly_tainted()
    snapshot = simulation.snapshot
    names = snapshot.node_names()
    snapshot.update_node(node("n150", "8"))
    assert snapshot.node_names() is names  # an update renames nothing
    slot = snapshot.slot("n150")
    snapshot.remove_node("n150")
    snapshot.add_node(node("fresh"))
    assert snapshot.slot("fresh") == slot
    assert snapshot.node_names()[slot] == "fresh"
    assert names[slot] == "n150"
    assert group.nodes == tuple(f"n{i:03}" for i in range(50, 200))


def test_candidates_are_the_chosen_node_then_the_best_totals_ties_in_scoring_order() -> None:
    snapshot = Snapshot()
    for name in ("a", "b", "c", "d", "e"):
        snapshot.add_node(node(name))
    slots = np.array([snapshot.slot(name) for name in "edcba"], dtype=np.intp)
    scores = Placement(
        slots,
        totals=np.array([50, 90, 70, 90, 90], dtype=np.int64),
        by_plugin={"Fit": np.array([5, 9, 7, 8, 6], dtype=np.int64)},
    )
    top = top_candidates(scores, snapshot, {"Fit": 10}, "b", 3)
    assert [(c.node, c.total, c.scores) for c in top] == [
        ("b", 90, {"Fit": (8, 10)}),
        ("d", 90, {"Fit": (9, 10)}),
        ("a", 90, {"Fit": (6, 10)}),
    ]
    assert [c.node for c in top_candidates(scores, snapshot, {}, "c", 4)] == ["c", "d", "b", "a"]
    assert [c.node for c in top_candidates(scores, snapshot, {}, "d", 1)] == ["d"]


def test_equal_nodes_list_the_chosen_one_then_the_others_in_order() -> None:
    equal = [node(name) for name in ("w", "x", "y", "z")]
    for seed in range(4):
        [placed] = simulate(CONFIG, [*equal, pod("web", "1")], seed=seed)
        assert placed.explanation is not None
        totals = {c.total for c in placed.explanation.candidates}
        assert len(totals) == 1
        others = [name for name in "wxyz" if name != placed.node][:2]
        assert [c.node for c in placed.explanation.candidates] == [placed.node, *others]


def test_statuses_set_by_name_join_their_group_after_the_filters_slots() -> None:
    snapshot = Snapshot()
    for name in ("a", "b", "c", "d"):
        snapshot.add_node(node(name))
    slots = np.array([snapshot.slot("c"), snapshot.slot("a")], dtype=np.intp)
    statuses = NodeToStatus(snapshot)
    statuses.rejections.append(
        Rejection("Fit", slots, np.zeros(2, dtype=np.bool_), [("full", np.ones(2, np.bool_))])
    )
    statuses.set("d", Status(Code.UNSCHEDULABLE, ("full",), "Fit"))
    feasible = np.zeros(0, dtype=np.intp)
    assert rejected_nodes(Diagnosis(statuses), snapshot, feasible) == (
        [Rejected("Fit", "full", ("c", "a", "d"))],
        1,  # b was never evaluated
    )


def test_the_store_keeps_the_last_attempt_of_the_last_pods() -> None:
    store = ExplanationStore(capacity=2)
    explained = [p.explanation for p in simulate(CONFIG, [*NODES, *_pods(3)], seed=1)]
    for explanation in explained:
        assert explanation is not None
        store.add(explanation)
    assert store.lookup("default/p0") is None
    found = store.lookup("default/p2")
    assert found is not None
    assert found["pod"] == "default/p2"


def _pods(count: int) -> list[dict[str, Any]]:
    return [pod(f"p{i}", "1") for i in range(count)]


@pytest.fixture
def server() -> Iterator[HealthServer]:
    store = ExplanationStore()
    [placed] = simulate(CONFIG, [*NODES, pod("web", "2")], seed=1)
    assert placed.explanation is not None
    store.add(placed.explanation)
    running = HealthServer(
        ("127.0.0.1", 0),
        live=lambda: "",
        ready=lambda: "",
        registry=CollectorRegistry(),
        explanations=store.lookup,
    )
    running.start()
    yield running
    running.stop()


def test_the_endpoint_serves_explanations(server: HealthServer) -> None:
    base = f"http://127.0.0.1:{server.port}"
    with urllib.request.urlopen(f"{base}/explain/default/web", timeout=5) as answer:
        assert json.loads(answer.read())["node"] == "b"
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(f"{base}/explain/default/nope", timeout=5)
    assert caught.value.code == 404


def test_the_explain_command(server: HealthServer, capsys: pytest.CaptureFixture[str]) -> None:
    endpoint = f"http://127.0.0.1:{server.port}"
    assert main(["explain", "default/web", "--endpoint", endpoint]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Pod default/web (profile explained): scheduled on b\n")
    assert "tainted" in out
    assert main(["explain", "default/nope", "--endpoint", endpoint]) == 1
    assert "keeps no explanation for default/nope" in capsys.readouterr().err
    assert main(["explain", "default/web", "--endpoint", endpoint, "-o", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["pod"] == "default/web"


def test_the_explain_command_names_an_unreachable_scheduler(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler) as probe:
        port = probe.server_address[1]
    assert main(["explain", "default/web", "--endpoint", f"http://127.0.0.1:{port}"]) == 1
    assert capsys.readouterr().err.startswith(
        f"error: cannot reach the scheduler at http://127.0.0.1:{port}:"
    )
    assert main(["explain", "default/web", "--endpoint", "ftp://x"]) == 2


def test_a_pod_groups_standing_is_told_with_the_pod() -> None:
    document = {
        "pod": "ns/g-0",
        "profile": "gangs",
        "node": None,
        "message": "waiting for minCount pods from a gang to appear in scheduling queue",
        "evaluatedNodes": 0,
        "feasibleNodes": 0,
        "filtered": [],
        "candidates": [],
        "podGroup": {
            "namespace": "ns",
            "name": "g",
            "api": "scheduling.k8s.io",
            "gang": True,
            "minimum": 3,
            "members": 2,
            "waitingAtPermit": 0,
            "bound": 0,
            "placed": False,
            "reason": "waiting for minCount pods from a gang to appear in scheduling queue "
            "(2 of 3 members exist)",
        },
    }
    assert format_explanation(document).splitlines()[:4] == [
        "Pod ns/g-0 (profile gangs): not scheduled",
        "  waiting for minCount pods from a gang to appear in scheduling queue",
        "Pod group ns/g (scheduling.k8s.io, a gang of at least 3): 2 members exist, 0 waiting "
        "at Permit, 0 bound",
        "  waiting: waiting for minCount pods from a gang to appear in scheduling queue (2 of 3 "
        "members exist)",
    ]
