"""Label selectors (metav1.LabelSelector) and the snapshot's label index that finds the pods
a selector matches."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scheduler_runtime.framework.labelselector import (
    NOTHING,
    SelectorError,
    parse_selector,
    selector_from_labels,
)
from scheduler_runtime.framework.podinfo import pod_info
from scheduler_runtime.framework.snapshot import Snapshot


@pytest.mark.parametrize(
    ("selector", "labels", "matches"),
    [
        ({}, {}, True),
        ({"matchLabels": {"a": "1"}}, {"a": "1", "b": "2"}, True),
        ({"matchLabels": {"a": "1"}}, {"a": "2"}, False),
        (
            {"matchExpressions": [{"key": "a", "operator": "In", "values": ["1", "2"]}]},
            {"a": "2"},
            True,
        ),
        ({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["1"]}]}, {}, True),
        (
            {"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["1"]}]},
            {"a": "1"},
            False,
        ),
        ({"matchExpressions": [{"key": "a", "operator": "Exists"}]}, {"a": ""}, True),
        ({"matchExpressions": [{"key": "a", "operator": "DoesNotExist"}]}, {"a": ""}, False),
        (
            {
                "matchLabels": {"a": "1"},
                "matchExpressions": [{"key": "b", "operator": "Exists"}],
            },
            {"a": "1"},
            False,
        ),
    ],
)
def test_selector_semantics(
    selector: dict[str, Any], labels: dict[str, str], matches: bool
) -> None:
    assert parse_selector(selector).matches(labels) is matches


def test_missing_selector_matches_nothing_and_empty_everything() -> None:
    assert parse_selector(None) is NOTHING
    assert not NOTHING.matches({})
    assert parse_selector({}).everything


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        (
            {"key": "a", "operator": "In"},
            "labelSelector.matchExpressions[0].values: must be non-empty for operator In",
        ),
        (
            {"key": "a", "operator": "Exists", "values": ["x"]},
            "labelSelector.matchExpressions[0].values: must be empty for operator Exists",
        ),
        (
            {"key": "a", "operator": "Has"},
            "labelSelector.matchExpressions[0].operator: 'Has' is not a valid selector operator",
        ),
        ({"operator": "Exists"}, "labelSelector.matchExpressions[0].key: must not be empty"),
    ],
)
def test_invalid_selectors_name_the_field(expression: dict[str, Any], message: str) -> None:
    with pytest.raises(SelectorError) as failure:
        parse_selector({"matchExpressions": [expression]})
    assert str(failure.value) == message


labels_strategy = st.dictionaries(st.sampled_from("abc"), st.sampled_from(["1", "2"]), max_size=3)


@given(wanted=labels_strategy, labels=labels_strategy)
def test_selector_from_labels_is_a_subset_test(
    wanted: dict[str, str], labels: dict[str, str]
) -> None:
    expected = all(labels.get(k) == v for k, v in wanted.items())
    assert selector_from_labels(wanted).matches(labels) is expected


@given(
    pods=st.lists(labels_strategy, max_size=12),
    selector=st.sampled_from(
        [
            {"matchLabels": {"a": "1"}},
            {"matchExpressions": [{"key": "b", "operator": "In", "values": ["1", "2"]}]},
            {
                "matchLabels": {"a": "1"},
                "matchExpressions": [{"key": "c", "operator": "NotIn", "values": ["1"]}],
            },
            {"matchExpressions": [{"key": "a", "operator": "DoesNotExist"}]},
            {},
        ]
    ),
)
def test_label_index_finds_exactly_what_a_scan_finds(
    pods: list[dict[str, str]], selector: dict[str, Any]
) -> None:
    snapshot = Snapshot()
    snapshot.add_node({"metadata": {"name": "n1"}, "status": {"allocatable": {}}})
    for index, labels in enumerate(pods):
        snapshot.add_pod(
            pod_info(
                {"metadata": {"name": f"p{index}", "labels": labels}, "spec": {"nodeName": "n1"}}
            )
        )
    parsed = parse_selector(selector)
    scanned = {p.key for p in snapshot.pods() if parsed.matches(p.labels)}
    assert {p.key for p in snapshot.pods_matching(parsed)} == scanned
    for index in range(0, len(pods), 2):
        snapshot.remove_pod(f"default/p{index}")
    scanned = {p.key for p in snapshot.pods() if parsed.matches(p.labels)}
    assert {p.key for p in snapshot.pods_matching(parsed)} == scanned
