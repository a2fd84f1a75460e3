"""The soak run's checks (benchmarks.soak_checks): given the runtime's state and the cluster's
objects, the end check finds what leaked; given watch events, the ledger finds a pod bound
twice, a device in two claims and an over-committed node."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from benchmarks.soak import (
    BOUND,
    DELETED,
    Counts,
    Outcome,
    Run,
    Sample,
    Watched,
    runtime_configuration,
    soak_node,
    soak_pod,
    summary,
)
from benchmarks.soak_checks import (
    BindingLedger,
    ClusterState,
    allocatable,
    find_leaks,
    state_objects,
)
from scheduler_runtime.config import load_configuration

OURS = "soak-runtime"


def pod(name: str, node: str = "", cpu: str = "1", uid: str = "", **extra: Any) -> dict[str, Any]:
    labels = extra.pop("labels", {})
    return {
        "metadata": {
            "name": name,
            "namespace": "ns",
            "uid": uid or f"uid-{name}",
            "labels": labels,
        },
        "spec": {
            "schedulerName": OURS,
            "nodeName": node,
            "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}],
            **extra,
        },
        "status": {},
    }


def claim(name: str, *devices: str, uid: str = "") -> dict[str, Any]:
    results = [{"request": "r", "driver": "d", "pool": "p", "device": d} for d in devices]
    return {
        "metadata": {"name": name, "namespace": "ns", "uid": uid or f"uid-{name}"},
        "status": {"allocation": {"devices": {"results": results}}} if devices else {},
    }


def node(name: str, cpu: str = "2") -> dict[str, Any]:
    return {"metadata": {"name": name}, "status": {"allocatable": {"cpu": cpu, "pods": "110"}}}


def cluster(**objects: Any) -> ClusterState:
    lists = {
        "nodes": [],
        "pods": [],
        "claims": [],
        "slices": [],
        "classes": [],
        "pod_groups": [],
        **objects,
    }
    return ClusterState.of(**lists, scheduler_names=(OURS,))


DRAINED = {
    "active_pods": 0,
    "backoff_pods": 0,
    "unschedulable_pods": 0,
    "gated_pods": 0,
    "in_flight_pods": 0,
    "assumed_pods": 0,
    "nominated_pods": 0,
    "claim_allocations_in_flight": 0,
    "pending_api_calls": 0,
    "nodes": 1,
    "bound_pods": 1,
    "resource_claims": 1,
    "allocated_devices": 1,
    "resource_slices": 0,
    "device_classes": 0,
    "pod_groups": 0,
    "pod_group_objects": 0,
    "pod_group_members": 0,
    "scheduled_pod_groups": 0,
}


def drained_cluster() -> ClusterState:
    return cluster(nodes=[node("n1")], pods=[pod("web", node="n1")], claims=[claim("c", "gpu-0")])


def test_a_drained_runtime_holding_what_the_cluster_justifies_has_no_leak() -> None:
    assert find_leaks(DRAINED, drained_cluster()) == []


def test_each_kind_of_state_left_behind_is_named() -> None:
    state = {
        **DRAINED,
        "unschedulable_pods": 2,
        "assumed_pods": 1,
        "claim_allocations_in_flight": 1,
        "pending_api_calls": 3,
        "pod_groups": 1,
        "scheduled_pod_groups": 4,
    }
    leaks = find_leaks(state, drained_cluster())
    assert [leak.split(":")[0] for leak in leaks] == [
        "unschedulable_pods",
        "assumed_pods",
        "claim_allocations_in_flight",
        "pending_api_calls",
        "pod_groups",
        "scheduled_pod_groups",
    ]
    assert leaks[0] == (
        "unschedulable_pods: the runtime holds 2, the cluster justifies at most 0 (pending "
        "pods of the runtime's schedulers): 2 leaked"
    )


def test_exact_kinds_report_objects_kept_after_deletion_and_objects_lost() -> None:
    state = {**DRAINED, "bound_pods": 3, "resource_claims": 0}
    assert find_leaks(state, drained_cluster()) == [
        "bound_pods: the runtime holds 3, the cluster justifies 1 (bound pods not finished): "
        "2 leaked",
        "resource_claims: the runtime holds 0, the cluster has 1 (ResourceClaims): 1 missing",
    ]


def test_pods_still_pending_justify_queued_state() -> None:
    pending = [pod("a"), pod("b"), pod("gone", labels={})]
    pending[2]["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"  # being deleted
    other = pod("theirs")
    other["spec"]["schedulerName"] = "someone-else"
    state = {**DRAINED, "bound_pods": 0, "active_pods": 2, "in_flight_pods": 1}
    justified = cluster(nodes=[node("n1")], pods=[*pending, other], claims=[claim("c", "gpu-0")])
    assert find_leaks(state, justified) == []
    assert find_leaks({**state, "active_pods": 3}, justified) == [
        "active_pods: the runtime holds 3, the cluster justifies at most 2 (pending pods of "
        "the runtime's schedulers): 1 leaked"
    ]


def test_pod_groups_are_justified_by_members_and_podgroup_objects() -> None:
    members = [pod("m1", labels={"scheduling.x-k8s.io/pod-group": "g1"})]
    members.append(pod("m2", schedulingGroup={"podGroupName": "g2"}))
    groups = [
        {"apiVersion": "scheduling.k8s.io/v1alpha2", "metadata": {"name": "g2", "namespace": "ns"}},
        {"apiVersion": "scheduling.k8s.io/v1alpha2", "metadata": {"name": "g3", "namespace": "ns"}},
    ]
    justified = cluster(pods=members, pod_groups=groups)
    assert (justified.pod_groups, justified.group_members, justified.workload_pod_groups) == (
        3,
        2,
        2,
    )
    state = {"pod_groups": 3, "pod_group_members": 2, "scheduled_pod_groups": 2}
    assert find_leaks(state, justified) == []
    assert find_leaks({**state, "scheduled_pod_groups": 5}, justified) != []


def test_state_is_read_from_the_runtimes_metrics() -> None:
    text = (
        "# HELP scheduler_runtime_state_objects Number of objects\n"
        "# TYPE scheduler_runtime_state_objects gauge\n"
        'scheduler_runtime_state_objects{kind="assumed_pods"} 2.0\n'
        'scheduler_runtime_state_objects{kind="nodes"} 12.0\n'
        'scheduler_pending_pods{queue="active"} 7.0\n'
    )
    assert state_objects(text) == {"assumed_pods": 2, "nodes": 12}


# ----- the ledger


def test_a_pod_bound_to_a_second_node_is_a_double_binding() -> None:
    ledger = BindingLedger({})
    ledger.pod("ADDED", pod("web"))
    ledger.pod("MODIFIED", pod("web", node="n1"))
    ledger.pod("MODIFIED", pod("web", node="n1"))  # a status update: still once
    assert ledger.violations == []
    ledger.pod("MODIFIED", pod("web", node="n2"))
    assert ledger.violations == ["pod ns/web (uid uid-web) bound twice: to n1, then to n2"]
    assert ledger.bindings == 1


def test_a_pod_recreated_under_its_name_is_a_new_pod() -> None:
    ledger = BindingLedger({})
    ledger.pod("MODIFIED", pod("sts-0", node="n1", uid="first"))
    ledger.pod("DELETED", pod("sts-0", node="n1", uid="first"))
    ledger.pod("MODIFIED", pod("sts-0", node="n2", uid="second"))
    assert ledger.violations == []
    assert ledger.bindings == 2


def test_a_node_whose_bound_pods_ask_more_than_it_has_is_over_committed() -> None:
    ledger = BindingLedger({"n1": allocatable(node("n1", cpu="2"))})
    ledger.pod("MODIFIED", pod("a", node="n1", cpu="1500m"))
    ledger.pod("MODIFIED", pod("b", node="n1", cpu="500m"))  # exactly full
    ledger.pod("MODIFIED", pod("elsewhere", node="n9", cpu="64"))  # not the run's node
    assert ledger.violations == []
    ledger.pod("DELETED", pod("b", node="n1", cpu="500m"))
    ledger.pod("MODIFIED", pod("c", node="n1", cpu="500m"))  # b's room, once b is gone
    assert ledger.violations == []
    ledger.pod("MODIFIED", pod("d", node="n1", cpu="100m"))
    assert ledger.violations == [
        "node n1 over-committed in cpu once ns/d was bound: bound pods request 2.1, allocatable 2"
    ]


def test_a_finished_pod_no_longer_counts_against_its_node() -> None:
    ledger = BindingLedger({"n1": allocatable(node("n1", cpu="1"))})
    done = pod("job", node="n1", cpu="1")
    ledger.pod("MODIFIED", done)
    done["status"]["phase"] = "Succeeded"
    ledger.pod("MODIFIED", done)
    ledger.pod("MODIFIED", pod("next", node="n1", cpu="1"))
    assert ledger.violations == []


def test_a_device_allocated_to_two_claims_at_once_is_found() -> None:
    ledger = BindingLedger({})
    ledger.claim("MODIFIED", claim("a", "gpu-0"))
    ledger.claim("MODIFIED", claim("b", "gpu-1"))
    ledger.claim("MODIFIED", claim("a"))  # deallocated: gpu-0 is free again
    ledger.claim("MODIFIED", claim("c", "gpu-0"))
    ledger.claim("DELETED", claim("b", "gpu-1"))
    ledger.claim("MODIFIED", claim("d", "gpu-1"))
    assert ledger.violations == []
    ledger.claim("MODIFIED", claim("e", "gpu-0"))
    assert ledger.violations == ["device d/p/gpu-0 allocated to two claims: ns/c and ns/e"]


def test_a_relist_forgets_what_was_deleted_meanwhile() -> None:
    ledger = BindingLedger({"n1": allocatable(node("n1", cpu="1"))})
    ledger.pod("MODIFIED", pod("a", node="n1", cpu="1"))
    ledger.claim("MODIFIED", claim("a", "gpu-0"))
    ledger.replace_pods([pod("b", node="n1", cpu="1")])  # a went while the watch was down
    ledger.replace_claims([claim("b", "gpu-0")])
    assert ledger.violations == []


def test_a_pod_deleted_by_another_client_before_its_binding_is_not_waited_for() -> None:
    """kwok's final deletion of a terminating pod names no UID: it may remove the pod made
    again under that name, which then can never be bound. The wait says so at once."""

    async def run() -> list[str]:
        watched = Watched(BindingLedger({}))
        await watched.pod("ADDED", pod("sts-0", uid="first"))
        await watched.pod("DELETED", pod("sts-0", uid="first"))
        await watched.pod("ADDED", pod("sts-0", uid="second"))
        await watched.pod("MODIFIED", pod("sts-0", node="n1", uid="second"))
        await watched.pod("ADDED", pod("sts-1", uid="third"))
        await watched.pod("DELETED", pod("sts-1", uid="third"))  # never bound
        await watched.pod("ADDED", pod("sts-2", uid="fourth"))
        hour = 3600.0  # only a bound on a broken test: each wait ends on what was seen
        return [await watched.wait_bound(uid, hour) for uid in ("second", "first", "third")]

    assert asyncio.run(run()) == [BOUND, DELETED, DELETED]


def test_the_runs_pods_go_only_to_its_tainted_nodes() -> None:
    run = Run("abc123", nodes=2)
    made = soak_node(run, 1)
    assert made["metadata"]["name"] == "soak-abc123-node-001"
    (taint,) = made["spec"]["taints"]
    manifest = soak_pod(run, "p")
    assert manifest["spec"]["nodeSelector"] == {taint["key"]: "abc123"}
    assert made["metadata"]["labels"][taint["key"]] == "abc123"
    assert manifest["spec"]["tolerations"][0]["key"] == taint["key"]


def test_the_runtime_configuration_of_a_soak_loads() -> None:
    """One profile for every kind of pod: the default plugins and Coscheduling."""
    (profile,) = load_configuration(runtime_configuration(Path("/kubeconfig"))).profiles
    assert "Coscheduling" in profile.enabled("permit")
    assert "DynamicResources" in profile.enabled("preBind")


def outcome(**changes: Any) -> Outcome:
    samples = [Sample(1.0, 110.0, 44, 6.0, {}), Sample(2.0, 112.5, 45, 0.0, {"nodes": 12})]
    made = Outcome(samples, [], [], [], Counts(created=10), 9, 120.0, {"nodes": 12})
    return Outcome(**{**made.__dict__, **changes})


def test_the_summary_says_ok_only_when_nothing_was_found() -> None:
    assert summary(outcome()).splitlines()[-1].startswith("OK: no leak")
    assert not outcome().failed
    leaked = outcome(leaks=["scheduled_pod_groups: ... 3 leaked"])
    assert leaked.failed
    assert summary(leaked).splitlines()[-2:] == [
        "FAILED:",
        "  leak: scheduled_pod_groups: ... 3 leaked",
    ]
    stuck = outcome(counts=Counts(created=10, not_bound=2), unbound=["sts-1", "sts-2"])
    assert stuck.failed
    assert summary(stuck).splitlines()[-1] == "  not bound within 60 s: 2 pods (sts-1, sts-2)"


def test_pods_deleted_by_another_client_are_said_but_fail_nothing() -> None:
    lost = outcome(counts=Counts(created=10, lost=1), lost=["sts-3"])
    assert not lost.failed
    lines = summary(lost).splitlines()
    assert "1 deleted by another client before their binding, 0 not bound" in lines[0]
    assert lines[-2].startswith("note: deleted by another client before their binding: 1 pods")
    assert lines[-1].startswith("OK: no leak")
