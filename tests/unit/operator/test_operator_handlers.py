"""The pure helpers behind the handlers: who may serve a name, what counts as drift."""

from __future__ import annotations

from typing import Any

import pytest
from scheduler_operator.handlers import claim_conflict, contains, controller_of, first_claim
from scheduler_operator.model import parse


def profile(name: str, **spec: Any) -> Any:
    return parse({"metadata": {"name": name, "uid": f"uid-{name}"}, "spec": spec})


CLAIMS: Any = {
    "batch": [("2026-01-02T00:00:00Z", "later"), ("2026-01-01T00:00:00Z", "earlier")],
    "solo": [("2026-01-03T00:00:00Z", "solo")],
}


def test_the_earliest_claim_wins() -> None:
    assert first_claim(CLAIMS, "batch") == "earlier"
    assert first_claim(CLAIMS, "unclaimed") is None


@pytest.mark.parametrize(
    ("name", "spec", "expected"),
    [
        ("earlier", {"schedulerName": "batch"}, None),
        (
            "later",
            {"schedulerName": "batch"},
            "schedulerName 'batch' is already served by SchedulerProfile 'earlier'",
        ),
        (
            "later",
            {"schedulerName": "own", "profiles": [{}, {"schedulerName": "batch"}]},
            "schedulerName 'batch' is already served by SchedulerProfile 'earlier'",
        ),
        (
            "mine",
            {"schedulerName": "default-scheduler"},
            "schedulerName 'default-scheduler' belongs to the cluster's default scheduler",
        ),
        (
            "kube-scheduler",
            {},
            "schedulerName 'kube-scheduler' names the default scheduler's Lease",
        ),
        ("solo", {}, None),
    ],
)
def test_claim_conflicts(name: str, spec: dict[str, Any], expected: str | None) -> None:
    assert claim_conflict(profile(name, **spec), CLAIMS) == expected


@pytest.mark.parametrize(
    ("actual", "desired", "expected"),
    [
        ({"a": 1, "defaulted": 2}, {"a": 1}, True),
        ({"a": 1}, {"a": 2}, False),
        ({}, {"a": 1}, False),
        ({"l": [{"x": 1, "y": 2}]}, {"l": [{"x": 1}]}, True),
        ({"l": [{"x": 1}, {"x": 2}]}, {"l": [{"x": 1}]}, False),
        ({"d": {"config.yaml": "tampered"}}, {"d": {"config.yaml": "original"}}, False),
        ({"n": "1"}, {"n": 1}, False),
    ],
)
def test_drift_is_any_rendered_field_missing_or_changed(
    actual: dict[str, Any], desired: dict[str, Any], expected: bool
) -> None:
    assert contains(actual, desired) is expected


def test_only_a_schedulerprofile_owner_counts() -> None:
    owned = {
        "metadata": {
            "ownerReferences": [
                {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "x", "uid": "1"},
                {
                    "apiVersion": "scheduling.schedops.io/v1alpha1",
                    "kind": "SchedulerProfile",
                    "name": "batch",
                    "uid": "2",
                },
            ]
        }
    }
    found = controller_of(owned)
    assert found is not None
    assert found["name"] == "batch"
    assert controller_of({"metadata": {}}) is None
