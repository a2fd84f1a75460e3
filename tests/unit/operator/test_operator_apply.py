"""What the applier must clear before applying: leftovers of the API server's defaults."""

from __future__ import annotations

from typing import Any

from scheduler_operator.apply import owned_alike, stale_rolling_update


def deployment(strategy: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "Deployment", "metadata": {"name": "s"}, "spec": {"strategy": strategy}}


DEFAULTED = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}}


def test_a_defaulted_rolling_update_is_cleared_before_switching_to_recreate() -> None:
    assert stale_rolling_update(deployment(DEFAULTED), deployment({"type": "Recreate"})) == {
        "spec": {"strategy": {"type": "Recreate", "rollingUpdate": None}}
    }


def test_nothing_is_cleared_otherwise() -> None:
    assert stale_rolling_update(deployment(DEFAULTED), deployment(DEFAULTED)) is None
    recreate = deployment({"type": "Recreate"})
    assert stale_rolling_update(recreate, recreate) is None
    account = {"kind": "ServiceAccount", "metadata": {"name": "s"}}
    assert stale_rolling_update(account, account) is None


def owned_by(*references: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": "s", "ownerReferences": list(references)}}


def test_only_objects_this_profile_controls_are_applied_over() -> None:
    ours = {"uid": "u-1", "controller": True, "kind": "SchedulerProfile"}
    desired = owned_by(ours)
    assert owned_alike(owned_by(ours), desired)
    assert not owned_alike(owned_by(), desired)
    assert not owned_alike({"metadata": {"name": "s"}}, desired)
    assert not owned_alike(owned_by({**ours, "uid": "u-2"}), desired)
    assert not owned_alike(owned_by({**ours, "controller": False}), desired)
