"""Gangs of scheduler-plugins' `scheduling.x-k8s.io/v1alpha1` PodGroups, created as Kubeflow's
training and MPI operators create them (minMember, minResources, scheduleTimeoutSeconds, pods
labelled `scheduling.x-k8s.io/pod-group`), side by side with scheduler-plugins' own scheduler
(Coscheduling, built from the pinned release) on the gang cluster, with its controller keeping
the groups' status for both.

Both place what fits, and neither binds a partial gang. Where they differ, the runtime goes
past the reference on purpose: scheduler-plugins places a gang one pod at a time and lets the
placed pods wait at Permit (holding their nodes, with a nominated node left behind) until the
rest come or `scheduleTimeoutSeconds` passes; the runtime tries the whole group at once, so a
gang that does not fit never holds a node, and it is told at once why."""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from cluster import Cluster, kwok_node, wait_for
from coscheduling_support import (
    coscheduling_configuration,
    gang_pod,
    install_crds,
    kubernetes_minor,
    pod_group,
)
from gang_support import GangRun, Outcome, run_both
from runtime_support import RuntimeProcess
from timing import settle

PERMIT_WAITING_SECONDS = 10
TIMED_OUT = "rejected due to timeout after waiting 5s at plugin Coscheduling"


def no_cpu(nodes: int) -> str:
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
def names(
    coscheduling: Callable[..., str],
    start_runtime: Callable[..., RuntimeProcess],
    cluster: Cluster,
) -> dict[str, str]:
    """scheduler-plugins' scheduler and controller, and the runtime with the same
    configuration (Coscheduling at every point it has, and as the queue's sort)."""
    reference = coscheduling(permit_waiting_seconds=PERMIT_WAITING_SECONDS)
    ours = f"cosched-rt-{uuid.uuid4().hex[:6]}"
    config = coscheduling_configuration(ours, cluster.kubeconfig, PERMIT_WAITING_SECONDS)
    del config["clientConnection"]
    start_runtime(config, name="runtime", args=(f"--emulated-version={kubernetes_minor()}",))
    return {"upstream": reference, "runtime": ours}


@pytest.fixture
def make_gang_nodes(make_nodes: Callable[..., list[str]]) -> Callable[..., list[str]]:
    """kwok nodes of the given CPUs, for this test alone."""

    def make(*cpus: str) -> list[str]:
        prefix = f"cosched-{uuid.uuid4().hex[:6]}"
        made = make_nodes(
            *(kwok_node(f"{prefix}-{i}", cpu=cpu, memory="16Gi") for i, cpu in enumerate(cpus))
        )
        settle(1)  # the schedulers' node watches see them before any pod comes
        return made

    return make


def told(run: GangRun, text: str) -> bool:
    """Whether some pod of the run is told `text` (its PodScheduled condition)."""
    return any(text in message for message in run.outcome().messages.values())


def members(run: GangRun, group: str, count: int, cpu: str, first: int = 0) -> None:
    run.pods(
        *(
            gang_pod(f"{group}-{i}", group, run.scheduler, cpu=cpu)
            for i in range(first, first + count)
        )
    )


def kubeflow_group(name: str, min_member: int, cpu_each: int, timeout: int = 60) -> dict[str, Any]:
    """A PodGroup as Kubeflow's training operator writes one for a job: its size as
    minMember, the sum of the replicas' requests as minResources, and the run policy's
    scheduleTimeoutSeconds."""
    return pod_group(
        name,
        min_member,
        min_resources={"cpu": str(min_member * cpu_each)},
        schedule_timeout_seconds=timeout,
    )


def test_a_gang_that_fits_is_placed_whole(
    cluster: Cluster, names: dict[str, str], make_gang_nodes: Callable[..., list[str]]
) -> None:
    make_gang_nodes("4", "4")

    def scenario(run: GangRun) -> Outcome:
        run.pod_groups(kubeflow_group("job", 3, 1))
        members(run, "job", 3, "1")
        run.wait_bound("job-0", "job-1", "job-2")
        wait_for(
            "the controller to see the gang running",
            lambda: run.group_status().get("job", ("", "", ""))[1] == "Running",
        )
        return run.outcome()

    outcomes = run_both(cluster, names, scenario)
    for outcome in outcomes.values():
        assert outcome.bound == {"job-0", "job-1", "job-2"}
        assert outcome.conditions == {"job": ("phase", "Running", "")}


GAP = "resource gap: map[cpu:{{2000 -3} {<nil>}  DecimalSI}]"


def test_min_resources_are_checked_before_the_gang_takes_any_node(
    cluster: Cluster, names: dict[str, str], make_gang_nodes: Callable[..., list[str]]
) -> None:
    make_gang_nodes("4", "4")

    def scenario(run: GangRun) -> Outcome:
        run.pod_groups(kubeflow_group("job", 2, 5))  # asks 10 CPUs; the nodes have 8
        members(run, "job", 2, "1")
        run.wait_decided("job-0", "job-1")
        # A member tried before its sibling existed was refused for the quorum first; once both
        # exist, the gap is what each is told.
        wait_for(
            "both members told the resource gap",
            lambda: all(GAP in m for m in run.outcome().messages.values()),
        )
        return run.outcome()

    outcomes = run_both(cluster, names, scenario)
    for outcome in outcomes.values():
        assert outcome.bound == set()
        assert outcome.nominated == {}
        for message in outcome.messages.values():
            assert message.startswith(f"0/2 nodes are available: {GAP}."), message
    assert Counter(outcomes["runtime"].messages.values()) == Counter(
        outcomes["upstream"].messages.values()
    )


def test_a_gang_that_does_not_fit_takes_no_node_and_is_told_at_once(
    cluster: Cluster, names: dict[str, str], make_gang_nodes: Callable[..., list[str]]
) -> None:
    make_gang_nodes("4", "4")

    def scenario(run: GangRun) -> Outcome:
        run.pod_groups(pod_group("job", 3))
        members(run, "job", 3, "3")
        run.wait_decided("job-0", "job-1", "job-2")
        return run.outcome()

    outcomes = run_both(cluster, names, scenario, reference_reserves=True)
    assert outcomes["upstream"].bound == outcomes["runtime"].bound == set()
    waiting = (
        "pod group is unschedulable, one or more plugins asked to wait and no plugin rejected pod"
    )
    runtime = outcomes["runtime"]
    [(left, message)] = [(pod, m) for pod, m in runtime.messages.items() if m != waiting]
    assert message.startswith(no_cpu(2))
    assert message.endswith(
        f"gets rejected due to Pod {left} is unschedulable even after PostFilter"
    )
    assert Counter(runtime.messages.values())[waiting] == 2
    assert runtime.nominated == {}


def test_fewer_members_than_the_minimum_wait_with_coschedulings_reason(
    cluster: Cluster, names: dict[str, str], make_gang_nodes: Callable[..., list[str]]
) -> None:
    make_gang_nodes("4", "4")

    def scenario(run: GangRun) -> Outcome:
        run.pod_groups(pod_group("job", 3))
        members(run, "job", 2, "1")
        wait_for(
            "both members to be told they are too few",
            lambda: (
                all("current pods number: 2" in m for m in run.outcome().messages.values())
                and len(run.outcome().messages) == 2
            ),
        )
        short = run.outcome()
        members(run, "job", 1, "1", first=2)
        run.wait_bound("job-0", "job-1", "job-2")
        return short

    outcomes = run_both(cluster, names, scenario)
    for outcome in outcomes.values():
        assert outcome.bound == set()
        assert sorted(outcome.messages.values()) == [
            f"0/2 nodes are available: pre-filter pod job-{i} cannot find enough sibling pods, "
            "current pods number: 2, minMember of group: 3. no new claims to deallocate, "
            "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling., "
            f"PodGroup NAMESPACE/job gets rejected due to Pod job-{i} is unschedulable even after "
            "PostFilter"
            for i in range(2)
        ]


def test_a_minimum_below_the_size_places_the_minimum(
    cluster: Cluster, names: dict[str, str], make_gang_nodes: Callable[..., list[str]]
) -> None:
    make_gang_nodes("4", "4")

    def scenario(run: GangRun) -> Outcome:
        run.pod_groups(pod_group("job", 2))
        members(run, "job", 3, "2500m")
        wait_for("two members bound", lambda: len(run.outcome().bound) == 2)
        run.wait_decided("job-0", "job-1", "job-2")
        return run.outcome()

    outcomes = run_both(cluster, names, scenario)
    for outcome in outcomes.values():
        assert len(outcome.bound) == 2
        # A bound member may still show the refusal of a try from before its siblings came
        # (written as it was being bound): what counts is the one left.
        [message] = [m for pod, m in outcome.messages.items() if pod not in outcome.bound]
        assert message.startswith(no_cpu(2))


def test_members_created_before_their_podgroup_are_placed_once_it_comes(
    cluster: Cluster, names: dict[str, str], make_gang_nodes: Callable[..., list[str]]
) -> None:
    make_gang_nodes("4", "4")

    def scenario(run: GangRun) -> Outcome:
        members(run, "job", 2, "1")
        settle(2)
        before = run.outcome()
        run.pod_groups(pod_group("job", 2))
        run.wait_bound("job-0", "job-1")
        return before

    outcomes = run_both(cluster, names, scenario)
    assert outcomes["upstream"].bound == outcomes["runtime"].bound == set()


def test_two_gangs_competing_for_room_for_one_take_turns(
    cluster: Cluster, names: dict[str, str], make_gang_nodes: Callable[..., list[str]]
) -> None:
    make_gang_nodes("4", "4")

    def scenario(run: GangRun) -> Outcome:
        run.pod_groups(
            pod_group("a", 2, schedule_timeout_seconds=5),
            pod_group("b", 2, schedule_timeout_seconds=5),
        )
        for name in ("a-0", "b-0", "a-1", "b-1"):
            run.pods(gang_pod(name, name[0], run.scheduler, cpu="2500m"))
        wait_for(
            "one gang to be placed whole",
            lambda: run.outcome().bound in ({"a-0", "a-1"}, {"b-0", "b-1"}),
            timeout=120,
        )
        first = run.outcome()
        run.delete(*first.bound)  # that gang ends: the other takes its room
        rest = {"a-0", "a-1", "b-0", "b-1"} - first.bound
        run.wait_bound(*rest, timeout=120)
        return first

    outcomes = run_both(cluster, names, scenario, reference_reserves=True)
    assert outcomes["runtime"].bound == {"a-0", "a-1"}  # the first complete gang, at once


def test_a_gang_short_of_room_waits_at_permit_in_the_reference_but_holds_nothing_here(
    cluster: Cluster, names: dict[str, str], make_gang_nodes: Callable[..., list[str]]
) -> None:
    """scheduleTimeoutSeconds: with ten members of which nine fit, scheduler-plugins keeps
    nine nodes' worth waiting at Permit (Coscheduling's PostFilter does not give up on a gang
    only 10% short) until the timeout; the runtime holds nothing. When a member is deleted
    while the others wait and room comes with a new one, both place the gang whole."""
    make_gang_nodes("4500m", "4500m", "1")

    def scenario(run: GangRun) -> Outcome:
        run.pod_groups(pod_group("job", 10, schedule_timeout_seconds=5))
        members(run, "job", 10, "1")
        run.wait_decided(*(f"job-{i}" for i in range(10)), timeout=60)

        def unplaced() -> str | None:
            """The member told the nodes are full (a member tried before all ten existed is
            first told Coscheduling's PreFilter refusal, and the room left only later)."""
            messages = run.outcome().messages.items()
            return next((name for name, message in messages if "Insufficient cpu" in message), None)

        left = wait_for("a member to be told there is no room", unplaced, timeout=60)
        if run.scheduler == names["upstream"]:
            # The nine wait at Permit from when the tenth is refused: their timeout is told
            # five seconds later.
            wait_for("the waiting members to time out", lambda: told(run, TIMED_OUT), timeout=60)
        else:
            settle(8)  # longer than the reference's members waited: the runtime tells nothing
        waited = run.outcome()
        run.delete(left)
        run.pods(gang_pod("job-new", "job", run.scheduler, cpu="500m"))
        wait_for("the gang to be placed whole", lambda: len(run.outcome().bound) == 10, timeout=120)
        return waited

    outcomes = run_both(cluster, names, scenario, reference_reserves=True)
    reference, runtime = outcomes["upstream"], outcomes["runtime"]
    assert any(TIMED_OUT in message for message in reference.messages.values()), reference
    assert not any(TIMED_OUT in message for message in runtime.messages.values()), runtime
    assert runtime.nominated == {}
    assert runtime.bound == reference.bound == set()


def test_the_runtime_keeps_the_podgroup_status_as_the_controller_does(
    cluster: Cluster,
    start_runtime: Callable[..., RuntimeProcess],
    make_gang_nodes: Callable[..., list[str]],
) -> None:
    """Without scheduler-plugins' controller, the runtime keeps the status of the groups it
    places: Pending, Scheduling, Running with its count, and Pending again when a member goes."""
    install_crds(cluster)
    make_gang_nodes("4", "4")
    name = f"cosched-rt-{uuid.uuid4().hex[:6]}"
    config = coscheduling_configuration(name, cluster.kubeconfig, PERMIT_WAITING_SECONDS)
    del config["clientConnection"]
    start_runtime(config, name="runtime", args=(f"--emulated-version={kubernetes_minor()}",))
    run = GangRun(cluster, name)
    try:
        run.pod_groups(pod_group("job", 3))
        members(run, "job", 3, "1")
        run.wait_bound("job-0", "job-1", "job-2")
        wait_for(
            "the runtime to report the gang running",
            lambda: (
                run.custom.get_namespaced_custom_object_status(
                    "scheduling.x-k8s.io", "v1alpha1", run.namespace, "podgroups", "job"
                ).get("status")
                == {"phase": "Running", "running": 3}
            ),
        )
        run.delete("job-2")
        wait_for(
            "the runtime to report the gang short again",
            lambda: run.group_status()["job"] == ("phase", "Pending", ""),
        )
    finally:
        run.close()
