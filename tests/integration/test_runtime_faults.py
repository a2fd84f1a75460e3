"""Faults against the real control plane, as the reliability guarantees (docs/reliability.md)
promise: a leader frozen past its lease binds nothing when it wakes while a new leader
schedules the rest; a relist after the watch expired forgets pods deleted meanwhile, on the
leader and on followers; stopping under load leaves no traceback. Each test prints what the
fault did to its pods (created / bound / lost / bound twice / nodes over-committed)."""

from __future__ import annotations

import datetime
import re
import time
from collections.abc import Callable

import kubernetes
import pytest
from cluster import Cluster, kwok_node, wait_for
from fault_support import (
    binding_latency,
    compact_etcd,
    create_all,
    freeze,
    kill_component,
    pending,
    report,
    settled,
    start_stopped_components,
    tally,
    thaw,
)
from runtime_support import (
    Pods,
    RuntimeProcess,
    make_pod,
    scheduler_config,
    unique_scheduler_name,
)
from sample_plugin import MISBEHAVE_LABEL
from test_runtime_leader_election import holder

LEASE_SECONDS, RENEW_SECONDS, RETRY_SECONDS = 6, 4, 1
NODE_CPU = "4"
SLOW = {"preFilter": {"enabled": [{"name": "Misbehaving"}]}}


def lease(namespace: str, name: str, duration: int, deadline: int, retry: int) -> dict[str, str]:
    return {
        "resourceName": name,
        "resourceNamespace": namespace,
        "leaseDuration": f"{duration}s",
        "renewDeadline": f"{deadline}s",
        "retryPeriod": f"{retry}s",
    }


def log_after(runtime: RuntimeProcess, offset: int) -> str:
    return runtime.log()[offset:]


def test_a_leader_frozen_past_its_lease_binds_nothing_when_it_wakes(
    cluster: Cluster,
    schedulable_nodes: Callable[..., list[str]],
    namespace: str,
    pods: Pods,
    priority_class: str,
    start_runtime: Callable[..., RuntimeProcess],
) -> None:
    """The leader is frozen with bindings decided and waiting for its client's rate limit;
    meanwhile a new leader fills every node with higher priority pods created during the
    freeze. On waking, those bindings would land on full nodes: fenced, none is sent, the old
    leader exits, and the new leader places the pods once room is made."""
    nodes = schedulable_nodes(*(kwok_node(f"frz-{i}", cpu=NODE_CPU) for i in range(8)))
    allocatable = dict.fromkeys(nodes, NODE_CPU)
    capacity = len(nodes) * int(NODE_CPU)
    scheduler = unique_scheduler_name()
    lease_name = f"{scheduler}-lease"
    config = {
        **scheduler_config(
            scheduler,
            lease=lease(namespace, lease_name, LEASE_SECONDS, RENEW_SECONDS, RETRY_SECONDS),
        ),
        # A slow client: bindings wait for the rate limiter, as under a burst of pods.
        "clientConnection": {"qps": 5, "burst": 5},
    }
    replicas = {
        name: start_runtime(config, name=name, ready=False)
        for name in ("replica-a", "replica-b", "replica-c")
    }
    leader_name = wait_for("a leader", lambda: holder(cluster, namespace, lease_name)).split("_")[0]
    leader = replicas[leader_name]
    for replica in replicas.values():
        replica.wait_ready()

    early = [f"early-{i}" for i in range(24)]
    create_all(cluster, namespace, (make_pod(name, scheduler, cpu="1") for name in early))
    wait_for(
        "the leader's first bindings",
        lambda: sum(1 for node in pods.nodes().values() if node) >= 3,
        interval=0.1,
    )
    freeze(leader)
    frozen_at = time.monotonic()
    time.sleep(1)  # bindings already sent land
    bound_before = {name for name, node in pods.nodes().items() if node}
    # Higher priority pods that fill what is left: the new leader places them first.
    filling = [f"filling-{i}" for i in range(capacity - len(bound_before))]
    create_all(
        cluster,
        namespace,
        (make_pod(name, scheduler, cpu="1", priorityClassName=priority_class) for name in filling),
    )
    wait_for(
        "a follower to take the lease",
        lambda: not holder(cluster, namespace, lease_name).startswith(leader_name),
        timeout=4 * LEASE_SECONDS,
        interval=0.2,
    )
    taken_after = time.monotonic() - frozen_at
    pods.wait_placed(*filling, timeout=90)
    offset = len(leader.log())
    thaw(leader)
    thawed_at = time.monotonic()
    wait_for("the thawed leader to exit", lambda: leader.process.poll() is not None, timeout=30)
    exited_after = time.monotonic() - thawed_at
    time.sleep(2)  # any binding it sent has landed by now
    stale = [name for name, node in pods.nodes().items() if node and name in early]
    stale = sorted(set(stale) - bound_before)
    settled(pods, [*early, *filling], timeout=30)

    after_thaw = tally(cluster, pods, allocatable, [*early, *filling])
    report(
        f"frozen leader: {len(bound_before)} bound before the freeze, lease taken "
        f"{taken_after:.1f}s into it, exited {exited_after:.2f}s after waking, "
        f"{len(stale)} bound after waking; {after_thaw}"
    )
    woke = log_after(leader, offset)
    assert leader.process.returncode == 1, woke
    # A binding that landed before the freeze may be logged only after it (its thread was
    # frozen in between): no pod bound after waking is what counts.
    logged = set(re.findall(r'Successfully bound pod to node pod="[^/"]*/([^"]+)"', woke))
    assert logged <= bound_before, woke
    assert "Traceback" not in woke
    assert stale == []
    assert after_thaw.over_committed == {}, after_thaw
    assert after_thaw.bound == capacity  # nothing beyond the nodes' room
    assert after_thaw.lost == 0
    assert after_thaw.bound_twice == 0

    # The new leader schedules the rest once room is made, and over-commits nothing.
    waiting = [name for name, node in pods.nodes().items() if not node]
    core = kubernetes.client.CoreV1Api(cluster.api)
    made_room = filling[: len(waiting)]
    for name in made_room:
        core.delete_namespaced_pod(name, namespace, grace_period_seconds=0)
    pods.wait_placed(*waiting, timeout=90)
    settled(pods, [*early, *filling], timeout=30)
    final = tally(cluster, pods, allocatable, [*early, *filling[len(waiting) :]])
    report(
        f"frozen leader, after room was made: {final}; in flight: the API server answered "
        f"{binding_latency(cluster)}"
    )
    assert final.over_committed == {}, final
    assert final.bound_twice == 0
    assert final.lost == 0


def test_a_relist_after_the_watch_expired_forgets_pods_deleted_meanwhile(
    cluster: Cluster,
    schedulable_nodes: Callable[..., list[str]],
    namespace: str,
    pods: Pods,
    start_runtime: Callable[..., RuntimeProcess],
) -> None:
    """Both replicas are frozen while the API server restarts and pending pods are deleted
    (and etcd compacted); on waking, their pod watches resume from a resourceVersion no longer
    served (410), and the relist must drop the deleted pods from every queue."""
    (node,) = schedulable_nodes(kwok_node("relist-1", cpu=NODE_CPU))
    scheduler = unique_scheduler_name()
    lease_name = f"{scheduler}-lease"
    # A lease long enough to outlast the restart: the leader stays the leader.
    config = scheduler_config(scheduler, lease=lease(namespace, lease_name, 120, 90, 2))
    replicas = {
        name: start_runtime(config, name=name, ready=False) for name in ("leader", "follower")
    }
    first = wait_for("a leader", lambda: holder(cluster, namespace, lease_name)).split("_")[0]
    for replica in replicas.values():
        replica.wait_ready()
    leader = replicas[first]
    (follower,) = (r for name, r in replicas.items() if name != first)

    too_big = [f"too-big-{i}" for i in range(5)]
    gated = [f"gated-{i}" for i in range(3)]
    create_all(
        cluster,
        namespace,
        [
            *(make_pod(name, scheduler, cpu="100") for name in too_big),
            *(
                make_pod(name, scheduler, schedulingGates=[{"name": "faults.test/hold"}])
                for name in gated
            ),
        ],
    )
    wait_for(
        "the leader to hold them",
        lambda: pending(leader) == {"active": 0, "backoff": 0, "unschedulable": 5, "gated": 3},
    )
    wait_for(
        "the follower to hold them",
        lambda: pending(follower) == {"active": 5, "backoff": 0, "unschedulable": 0, "gated": 3},
    )
    offsets = {name: len(replica.log()) for name, replica in replicas.items()}

    for replica in replicas.values():
        freeze(replica)
    try:
        # A write after the last event they saw: the restarted API server's watch cache starts
        # past their resourceVersion, so they cannot resume (410 Gone), and must list again.
        cluster.kubectl("create", "configmap", "moved-on", "-n", namespace)
        kill_component(cluster, "kube-apiserver")
        start_stopped_components(cluster)
        cluster.kubectl("delete", "pods", "-n", namespace, *too_big, *gated, "--wait=true")
        compact_etcd(cluster)  # no resuming from before: only a relist helps
    finally:
        for replica in replicas.values():
            thaw(replica)

    empty = {"active": 0, "backoff": 0, "unschedulable": 0, "gated": 0}
    relisted = {
        name: wait_until(lambda replica=replica: pending(replica) == empty, timeout=30)  # type: ignore[misc]
        for name, replica in replicas.items()
    }
    # A cluster event that would retry unschedulable pods retries none of the deleted ones
    # (before the pods were listed again, a node's relist may have retried them).
    since = len(leader.log())
    cluster.kubectl("label", "node", node, "faults=relisted")
    pods.create(make_pod("after", scheduler, cpu="1"))
    assert pods.wait_placed("after") == {"after": node}
    time.sleep(2)
    retried = [
        line
        for line in log_after(leader, since).splitlines()
        if "Unable to schedule pod" in line and any(f"/{name}" in line for name in too_big)
    ]
    left = {name: pending(replica) for name, replica in replicas.items()}
    report(
        f"relist after 410: {len(too_big) + len(gated)} pending pods deleted while the watch "
        f"was down; still pending {left}; deleted pods retried {len(retried)} times on one "
        f"cluster event; {tally(cluster, pods, {node: NODE_CPU}, ['after'])}"
    )
    for name, replica in replicas.items():
        assert "pods: resourceVersion" in log_after(replica, offsets[name])  # ... expired
        assert relisted[name], f"the {name} still counts deleted pods: {left[name]}"
        assert replica.process.poll() is None
    assert retried == []


def wait_until(probe: Callable[[], bool], timeout: float) -> bool:
    """Whether probe() turned true within `timeout`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if probe():
            return True
        time.sleep(0.5)
    return False


OUTAGE_SECONDS = 8  # longer than renewDeadline (4 s) and leaseDuration (6 s)


def logged_at(log: str, text: str) -> datetime.datetime | None:
    """When a runtime first logged a line containing `text` (its log's local time)."""
    for line in log.splitlines():
        if text in line:
            return datetime.datetime.strptime(line[:23], "%Y-%m-%d %H:%M:%S,%f")
    return None


@pytest.mark.parametrize("component", ["kube-apiserver", "etcd"])
def test_scheduling_resumes_after_a_control_plane_outage(
    cluster: Cluster,
    schedulable_nodes: Callable[..., list[str]],
    namespace: str,
    pods: Pods,
    start_runtime: Callable[..., RuntimeProcess],
    component: str,
) -> None:
    """Down longer than renewDeadline: the leader cannot renew, so it stops and exits, binding
    nothing meanwhile; once the component is back, the follower takes the lease and places what
    was created around the outage. No pod is bound twice or lost."""
    nodes = schedulable_nodes(*(kwok_node(f"outage-{i}", cpu="32") for i in range(2)))
    scheduler = unique_scheduler_name()
    lease_name = f"{scheduler}-lease"
    config = scheduler_config(
        scheduler,
        lease=lease(namespace, lease_name, LEASE_SECONDS, RENEW_SECONDS, RETRY_SECONDS),
    )
    replicas = {name: start_runtime(config, name=name, ready=False) for name in ("a", "b")}
    first = wait_for("a leader", lambda: holder(cluster, namespace, lease_name)).split("_")[0]
    for replica in replicas.values():
        replica.wait_ready()
    leader = replicas[first]
    (follower,) = (r for name, r in replicas.items() if name != first)
    before = [f"before-{i}" for i in range(20)]
    create_all(cluster, namespace, (make_pod(name, scheduler, cpu="100m") for name in before))
    pods.wait_placed(*before)

    down_at = datetime.datetime.now()
    kill_component(cluster, component)
    time.sleep(OUTAGE_SECONDS)
    start_stopped_components(cluster)
    back = time.monotonic()
    after = [f"after-{i}" for i in range(20)]
    create_all(cluster, namespace, (make_pod(name, scheduler, cpu="100m") for name in after))
    wait_for(
        "a pod created after the outage to be placed",
        lambda: any(pods.nodes().get(name) for name in after),
        timeout=90,
        interval=0.2,
    )
    resumed_after = time.monotonic() - back
    pods.wait_placed(*after, timeout=90)
    settled(pods, [*before, *after])
    outcome = tally(cluster, pods, dict.fromkeys(nodes, "32"), [*before, *after])
    gave_up = logged_at(leader.log(), "not renewed in time")
    report(
        f"{component} down {OUTAGE_SECONDS}s: the leader gave up "
        f"{(gave_up - down_at).total_seconds():.1f}s into the outage; "
        f"the first pod created after it was placed {resumed_after:.1f}s after the API server "
        f"answered again; {outcome}"
        if gave_up
        else f"{component} down {OUTAGE_SECONDS}s: the leader kept its lease; {outcome}"
    )
    assert leader.process.poll() == 1  # it lost the lease, and said so
    assert gave_up is not None
    assert follower.process.poll() is None
    assert holder(cluster, namespace, lease_name).startswith(f"{follower.name}_")
    assert outcome.bound == outcome.created
    assert outcome.lost == outcome.bound_twice == 0
    assert outcome.over_committed == {}
    assert "Traceback" not in leader.log() + follower.log()
    # Controllers that gave up their own leases meanwhile are started again for later tests.
    time.sleep(max(0.0, 12 - (time.monotonic() - back)))
    start_stopped_components(cluster)


def test_a_deleted_node_gets_no_more_pods(
    cluster: Cluster,
    schedulable_nodes: Callable[..., list[str]],
    namespace: str,
    pods: Pods,
    start_runtime: Callable[..., RuntimeProcess],
) -> None:
    """A node deleted mid-run leaves the cache with its watch event: pods created after that
    go to the nodes left, none to the deleted one."""
    kept, lost = schedulable_nodes(
        kwok_node("node-kept", cpu="64"), kwok_node("node-lost", cpu="64")
    )
    scheduler = unique_scheduler_name()
    start_runtime(scheduler_config(scheduler))
    first = [f"first-{i}" for i in range(20)]
    create_all(cluster, namespace, (make_pod(name, scheduler, cpu="100m") for name in first))
    assert set(pods.wait_placed(*first).values()) == {kept, lost}  # spread over both
    kubernetes.client.CoreV1Api(cluster.api).delete_node(lost)
    wait_for("the node to be gone", lambda: lost not in cluster.kubectl("get", "nodes").stdout)
    deleted_at = time.monotonic()
    second = [f"second-{i}" for i in range(40)]
    create_all(cluster, namespace, (make_pod(name, scheduler, cpu="100m") for name in second))
    placed = pods.wait_placed(*second)
    report(
        f"node deleted: {len(second)} pods created after it, placed within "
        f"{time.monotonic() - deleted_at:.1f}s, all on {set(placed.values())}"
    )
    assert set(placed.values()) == {kept}


def stopped_under_load(
    cluster: Cluster,
    namespace: str,
    start_runtime: Callable[..., RuntimeProcess],
    config: dict[str, object],
    scheduler: str,
    stop: Callable[[RuntimeProcess], None],
) -> RuntimeProcess:
    """Starts a runtime on a backlog of pods, and stops it (as `stop` does) as soon as it binds
    the first: its loop is then busy with the rest, each cycle lasting 5 ms longer (a sample
    plugin's PreFilter waits that long, as a cluster of thousands of nodes would)."""
    spread = {"app": "load"}
    backlog = [
        make_pod(
            f"load-{i}",
            scheduler,
            cpu="10m",
            labels={**spread, MISBEHAVE_LABEL: "slow"},
            topologySpreadConstraints=[
                {
                    "maxSkew": 1,
                    "topologyKey": "kubernetes.io/hostname",
                    "whenUnsatisfiable": "ScheduleAnyway",
                    "labelSelector": {"matchLabels": spread},
                }
            ],
        )
        for i in range(200)
    ]
    create_all(cluster, namespace, backlog)
    runtime = start_runtime(config, name="loaded", ready=False)
    wait_for(
        "the runtime to bind its first pod",
        lambda: "Successfully bound" in runtime.log(),
        timeout=60,
        interval=0.05,
    )
    stop(runtime)
    wait_for("the runtime to exit", lambda: runtime.process.poll() is not None, timeout=60)
    return runtime


def test_stopping_under_load_logs_no_traceback(
    cluster: Cluster,
    schedulable_nodes: Callable[..., list[str]],
    namespace: str,
    pods: Pods,
    start_runtime: Callable[..., RuntimeProcess],
) -> None:
    schedulable_nodes(*(kwok_node(f"load-{i}", cpu="64") for i in range(20)))
    scheduler = unique_scheduler_name()
    runtime = stopped_under_load(
        cluster,
        namespace,
        start_runtime,
        scheduler_config(scheduler, plugins=SLOW),
        scheduler,
        lambda runtime: runtime.process.terminate(),
    )
    assert runtime.process.returncode == 0, runtime.log()[-3000:]
    assert "Traceback" not in runtime.log()


def test_losing_the_lease_under_load_logs_no_traceback(
    cluster: Cluster,
    schedulable_nodes: Callable[..., list[str]],
    namespace: str,
    pods: Pods,
    start_runtime: Callable[..., RuntimeProcess],
) -> None:
    schedulable_nodes(*(kwok_node(f"lost-load-{i}", cpu="64") for i in range(20)))
    scheduler = unique_scheduler_name()
    lease_name = f"{scheduler}-lease"
    # Renewing often, it finds the lease taken within a fraction of a second, mid-backlog.
    config = scheduler_config(scheduler, lease=lease(namespace, lease_name, 6, 4, 1), plugins=SLOW)
    config["leaderElection"]["retryPeriod"] = "200ms"  # type: ignore[index]

    def take_the_lease(_: RuntimeProcess) -> None:
        # The holder renews every 200 ms: a renewal between our read and our write is a
        # conflict, and we read again, as any contender would.
        coordination = kubernetes.client.CoordinationV1Api(cluster.api)
        for _attempt in range(50):
            taken = coordination.read_namespaced_lease(lease_name, namespace)
            taken.spec.holder_identity = "intruder_0"
            try:
                coordination.replace_namespaced_lease(lease_name, namespace, taken)
                return
            except kubernetes.client.exceptions.ApiException as error:
                if error.status != 409:
                    raise
        raise AssertionError("the lease kept changing under 50 attempts to take it")

    runtime = stopped_under_load(
        cluster, namespace, start_runtime, config, scheduler, take_the_lease
    )
    assert runtime.process.returncode == 1, runtime.log()[-3000:]
    assert "lost lease" in runtime.log()
    assert "Traceback" not in runtime.log()
