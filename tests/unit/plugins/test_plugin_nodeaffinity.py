"""NodeAffinity: nodeSelector, required terms with every operator, matchFields, preferred
terms normalized, and the profile's addedAffinity."""

from __future__ import annotations

from typing import Any

import pytest
from plugin_support import handle_of, make_node, make_pod, run_filter, run_score, snapshot_of

from scheduler_runtime.config.args import NodeAffinityArgs
from scheduler_runtime.framework.interface import Code, CycleState
from scheduler_runtime.framework.snapshot import Snapshot
from scheduler_runtime.plugins.nodeaffinity import NodeAffinity

POD_REASON = "node(s) didn't match Pod's node affinity/selector"


def nodes() -> Snapshot:
    return snapshot_of(
        make_node("gold", labels={"tier": "gold", "cores": "16", "zone": "a"}),
        make_node("silver", labels={"tier": "silver", "cores": "8", "zone": "b"}),
        make_node("bare", labels={"cores": "many"}),
    )


def required(*expressions: dict[str, Any], fields: list[dict[str, Any]] | None = None) -> Any:
    term: dict[str, Any] = {"matchExpressions": list(expressions)}
    if fields:
        term["matchFields"] = fields
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}
        }
    }


def matching(snapshot: Snapshot, **spec: Any) -> set[str]:
    statuses = run_filter(NodeAffinity(None, handle_of(snapshot)), snapshot, make_pod(**spec))
    for status in statuses.values():
        if not status.is_success:
            assert status.reasons == (POD_REASON,)
            assert status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    return {name for name, status in statuses.items() if status.is_success}


def test_node_selector() -> None:
    assert matching(nodes(), nodeSelector={"tier": "gold"}) == {"gold"}
    assert matching(nodes(), nodeSelector={"tier": "gold", "zone": "b"}) == set()


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ({"key": "tier", "operator": "In", "values": ["gold", "silver"]}, {"gold", "silver"}),
        ({"key": "tier", "operator": "NotIn", "values": ["gold"]}, {"silver", "bare"}),
        ({"key": "tier", "operator": "Exists"}, {"gold", "silver"}),
        ({"key": "tier", "operator": "DoesNotExist"}, {"bare"}),
        ({"key": "cores", "operator": "Gt", "values": ["8"]}, {"gold"}),
        ({"key": "cores", "operator": "Lt", "values": ["16"]}, {"silver"}),
        ({"key": "cores", "operator": "Gt", "values": ["x"]}, set()),
        ({"key": "tier", "operator": "In", "values": []}, set()),
        ({"key": "tier", "operator": "Near", "values": ["gold"]}, set()),
    ],
)
def test_required_operators(expression: dict[str, Any], expected: set[str]) -> None:
    assert matching(nodes(), affinity=required(expression)) == expected


def test_terms_are_ored_and_expressions_anded() -> None:
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": "tier", "operator": "Exists"},
                            {"key": "zone", "operator": "In", "values": ["b"]},
                        ]
                    },
                    {"matchExpressions": [{"key": "cores", "operator": "In", "values": ["many"]}]},
                    {},
                ]
            }
        }
    }
    assert matching(nodes(), affinity=affinity) == {"silver", "bare"}


def test_match_fields_give_a_pre_filter_result() -> None:
    snapshot = nodes()
    plugin = NodeAffinity(None, handle_of(snapshot))
    field = {"key": "metadata.name", "operator": "In", "values": ["silver"]}
    pod = make_pod(affinity=required(fields=[field]))
    result, status = plugin.pre_filter(CycleState(), pod, snapshot)
    assert status.is_success
    assert result is not None
    assert result.node_names == frozenset({"silver"})
    assert matching(snapshot, affinity=required(fields=[field])) == {"silver"}


def test_pre_filter_skips_pods_without_constraints() -> None:
    snapshot = nodes()
    _, status = NodeAffinity(None, handle_of(snapshot)).pre_filter(
        CycleState(), make_pod(), snapshot
    )
    assert status.is_skip


def test_added_affinity_is_enforced_first() -> None:
    snapshot = nodes()
    args = NodeAffinityArgs.model_validate(
        {
            "addedAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "tier", "operator": "Exists"}]}
                    ]
                }
            }
        }
    )
    plugin = NodeAffinity(args, handle_of(snapshot))
    statuses = run_filter(plugin, snapshot, make_pod(nodeSelector={"tier": "gold"}))
    assert statuses["bare"].reasons == ("node(s) didn't match scheduler-enforced node affinity",)
    assert statuses["silver"].reasons == (POD_REASON,)
    assert statuses["gold"].is_success


def preferred(*weighted: tuple[int, dict[str, Any]]) -> Any:
    return {
        "nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": weight, "preference": {"matchExpressions": [expression]}}
                for weight, expression in weighted
            ]
        }
    }


def test_preferred_terms_are_summed_and_normalized() -> None:
    snapshot = nodes()
    pod = make_pod(
        affinity=preferred(
            (2, {"key": "cores", "operator": "Exists"}),
            (3, {"key": "tier", "operator": "In", "values": ["gold"]}),
            (0, {"key": "tier", "operator": "Exists"}),
        )
    )
    scores = run_score(NodeAffinity(None, handle_of(snapshot)), snapshot, pod)
    # gold 2 + 3 = 5 -> 100; silver 2 -> 40; bare 2 -> 40
    assert scores == {"gold": 100, "silver": 40, "bare": 40}


def test_no_preferred_terms_skips_scoring() -> None:
    snapshot = nodes()
    assert run_score(NodeAffinity(None, handle_of(snapshot)), snapshot, make_pod()) is None
