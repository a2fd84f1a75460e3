"""scheduler-plugins' PodGroup status as its controller keeps it: the phase machine (Pending,
Scheduling, Running, Finished, Failed), the counts (zero ones left out), occupiedBy, and the
merge patch that writes it."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler_runtime.live.podgroup_status import coscheduling_status, occupied_by, status_patch


def group(min_member: int = 3, **status: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "job", "namespace": "ns"},
        "spec": {"minMember": min_member},
        "status": status,
    }


OWNED = {"metadata": {"namespace": "ns", "ownerReferences": [{"name": "mnist"}, {"name": "a-job"}]}}


@pytest.mark.parametrize(
    ("status", "phases", "wanted"),
    [
        ({}, [], {"phase": "Pending"}),
        ({"phase": "Pending"}, ["Pending"] * 2, None),
        (
            {"phase": "Pending"},
            ["Pending"] * 3,
            {"phase": "Scheduling", "occupiedBy": "ns/a-job,ns/mnist"},
        ),
        (
            {"phase": "Scheduling"},
            ["Running", "Running", "Pending"],
            {"phase": "Scheduling", "running": 2},
        ),
        (
            {"phase": "Scheduling", "running": 2},
            ["Running"] * 3,
            {"phase": "Running", "running": 3},
        ),
        (
            {"phase": "Running", "running": 3},
            ["Running", "Succeeded", "Succeeded"],
            {"phase": "Running", "running": 1, "succeeded": 2},
        ),
        (
            {"phase": "Running", "running": 3},
            ["Succeeded"] * 3,
            {"phase": "Finished", "succeeded": 3},
        ),
        (
            {"phase": "Running", "running": 3},
            ["Running", "Running", "Failed"],
            {"phase": "Failed", "running": 2, "failed": 1},
        ),
        (
            {"phase": "Running", "running": 3},
            ["Running", "Running"],
            {"phase": "Pending", "running": 2},
        ),
        ({"phase": "Finished", "succeeded": 3}, [], None),
        ({"phase": "Failed"}, ["Running"] * 3, None),
    ],
)
def test_the_phase_machine_is_the_controllers(
    status: dict[str, Any], phases: list[str], wanted: dict[str, Any] | None
) -> None:
    assert coscheduling_status(group(**status), phases, OWNED) == wanted


def test_occupied_by_names_the_first_members_owners() -> None:
    assert occupied_by(OWNED) == "ns/a-job,ns/mnist"
    assert occupied_by({"metadata": {"namespace": "ns"}}) == ""
    assert occupied_by(None) == ""


def test_the_patch_sets_what_changed_and_removes_what_is_gone() -> None:
    before = {"phase": "Running", "running": 3}
    after = {"phase": "Finished", "succeeded": 3}
    assert status_patch(before, after) == {
        "status": {"phase": "Finished", "succeeded": 3, "running": None}
    }
