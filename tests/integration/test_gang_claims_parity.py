"""A gang whose members share one ResourceClaim that is not allocated yet (an interconnect
channel every worker uses), side by side with the upstream kube-scheduler of the cluster's
release (the gang gates on) on the gang cluster. The first member tried in the
group's cycle reserves the claim's allocation; the next members share it through the group's
cycle state instead of waiting until it is written. Each scenario runs once for each
scheduler on the same nodes (three kwok nodes a fabric's ResourceSlice reaches, the only
nodes the members select: the gang cluster may hold other tests' nodes), and both must place
the same pods, allocate the claim alike and reserve it for the same pods, or refuse the gang
with the same messages."""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import kubernetes
import pytest
from cluster import Cluster, kwok_node, wait_for
from dra_parity import GROUP, VERSION, ClusterDRA, claim, comparable, device, device_class, exactly
from gang_support import (
    GROUP_CYCLE_137,
    GangRun,
    Outcome,
    Schedulers,
    cannot_satisfy,
    group_refusal,
    member,
    placed_in_refused_group,
    run_both,
    workload_pod_group,
)
from runtime_support import listed_events
from timing import settle

NODES = 3
WAITING = (
    "pod group is unschedulable, waiting for minCount pods from a gang to be scheduled, "
    "one or more plugins asked to wait and no plugin rejected pod"
)


@pytest.fixture(scope="session")
def cluster(workload_cluster: Cluster) -> Cluster:
    """Every fixture of this module works on the gang cluster."""
    return workload_cluster


@dataclass
class Fabric:
    """Three nodes of 4 CPUs, one channel device of a fabric all three reach, its class."""

    nodes: list[str]
    driver: str
    device_class: str
    label: dict[str, str]


@pytest.fixture
def fabric(cluster: Cluster, make_nodes: Callable[..., list[str]]) -> Iterator[Fabric]:
    suffix = uuid.uuid4().hex[:6]
    label = {"fabric": suffix}
    nodes = make_nodes(
        *(kwok_node(f"fabric-{suffix}-{i}", cpu="4", labels=label) for i in range(NODES))
    )
    driver = f"fabric-{suffix}.example.com"
    made = Fabric(nodes, driver, f"channel-{suffix}", label)
    api = kubernetes.client.CustomObjectsApi(cluster.api)
    cls = device_class(made.device_class, f'device.driver == "{driver}"')
    api.create_cluster_custom_object(GROUP, VERSION, "deviceclasses", cls)
    api.create_cluster_custom_object(GROUP, VERSION, "resourceslices", fabric_slice(made))
    settle(1)  # both schedulers' watches see the nodes, the class and the slice first
    yield made
    for plural, name in (("resourceslices", driver), ("deviceclasses", made.device_class)):
        api.delete_cluster_custom_object(GROUP, VERSION, plural, name)


def fabric_slice(made: Fabric) -> dict[str, Any]:
    """The fabric's pool: one channel device, reachable from every node of the fabric."""
    term = {"key": "kubernetes.io/hostname", "operator": "In", "values": made.nodes}
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "ResourceSlice",
        "metadata": {"name": made.driver},
        "spec": {
            "driver": made.driver,
            "pool": {"name": "fabric", "generation": 1, "resourceSliceCount": 1},
            "nodeSelector": {"nodeSelectorTerms": [{"matchExpressions": [term]}]},
            "devices": [device("channel-0")],
        },
    }


def worker(name: str, scheduler: str, fabric: Fabric) -> dict[str, Any]:
    """A member of gang "g" on the fabric's nodes using the shared claim; 3 of a node's 4
    CPUs: one a node."""
    claims = [{"name": "channel", "resourceClaimName": "channel"}]
    return member(name, scheduler, "g", "3", resourceClaims=claims, nodeSelector=dict(fabric.label))


@dataclass
class GangClaimOutcome:
    """A run's pods and group (gang_support's Outcome), the shared claim as it was written
    (allocation, reserved for), and the FailedScheduling messages each pod got."""

    gang: Outcome
    allocation: Any
    reserved_for: list[str]
    failures: dict[str, list[str]]


def decided(run: GangRun, dra: ClusterDRA, names: list[str]) -> GangClaimOutcome:
    outcome = run.outcome()
    (channel,) = dra.claims()
    status = channel.get("status") or {}
    failures = {name: failed_messages(dra, run, name) for name in names}
    return GangClaimOutcome(
        outcome,
        comparable(status.get("allocation")),
        sorted(r["name"] for r in status.get("reservedFor") or ()),
        failures,
    )


def failed_messages(dra: ClusterDRA, run: GangRun, name: str) -> list[str]:
    """Every FailedScheduling message of the pod, oldest first, the namespace left out."""
    events = listed_events(
        dra.api_client, run.namespace, f"regarding.name={name},reason=FailedScheduling"
    )
    return [str(e["note"]).replace(f"{run.namespace}/", "NAMESPACE/") for e in events]


def release(run: GangRun, dra: ClusterDRA) -> None:
    """The run's pods deleted and the channel free again (the resourceclaim controller
    deallocates a claim nobody uses any more) before the other scheduler's run."""
    pods = list(run.current())
    if pods:
        run.delete(*pods)
    wait_for(
        f"the channel of {run.namespace} to be free",
        lambda: all(not (c.get("status") or {}).get("allocation") for c in dra.claims()),
        timeout=60,
    )


def both(
    cluster: Cluster,
    schedulers: Schedulers,
    channel: dict[str, Any],
    play: Callable[[GangRun], list[str]],
) -> dict[str, GangClaimOutcome]:
    """The scenario for each scheduler: the shared claim `channel` made in the run's
    namespace, then `play`, which makes the gang and returns its pods once decided."""
    found: dict[str, GangClaimOutcome] = {}
    which = {name: kind for kind, name in schedulers.names.items()}

    def scenario(run: GangRun) -> Outcome:
        dra = ClusterDRA(cluster, run.namespace)
        dra.create(channel, namespaced=True)
        names = play(run)
        kind = which[run.scheduler]
        found[kind] = decided(run, dra, names)
        print(f"----- {kind}: {found[kind]}")
        release(run, dra)
        return found[kind].gang

    run_both(cluster, schedulers.names, scenario)
    return found


def test_a_gang_sharing_an_unallocated_claim_is_placed_whole(
    cluster: Cluster, gang_schedulers: Schedulers, fabric: Fabric
) -> None:
    """Both place all three members, one a node (every node reaches the channel), allocate
    the channel once and reserve it for every member."""

    def play(run: GangRun) -> list[str]:
        run.pod_groups(workload_pod_group("g", NODES))
        names = [f"w-{i}" for i in range(NODES)]
        run.pods(*(worker(name, run.scheduler, fabric) for name in names))
        run.wait_bound(*names, timeout=90)
        wait_for("the PodGroup's condition", lambda: run.outcome().conditions)
        wait_for(
            "the channel reserved for every member",
            lambda: len(reservations(run)) == NODES,
            timeout=60,
        )
        return names

    found = both(cluster, gang_schedulers, claim("channel", exactly(fabric.device_class)), play)
    upstream, runtime = found["upstream"], found["runtime"]
    for outcome in (upstream, runtime):
        assert sorted(str(n) for n in outcome.gang.nodes.values()) == fabric.nodes, found
        assert outcome.allocation == {
            "devices": {
                "results": [
                    {
                        "request": "gpu",
                        "driver": fabric.driver,
                        "pool": "fabric",
                        "device": "channel-0",
                    }
                ]
            },
            "nodeSelector": fabric_slice(fabric)["spec"]["nodeSelector"],
        }, found
        assert outcome.reserved_for == ["w-0", "w-1", "w-2"], found
        assert outcome.gang.conditions == {"g": ("True", "Scheduled", "")}, found


def test_a_gang_whose_shared_claim_cannot_be_allocated_takes_no_node(
    cluster: Cluster, gang_schedulers: Schedulers, fabric: Fabric
) -> None:
    """The channel asks for two devices of a fabric that has one: neither places any
    member, both say the same, and the claim stays unallocated."""

    def play(run: GangRun) -> list[str]:
        run.pod_groups(workload_pod_group("g", 2))
        names = ["w-0", "w-1"]
        run.pods(*(worker(name, run.scheduler, fabric) for name in names))
        run.wait_decided(*names)
        wait_for("the PodGroup's condition", lambda: run.outcome().conditions)
        return names

    two = claim("channel", exactly(fabric.device_class, count=2))
    found = both(cluster, gang_schedulers, two, play)
    upstream, runtime = found["upstream"], found["runtime"]
    # 1.37: the first member tried does not fit, and one left cannot make two.
    why = group_refusal(2, 0, 1) if GROUP_CYCLE_137 else "pod group is unschedulable"
    for outcome in (upstream, runtime):
        assert outcome.gang.bound == set(), found
        assert (outcome.allocation, outcome.reserved_for) == (None, []), found
        assert outcome.gang.conditions == {"g": ("False", "Unschedulable", why)}, found
    assert Counter(runtime.gang.messages.values()) == Counter(upstream.gang.messages.values())
    if GROUP_CYCLE_137:  # no PostFilter of a member's own; the one not tried: the group's
        unfit = f"0/{NODES} nodes are available: {NODES} cannot allocate all claims."
        assert Counter(upstream.gang.messages.values()) == {unfit: 1, cannot_satisfy(2, 0, 1): 1}
        return
    (message,) = set(upstream.gang.messages.values())
    assert f" {NODES} cannot allocate all claims" in message, found
    assert ". still not schedulable, preemption: " in message, found


def test_a_gang_one_member_short_of_room_leaves_its_shared_claim_unallocated(
    cluster: Cluster, gang_schedulers: Schedulers, fabric: Fabric
) -> None:
    """Four members, room for three: the three that fit share the channel's allocation in
    the group's cycle, the group does not fit, and the cycle's end releases the allocation:
    neither places any member or allocates the claim, and both say the same."""

    def play(run: GangRun) -> list[str]:
        run.pod_groups(workload_pod_group("g", NODES + 1))
        names = [f"w-{i}" for i in range(NODES + 1)]
        run.pods(*(worker(name, run.scheduler, fabric) for name in names))
        run.wait_decided(*names)
        wait_for("the PodGroup's condition", lambda: run.outcome().conditions)
        return names

    found = both(cluster, gang_schedulers, claim("channel", exactly(fabric.device_class)), play)
    upstream, runtime = found["upstream"], found["runtime"]
    for outcome in (upstream, runtime):
        assert outcome.gang.bound == set(), found
        assert (outcome.allocation, outcome.reserved_for) == (None, []), found
    assert Counter(runtime.gang.messages.values()) == Counter(upstream.gang.messages.values())
    # 1.37: three placed, the fourth does not fit, and three cannot make four.
    placed = placed_in_refused_group(NODES + 1, NODES, 0) if GROUP_CYCLE_137 else WAITING
    assert Counter(upstream.gang.messages.values())[placed] == NODES, found
    (short,) = set(upstream.gang.messages.values()) - {placed}
    assert f" {NODES} Insufficient cpu" in short, found


def reservations(run: GangRun) -> list[str]:
    dra = ClusterDRA(run.cluster, run.namespace)
    return [
        r["name"] for c in dra.claims() for r in (c.get("status") or {}).get("reservedFor") or ()
    ]
