"""Gangs of `scheduling.k8s.io` PodGroups (v1alpha2 on 1.36, v1beta1 on 1.37), side by side
with the upstream kube-scheduler of the cluster's release (the gang gates on), on the gang
cluster: each scenario runs once for each scheduler on the same nodes, and both must place the
same pods, tell the pods left pending the same thing and set the same PodGroupScheduled
(1.37: PodGroupInitiallyScheduled) conditions. A
watcher checks every run for the gang invariant: no group partly bound, nothing reserved for a
group that does not fit."""

from __future__ import annotations

import json
import re
import subprocess
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import kubernetes
import pytest
from cluster import Cluster, kwok_node, wait_for
from gang_support import (
    GROUP_CYCLE_137,
    NO_GROUP_VICTIMS,
    UPSTREAM_GATES,
    GangRun,
    Outcome,
    Schedulers,
    cannot_satisfy,
    gang_nodes,
    group_attempts,
    group_refusal,
    lone_pod,
    member,
    placed_in_refused_group,
    run_both,
    workload_pod_group,
)
from runtime_support import RUNTIME
from timing import settle

WAITING = (
    "pod group is unschedulable, waiting for minCount pods from a gang to be scheduled, "
    "one or more plugins asked to wait and no plugin rejected pod"
)
JOB_PODS = 4  # each Job's parallelism and completions


def no_cpu(nodes: int) -> str:
    """A group member no node fits: in 1.37's group cycle it gets no PostFilter of its own."""
    if GROUP_CYCLE_137:
        return f"0/{nodes} nodes are available: {nodes} Insufficient cpu."
    return (
        f"0/{nodes} nodes are available: {nodes} Insufficient cpu. no new claims to deallocate, "
        f"preemption: 0/{nodes} nodes are available: {nodes} No preemption victims found for "
        "incoming pod."
    )


@pytest.fixture(scope="session")
def cluster(workload_cluster: Cluster) -> Cluster:
    """Every fixture of this module works on the gang cluster."""
    return workload_cluster


@pytest.fixture
def two_nodes(make_nodes: Callable[..., list[str]]) -> list[str]:
    """Two kwok nodes of 4 CPUs, for this test alone."""
    names = make_nodes(*gang_nodes(f"gang-{uuid.uuid4().hex[:6]}"))
    settle(1)  # the schedulers' node watches see them before any pod comes
    return names


def same(
    outcomes: dict[str, Outcome], *, messages: bool = True, conditions: bool = True
) -> Outcome:
    """Both schedulers did the same: as many pods bound, the same messages for the pods left
    pending (as a multiset: which of equal pods fits first is the arrival order's), the same
    PodGroup conditions, no nominated node left on a pending pod. The runtime's outcome."""
    upstream, runtime = outcomes["upstream"], outcomes["runtime"]
    assert len(runtime.bound) == len(upstream.bound), outcomes
    if messages:
        assert Counter(runtime.messages.values()) == Counter(upstream.messages.values()), outcomes
    if conditions:
        assert runtime.conditions == upstream.conditions, outcomes
    assert runtime.nominated == upstream.nominated == {}, outcomes
    return runtime


def test_a_gang_that_fits_is_placed_whole(
    cluster: Cluster, gang_schedulers: Schedulers, two_nodes: list[str]
) -> None:
    def scenario(run: GangRun) -> Outcome:
        run.pod_groups(workload_pod_group("g", 3))
        run.pods(*(member(f"g-{i}", run.scheduler, "g", "1") for i in range(3)))
        run.wait_bound("g-0", "g-1", "g-2")
        wait_for("the PodGroup's condition", lambda: run.outcome().conditions)
        return run.outcome()

    outcome = same(run_both(cluster, gang_schedulers.names, scenario))
    assert outcome.bound == {"g-0", "g-1", "g-2"}
    assert outcome.conditions == {"g": ("True", "Scheduled", "")}


def test_a_gang_that_does_not_fit_takes_no_node(
    cluster: Cluster, gang_schedulers: Schedulers, two_nodes: list[str]
) -> None:
    def scenario(run: GangRun) -> Outcome:
        run.pod_groups(workload_pod_group("g", 3))
        run.pods(*(member(f"g-{i}", run.scheduler, "g", "3") for i in range(3)))
        run.wait_decided("g-0", "g-1", "g-2")
        wait_for("the PodGroup's condition", lambda: run.outcome().conditions)
        return run.outcome()

    outcome = same(run_both(cluster, gang_schedulers.names, scenario))
    assert outcome.bound == set()
    # Two members fit, each seeing the one before placed; the third does not.
    if GROUP_CYCLE_137:  # PlacementFeasible: 2 scheduled, 0 remaining, 3 needed
        placed, why = placed_in_refused_group(3, 2, 0), group_refusal(3, 2, 0)
    else:
        placed, why = WAITING, "pod group is unschedulable"
    assert Counter(outcome.messages.values()) == {placed: 2, no_cpu(2): 1}
    assert outcome.conditions == {"g": ("False", "Unschedulable", why)}


def test_a_minimum_below_the_size_places_the_minimum(
    cluster: Cluster, gang_schedulers: Schedulers, two_nodes: list[str]
) -> None:
    def scenario(run: GangRun) -> Outcome:
        run.pod_groups(workload_pod_group("g", 2))
        run.pods(*(member(f"g-{i}", run.scheduler, "g", "2500m") for i in range(3)))
        run.wait_decided("g-0", "g-1", "g-2")
        return run.outcome()

    # Upstream's condition may end False: the cycle for the member left over reads the
    # PodGroup from its informer, which may not show the True written a moment before yet.
    outcome = same(run_both(cluster, gang_schedulers.names, scenario), conditions=False)
    assert len(outcome.bound) == 2
    assert list(outcome.messages.values()) == [no_cpu(2)]
    assert outcome.conditions == {"g": ("True", "Scheduled", "")}


def test_two_gangs_competing_for_room_for_one_take_turns(
    cluster: Cluster, gang_schedulers: Schedulers, two_nodes: list[str]
) -> None:
    def scenario(run: GangRun) -> Outcome:
        run.pod_groups(workload_pod_group("a", 2), workload_pod_group("b", 2))
        for name in ("a-0", "b-0", "a-1", "b-1"):
            run.pods(member(name, run.scheduler, name[0], "2500m"))
        run.wait_bound("a-0", "a-1")
        run.wait_decided("b-0", "b-1")
        first = run.outcome()
        assert first.bound == {"a-0", "a-1"}, first
        run.delete("a-0", "a-1")  # the first gang ends: the second takes its room
        run.wait_bound("b-0", "b-1")
        return first

    outcome = same(run_both(cluster, gang_schedulers.names, scenario))
    # 1.37: b's first member does not fit, and one left cannot make two.
    why = group_refusal(2, 0, 1) if GROUP_CYCLE_137 else "pod group is unschedulable"
    assert outcome.conditions == {
        "a": ("True", "Scheduled", ""),
        "b": ("False", "Unschedulable", why),
    }


def test_members_created_before_their_podgroup_wait_for_it(
    cluster: Cluster, gang_schedulers: Schedulers, two_nodes: list[str]
) -> None:
    def scenario(run: GangRun) -> Outcome:
        run.pods(*(member(f"g-{i}", run.scheduler, "g", "1") for i in range(2)))
        settle(2)
        held = run.outcome()
        run.pod_groups(workload_pod_group("g", 2))
        run.wait_bound("g-0", "g-1")
        return held

    outcome = same(run_both(cluster, gang_schedulers.names, scenario))
    # Held out of the queue by PreEnqueue: never tried, so nothing reported.
    assert (outcome.bound, outcome.messages) == (set(), {})


def test_fewer_members_than_the_minimum_are_never_tried(
    cluster: Cluster, gang_schedulers: Schedulers, two_nodes: list[str]
) -> None:
    def scenario(run: GangRun) -> Outcome:
        run.pod_groups(workload_pod_group("g", 3))
        run.pods(*(member(f"g-{i}", run.scheduler, "g", "1") for i in range(2)))
        settle(2)
        held = run.outcome()
        run.pods(member("g-2", run.scheduler, "g", "1"))
        run.wait_bound("g-0", "g-1", "g-2")
        return held

    outcome = same(run_both(cluster, gang_schedulers.names, scenario))
    assert (outcome.bound, outcome.messages, outcome.conditions) == (set(), {}, {})


def test_a_member_deleted_while_the_gang_waits_leaves_the_rest_unplaced(
    cluster: Cluster, gang_schedulers: Schedulers, two_nodes: list[str]
) -> None:
    def scenario(run: GangRun) -> Outcome:
        run.pods(lone_pod("blocker", run.scheduler, "3"))
        run.wait_bound("blocker")
        run.pod_groups(workload_pod_group("g", 3))
        run.pods(*(member(f"g-{i}", run.scheduler, "g", "2") for i in range(3)))
        run.wait_decided("g-0", "g-1", "g-2")
        run.delete("g-2")
        run.delete("blocker")  # room now, but the gang is one member short
        settle(3)
        if GROUP_CYCLE_137 and run.scheduler == gang_schedulers.names["upstream"]:
            # Its last try of the short group (below) comes after a backoff: on a busy machine,
            # later than the 3 s above.
            wait_for(
                "upstream's last try of the short group",
                lambda: run.outcome().conditions.get("g", ("", "", ""))[1] == "SchedulerError",
            )
        short = run.outcome()
        run.pods(member("g-2", run.scheduler, "g", "2"))
        run.wait_bound("g-0", "g-1", "g-2")
        return short

    # Upstream keeps trying the two left (it pops them from backoff without asking PreEnqueue
    # again), so its last messages say they fit once the blocker is gone; the runtime holds
    # them back as soon as the group is short, and its messages are those of the last try.
    # 1.37 tries the short group once more: PlacementFeasible refuses it before any member
    # reaches PreFilter, and DynamicResources' PodGroupPostFilter then fails for want of the
    # state PreFilter writes: the group's condition says that error. The runtime, holding
    # the members back, keeps the refusal of the last try.
    outcomes = run_both(cluster, gang_schedulers.names, scenario)
    outcome = same(outcomes, messages=False, conditions=not GROUP_CYCLE_137)
    assert outcome.bound == set()
    assert set(outcome.nodes) == {"g-0", "g-1"}
    if GROUP_CYCLE_137:
        error = 'error in "DynamicResources" PodGroupPostFilter plugins: not found'
        assert outcomes["upstream"].conditions == {"g": ("False", "SchedulerError", error)}
        assert outcome.conditions == {"g": ("False", "Unschedulable", group_refusal(3, 2, 0))}


def test_the_job_controllers_podgroup_for_a_job_of_parallelism_4(
    cluster: Cluster, gang_schedulers: Schedulers, two_nodes: list[str]
) -> None:
    def scenario(run: GangRun) -> Outcome:
        """A Job that fits, then (once it is gone) one of which only two pods would fit."""
        batch = kubernetes.client.BatchV1Api(cluster.api)
        found = {}
        for name, cpu in (("fits", "1"), ("too-big", "3")):
            batch.create_namespaced_job(run.namespace, job(name, run.scheduler, cpu))
            wait_for(
                f"the Job controller's PodGroup for {name} to be placed or refused",
                lambda name=name: any(g.startswith(name) for g in run.outcome().conditions),
            )
            if GROUP_CYCLE_137:
                # kwok completes a Job's pods as soon as they run, and 1.37's gang admits
                # the rest as they free the nodes: what the pods left pending say depends
                # on that race, where the two schedulers end up does not.
                wait_for(
                    f"Job {name} to complete",
                    lambda name=name: (
                        (batch.read_namespaced_job(name, run.namespace).status.succeeded or 0)
                        == JOB_PODS
                    ),
                )
            elif name == "too-big":
                run.wait_decided(*run.current())
            found[name] = run.outcome()
            batch.delete_namespaced_job(name, run.namespace, propagation_policy="Foreground")
            wait_for(f"the pods of Job {name} to be gone", lambda: not run.current())
        fits, too_big = found["fits"], found["too-big"]
        # The Job controller names its PodGroups after the Job, with a hash of its own (a
        # deleted Job's may outlive it a while: 1.37's is owned by its Workload).
        conditions = {
            job_name: condition
            for job_name, outcome in found.items()
            for group, condition in outcome.conditions.items()
            if group.startswith(job_name)
        }
        return Outcome({**fits.nodes, **too_big.nodes}, too_big.messages, conditions)

    outcome = same(run_both(cluster, gang_schedulers.names, scenario))
    if GROUP_CYCLE_137:
        # 1.37's Job controller makes the PodGroup its own way (the Workload's template, a
        # minCount it keeps in step with the Job): the gang takes two pods at a time and
        # both Jobs run to completion with either scheduler.
        assert len(outcome.bound) == 2 * JOB_PODS
        assert outcome.conditions == {
            "fits": ("True", "Scheduled", ""),
            "too-big": ("True", "Scheduled", ""),
        }
        return
    assert outcome.conditions == {
        "fits": ("True", "Scheduled", ""),
        "too-big": ("False", "Unschedulable", "pod group is unschedulable"),
    }
    assert {pod.rsplit("-", 2)[0] for pod in outcome.bound} == {"fits"}
    assert Counter(outcome.messages.values()) == {WAITING: 2, no_cpu(2): 2}


def job(name: str, scheduler: str, cpu: str) -> dict[str, Any]:
    """An Indexed Job with completions == parallelism 4: the Job controller makes its Workload
    and a gang PodGroup of 4 (WorkloadWithJob)."""
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {
            "parallelism": JOB_PODS,
            "completions": JOB_PODS,
            "completionMode": "Indexed",
            "template": {
                "spec": {
                    "schedulerName": scheduler,
                    "restartPolicy": "Never",
                    "terminationGracePeriodSeconds": 0,
                    "containers": [
                        {"name": "c", "image": "pause", "resources": {"requests": {"cpu": cpu}}}
                    ],
                }
            },
        },
    }


def test_a_gang_that_cannot_fit_is_tried_again_only_when_something_changes(
    cluster: Cluster, gang_schedulers: Schedulers, two_nodes: list[str]
) -> None:
    """kube-scheduler 1.36 keeps trying a gang that does not fit, in a loop (it pops the gang
    from backoff whenever nothing else is ready); the runtime tries it again only on a
    cluster event that could help one of its members."""
    runs = {which: GangRun(cluster, name) for which, name in gang_schedulers.names.items()}
    try:
        for run in runs.values():
            run.pod_groups(workload_pod_group("g", 3))
            run.pods(*(member(f"g-{i}", run.scheduler, "g", "5") for i in range(3)))
        for run in runs.values():
            run.wait_decided("g-0", "g-1", "g-2")

        def attempts() -> dict[str, int]:
            status, text = gang_schedulers.runtime.get("/metrics", as_admin=True)
            assert status == 200, text
            return {
                "runtime": group_attempts(text, gang_schedulers.names["runtime"]),
                "upstream": group_attempts(
                    gang_schedulers.upstream.metrics(), gang_schedulers.names["upstream"]
                ),
            }

        settle(2)
        before = attempts()
        settle(5)
        after = attempts()
        print(f"pod group cycles in 5s with nothing changing: {before} -> {after}")
        assert after["runtime"] == before["runtime"] >= 1
        if GROUP_CYCLE_137:  # 1.37 retries the gang after a backoff, no longer in a loop
            assert 0 <= after["upstream"] - before["upstream"] < 100
        else:
            assert after["upstream"] - before["upstream"] > 100  # the loop this goes past
        for run in runs.values():
            run.check_invariant()
    finally:
        for run in runs.values():
            run.close()


TOPOLOGY_GATES = f"{UPSTREAM_GATES},TopologyAwareWorkloadScheduling=true"


@pytest.fixture
def racks(make_nodes: Callable[..., list[str]]) -> list[str]:
    """Four kwok nodes of 4 CPUs in two racks (label `rack`); rack-b's second node is small."""
    prefix = f"rack-{uuid.uuid4().hex[:6]}"
    shapes = (("a", "4"), ("a", "4"), ("b", "4"), ("b", "1"))
    names = make_nodes(
        *(
            kwok_node(f"{prefix}-{rack}{i}", cpu=cpu, memory="16Gi", labels={"rack": rack})
            for i, (rack, cpu) in enumerate(shapes)
        )
    )
    settle(1)
    return names


def in_a_rack(name: str, min_count: int) -> dict[str, Any]:
    return workload_pod_group(
        name, min_count, schedulingConstraints={"topology": [{"key": "rack"}]}
    )


def test_a_gang_with_a_topology_constraint_is_placed_within_one_rack(
    cluster: Cluster, start_gang_schedulers: Callable[[str], Schedulers], racks: list[str]
) -> None:
    """TopologyAwareWorkloadScheduling: the group is tried within each rack and placed in the
    one where most of it fits (PodGroupPodsCount); a group no rack can hold is refused in
    upstream's words."""
    schedulers = start_gang_schedulers(TOPOLOGY_GATES)
    rack_of = {name: name.rsplit("-", 1)[1][0] for name in racks}

    def scenario(run: GangRun) -> Outcome:
        # Rack a holds four members of g, rack b two: both hold its minimum. The PodGroup
        # comes last, so the group is tried with all four (two alone might go to either).
        run.pods(*(member(f"g-{i}", run.scheduler, "g", "2") for i in range(4)))
        settle(1)
        run.pod_groups(in_a_rack("g", 2), in_a_rack("big", 5))
        run.wait_bound("g-0", "g-1", "g-2", "g-3")
        run.pods(*(member(f"big-{i}", run.scheduler, "big", "2") for i in range(5)))
        run.wait_decided(*(f"big-{i}" for i in range(5)))
        wait_for("both PodGroups' conditions", lambda: len(run.outcome().conditions) == 2)
        return run.outcome()

    # 1.37's first placement's status names how far the group got there, and kube-scheduler
    # lists the racks in a Go map's order: either rack may come first, so the condition is
    # one of two.
    outcomes = run_both(cluster, schedulers.names, scenario)
    outcome = same(outcomes, messages=False, conditions=not GROUP_CYCLE_137)
    assert {rack_of[node] for node in outcome.nodes.values() if node} == {"a"}
    assert outcome.bound == {"g-0", "g-1", "g-2", "g-3"}
    if not GROUP_CYCLE_137:
        assert outcome.conditions["big"] == (
            "False",
            "Unschedulable",
            "0/2 placements are available, first placement status: pod group is unschedulable",
        )
        return
    # In rack a nothing fits (four left cannot make five); in rack b two do, then not the third.
    firsts = (cannot_satisfy(5, 0, 4), cannot_satisfy(5, 2, 2))
    either = {
        f"pod group is unschedulable, 0/2 placements are available, first placement status: "
        f"{first}, {NO_GROUP_VICTIMS}"
        for first in firsts
    }
    for made in outcomes.values():
        state, reason, message = made.conditions["big"]
        assert (state, reason) == ("False", "Unschedulable"), outcomes
        assert message in either, outcomes


def test_explain_says_why_a_gang_waits(
    cluster: Cluster, gang_schedulers: Schedulers, two_nodes: list[str]
) -> None:
    """The runtime's /explain (and `scheduler-runtime explain`) for a member of a gang: how
    many members exist against the minimum, how many wait at Permit or are bound, and why
    the group waits, from before its first try."""
    runtime = gang_schedulers.runtime
    run = GangRun(cluster, gang_schedulers.names["runtime"])
    try:
        run.pod_groups(workload_pod_group("short", 3), workload_pod_group("big", 2))
        run.pods(*(member(f"short-{i}", run.scheduler, "short", "1") for i in range(2)))
        run.pods(*(member(f"big-{i}", run.scheduler, "big", "5") for i in range(2)))
        run.wait_decided("big-0", "big-1")

        def explained(pod: str) -> dict[str, Any]:
            status, body = runtime.get(f"/explain/{run.namespace}/{pod}", as_admin=True)
            assert status == 200, body
            document: dict[str, Any] = json.loads(body)
            return document

        short = wait_for(
            "short-0 to be explained as held",
            lambda: (found := explained("short-0"))["podGroup"]["members"] == 2 and found,
        )
        assert short["podGroup"] == {
            "namespace": run.namespace, "name": "short", "api": "scheduling.k8s.io",
            "gang": True, "minimum": 3, "members": 2, "waitingAtPermit": 0, "bound": 0,
            "placed": False,
            "reason": "waiting for minCount pods from a gang to appear in scheduling queue "
            "(2 of 3 members exist)",
        }  # fmt: skip
        big = explained("big-0")
        why = group_refusal(2, 0, 1) if GROUP_CYCLE_137 else "pod group is unschedulable"
        assert big["podGroup"]["reason"] == why
        # 1.37's cycle stops after the first member tried: the other was not tried.
        tried = [explained(name)["message"] for name in ("big-0", "big-1")]
        assert any(m.startswith("0/2 nodes are available: 2 Insufficient cpu.") for m in tried), (
            tried
        )
        shown = subprocess.run(
            [str(RUNTIME), "explain", f"{run.namespace}/short-0", "--endpoint",
             f"https://127.0.0.1:{runtime.secure_port}", "--kubeconfig", str(cluster.kubeconfig),
             "--insecure-skip-tls-verify"],
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        assert (
            f"Pod group {run.namespace}/short (scheduling.k8s.io, a gang of at least 3): "
            "2 members exist, 0 waiting at Permit, 0 bound"
        ) in shown
    finally:
        run.close()


# ----- pod group preemption (1.37)


@pytest.fixture
def preemption_nodes(make_nodes: Callable[..., list[str]]) -> dict[str, Any]:
    """Two kwok nodes of 4 CPUs with a label and a taint of their own: the pods of the
    preemption tests select and tolerate them (the spec they add), so neither scheduler's dry
    run reaches another test's nodes and no other test's pod takes room on these."""
    label = f"pgp-{uuid.uuid4().hex[:6]}"
    taint = {"key": "pgp", "value": label, "effect": "NoSchedule"}
    make_nodes(*gang_nodes(label, labels={"pgp": label}, taints=(taint,)))
    settle(1)
    return {"nodeSelector": {"pgp": label}, "tolerations": [{**taint, "operator": "Equal"}]}


@pytest.fixture
def high_priority(cluster: Cluster) -> Iterator[str]:
    """A PriorityClass of 1000 for the gangs (pods without a class have priority 0)."""
    name = f"pgp-high-{uuid.uuid4().hex[:6]}"
    api = kubernetes.client.SchedulingV1Api(cluster.api)
    api.create_priority_class({"metadata": {"name": name}, "value": 1000})
    yield name
    api.delete_priority_class(name)


def fill_with_low_priority(run: GangRun, own: dict[str, Any]) -> list[str]:
    """Two pods of 2 CPUs and priority 0 on each node, bound by the run's scheduler."""
    names = [f"low-{i}" for i in range(4)]
    run.pods(*(lone_pod(name, run.scheduler, "2", **own) for name in names))
    run.wait_bound(*names)
    return names


def high_gang(run: GangRun, priority: str, own: dict[str, Any], cpu: str) -> list[str]:
    """A gang of 4 of the high PriorityClass (the PodGroup's and its members')."""
    run.pod_groups(workload_pod_group("g", 4, priorityClassName=priority))
    names = [f"g-{i}" for i in range(4)]
    run.pods(
        *(
            member(name, run.scheduler, "g", cpu, priorityClassName=priority, **own)
            for name in names
        )
    )
    return names


def on_own_nodes(message: str) -> str:
    """A message about the test's own nodes alone: other tests come and go on the gang
    cluster between the two runs, so the nodes the pods' selector rules out are not told."""
    message = re.sub(r"0/\d+ nodes are available", "0/N nodes are available", message)
    message = re.sub(r"(, )?\d+ node\(s\) didn't match Pod's node affinity/selector", "", message)
    return message.replace(": , ", ": ")


def events(run: GangRun, reason: str) -> list[str]:
    """The notes of the run's events of `reason`, the run's namespace and the UIDs in them
    written alike (each run has its own), about its own nodes."""
    shown = run.cluster.kubectl("get", "events", "-n", run.namespace, "-o", "json").stdout
    notes = []
    for item in json.loads(shown)["items"]:
        if item.get("reason") == reason:
            note = str(item.get("message") or item.get("note") or "")
            note = note.replace(f"{run.namespace}/", "NAMESPACE/")
            notes.append(on_own_nodes(re.sub(r"[0-9a-f]{8}-[0-9a-f-]{27}", "UID", note)))
    return notes


def spy_nominations(run: GangRun) -> dict[str, str]:
    """Every nominated node the run's watcher sees on a pod, kept after the pod binds."""
    seen: dict[str, str] = {}
    observe = run.ledger.observe

    def observed(pod: dict[str, Any], at: float) -> None:
        nominated = (pod.get("status") or {}).get("nominatedNodeName")
        if nominated:
            seen[pod["metadata"]["name"]] = nominated
        observe(pod, at)

    run.ledger.observe = observed  # type: ignore[method-assign]
    return seen


@dataclass
class Preemption:
    """What one scheduler's run did about preemption."""

    evicted: int
    nominated: dict[str, str]
    preempted: list[str]
    failed: set[str]


# How a gang preempts: as one (1.37's pod group preemption, 1.36's alpha
# WorkloadAwarePreemption) or, on 1.36 without that gate, each member for itself within the
# group's cycle. Both are judged on 1.36.
AS_ONE = "as-one"
PREEMPTION_GATES = (
    {AS_ONE: UPSTREAM_GATES}
    if GROUP_CYCLE_137
    else {AS_ONE: f"{UPSTREAM_GATES},WorkloadAwarePreemption=true", "each-member": UPSTREAM_GATES}
)


@pytest.mark.parametrize("preempting", PREEMPTION_GATES)
def test_a_gang_of_higher_priority_evicts_lower_priority_pods_from_two_nodes(
    cluster: Cluster,
    start_gang_schedulers: Callable[[str], Schedulers],
    preemption_nodes: dict[str, Any],
    high_priority: str,
    preempting: str,
) -> None:
    """Two full nodes (two 2-CPU pods of priority 0 on each) and a gang of 4 1-CPU pods of
    priority 1000: it fits once one pod leaves each node, or two leave one. Both schedulers
    evict as many pods and say the same; from 1.37 (pod group preemption) they nominate and
    bind the whole gang, in 1.36 the gang preempting as one binds."""
    found: dict[str, Preemption] = {}

    def scenario(run: GangRun) -> Outcome:
        nominations = spy_nominations(run)
        low = fill_with_low_priority(run, preemption_nodes)
        gang = high_gang(run, high_priority, preemption_nodes, "1")
        if preempting == AS_ONE:
            run.wait_bound(*gang, timeout=120)
        else:
            run.wait_decided(*gang)
            settle(2)  # room for an eviction
        wait_for("the PodGroup's condition", lambda: run.outcome().conditions)
        left = set(run.current()) & set(low)
        found[run.scheduler] = Preemption(
            evicted=len(low) - len(left),
            nominated={pod: node for pod, node in nominations.items() if pod in gang},
            preempted=sorted(events(run, "Preempted")),
            failed=set(events(run, "FailedScheduling")),
        )
        return run.outcome()

    names = start_gang_schedulers(PREEMPTION_GATES[preempting]).names
    outcome = same(run_both(cluster, names, scenario))
    upstream, runtime = found[names["upstream"]], found[names["runtime"]]
    assert runtime.evicted == upstream.evicted, found
    if preempting == AS_ONE:
        assert runtime.preempted == upstream.preempted, found
    else:  # two members may choose one victim: upstream evicts it twice when the first
        # eviction has not landed yet (a race), the runtime once
        assert set(runtime.preempted) == set(upstream.preempted), found
    assert runtime.failed == upstream.failed, found
    if preempting == AS_ONE:
        assert outcome.bound >= {f"g-{i}" for i in range(4)}
    if not GROUP_CYCLE_137:
        assert runtime.evicted == 2, found
        return
    assert outcome.bound >= {f"g-{i}" for i in range(4)}
    assert runtime.evicted == 2, found
    assert len(runtime.nominated) == len(upstream.nominated) == 4, found
    assert set(upstream.preempted) == {"Preempted by podgroup UID on node cluster"}, found
    assert outcome.conditions == {"g": ("True", "Scheduled", "")}


@pytest.mark.parametrize("preempting", PREEMPTION_GATES)
def test_a_gang_that_cannot_fit_even_with_preemption_evicts_nothing(
    cluster: Cluster,
    start_gang_schedulers: Callable[[str], Schedulers],
    preemption_nodes: dict[str, Any],
    high_priority: str,
    preempting: str,
) -> None:
    """The same full nodes and a gang of 4 3-CPU pods: even with every pod of priority 0
    gone two members fit, not four. A gang preempting as one evicts nothing; on 1.36 without
    WorkloadAwarePreemption each member evicts for itself, in vain. Both schedulers do the
    same and say the same."""
    evicted: dict[str, int] = {}

    def scenario(run: GangRun) -> Outcome:
        low = fill_with_low_priority(run, preemption_nodes)
        gang = high_gang(run, high_priority, preemption_nodes, "3")
        run.wait_decided(*gang)
        wait_for("the PodGroup's condition", lambda: run.outcome().conditions)
        settle(2)  # room for an eviction
        evicted[run.scheduler] = len(set(low) - set(run.current()))
        if preempting == AS_ONE:
            assert evicted[run.scheduler] == 0, run.current()
            assert events(run, "Preempted") == []
        return run.outcome()

    outcomes = run_both(
        cluster, start_gang_schedulers(PREEMPTION_GATES[preempting]).names, scenario
    )
    assert len(set(evicted.values())) == 1, evicted
    outcome = same(outcomes, messages=False)
    told = {
        which: Counter(on_own_nodes(m) for m in made.messages.values())
        for which, made in outcomes.items()
    }
    assert told["runtime"] == told["upstream"], outcomes
    if preempting != AS_ONE:
        return
    assert outcome.bound == {f"low-{i}" for i in range(4)}
    state, reason, message = outcome.conditions["g"]
    assert (state, reason) == ("False", "Unschedulable")
    assert not GROUP_CYCLE_137 or message.endswith(
        "pod group preemption: minCount (4) cannot be satisfied: 2 scheduled, 1 remaining"
    ), message
