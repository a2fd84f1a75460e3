"""The scheduler's pod groups: each member's state (unscheduled, assumed, assigned) through
the transitions the event handlers and the scheduling sequence make, and PodGroup objects of
both APIs read as policies, refused by the field that is wrong."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler_runtime.backend.podgroups import PodGroups, report
from scheduler_runtime.framework.podgroups import (
    COSCHEDULING_API,
    COSCHEDULING_POD_GROUP,
    POD_GROUP_LABEL,
    WORKLOAD_API,
    WORKLOAD_POD_GROUP,
    GroupKey,
    PodGroupError,
    coscheduling_policy,
    workload_api,
    workload_policy,
)
from scheduler_runtime.framework.podinfo import pod_info

GANG = GroupKey(WORKLOAD_API, "ns", "gang")
COSCHED = GroupKey(COSCHEDULING_API, "ns", "job")


def member(name: str, node: str = "", group: str = "gang", **extra: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}", **extra},
        "spec": {"nodeName": node, "schedulingGroup": {"podGroupName": group}, "containers": []},
    }


def labelled(name: str, group: str, node: str = "") -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "namespace": "ns",
            "uid": f"uid-{name}",
            "labels": {POD_GROUP_LABEL: group},
        },
        "spec": {"nodeName": node, "containers": []},
    }


def workload_group(name: str = "gang", min_count: int | None = 3, **spec: Any) -> dict[str, Any]:
    policy = {"gang": {"minCount": min_count}} if min_count is not None else {"basic": {}}
    return {
        "apiVersion": "scheduling.k8s.io/v1alpha2",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "ns", "generation": 1},
        "spec": {"schedulingPolicy": policy, **spec},
    }


def coscheduling_group(name: str = "job", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "ns"},
        "spec": spec,
    }


def counts(groups: PodGroups, key: GroupKey = GANG) -> tuple[int, int, int, int]:
    state = groups.state(key)
    assert state is not None
    return state.all_count, len(state.unscheduled), len(state.assumed), len(state.assigned)


def test_pending_members_are_unscheduled_and_bound_ones_assigned() -> None:
    groups = PodGroups()
    assert groups.upsert_pod("uid-a", member("a")) == [GANG]
    assert groups.upsert_pod("uid-b", member("b", node="n1")) == [GANG]
    assert counts(groups) == (2, 1, 0, 1)
    assert groups.upsert_pod("uid-a", member("a")) == []  # an update joins nothing anew


def test_assume_forget_and_binding_move_a_member_between_states() -> None:
    groups = PodGroups()
    groups.upsert_pod("uid-a", member("a"))
    info = pod_info(member("a"))
    groups.assume(info, "n1")
    assert counts(groups) == (1, 0, 1, 0)
    assert groups.state(GANG).assumed == {"uid-a": "n1"}  # type: ignore[union-attr]
    groups.forget(info)
    assert counts(groups) == (1, 1, 0, 0)
    groups.assume(info, "n1")
    groups.upsert_pod("uid-a", member("a", node="n1"))  # the watch reports it bound
    assert counts(groups) == (1, 0, 0, 1)
    groups.forget(info)  # a late forget leaves a bound member assigned
    assert counts(groups) == (1, 0, 0, 1)


def test_a_deleted_member_leaves_every_state_and_a_late_assume_is_ignored() -> None:
    groups = PodGroups()
    groups.upsert_pod("uid-a", member("a"))
    groups.upsert_pod("uid-b", member("b"))
    groups.assume(pod_info(member("a")), "n1")
    assert groups.delete_pod("uid-a") == (GANG,)
    assert counts(groups) == (1, 1, 0, 0)
    groups.assume(pod_info(member("a")), "n1")
    assert counts(groups) == (1, 1, 0, 0)


def test_a_group_without_members_or_podgroup_is_forgotten() -> None:
    groups = PodGroups()
    groups.upsert_pod("uid-a", member("a"))
    groups.delete_pod("uid-a")
    assert groups.state(GANG) is None
    groups.upsert_group(WORKLOAD_POD_GROUP, workload_group())
    assert counts(groups) == (0, 0, 0, 0)  # the PodGroup alone keeps it known
    groups.delete_group(WORKLOAD_POD_GROUP, workload_group())
    assert groups.state(GANG) is None
    assert groups.known() == []


def test_a_relabelled_pod_moves_between_coscheduling_groups() -> None:
    groups = PodGroups()
    groups.upsert_pod("uid-a", labelled("a", "job"))
    assert groups.upsert_pod("uid-a", labelled("a", "other")) == [
        GroupKey(COSCHEDULING_API, "ns", "other")
    ]
    assert groups.state(COSCHED) is None
    assert groups.groups_of("uid-a") == (GroupKey(COSCHEDULING_API, "ns", "other"),)


def test_podgroup_objects_are_read_as_policies_with_the_one_before() -> None:
    groups = PodGroups()
    before, now = groups.upsert_group(WORKLOAD_POD_GROUP, workload_group(min_count=3))
    assert before is None
    assert (now.gang, now.min_count, now.generation) == (True, 3, 1)
    before, now = groups.upsert_group(WORKLOAD_POD_GROUP, workload_group(min_count=None))
    assert before is not None
    assert before.min_count == 3
    assert (now.gang, now.min_count) == (False, 0)
    assert groups.policy(GANG) == now
    assert groups.object(GANG) == workload_group(min_count=None)


def test_workload_policy_reads_gang_basic_and_topology() -> None:
    policy = workload_policy(
        workload_group(schedulingConstraints={"topology": [{"key": "topology.kubernetes.io/zone"}]})
    )
    assert policy.key == GANG
    assert policy.topology_key == "topology.kubernetes.io/zone"
    assert policy.timeout is None


def test_each_minor_reads_and_writes_the_workload_api_version_it_serves() -> None:
    """1.36 serves v1alpha2 and its scheduler writes PodGroupScheduled; 1.37 removed v1alpha2
    for v1beta1, whose condition is PodGroupInitiallyScheduled (1.35 had no PodGroup)."""
    for minor in ("1.35", "1.36"):
        api = workload_api(minor)
        assert (api.version, api.scheduled_condition) == ("v1alpha2", "PodGroupScheduled")
    api = workload_api("1.37")
    assert (api.version, api.scheduled_condition) == ("v1beta1", "PodGroupInitiallyScheduled")
    assert api.pod_groups_path() == "/apis/scheduling.k8s.io/v1beta1/podgroups"
    assert api.pod_groups_path("ns") == "/apis/scheduling.k8s.io/v1beta1/namespaces/ns/podgroups"


# The same PodGroup as each version spells it: v1beta1 renamed podGroupTemplateRef.workload
# to workloadRef (podGroupTemplateName to templateName) and made disruptionMode an object.
SPELLED = {
    "v1alpha2": {
        "podGroupTemplateRef": {"workload": {"workloadName": "job", "podGroupTemplateName": "w"}},
        "disruptionMode": "PodGroup",
        "priorityClassName": "high",
        "priority": 1000,
    },
    "v1beta1": {
        "workloadRef": {"workloadName": "job", "templateName": "w"},
        "disruptionMode": {"all": {}},
        "priorityClassName": "high",
        "priority": 1000,
    },
}


@pytest.mark.parametrize("minor", ["1.36", "1.37"])
def test_both_workload_versions_read_into_one_policy(minor: str) -> None:
    """A PodGroup of either version reads as the same policy; one listed without its
    apiVersion (as the API server lists them) is read as the version watched."""
    version = workload_api(minor).version
    spelled = {**workload_group(**SPELLED[version]), "apiVersion": f"scheduling.k8s.io/{version}"}
    listed = {key: value for key, value in spelled.items() if key != "apiVersion"}
    groups = PodGroups(version)
    _, from_list = groups.upsert_group(WORKLOAD_POD_GROUP, listed)
    for policy in (workload_policy(spelled), from_list):
        assert (policy.version, policy.gang, policy.min_count) == (version, True, 3)
        assert policy.workload == ("job", "w")
        assert policy.disruption_mode == "All"
        assert (policy.priority_class_name, policy.priority) == ("high", 1000)
        assert (policy.preemption_policy, policy.parent) == (None, None)
    single = unversioned(disruptionMode="Pod" if version == "v1alpha2" else {"single": {}})
    assert workload_policy(single, version).disruption_mode == "Single"
    unset = workload_policy(listed | {"spec": {"schedulingPolicy": {"basic": {}}}}, version)
    assert (unset.workload, unset.disruption_mode, unset.priority) == (None, "", None)


def unversioned(**spec: Any) -> dict[str, Any]:
    """A PodGroup as the API server lists it: without its apiVersion."""
    group = workload_group(**spec)
    del group["apiVersion"]
    return group


def test_v1beta1_reads_the_preemption_policy_and_parent_composite_group() -> None:
    policy = workload_policy(
        unversioned(preemptionPolicy="Never", parentCompositePodGroupName="team"), "v1beta1"
    )
    assert (policy.preemption_policy, policy.parent) == ("Never", "team")


@pytest.mark.parametrize(
    ("group", "version", "message"),
    [
        (workload_group(disruptionMode={"all": {}}), "v1alpha2", "spec.disruptionMode"),
        (workload_group(disruptionMode="PodGroup"), "v1beta1", "spec.disruptionMode"),
        (
            workload_group(disruptionMode={"single": {}, "all": {}}),
            "v1beta1",
            "spec.disruptionMode must set exactly one of single and all",
        ),
        (
            workload_group(workloadRef={"workloadName": "job"}),
            "v1beta1",
            "spec.workloadRef.templateName",
        ),
        (
            workload_group(podGroupTemplateRef={"workload": {"workloadName": "job"}}),
            "v1alpha2",
            "spec.podGroupTemplateRef.workload.podGroupTemplateName",
        ),
        (workload_group(preemptionPolicy="Always"), "v1beta1", "spec.preemptionPolicy"),
        (workload_group(parentCompositePodGroupName=""), "v1beta1", "spec.parentComposite"),
        (workload_group(priority=2**31), "v1beta1", "spec.priority must be a 32-bit integer"),
        (workload_group(priority="1"), "v1alpha2", "spec.priority must be a 32-bit integer"),
        (workload_group(priorityClassName=7), "v1alpha2", "spec.priorityClassName"),
        (
            {**workload_group(), "apiVersion": "scheduling.k8s.io/v1alpha3"},
            "v1beta1",
            "apiVersion 'scheduling.k8s.io/v1alpha3' is not one of scheduling.k8s.io/v1alpha2, "
            "scheduling.k8s.io/v1beta1",
        ),
    ],
)
def test_a_workload_podgroup_of_either_version_is_refused_naming_the_field(
    group: dict[str, Any], version: str, message: str
) -> None:
    """Each version's shape is its own: the other's spelling of a field is refused."""
    listed = {key: value for key, value in group.items() if key != "apiVersion"}
    read = group if group["apiVersion"].endswith("v1alpha3") else listed
    with pytest.raises(PodGroupError, match=message.replace("[", r"\[").replace("]", r"\]")):
        workload_policy(read, version)


def test_coscheduling_policy_reads_min_member_timeout_and_resources() -> None:
    policy = coscheduling_policy(
        coscheduling_group(minMember=4, scheduleTimeoutSeconds=10, minResources={"cpu": 8})
    )
    assert (policy.key, policy.gang, policy.min_count, policy.timeout) == (COSCHED, True, 4, 10.0)
    assert policy.min_resources == {"cpu": "8"}
    assert coscheduling_policy(coscheduling_group()).min_count == 0


@pytest.mark.parametrize(
    ("group", "reader", "message"),
    [
        (workload_group(min_count=0), workload_policy, "spec.schedulingPolicy.gang.minCount"),
        (workload_group(min_count=True), workload_policy, "spec.schedulingPolicy.gang.minCount"),
        (
            workload_group(schedulingConstraints={"topology": [{}]}),
            workload_policy,
            "spec.schedulingConstraints.topology[0].key is required",
        ),
        (coscheduling_group(minMember=-1), coscheduling_policy, "spec.minMember"),
        (coscheduling_group(minMember="3"), coscheduling_policy, "spec.minMember"),
        (
            coscheduling_group(scheduleTimeoutSeconds=-5),
            coscheduling_policy,
            "spec.scheduleTimeoutSeconds",
        ),
        (
            coscheduling_group(minResources={"cpu": "lots"}),
            coscheduling_policy,
            "spec.minResources",
        ),
        (coscheduling_group(minResources=["cpu"]), coscheduling_policy, "spec.minResources"),
        ({"metadata": {"namespace": "ns"}, "spec": {}}, coscheduling_policy, "metadata.name"),
    ],
)
def test_a_podgroup_that_cannot_be_read_is_refused_naming_the_field(
    group: dict[str, Any], reader: Any, message: str
) -> None:
    with pytest.raises(PodGroupError, match=message.replace("[", r"\[").replace("]", r"\]")):
        reader(group)


def test_the_report_says_why_a_group_waits() -> None:
    groups = PodGroups()
    groups.upsert_pod("uid-a", member("a"))
    held = {"uid-a": 'waiting for pods\'s pod group "gang" to appear in scheduling queue'}
    waiting = report(groups, GANG, held.get, None)
    assert (waiting.placed, waiting.members, waiting.minimum) == (False, 1, 1)
    assert waiting.reason == held["uid-a"]
    groups.upsert_group(WORKLOAD_POD_GROUP, workload_group(min_count=2))
    held["uid-a"] = "waiting for minCount pods from a gang to appear in scheduling queue"
    assert report(groups, GANG, held.get, None).reason == (
        "waiting for minCount pods from a gang to appear in scheduling queue (1 of 2 members exist)"
    )
    groups.upsert_pod("uid-b", member("b"))
    groups.assume(pod_info(member("a")), "n1")
    assert report(groups, GANG, lambda key: None, None).reason == (
        "1 members placed, waiting at Permit for the rest"
    )
    groups.upsert_pod("uid-a", member("a", node="n1"))
    groups.upsert_pod("uid-b", member("b", node="n2"))
    done = report(groups, GANG, lambda key: None, "pod group is unschedulable")
    assert (done.placed, done.bound, done.reason) == (True, 2, None)


def test_both_apis_track_their_own_members() -> None:
    groups = PodGroups()
    groups.upsert_pod("uid-a", member("a"))
    groups.upsert_pod("uid-b", labelled("b", "job"))
    groups.upsert_group(COSCHEDULING_POD_GROUP, coscheduling_group(minMember=2))
    assert counts(groups, GANG) == (1, 1, 0, 0)
    assert counts(groups, COSCHED) == (1, 1, 0, 0)
    assert groups.policy(COSCHED) is not None
    assert groups.policy(GANG) is None


def test_members_are_found_by_name_and_a_deleted_one_leaves_no_trace() -> None:
    groups = PodGroups()
    groups.upsert_pod("uid-a", member("a"))
    groups.upsert_pod("uid-b", member("b"))
    assert groups.named("ns/a") == "uid-a"
    finished = member("b")
    finished["status"] = {"phase": "Succeeded"}
    groups.upsert_pod("uid-b", finished)
    groups.delete_pod("uid-b")
    groups.delete_pod("uid-a")
    assert (groups.named("ns/a"), groups.named("ns/b")) == (None, None)
    assert (groups._named, groups._names, groups._groups_of) == ({}, {}, {})
