"""Conditions: transition times move only on change; Ready summarises config and Deployment."""

from __future__ import annotations

from typing import Any

from scheduler_operator import status
from scheduler_operator.status_model import MAX_MESSAGE


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


def pod(name: str, ready: bool = True, **status: Any) -> dict[str, Any]:
    condition = {"type": "Ready", "status": "True" if ready else "False"}
    return {"metadata": {"name": name}, "status": {"conditions": [condition], **status}}


def lease(holder: str) -> dict[str, Any]:
    return {"spec": {"holderIdentity": holder}}


PODS = [pod("tenant-1"), pod("tenant-2")]
LEADING = status.Running(deployment(), PODS, "schedulerprofile.tenant", lease("tenant-2_4f1c"))


def ready_of(running: status.Running, config: dict[str, Any] = VALID) -> dict[str, Any]:
    return status.ready(config, status.available(running.deployment, 1), running, 1)


def test_ready_when_configuration_is_valid_every_replica_is_ready_and_one_leads() -> None:
    ready = ready_of(LEADING)
    assert (ready["status"], ready["reason"]) == ("True", "SchedulerReady")
    assert ready["message"] == "2/2 replicas ready, tenant-2 leads"
    assert status.running_summary(LEADING)["leader"] == "tenant-2_4f1c"


def test_without_leader_election_ready_follows_the_replicas() -> None:
    ready = ready_of(status.Running(deployment(), PODS))
    assert (ready["status"], ready["message"]) == ("True", "2/2 replicas ready")


def test_ready_pods_that_do_not_hold_the_lease_are_not_ready() -> None:
    for holder, held in (("", "not held"), ("intruder_1", "held by intruder_1")):
        ready = ready_of(
            status.Running(deployment(), PODS, "schedulerprofile.tenant", lease(holder))
        )
        assert (ready["status"], ready["reason"]) == ("False", "NotLeading")
        assert ready["message"] == (
            f"2/2 replicas ready, but none leads: the Lease schedulerprofile.tenant is {held}"
        )
    # A holder that only shares a prefix with a pod's name is someone else.
    other = status.Running(deployment(), PODS, "l", lease("tenant-22_x"))
    assert ready_of(other)["reason"] == "NotLeading"
    # A pod that holds the Lease but is not ready (or is going away) does not lead.
    leaving = [pod("tenant-1"), {**pod("tenant-2"), "metadata": {"name": "tenant-2",
               "deletionTimestamp": "2026-01-01T00:00:00Z"}}]  # fmt: skip
    assert ready_of(status.Running(deployment(), leaving, "l", lease("tenant-2_x")))["reason"] == (
        "NotLeading"
    )


def test_a_pod_that_cannot_start_is_the_reason_in_kubectl_words() -> None:
    waiting = {
        "waiting": {"reason": "ImagePullBackOff", "message": 'Back-off pulling image "nope:1"'}
    }
    stuck = pod(
        "tenant-1", ready=False, containerStatuses=[{"name": "scheduler", "state": waiting}]
    )
    ready = ready_of(status.Running(deployment(ready=1), [stuck, pod("tenant-2")]))
    assert (ready["status"], ready["reason"]) == ("False", "ImagePullBackOff")
    assert ready["message"] == 'pod tenant-1: Back-off pulling image "nope:1"'
    crashing = {"waiting": {"reason": "CrashLoopBackOff"}}
    looping = pod("tenant-1", ready=False, containerStatuses=[{"state": crashing}])
    assert ready_of(status.Running(deployment(), [looping]))["message"] == (
        "pod tenant-1: CrashLoopBackOff"
    )


def test_a_pod_that_cannot_be_placed_is_the_reason() -> None:
    why = "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector."
    unplaced = {
        "type": "PodScheduled",
        "status": "False",
        "reason": "Unschedulable",
        "message": why,
    }
    pending = {"metadata": {"name": "tenant-1"}, "status": {"conditions": [unplaced]}}
    ready = ready_of(status.Running(deployment(ready=0), [pending]))
    assert (ready["reason"], ready["message"]) == (
        "Unschedulable",
        f"pod tenant-1: {unplaced['message']}",
    )


def test_a_pod_starting_normally_is_not_a_failure() -> None:
    creating = {"waiting": {"reason": "ContainerCreating"}}
    starting = pod("tenant-1", ready=False, containerStatuses=[{"state": creating}])
    assert (
        ready_of(status.Running(deployment(ready=0), [starting]))["reason"] != "ContainerCreating"
    )


def test_not_ready_while_rolling_out() -> None:
    ready = ready_of(status.Running(deployment(ready=1)))
    assert (ready["status"], ready["reason"]) == ("False", "RollingOut")
    assert ready["message"] == "rolling out: 2/2 updated, 1 ready"


def test_available_follows_the_deployment() -> None:
    assert status.available(None, 1)["reason"] == "DeploymentMissing"
    down = status.available(deployment(available="False"), 1)
    assert down["status"] == "False"
    ready = status.ready(VALID, down, status.Running(deployment(available="False")), 1)
    assert ready["reason"] == "Unavailable"


def test_an_invalid_configuration_is_the_ready_reason() -> None:
    invalid = status.condition(status.CONFIG_VALID, False, "InvalidSpec", "spec.x: bad", 2)
    ready = status.ready(invalid, status.available(deployment(), 2), LEADING, 2)
    assert (ready["status"], ready["reason"], ready["message"]) == (
        "False",
        "InvalidSpec",
        "spec.x: bad",
    )


def refusal(reason: str, message: str) -> dict[str, Any]:
    return status.refused({}, 2, reason, message)


def test_a_new_refusal_is_an_event_and_the_same_one_again_is_not() -> None:
    invalid = refusal("InvalidSpec", "spec.x: bad")
    assert status.events({}, invalid) == [status.Event("Warning", "InvalidSpec", "spec.x: bad")]
    assert status.events(invalid, invalid) == []
    other = refusal("InvalidSpec", "spec.y: bad")
    assert status.events(invalid, other) == [status.Event("Warning", "InvalidSpec", "spec.y: bad")]
    conflict = refusal("SchedulerNameConflict", "schedulerName 'x' is already served")
    assert [e.reason for e in status.events(invalid, conflict)] == ["SchedulerNameConflict"]


def test_a_failed_apply_is_an_event_once() -> None:
    failed = status.apply_failed({}, VALID, "ConfigMap ns/x already exists", 2)
    assert status.events({}, failed) == [
        status.Event("Warning", "ApplyFailed", "ConfigMap ns/x already exists")
    ]
    assert status.events(failed, failed) == []


def test_a_new_configuration_rolling_out_is_an_event() -> None:
    ready = status.availability({}, VALID, LEADING, 2)
    assert status.events({"configHash": "a1", **ready}, {"configHash": "a1", **ready}) == []
    assert status.events({"configHash": "a1", **ready}, {"configHash": "b2", **ready}) == [
        status.Event("Normal", "RollingOut", "configuration b2 is rolling out (was a1)")
    ]
    # The first configuration is created, not rolled out.
    assert status.events({}, {"configHash": "a1", **ready}) == []


def test_a_message_longer_than_the_api_takes_is_cut() -> None:
    long = status.condition("Ready", False, "InvalidSpec", "x" * 100_000, 1)
    assert len(long["message"]) == MAX_MESSAGE
    assert long["message"].endswith("...")
    assert status.condition("Ready", False, "InvalidSpec", "short", 1)["message"] == "short"
