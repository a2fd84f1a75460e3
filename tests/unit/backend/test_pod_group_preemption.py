"""Pod group preemption at 1.37 (GenericWorkload on), through the group cycle of the backend
and the simulator (which applies evictions and nominations as the API server would): which
victims a gang evicts, that it never evicts pods of its priority or above, that a gang
whose members say preemptionPolicy Never evicts nothing, and that it evicts no more than
it needs, PodDisruptionBudgets respected first. Expected results worked out by hand from
1.37.2's podgrouppreemption.go.

Then the same as kube-scheduler 1.36 does it (its alpha WorkloadAwarePreemption, with
GangScheduling and the v1alpha2 workload API): a member never preempts for itself, the group
preempts as one after its cycle, a victim given back stays only when the group's whole
algorithm still fits, nobody is nominated, and a single pod is a victim of its own priority.
Worked out by hand from 1.36.3's schedule_one_podgroup.go and podgrouppreemption.go."""

from __future__ import annotations

import dataclasses
from typing import Any

from prometheus_client import CollectorRegistry

from scheduler_runtime.config import load_configuration, parse_feature_gates
from scheduler_runtime.framework.interface import PodGroupCycleState, Preemptor
from scheduler_runtime.framework.podgroups import WORKLOAD_API, GroupKey
from scheduler_runtime.framework.podinfo import PodInfo
from scheduler_runtime.framework.status import SUCCESS, Code
from scheduler_runtime.simulate import Simulation

PROFILE = "gangs"
GANG_PRIORITY = 100
PREEMPTING = "pod group preemption: found a placement for podgroup, preempting {} victims"


def node(name: str, cpu: str = "4") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": {"cpu": cpu, "memory": "16Gi", "pods": "110"}},
    }


def pod_group(name: str, min_count: int, priority: int = GANG_PRIORITY, **spec: Any) -> Any:
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "ns", "uid": f"uid-pg-{name}"},
        "spec": {
            "schedulingPolicy": {"gang": {"minCount": min_count}},
            "priority": priority,
            **spec,
        },
    }


def pod(name: str, cpu: str, priority: int, second: int, **spec: Any) -> dict[str, Any]:
    made: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "ns",
            "uid": f"uid-{name}",
            "labels": spec.pop("labels", {}),
            "creationTimestamp": f"2026-01-01T00:00:{second:02d}Z",
        },
        "spec": {
            "schedulerName": PROFILE,
            "priority": priority,
            "containers": [
                {"name": "c", "image": "pause", "resources": {"requests": {"cpu": cpu}}}
            ],
            **spec,
        },
    }
    if spec.get("nodeName"):
        made["status"] = {"startTime": f"2026-01-01T00:00:{second:02d}Z"}
    return made


def running(name: str, node_name: str, second: int, priority: int = 0, **spec: Any) -> Any:
    """A 2-CPU pod already bound to `node_name`, started at `second`."""
    return pod(name, "2", priority, second, nodeName=node_name, **spec)


def gang(size: int, cpu: str = "2", **spec: Any) -> list[dict[str, Any]]:
    return [
        pod(f"g-{i}", cpu, GANG_PRIORITY, 50 + i, schedulingGroup={"podGroupName": "g"}, **spec)
        for i in range(size)
    ]


class Recorder(Simulation):
    """The simulator emulating `minor` with `gates`, keeping who preempted each victim."""

    def __init__(self, gates: str = "GenericWorkload=true", minor: str = "1.37") -> None:
        configuration = load_configuration(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "profiles": [{"schedulerName": PROFILE}],
            },
            feature_gates=parse_feature_gates(gates, minor),
        )
        super().__init__(configuration, seed=1)
        self.evicted: dict[str, Preemptor] = {}

    def _evict(self, victim: PodInfo, preemptor: Preemptor) -> None:
        self.evicted[victim.name] = preemptor
        super()._evict(victim, preemptor)


def simulate(*objects: dict[str, Any]) -> tuple[Recorder, dict[str, str | None]]:
    made = Recorder()
    made.load(objects)
    made.run()
    return made, {p.name: p.node for p in made.placements.values()}


def pods_left(made: Simulation) -> set[str]:
    return {p.name for p in made.snapshot.pods()}


def reason(made: Simulation) -> str:
    [report] = made.group_reports()
    return str(report.reason)


FULL = (  # two nodes of 4 CPUs, full: two 2-CPU pods of priority 0 on each
    node("n0"),
    node("n1"),
    running("low-a", "n0", 0),
    running("low-b", "n0", 10),
    running("low-c", "n1", 20),
    running("low-d", "n1", 30),
)


def test_a_gang_evicts_the_fewest_least_important_victims_and_is_placed() -> None:
    """A gang of 2 (2 CPUs each) on two full nodes: without any victim one member goes on
    each node; the older pod of each node is given back (it still leaves room), so the
    younger of each is evicted, in the PodGroup's name, and the gang is bound."""
    made, nodes = simulate(*FULL, pod_group("g", 2), *gang(2))
    assert set(made.evicted) == {"low-b", "low-d"}
    assert {p.kind for p in made.evicted.values()} == {"podgroup"}
    assert {(p.uid, p.node) for p in made.evicted.values()} == {("uid-pg-g", "cluster")}
    assert made.evicted["low-b"].related["kind"] == "PodGroup"
    assert made.evicted["low-b"].related["apiVersion"] == "scheduling.k8s.io/v1beta1"
    assert {nodes["g-0"], nodes["g-1"]} == {"n0", "n1"}
    assert pods_left(made) == {"low-a", "low-c", "g-0", "g-1"}


def test_the_members_are_told_and_nominated_where_preemption_placed_them() -> None:
    """The first cycle: the member tried first fits nowhere and PlacementFeasible ends the
    cycle; preemption finds room, and each member is nominated to the node the dry run gave
    it. The member tried is told its FitError, the one not tried the group's status as it
    was before preemption; the PodGroup's status carries preemption's part."""
    made = Recorder()
    made.load([*FULL, pod_group("g", 2), *gang(2)])
    made.step()
    assert set(made.evicted) == {"low-b", "low-d"}
    status = [made.backend.groups.member(f"uid-g-{i}")["status"] for i in range(2)]
    assert sorted(s.get("nominatedNodeName") for s in status) == ["n0", "n1"]
    told = sorted(str(p.message) for p in made.placements.values())
    refused = "minCount (2) cannot be satisfied: 0 scheduled, 1 remaining"
    assert told == ["0/2 nodes are available: 2 Insufficient cpu.", refused]
    assert reason(made) == f"{refused}, {PREEMPTING.format(2)}"


def test_pods_of_the_gangs_priority_or_above_are_never_victims() -> None:
    made, nodes = simulate(
        node("n0"),
        running("same", "n0", 0, priority=GANG_PRIORITY),
        running("higher", "n0", 10, priority=GANG_PRIORITY + 1),
        pod_group("g", 2),
        *gang(2),
    )
    assert made.evicted == {}
    assert not any(nodes[f"g-{i}"] for i in range(2))
    assert reason(made).endswith(
        "pod group preemption: No preemption victims found for incoming preemptor"
    )


def test_a_gang_whose_members_never_preempt_evicts_nothing() -> None:
    made, _ = simulate(*FULL, pod_group("g", 2), *gang(2, preemptionPolicy="Never"))
    assert made.evicted == {}
    assert pods_left(made) == {"low-a", "low-b", "low-c", "low-d"}
    assert reason(made).endswith(
        "pod group preemption: not eligible due to preemptionPolicy=Never."
    )


def test_a_gang_that_cannot_fit_even_without_victims_evicts_nothing() -> None:
    """Members of 3 CPUs on nodes of 4: two fit at most, the gang needs 3."""
    made, _ = simulate(*FULL, pod_group("g", 3), *gang(3, cpu="3"))
    assert made.evicted == {}
    assert pods_left(made) == {"low-a", "low-b", "low-c", "low-d"}
    assert reason(made).endswith(
        "pod group preemption: minCount (3) cannot be satisfied: 2 scheduled, 0 remaining"
    )


def test_victims_a_budget_protects_are_given_back_first() -> None:
    """low-b is protected by a PodDisruptionBudget that allows no disruption: it is given
    back before the others, so low-a goes in its place."""
    protected = running("low-b", "n0", 10, labels={"app": "kept"})
    budget = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "kept", "namespace": "ns"},
        "spec": {"selector": {"matchLabels": {"app": "kept"}}},
        "status": {"disruptionsAllowed": 0},
    }
    objects = [protected if o["metadata"]["name"] == "low-b" else o for o in FULL]
    made, _ = simulate(*objects, budget, pod_group("g", 2), *gang(2))
    assert set(made.evicted) == {"low-a", "low-d"}


def test_a_podgroup_that_is_disrupted_whole_is_evicted_whole() -> None:
    """A low-priority PodGroup with disruptionMode all, one member on each node (beside a
    pod of higher priority): it is one victim, so both its pods go where one would have
    made room."""
    low_group = pod_group("low", 2, priority=0, disruptionMode={"all": {}})
    members = [
        running(f"low-{i}", f"n{i}", i, schedulingGroup={"podGroupName": "low"}) for i in range(2)
    ]
    made, nodes = simulate(
        node("n0"),
        node("n1"),
        low_group,
        *members,
        running("high-0", "n0", 40, priority=GANG_PRIORITY + 1),
        running("high-1", "n1", 41, priority=GANG_PRIORITY + 1),
        pod_group("g", 1),
        *gang(1),
    )
    assert set(made.evicted) == {"low-0", "low-1"}
    assert nodes["g-0"] in ("n0", "n1")


def test_each_pod_group_preemption_is_counted_by_its_result() -> None:
    """scheduler_workload_preemption_attempts_total{result}, as upstream's DefaultPreemption
    counts it in PodGroupPostFilter."""
    made = Recorder()
    made.load([*FULL, pod_group("g", 2), *gang(2, preemptionPolicy="Never")])
    registry = CollectorRegistry()
    plugin = made.backend.frameworks[PROFILE].plugins["DefaultPreemption"]
    plugin.handle = dataclasses.replace(
        plugin.handle,
        services=dataclasses.replace(plugin.handle.services, metrics_registry=registry),
    )
    made.run()
    counted = registry.get_sample_value(
        "scheduler_workload_preemption_attempts_total", {"result": "Unschedulable"}
    )
    assert counted == 1


def test_without_generic_workload_there_is_no_pod_group_post_filter() -> None:
    configuration = load_configuration(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": PROFILE}],
        },
        feature_gates=parse_feature_gates("GenericWorkload=false", "1.37"),
    )
    framework = Simulation(configuration, seed=1).backend.frameworks[PROFILE]
    cycle = PodGroupCycleState(GroupKey(WORKLOAD_API, "ns", "g"))
    result, status = framework.run_pod_group_post_filter(cycle, None, [], lambda: ([], SUCCESS))
    assert result is None
    assert (status.code, status.message()) == (
        Code.UNSCHEDULABLE,
        "generic workload feature is disabled, cannot perform PodGroupPostFilter",
    )


def test_a_member_placed_in_the_cycle_is_told_the_groups_status_with_preemptions_part() -> None:
    """n0 has room for one member, n1 none: the first member is placed, the second fits
    nowhere and the gang cannot be complete. Preemption needs one victim (the youngest on
    n1); the placed member is told the group's status, preemption's part included."""
    made = Recorder()
    made.load(
        [
            node("n0"),
            node("n1"),
            running("low-a", "n0", 0),
            running("low-c", "n1", 20),
            running("low-d", "n1", 30),
            pod_group("g", 2),
            *gang(2),
        ]
    )
    made.step()
    assert set(made.evicted) == {"low-d"}
    refused = "minCount (2) cannot be satisfied: 1 scheduled, 0 remaining"
    told = sorted(str(p.message) for p in made.placements.values())
    assert told == [
        "0/2 nodes are available: 2 Insufficient cpu.",
        f"{refused}, {PREEMPTING.format(1)}",
    ]
    made.run()
    assert all(p.node for p in made.placements.values() if p.name.startswith("g-"))


# ----- 1.36: WorkloadAwarePreemption

WAP = "GenericWorkload=true,GangScheduling=true,WorkloadAwarePreemption=true"
NOT_ELIGIBLE = "preemption: not eligible due to workload aware preemption enabled"
# DynamicResources, the first PostFilter plugin, has nothing to free either.
UNFIT = "0/2 nodes are available: 2 Insufficient cpu. no new claims to deallocate, "


def alpha_pod_group(name: str, min_count: int, priority: int = GANG_PRIORITY, **spec: Any) -> Any:
    """1.36's PodGroup: v1alpha2, the same fields."""
    return {
        **pod_group(name, min_count, priority, **spec),
        "apiVersion": "scheduling.k8s.io/v1alpha2",
    }


def simulate_136(*objects: dict[str, Any], gates: str = WAP) -> Recorder:
    made = Recorder(gates, "1.36")
    made.load(objects)
    made.run()
    return made


def first_cycle_136(*objects: dict[str, Any]) -> Recorder:
    made = Recorder(WAP, "1.36")
    made.load(objects)
    made.step()
    return made


def told(made: Simulation) -> list[str]:
    return sorted(str(p.message) for p in made.placements.values())


def test_136_the_group_preempts_as_one_and_keeps_every_victim_its_whole_algorithm_allows() -> None:
    """Two full nodes and a gang of two 2-CPU members. Each member fits nowhere and may not
    preempt for itself; the group then does. Given back most important first, low-a still
    leaves room (both members on n1) and so does low-b; low-c and low-d do not. 1.37, which
    reprieves by filtering each member on its node, evicts the younger pod of each node."""
    made = first_cycle_136(*FULL, alpha_pod_group("g", 2), *gang(2))
    assert set(made.evicted) == {"low-c", "low-d"}
    preemptors = {(p.kind, p.uid, p.node) for p in made.evicted.values()}
    assert preemptors == {("podgroup", "uid-pg-g", "cluster")}
    assert made.evicted["low-c"].related["apiVersion"] == "scheduling.k8s.io/v1alpha2"
    assert told(made) == [UNFIT + NOT_ELIGIBLE] * 2
    assert reason(made) == "pod group is unschedulable"
    status = [made.backend.groups.member(f"uid-g-{i}").get("status", {}) for i in range(2)]
    assert [s.get("nominatedNodeName") for s in status] == [None, None]
    made.run()
    assert {p.name: p.node for p in made.placements.values()} == {"g-0": "n1", "g-1": "n1"}
    assert pods_left(made) == {"low-a", "low-b", "g-0", "g-1"}


def test_136_a_group_whose_members_never_preempt_says_so_unprefixed() -> None:
    made = simulate_136(*FULL, alpha_pod_group("g", 2), *gang(2, preemptionPolicy="Never"))
    assert made.evicted == {}
    assert reason(made) == "pod group is unschedulable, not eligible due to preemptionPolicy=Never."


def test_136_a_group_that_cannot_fit_even_without_victims_evicts_nothing() -> None:
    made = simulate_136(*FULL, alpha_pod_group("g", 3), *gang(3, cpu="3"))
    assert made.evicted == {}
    assert pods_left(made) == {"low-a", "low-b", "low-c", "low-d"}


def test_136_a_group_with_topology_constraints_is_not_preempted_for() -> None:
    constrained = alpha_pod_group("g", 2, schedulingConstraints={"topology": [{"key": "zone"}]})
    made = simulate_136(*FULL, constrained, *gang(2))
    assert made.evicted == {}
    assert reason(made) == (
        "pod group is unschedulable, "
        "workload aware preemption is not supported for pod groups with scheduling constraints"
    )


def test_136_a_single_pod_is_a_victim_of_its_own_priority_not_its_groups() -> None:
    """A running pod of priority 0 in a PodGroup of priority 1000 (disrupted pod by pod):
    1.36 ranks it by its own priority, so the gang may evict it."""
    made = simulate_136(
        node("n0"),
        alpha_pod_group("high", 1, priority=1000),
        running("member", "n0", 0, schedulingGroup={"podGroupName": "high"}),
        running("low", "n0", 10),
        alpha_pod_group("g", 1),
        *gang(1, cpu="4"),
    )
    assert set(made.evicted) == {"member", "low"}
    assert {p.name: p.node for p in made.placements.values()}["g-0"] == "n0"


def test_136_without_workload_aware_preemption_each_member_preempts_for_itself() -> None:
    """Each member evicts what it needs, in its own name, within the group's cycle."""
    made = first_cycle_136_with("GenericWorkload=true,GangScheduling=true")
    assert made.evicted
    assert {p.kind for p in made.evicted.values()} == {"pod"}
    # While the group waits for those preemptions, each member keeps its own message.
    assert set(told(made)) == {"0/2 nodes are available: 2 Insufficient cpu."}


def first_cycle_136_with(gates: str) -> Recorder:
    made = Recorder(gates, "1.36")
    made.load([*FULL, alpha_pod_group("g", 2), *gang(2)])
    made.step()
    return made


def test_136_without_default_preemption_the_group_does_not_preempt() -> None:
    configuration = load_configuration(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [
                {
                    "schedulerName": PROFILE,
                    "plugins": {"multiPoint": {"disabled": [{"name": "DefaultPreemption"}]}},
                }
            ],
        },
        feature_gates=parse_feature_gates(WAP, "1.36"),
    )
    made = Simulation(configuration, seed=1)
    made.load([*FULL, alpha_pod_group("g", 2), *gang(2)])
    made.run()
    assert pods_left(made) == {"low-a", "low-b", "low-c", "low-d"}
    assert reason(made) == (
        "pod group is unschedulable, "
        "default preemption plugin is not registered, workload aware preemption is disabled"
    )
