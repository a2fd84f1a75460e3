"""Conditions: transition times move only on change; Ready summarises config and Deployment."""

from __future__ import annotations

from typing import Any

from scheduler_operator import status


def deployment(replicas: int = 2, ready: int = 2, available: str = "True") -> dict[str, Any]:
    return {
        "metadata": {"generation": 3},
        "spec": {"replicas": replicas},
        "status": {
            "observedGeneration": 3,
            "replicas": replicas,
            "updatedReplicas": replicas,
            "readyReplicas": ready,
            "availableReplicas": ready,
            "conditions": [
                {
                    "type": "Available",
                    "status": available,
                    "reason": "MinimumReplicasAvailable",
                    "message": "Deployment has minimum availability.",
                }
            ],
        },
    }


VALID = status.condition(status.CONFIG_VALID, True, "ConfigAccepted", "ok", 1)


def test_transition_time_moves_only_when_the_status_changes() -> None:
    first = status.merge_conditions([], [VALID], "t1")
    assert first[0]["lastTransitionTime"] == "t1"
    same = status.merge_conditions(first, [{**VALID, "message": "still ok"}], "t2")
    assert same[0]["lastTransitionTime"] == "t1"
    assert same[0]["message"] == "still ok"
    flipped = status.merge_conditions(same, [{**VALID, "status": "False"}], "t3")
    assert flipped[0]["lastTransitionTime"] == "t3"


def test_ready_when_configuration_is_valid_and_every_replica_is_ready() -> None:
    live = deployment()
    ready = status.ready(VALID, status.available(live, 1), live, 1)
    assert (ready["status"], ready["reason"]) == ("True", "SchedulerReady")


def test_not_ready_while_rolling_out() -> None:
    live = deployment(ready=1)
    ready = status.ready(VALID, status.available(live, 1), live, 1)
    assert (ready["status"], ready["reason"]) == ("False", "RollingOut")
    assert ready["message"] == "rolling out: 2/2 updated, 1 ready"


def test_available_follows_the_deployment() -> None:
    assert status.available(None, 1)["reason"] == "DeploymentMissing"
    down = status.available(deployment(available="False"), 1)
    assert down["status"] == "False"
    ready = status.ready(VALID, down, deployment(available="False"), 1)
    assert ready["reason"] == "Unavailable"


def test_an_invalid_configuration_is_the_ready_reason() -> None:
    invalid = status.condition(status.CONFIG_VALID, False, "InvalidSpec", "spec.x: bad", 2)
    live = deployment()
    ready = status.ready(invalid, status.available(live, 2), live, 2)
    assert (ready["status"], ready["reason"], ready["message"]) == (
        "False",
        "InvalidSpec",
        "spec.x: bad",
    )
