"""Who may serve a scheduler name: the earliest claim, never the default scheduler's."""

from __future__ import annotations

from typing import Any

import pytest
from scheduler_operator.claims import claim_conflict, claimed, first_claim, successors
from scheduler_operator.parsing import parse


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
        # Named like components, their Leases still cannot be taken: they are prefixed.
        ("kube-scheduler", {}, None),
        ("kube-controller-manager", {}, None),
        ("solo", {}, None),
    ],
)
def test_claim_conflicts(name: str, spec: dict[str, Any], expected: str | None) -> None:
    assert claim_conflict(profile(name, **spec), CLAIMS) == expected


def test_a_profile_claims_each_of_its_names_from_its_creation_time() -> None:
    body = {
        "metadata": {"name": "two", "creationTimestamp": "2026-01-04T00:00:00Z"},
        "spec": {"schedulerName": "main", "profiles": [{}, {"schedulerName": "extra"}]},
    }
    claim = ("2026-01-04T00:00:00Z", "two")
    assert claimed(body) == {"main": claim, "extra": claim}
    assert claimed({"metadata": {"name": "bad"}, "spec": {"replicas": 0}}) == {}


def test_the_next_claimant_succeeds_a_deleted_profile() -> None:
    released = {"metadata": {"name": "gone"}, "spec": {"schedulerName": "batch"}}
    assert successors(CLAIMS, released) == {"earlier"}
    assert successors(CLAIMS, {"metadata": {"name": "alone"}, "spec": {}}) == set()
