"""Pod groups in `simulate`, the same backend and group cycle as the live scheduler: a gang is
placed whole or not at all, with upstream's messages; it waits for the events that could help
it instead of being tried again and again; and every group is reported placed or not, with
the reason."""

from __future__ import annotations

from collections.abc import Iterator
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any, ClassVar

import pytest
import yaml

from scheduler_runtime.backend import NODES, PODS
from scheduler_runtime.cli import main
from scheduler_runtime.config import load_configuration, parse_feature_gates
from scheduler_runtime.framework import registry as registry_module
from scheduler_runtime.framework.events import QueueingHint
from scheduler_runtime.framework.interface import CycleState, PodGroupCycleState
from scheduler_runtime.framework.podgroups import WORKLOAD_API, WORKLOAD_POD_GROUP, GroupKey
from scheduler_runtime.framework.podinfo import PodInfo, pod_info
from scheduler_runtime.framework.status import SUCCESS, Code, Status
from scheduler_runtime.plugins.gangscheduling import min_count_decreased
from scheduler_runtime.simulate import Simulation

PROFILE = "gangs"
# What upstream's kube-scheduler 1.36 reports, as seen on the local control plane.
WAITING = (
    "pod group is unschedulable, waiting for minCount pods from a gang to be scheduled, "
    "one or more plugins asked to wait and no plugin rejected pod"
)
NO_CPU = (
    "0/2 nodes are available: 2 Insufficient cpu. no new claims to deallocate, preemption: "
    "0/2 nodes are available: 2 No preemption victims found for incoming pod."
)


# The gates kube-scheduler 1.36 needs for gangs (its defaults then run GangScheduling).
# The v1alpha2 workload API and its gates are 1.36's.
GANG_GATES = parse_feature_gates("GenericWorkload=true,GangScheduling=true", "1.36")


def config(*plugins: str) -> Any:
    return load_configuration(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [
                {
                    "schedulerName": PROFILE,
                    "plugins": {"multiPoint": {"enabled": [{"name": p} for p in plugins]}},
                }
            ],
        },
        feature_gates=GANG_GATES,
    )


def node(name: str, cpu: str = "4") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": {"cpu": cpu, "memory": "16Gi", "pods": "110"}},
    }


def pod_group(name: str, min_count: int | None) -> dict[str, Any]:
    policy = {"gang": {"minCount": min_count}} if min_count else {"basic": {}}
    return {
        "apiVersion": "scheduling.k8s.io/v1alpha2",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "ns"},
        "spec": {"schedulingPolicy": policy},
    }


def member(name: str, group: str, cpu: str, second: int = 0, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "ns",
            "uid": f"uid-{name}",
            "creationTimestamp": f"2026-01-01T00:00:{second:02d}Z",
        },
        "spec": {
            "schedulerName": spec.pop("schedulerName", PROFILE),
            "schedulingGroup": {"podGroupName": group},
            "containers": [
                {"name": "c", "image": "pause", "resources": {"requests": {"cpu": cpu}}}
            ],
            **spec,
        },
    }


def gang(group: str, size: int, cpu: str, first: int = 0) -> list[dict[str, Any]]:
    return [member(f"{group}-{i}", group, cpu, first + i) for i in range(size)]


def simulation(*objects: dict[str, Any], plugins: tuple[str, ...] = ()) -> Simulation:
    made = Simulation(config(*plugins), seed=1)
    made.load(objects)
    return made


def nodes_of(made: Simulation) -> dict[str, str | None]:
    return {p.name: p.node for p in made.placements.values()}


def messages(made: Simulation) -> dict[str, str | None]:
    return {p.name: p.message for p in made.placements.values()}


def assumed(made: Simulation) -> set[str]:
    """Pods the cache counts on a node without the watch having reported them bound."""
    return {key for key in made.backend.cache.pod_ids() if made.backend.cache.is_assumed(key)}


def test_a_gang_that_fits_is_placed_whole() -> None:
    made = simulation(node("n0"), node("n1"), pod_group("g", 3), *gang("g", 3, "1"))
    made.run()
    assert all(nodes_of(made).values())
    [report] = made.group_reports()
    assert (report.placed, report.bound, report.minimum, report.reason) == (True, 3, 3, None)


@pytest.mark.parametrize(
    ("minor", "gates", "version", "spec"),
    [
        (
            "1.36",
            "GenericWorkload=true,GangScheduling=true",
            "v1alpha2",
            {
                "podGroupTemplateRef": {
                    "workload": {"workloadName": "job", "podGroupTemplateName": "w"}
                },
                "disruptionMode": "PodGroup",
            },
        ),
        (
            "1.37",
            "GenericWorkload=true",  # 1.37 has no GangScheduling gate: GenericWorkload runs it
            "v1beta1",
            {
                "workloadRef": {"workloadName": "job", "templateName": "w"},
                "disruptionMode": {"all": {}},
            },
        ),
    ],
)
def test_each_minor_places_a_gang_of_the_workload_api_version_it_serves(
    minor: str, gates: str, version: str, spec: dict[str, Any]
) -> None:
    """A gang of the version the minor serves (1.37 renamed the Workload reference and made
    disruptionMode an object) is held until complete and placed whole."""
    group = {**pod_group("g", 3), "apiVersion": f"scheduling.k8s.io/{version}"}
    group["spec"] = {**group["spec"], **spec}
    configuration = load_configuration(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": PROFILE}],
        },
        feature_gates=parse_feature_gates(gates, minor),
    )
    made = Simulation(configuration, seed=1)
    made.load([node("n0"), node("n1"), group, *gang("g", 2, "1")])
    made.run()
    [report] = made.group_reports()  # two of three: held back by PreEnqueue
    assert (report.bound, report.reason) == (
        0,
        "waiting for minCount pods from a gang to appear in scheduling queue (2 of 3 members "
        "exist)",
    )
    made = Simulation(configuration, seed=1)
    made.load([node("n0"), node("n1"), group, *gang("g", 3, "1")])
    made.run()
    assert all(nodes_of(made).values())
    [report] = made.group_reports()
    assert (report.placed, report.bound, report.minimum) == (True, 3, 3)


def simulation_137(*objects: dict[str, Any]) -> Simulation:
    """A simulation emulating 1.37 (GenericWorkload alone runs GangScheduling), its PodGroups
    v1beta1."""
    configuration = load_configuration(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": PROFILE}],
        },
        feature_gates=parse_feature_gates("GenericWorkload=true", "1.37"),
    )
    made = Simulation(configuration, seed=1)
    beta = [
        {**obj, "apiVersion": "scheduling.k8s.io/v1beta1"} if obj["kind"] == "PodGroup" else obj
        for obj in objects
    ]
    made.load(beta)
    return made


# kube-scheduler 1.37.2's words for a gang that does not fit (its binary's, on the gang
# cluster): the group's PlacementFeasible status, then its PodGroupPostFilter's.
NO_VICTIMS_137 = "pod group preemption: No preemption victims found for incoming preemptor"


def test_at_1_37_a_gang_that_does_not_fit_says_why_in_1_37_words() -> None:
    """Two members fit, the third does not: PlacementFeasible ends the cycle (2 scheduled, 0
    remaining); the placed members are told the group's message with pod group preemption's,
    the third its own FitError without a PostFilter part."""
    made = simulation_137(node("n0"), node("n1"), pod_group("g", 3), *gang("g", 3, "3"))
    made.run()
    assert set(nodes_of(made).values()) == {None}
    group = f"minCount (3) cannot be satisfied: 2 scheduled, 0 remaining, {NO_VICTIMS_137}"
    assert sorted(messages(made).values()) == sorted(
        [
            "0/2 nodes are available: 2 Insufficient cpu.",
            f"pod group is unschedulable, {group}",
            f"pod group is unschedulable, {group}",
        ]
    )
    assert assumed(made) == set()


def test_at_1_37_members_the_cycle_did_not_reach_get_the_groups_status() -> None:
    """The first member tried does not fit: with one left, two cannot be met, the cycle
    ends, and the member not tried is told PlacementFeasible's words alone."""
    made = simulation_137(node("n0"), node("n1"), pod_group("g", 2), *gang("g", 2, "5"))
    made.run()
    assert sorted(messages(made).values()) == [
        "0/2 nodes are available: 2 Insufficient cpu.",
        "minCount (2) cannot be satisfied: 0 scheduled, 1 remaining",
    ]


def test_at_1_37_members_of_another_priority_than_their_podgroup_are_an_error() -> None:
    """validatePodGroup: every member has the PodGroup's priority (unset: 0)."""
    members = gang("g", 2, "1")
    members[1]["spec"]["priority"] = 5
    made = simulation_137(node("n0"), pod_group("g", 2), *members)
    made.run()
    assert set(nodes_of(made).values()) == {None}
    assert set(messages(made).values()) == {
        "all pods in a single pod group should have the same priority as the pod group's "
        "priority, got 5 and 0"
    }


def test_at_1_37_pod_group_preemption_says_why_it_did_not_help() -> None:
    """PodGroupPostFilter after a gang that does not fit: members asking never to preempt
    are not eligible; with a pod of lower priority than the PodGroup's, the group's
    algorithm runs again without it and its refusal is what preemption says;
    DynamicResources fails as upstream's does when no member reached its PreFilter in the
    cycle."""
    never = gang("g", 2, "5")
    for pod in never:
        pod["spec"]["preemptionPolicy"] = "Never"
    made = simulation_137(node("n0"), pod_group("g", 2), *never)
    made.run()
    assert set(messages(made).values()) == {
        "0/1 nodes are available: 1 Insufficient cpu.",
        "minCount (2) cannot be satisfied: 0 scheduled, 1 remaining",
    }
    [report] = made.group_reports()
    # Both plugins refuse (neither rules the group out): their reasons, in order.
    refused = "minCount (2) cannot be satisfied: 0 scheduled, 1 remaining, deallocation and "
    refused += "deletion of ResourceClaims completed, pod group preemption: "
    assert report.reason == refused + "not eligible due to preemptionPolicy=Never."
    low = member("low", "", "1", 0)
    del low["spec"]["schedulingGroup"]
    low["spec"]["priority"] = -1
    low["spec"]["nodeName"] = "n0"
    made = simulation_137(node("n0"), low, pod_group("g", 2), *gang("g", 2, "5"))
    made.run()
    [report] = made.group_reports()
    # Even without the victim no member fits: the rerun's PlacementFeasible refusal.
    assert report.reason == refused + "minCount (2) cannot be satisfied: 0 scheduled, 1 remaining"
    assert "low" in {p.name for p in made.snapshot.pods()}  # not evicted
    framework = made.backend.frameworks[PROFILE]
    untried = PodGroupCycleState(GroupKey(WORKLOAD_API, "ns", "g"))
    _, status = framework.run_pod_group_post_filter(untried, None, [], lambda: ([], SUCCESS))
    assert (status.code, status.message()) == (
        Code.ERROR,
        'error in "DynamicResources" PodGroupPostFilter plugins: not found',
    )


def test_a_podgroup_whose_min_count_went_down_lets_its_members_in() -> None:
    """1.37's isSchedulableAfterPodGroupUpdated: only a gang's minCount going down queues
    its members; any other change to it does not."""
    pod = pod_info(member("g-0", "g", "1"))
    before, lower = pod_group("g", 3), pod_group("g", 2)
    assert min_count_decreased(pod, before, lower) == QueueingHint.QUEUE
    assert min_count_decreased(pod, lower, before) == QueueingHint.SKIP
    assert min_count_decreased(pod, before, pod_group("g", None)) == QueueingHint.SKIP
    assert min_count_decreased(pod, pod_group("h", 3), pod_group("h", 2)) == QueueingHint.SKIP


def test_a_gang_that_does_not_fit_takes_no_node_and_says_why_as_upstream() -> None:
    made = simulation(node("n0"), node("n1"), pod_group("g", 3), *gang("g", 3, "3"))
    made.run()
    assert set(nodes_of(made).values()) == {None}
    # Two members fit (each seeing the one before placed) and are told the group does not;
    # the last one completed the group, so it was tried first.
    assert messages(made) == {"g-2": WAITING, "g-0": WAITING, "g-1": NO_CPU}
    assert assumed(made) == set()
    assert made.snapshot.get("n0").requested.get("cpu", 0) == 0  # type: ignore[union-attr]
    [report] = made.group_reports()
    assert (report.placed, report.reason) == (False, "pod group is unschedulable")


def test_a_minimum_below_the_size_places_the_minimum_and_the_rest_fail_alone() -> None:
    made = simulation(node("n0"), pod_group("g", 3), *gang("g", 4, "1300m"))
    made.run()
    placed = [name for name, where in nodes_of(made).items() if where]
    assert len(placed) == 3
    [left] = [name for name, where in nodes_of(made).items() if not where]
    assert messages(made)[left] == (
        "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, preemption: "
        "0/1 nodes are available: 1 No preemption victims found for incoming pod."
    )
    assert made.group_reports()[0].placed


def test_two_gangs_competing_for_room_for_one_place_one_and_the_other_later() -> None:
    made = simulation(
        node("n0"), pod_group("a", 2), pod_group("b", 2), *gang("a", 2, "2"), *gang("b", 2, "2", 10)
    )
    made.run()
    assert nodes_of(made) == {"a-0": "n0", "a-1": "n0", "b-0": None, "b-1": None}
    for name in ("a-0", "a-1"):  # the first gang ends (its pods are deleted)
        made.backend.events.delete(
            PODS, {"metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}"}}
        )
    made.run()
    assert nodes_of(made)["b-0"] == nodes_of(made)["b-1"] == "n0"


def test_fewer_members_than_the_minimum_wait_outside_the_queue_until_the_last_one_comes() -> None:
    made = simulation(node("n0"), pod_group("g", 3), *gang("g", 2, "1"))
    made.run()
    assert made.placements == {}  # never tried
    [report] = made.group_reports()
    assert report.reason == (
        "waiting for minCount pods from a gang to appear in scheduling queue (2 of 3 members exist)"
    )
    made.backend.events.upsert(PODS, member("g-2", "g", "1", 9))
    made.run()
    assert set(nodes_of(made)) == {"g-0", "g-1", "g-2"}
    assert all(nodes_of(made).values())


def test_members_created_before_their_podgroup_wait_for_it() -> None:
    made = simulation(node("n0"), *gang("g", 2, "1"))
    made.run()
    [report] = made.group_reports()
    assert report.reason == 'waiting for pods\'s pod group "g" to appear in scheduling queue'
    made.backend.events.upsert(WORKLOAD_POD_GROUP, pod_group("g", 2))
    made.run()
    assert all(nodes_of(made).values())
    assert len(nodes_of(made)) == 2


def test_a_basic_group_places_what_fits() -> None:
    made = simulation(node("n0"), pod_group("g", None), *gang("g", 3, "1500m"))
    made.run()
    assert sorted(where or "-" for where in nodes_of(made).values()) == ["-", "n0", "n0"]


def test_an_unschedulable_gang_waits_for_an_event_that_can_help_then_is_placed() -> None:
    made = simulation(node("n0", cpu="2"), pod_group("g", 2), *gang("g", 2, "2"))
    made.run()
    tried = made.backend.queue.pending()
    assert tried["unschedulable"] == 2
    assert tried["backoff"] == tried["active"] == 0
    cycles = []
    original = made.group_decided
    made.group_decided = lambda outcome: (cycles.append(outcome), original(outcome))  # type: ignore[method-assign]
    # A label on another node changes nothing any member's rejecting plugin registered for.
    labelled = node("n0", cpu="2")
    labelled["metadata"]["labels"]["team"] = "x"
    made.backend.events.upsert(NODES, labelled)
    made.run()
    assert cycles == []
    made.backend.events.upsert(NODES, node("n1", cpu="2"))  # room for the second member
    made.run()
    assert len(cycles) == 1
    assert cycles[0].status.is_success
    assert sorted(nodes_of(made).values()) == ["n0", "n1"]


def test_members_of_different_profiles_fail_as_upstream() -> None:
    other = member("g-1", "g", "1", 1, schedulerName="other")
    made = Simulation(
        load_configuration(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "profiles": [{"schedulerName": name} for name in (PROFILE, "other")],
            },
            feature_gates=GANG_GATES,
        )
    )
    made.load([node("n0"), pod_group("g", 2), member("g-0", "g", "1"), other])
    made.run()
    assert set(messages(made).values()) == {
        "all pods in a single pod group should have the same .spec.schedulerName set, got: "
        '"gangs" and "other"'
    }


def test_the_command_reports_groups_in_a_table_and_in_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "state.yaml"
    state.write_text(
        yaml.safe_dump_all(
            [
                node("n0"),
                node("n1"),
                pod_group("fits", 2),
                *gang("fits", 2, "1"),
                pod_group("big", 2),
                *gang("big", 2, "3500m", 10),
            ]
        )
    )
    configuration = tmp_path / "config.yaml"
    configuration.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "profiles": [{"schedulerName": PROFILE}],
            }
        )
    )
    gates = "--feature-gates=GenericWorkload=true,GangScheduling=true"
    state_flags = ["--state", str(state), gates, "--emulated-version=1.36"]
    assert main(["simulate", "--config", str(configuration), *state_flags]) == 0
    table = capsys.readouterr().out
    assert "NAMESPACE   POD GROUP   PLACED   BOUND/MIN   MEMBERS   REASON" in table
    assert (
        "ns          big         no       0/2         2         pod group is unschedulable" in table
    )
    assert main(["simulate", "--config", str(configuration), *state_flags, "-o", "json"]) == 0
    document = yaml.safe_load(capsys.readouterr().out)
    assert [(g["name"], g["placed"], g["bound"]) for g in document["podGroups"]] == [
        ("fits", True, 2),
        ("big", False, 0),
    ]


def test_a_podgroup_of_an_unknown_api_or_shape_is_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "state.yaml"
    wrong = {**pod_group("g", 2), "apiVersion": "scheduling.volcano.sh/v1beta1"}
    state.write_text(yaml.safe_dump_all([node("n0"), wrong]))
    configuration = tmp_path / "config.yaml"
    configuration.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
    )
    assert main(["simulate", "--config", str(configuration), "--state", str(state)]) == 2
    assert capsys.readouterr().err == (
        "error: PodGroup ns/g: apiVersion 'scheduling.volcano.sh/v1beta1' is not one of "
        "scheduling.k8s.io/v1alpha2, scheduling.k8s.io/v1beta1, scheduling.x-k8s.io/v1alpha1\n"
    )
    # v1beta1 made disruptionMode an object: v1alpha2's string is refused there.
    beta = {**pod_group("g", 2), "apiVersion": "scheduling.k8s.io/v1beta1"}
    beta["spec"] = {**beta["spec"], "disruptionMode": "PodGroup"}
    state.write_text(yaml.safe_dump_all([node("n0"), beta]))
    assert main(["simulate", "--config", str(configuration), "--state", str(state)]) == 2
    assert capsys.readouterr().err == (
        "error: PodGroup ns/g: spec.disruptionMode must set exactly one of single and all\n"
    )
    state.write_text(yaml.safe_dump_all([node("n0"), pod_group("g", -1)]))
    assert main(["simulate", "--config", str(configuration), "--state", str(state)]) == 2
    assert capsys.readouterr().err == (
        "error: PodGroup ns/g: spec.schedulingPolicy.gang.minCount must be an integer of at "
        "least 1\n"
    )


@pytest.fixture
def pair_up_config(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A profile with the sample package's PairUp permit plugin (installed with the tests):
    the first pod of a pair waits at Permit until its partner is placed."""
    point = EntryPoint("PairUp", "sample_plugin:PairUp", registry_module.ENTRY_POINT_GROUP)
    monkeypatch.setattr(
        registry_module,
        "entry_points",
        lambda group: [point] if group == registry_module.ENTRY_POINT_GROUP else [],
    )
    registry_module.registry.cache_clear()
    yield load_configuration(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [
                {
                    "schedulerName": PROFILE,
                    "plugins": {"permit": {"enabled": [{"name": "PairUp"}]}},
                    "pluginConfig": [{"name": "PairUp", "args": {"timeoutSeconds": 30}}],
                }
            ],
        }
    )
    registry_module.registry.cache_clear()


def paired(name: str, pair: str, second: int) -> dict[str, Any]:
    pod = member(name, "unused", "1", second)
    del pod["spec"]["schedulingGroup"]
    pod["metadata"]["labels"] = {"sample.example.com/pair": pair}
    return pod


def test_a_pod_waiting_at_permit_is_held_until_allowed_or_timed_out_on_the_virtual_clock(
    pair_up_config: Any,
) -> None:
    made = Simulation(pair_up_config, seed=1)
    made.load(
        [node("n0"), paired("first", "x", 0), paired("lone", "y", 1), paired("second", "x", 2)]
    )
    made.run()
    assert nodes_of(made) == {"first": "n0", "second": "n0", "lone": None}
    assert messages(made)["lone"] == (
        "0/1 nodes are available: 1 rejected due to timeout after waiting 30s at plugin PairUp."
    )
    # Time jumped to each deadline: the lone pod waited 30s, was tried again after its 1s
    # backoff (its pair's binding was an event it might care for), waited 30s more, and then
    # stayed unschedulable: the run ended instead of looping.
    assert made.clock() == 61.0
    assert assumed(made) == set()


def test_a_gang_that_loses_a_member_waits_outside_the_queue_again() -> None:
    made = simulation(node("n0", cpu="2"), pod_group("g", 3), *gang("g", 3, "1"))
    made.run()
    assert set(nodes_of(made).values()) == {None}
    made.backend.events.delete(
        PODS, {"metadata": {"name": "g-2", "namespace": "ns", "uid": "uid-g-2"}}
    )
    made.backend.events.upsert(NODES, node("n1", cpu="2"))  # room, but the gang is short
    made.run()
    assert not any(nodes_of(made).values())
    assert made.group_reports()[0].reason == (
        "waiting for minCount pods from a gang to appear in scheduling queue (2 of 3 members exist)"
    )


class RefusesOnce:
    """A Reserve plugin that refuses pod g-1 once it is reserved for real (not while its
    group is only tried): the gang's other member is then waiting at Permit."""

    name = "RefusesOnce"
    refused: ClassVar[list[str]] = []

    def __init__(self, args: Any, handle: Any) -> None:
        self.handle = handle

    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        if pod.name == "g-1" and state.pod_group is None and not self.refused:
            self.refused.append(pod.name)
            return Status.unschedulable("refused for the test")
        return SUCCESS

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        pass


def test_a_member_that_fails_before_binding_releases_its_waiting_siblings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    point = EntryPoint("RefusesOnce", f"{__name__}:RefusesOnce", registry_module.ENTRY_POINT_GROUP)
    monkeypatch.setattr(registry_module, "entry_points", lambda group: [point])
    registry_module.registry.cache_clear()
    RefusesOnce.refused.clear()
    try:
        made = simulation(
            node("n0"), pod_group("g", 2), *gang("g", 2, "1"),
            plugins=("RefusesOnce",),
        )  # fmt: skip
        made.run()
    finally:
        registry_module.registry.cache_clear()
    assert RefusesOnce.refused == ["g-1"]
    # g-0 was placed and waited at Permit for g-1; when g-1 was refused it was released at
    # once (not after five minutes), and both were placed together when tried again.
    assert nodes_of(made) == {"g-0": "n0", "g-1": "n0"}
    assert made.clock() < 300


class SeesGroupCycle:
    """Notes the pod group cycle state each Reserve and PreBind is handed."""

    name = "SeesGroupCycle"
    seen: ClassVar[list[tuple[str, str, PodGroupCycleState | None]]] = []

    def __init__(self, args: Any, handle: Any) -> None:
        self.handle = handle

    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        self.seen.append(("reserve", pod.name, state.pod_group_cycle))
        return SUCCESS

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        pass

    def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        self.seen.append(("preBind", pod.name, state.pod_group_cycle))
        return SUCCESS


def test_the_members_tried_in_a_group_cycle_share_its_state_and_binding_never_sees_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    point = EntryPoint(
        "SeesGroupCycle", f"{__name__}:SeesGroupCycle", registry_module.ENTRY_POINT_GROUP
    )
    monkeypatch.setattr(registry_module, "entry_points", lambda group: [point])
    registry_module.registry.cache_clear()
    SeesGroupCycle.seen.clear()
    try:
        made = simulation(
            node("n0"), pod_group("g", 2), *gang("g", 2, "1"), plugins=("SeesGroupCycle",)
        )
        made.run()
    finally:
        registry_module.registry.cache_clear()
    assert nodes_of(made) == {"g-0": "n0", "g-1": "n0"}
    seen = SeesGroupCycle.seen
    # Tried in the group's cycle, then reserved for real, then bound: each member once.
    assert [point for point, _, _ in seen] == ["reserve"] * 4 + ["preBind"] * 2
    assert all(sorted(name for _, name, _ in seen[i : i + 2]) == ["g-0", "g-1"] for i in (0, 2, 4))
    tried = [cycle for _, _, cycle in seen[:2]]
    assert tried[0] is not None
    assert tried[0] is tried[1]  # the group's one state, shared
    assert (tried[0].key.namespace, tried[0].key.name) == ("ns", "g")
    assert [cycle for _, _, cycle in seen[2:]] == [None] * 4  # for real, binding: none


# ----- TopologyAwareWorkloadScheduling

TAS_GATES = parse_feature_gates(
    "GenericWorkload=true,GangScheduling=true,TopologyAwareWorkloadScheduling=true", "1.36"
)


def racked(name: str, rack: str, cpu: str = "4") -> dict[str, Any]:
    made = node(name, cpu)
    made["metadata"]["labels"]["rack"] = rack
    return made


def in_a_rack(name: str, min_count: int) -> dict[str, Any]:
    group = pod_group(name, min_count)
    group["spec"]["schedulingConstraints"] = {"topology": [{"key": "rack"}]}
    return group


def tas(*objects: dict[str, Any]) -> Simulation:
    made = Simulation(
        load_configuration(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "profiles": [{"schedulerName": PROFILE}],
            },
            feature_gates=TAS_GATES,
        ),
        seed=1,
    )
    made.load(objects)
    made.run()
    return made


def racks_of(made: Simulation) -> set[str]:
    return {str(where)[0] for where in nodes_of(made).values() if where}


def test_a_gang_with_a_topology_constraint_is_placed_within_one_domain() -> None:
    # Rack a has room for three of the four members, rack b for all four.
    made = tas(
        racked("a0", "a"), racked("a1", "a", cpu="2"), racked("b0", "b"), racked("b1", "b"),
        in_a_rack("g", 4), *gang("g", 4, "2"),
    )  # fmt: skip
    assert racks_of(made) == {"b"}
    assert all(nodes_of(made).values())


def test_the_placement_that_fits_the_most_members_wins() -> None:
    # Both racks hold the minimum of two; rack a holds all four (PodGroupPodsCount).
    made = tas(
        racked("a0", "a"), racked("a1", "a"), racked("b0", "b"), racked("b1", "b", cpu="1"),
        in_a_rack("g", 2), *gang("g", 4, "2"),
    )  # fmt: skip
    assert racks_of(made) == {"a"}
    assert len([where for where in nodes_of(made).values() if where]) == 4


def test_a_gang_no_domain_can_hold_is_refused_in_upstreams_words() -> None:
    made = tas(
        racked("a0", "a"), racked("a1", "a"), racked("b0", "b"), racked("b1", "b"),
        in_a_rack("g", 5), *gang("g", 5, "2"),
    )  # fmt: skip
    assert not any(nodes_of(made).values())
    [outcome] = made.group_outcomes.values()
    assert outcome.message == (
        "0/2 placements are available, first placement status: pod group is unschedulable"
    )
