"""Two replicas of the runtime sharing a Lease: only the leader binds, a SIGKILLed leader is
replaced within leaseDuration + retryPeriod, no pod is bound twice or lost, and a clean
shutdown releases the lease."""

from __future__ import annotations

import datetime
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import kubernetes
from cluster import Cluster, kwok_node, wait_for
from fault_support import report
from runtime_support import (
    Pods,
    RuntimeProcess,
    make_pod,
    scheduler_config,
    unique_scheduler_name,
)

LEASE_SECONDS, RENEW_SECONDS, RETRY_SECONDS = 6, 4, 1
# The test polls the lease every 0.2s and the candidates jitter their retries by up to 10%.
MEASUREMENT_SLACK = 0.5


def read_lease(cluster: Cluster, namespace: str, name: str) -> dict[str, Any]:
    coordination = kubernetes.client.CoordinationV1Api(cluster.api)
    lease = coordination.read_namespaced_lease(name, namespace)
    result: dict[str, Any] = cluster.api.sanitize_for_serialization(lease)
    return result


def holder(cluster: Cluster, namespace: str, name: str) -> str:
    try:
        return str(read_lease(cluster, namespace, name)["spec"].get("holderIdentity") or "")
    except kubernetes.client.ApiException:
        return ""


def scheduled_by(pods: Pods) -> dict[str, list[str]]:
    """For each pod, the instances that reported binding it."""
    reporters: dict[str, list[str]] = {}
    for event in pods.events():
        if event["reason"] == "Scheduled":
            reporters.setdefault(event["regarding"]["name"], []).append(event["reportingInstance"])
    return reporters


def test_only_the_leader_binds_and_a_killed_leader_is_replaced(
    cluster: Cluster,
    schedulable_nodes,
    namespace: str,
    pods: Pods,
    start_runtime: Callable[..., RuntimeProcess],
) -> None:
    schedulable_nodes(kwok_node("le-1"), kwok_node("le-2"))
    scheduler = unique_scheduler_name()
    lease_name = f"{scheduler}-lease"
    config = scheduler_config(
        scheduler,
        lease={
            "resourceName": lease_name,
            "resourceNamespace": namespace,
            "leaseDuration": f"{LEASE_SECONDS}s",
            "renewDeadline": f"{RENEW_SECONDS}s",
            "retryPeriod": f"{RETRY_SECONDS}s",
        },
    )
    replicas = {
        name: start_runtime(config, name=name, ready=False) for name in ("replica-a", "replica-b")
    }
    leader_identity = wait_for("a leader", lambda: holder(cluster, namespace, lease_name))
    leader_name = leader_identity.split("_", 1)[0]
    (follower_name,) = set(replicas) - {leader_name}
    for replica in replicas.values():
        replica.wait_ready()  # the follower is ready too: it follows a healthy leader
    lease = read_lease(cluster, namespace, lease_name)["spec"]
    assert lease["leaseDurationSeconds"] == LEASE_SECONDS
    assert lease["acquireTime"]
    assert lease["renewTime"]

    first = [f"before-{i}" for i in range(10)]
    pods.create(*(make_pod(name, scheduler, cpu="100m") for name in first))
    pods.wait_placed(*first)
    reporters = wait_for(
        "a Scheduled event per pod", lambda: (r := scheduled_by(pods)) and len(r) == 10 and r
    )
    assert set(reporters) == set(first)
    assert {tuple(r) for r in reporters.values()} == {(f"{scheduler}-{leader_name}",)}

    replicas[leader_name].kill()
    killed_at = time.monotonic()
    second = [f"after-{i}" for i in range(10)]
    pods.create(*(make_pod(name, scheduler, cpu="100m") for name in second))
    new_holder = wait_for(
        "the follower to take the lease",
        lambda: (h := holder(cluster, namespace, lease_name)).startswith(follower_name) and h,
        timeout=3 * LEASE_SECONDS,
        interval=0.2,
    )
    handover = time.monotonic() - killed_at
    report(f"leader killed: the follower took the lease {handover:.1f}s later")
    assert handover <= LEASE_SECONDS + RETRY_SECONDS + MEASUREMENT_SLACK, handover
    assert new_holder.startswith(f"{follower_name}_")
    assert read_lease(cluster, namespace, lease_name)["spec"]["leaseTransitions"] == (
        lease["leaseTransitions"] + 1
    )

    pods.wait_placed(*first, *second)
    reporters = wait_for(
        "a Scheduled event per pod", lambda: (r := scheduled_by(pods)) and len(r) == 20 and r
    )
    assert Counter(len(r) for r in reporters.values()) == {1: 20}, reporters  # none bound twice
    assert {reporters[name][0] for name in second} == {f"{scheduler}-{follower_name}"}

    assert replicas[follower_name].stop() == 0
    released = read_lease(cluster, namespace, lease_name)["spec"]
    assert not released.get("holderIdentity")
    assert released["leaseDurationSeconds"] == 1


def test_a_leader_that_loses_its_lease_stops_at_once(
    cluster: Cluster,
    schedulable_nodes,
    namespace: str,
    pods: Pods,
    start_runtime: Callable[..., RuntimeProcess],
) -> None:
    schedulable_nodes(kwok_node("lost-1"))
    scheduler = unique_scheduler_name()
    lease_name = f"{scheduler}-lease"
    config = scheduler_config(
        scheduler,
        lease={
            "resourceName": lease_name,
            "resourceNamespace": namespace,
            "leaseDuration": f"{LEASE_SECONDS}s",
            "renewDeadline": f"{RENEW_SECONDS}s",
            "retryPeriod": f"{RETRY_SECONDS}s",
        },
    )
    replica = start_runtime(config, name="only")
    wait_for(
        "the replica to lead", lambda: holder(cluster, namespace, lease_name).startswith("only_")
    )

    # Another party takes the lease over (as a client-go scheduler whose clock ran ahead might).
    coordination = kubernetes.client.CoordinationV1Api(cluster.api)
    lease = coordination.read_namespaced_lease(lease_name, namespace)
    lease.spec.holder_identity = "intruder_0"
    lease.spec.renew_time = datetime.datetime.now(datetime.UTC)
    coordination.replace_namespaced_lease(lease_name, namespace, lease)

    exited = wait_for(
        "the replica to stop", lambda: replica.process.poll() is not None, timeout=3 * RETRY_SECONDS
    )
    assert exited
    assert replica.process.returncode == 1
    assert "lost lease" in replica.log()
    pods.create(make_pod("orphan", scheduler))
    time.sleep(2)
    assert pods.nodes()["orphan"] is None
