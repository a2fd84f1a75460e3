"""A bug in a plugin costs one pod's attempt, never the scheduling loop: faults are injected
into in-tree plugins (which run unguarded, for speed) and the scheduler must carry on."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from backend_support import live_scheduler, pod

from scheduler_runtime.backend import PODS
from scheduler_runtime.backend.schedule_one import GroupOutcome
from scheduler_runtime.framework.podgroups import WORKLOAD_API, WORKLOAD_POD_GROUP, GroupKey
from scheduler_runtime.framework.status import SUCCESS, Status
from scheduler_runtime.live.apiconfig import ApiConfig
from scheduler_runtime.live.kube import Kube
from scheduler_runtime.live.scheduler import Scheduler
from scheduler_runtime.plugins.nodeunschedulable import NodeUnschedulable
from scheduler_runtime.plugins.volumebinding import VolumeBinding

PROFILE = "ours"


@pytest.fixture
def scheduler() -> Iterator[Scheduler]:
    """A scheduler whose API server is unreachable: outcomes fail to report, and say so."""
    kube = Kube(ApiConfig.at("http://127.0.0.1:9"))
    made = live_scheduler(kube, PROFILE)
    yield made
    made.stop(finish_bindings=False)


def fault(*_: Any, **__: Any) -> Any:
    raise RuntimeError("injected fault")


def attempt_one(scheduler: Scheduler, name: str) -> None:
    scheduler.backend.events.upsert(PODS, pod(name, scheduler=PROFILE))
    queued = scheduler.queue.pop(timeout=1)
    assert queued is not None
    assert queued.pod_info.key == f"ns/{name}"
    scheduler.schedule_one(queued)


def error_attempts(scheduler: Scheduler) -> float:
    value = scheduler.metrics.registry.get_sample_value(
        "scheduler_schedule_attempts_total", {"result": "error", "profile": PROFILE}
    )
    return value or 0.0


def test_a_filter_that_raises_costs_the_pod_an_error_attempt(
    scheduler: Scheduler, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(NodeUnschedulable, "filter_nodes", fault)
    monkeypatch.setattr(NodeUnschedulable, "filter", fault)
    attempt_one(scheduler, "first")
    assert error_attempts(scheduler) == 1
    assert not scheduler.backend.cache.is_assumed("ns/first")
    monkeypatch.undo()
    attempt_one(scheduler, "second")  # the loop goes on: the next pod finds its node
    # (whose binding then fails against the unreachable API server, so no assumed pod stays)
    assert algorithm_runs(scheduler) == 1


def test_a_reserve_that_raises_forgets_the_assumed_pod(
    scheduler: Scheduler, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(VolumeBinding, "reserve", fault)
    attempt_one(scheduler, "reserved")
    assert error_attempts(scheduler) == 1
    assert not scheduler.backend.cache.is_assumed("ns/reserved")


def algorithm_runs(scheduler: Scheduler) -> float:
    value = scheduler.metrics.registry.get_sample_value(
        "scheduler_scheduling_algorithm_duration_seconds_count", {}
    )
    return value or 0.0


def test_the_algorithm_histogram_counts_cycles_that_found_a_node(
    scheduler: Scheduler, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As upstream's scheduling_algorithm_duration_seconds: a cycle that found a node counts,
    one that failed does not (whatever happens to the binding later)."""
    attempt_one(scheduler, "fits")
    assert algorithm_runs(scheduler) == 1
    monkeypatch.setattr(NodeUnschedulable, "filter_nodes", fault)
    monkeypatch.setattr(NodeUnschedulable, "filter", fault)
    attempt_one(scheduler, "broken")
    assert algorithm_runs(scheduler) == 1


def extension_point_runs(scheduler: Scheduler) -> dict[tuple[str, str], float]:
    """(extension point, status) -> observations, from the exported histogram."""
    (family,) = [
        m
        for m in scheduler.metrics.registry.collect()
        if m.name == "scheduler_framework_extension_point_duration_seconds"
    ]
    return {
        (s.labels["extension_point"], s.labels["status"]): s.value
        for s in family.samples
        if s.name.endswith("_count") and s.labels["profile"] == PROFILE
    }


def test_each_extension_point_is_timed_with_its_status(
    scheduler: Scheduler, monkeypatch: pytest.MonkeyPatch
) -> None:
    """upstream's framework_extension_point_duration_seconds: one observation per extension
    point run, labelled with the status it ended in; a plugin that raises counts as Error."""
    attempt_one(scheduler, "fits")
    assert scheduler.bindings.idle(30)  # its binding fails: the API server is unreachable
    assert extension_point_runs(scheduler) == {
        ("PreFilter", "Success"): 1,
        ("Filter", "Success"): 1,  # one node fits, so nothing is scored (as upstream)
        ("Reserve", "Success"): 1,
        ("Permit", "Success"): 1,
        ("PreBind", "Success"): 1,
        ("Bind", "Error"): 1,
        ("Unreserve", "Success"): 1,
    }
    monkeypatch.setattr(NodeUnschedulable, "filter_nodes", fault)
    attempt_one(scheduler, "broken")
    assert extension_point_runs(scheduler)[("Filter", "Error")] == 1


def test_a_deleted_podgroup_leaves_nothing_and_one_recreated_under_its_name_is_told_anew(
    scheduler: Scheduler,
) -> None:
    """The PodGroups set scheduled are remembered (not set back to False by a cycle for
    their extra members) until they are deleted: a group re-created under the same name
    gets its own condition, and the scheduler keeps nothing of the deleted ones."""
    written: list[tuple[str, str]] = []
    scheduler.outcomes.pod_group_condition = lambda group, api, *condition: written.append(  # type: ignore[method-assign]
        ((group["metadata"]["uid"]), condition[0])
    )

    def group(uid: str) -> dict[str, Any]:
        return {
            "metadata": {"name": "job", "namespace": "ns", "uid": uid},
            "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}},
        }

    key = GroupKey(WORKLOAD_API, "ns", "job")
    refused = Status.unschedulable("pod group is unschedulable")
    scheduler.backend.events.upsert(WORKLOAD_POD_GROUP, group("first"))
    scheduler.group_decided(GroupOutcome(key, SUCCESS))
    scheduler.group_decided(GroupOutcome(key, refused))  # an extra member's cycle: not written
    scheduler.backend.events.delete(WORKLOAD_POD_GROUP, group("first"))
    assert scheduler._scheduled_groups == set()
    assert key not in scheduler._group_messages
    scheduler.backend.events.upsert(WORKLOAD_POD_GROUP, group("second"))
    scheduler.group_decided(GroupOutcome(key, refused))
    scheduler.dispatcher.close(timeout=10)  # the writes made: one queue per PodGroup uid
    assert sorted(written) == [("first", "True"), ("second", "False")]


def test_explain_finds_a_group_member_by_name_whichever_pod_holds_the_name_now(
    scheduler: Scheduler,
) -> None:
    def member(uid: str, node_name: str = "") -> dict[str, Any]:
        made = pod("a", node_name, scheduler=PROFILE)
        made["metadata"]["uid"] = uid
        made["spec"]["schedulingGroup"] = {"podGroupName": "job"}
        return made

    scheduler.backend.events.upsert(PODS, member("old"))
    explained = scheduler.explain("ns/a")
    assert explained is not None
    assert (explained["pod"], explained["node"]) == ("ns/a", "")
    assert (explained["podGroup"]["name"], explained["podGroup"]["members"]) == ("job", 1)
    scheduler.backend.events.delete(PODS, member("old"))
    assert scheduler.explain("ns/a") is None
    scheduler.backend.events.upsert(PODS, member("new", "n1"))
    explained = scheduler.explain("ns/a")
    assert explained is not None
    assert (explained["node"], explained["podGroup"]["members"]) == ("n1", 1)
