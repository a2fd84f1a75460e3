"""Drift: what counts as a changed child, and which owner counts."""

from __future__ import annotations

from typing import Any

import pytest
from scheduler_operator.drift import contains, controller_of


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
