"""scheduler_runtime_state_objects: a scheduler whose structures hold known contents reports
their sizes on /metrics, read at scrape time (a soak run compares them with the cluster's
objects once its churn drains)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from backend_support import node, pod
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from scheduler_runtime.backend import NODES, PODS
from scheduler_runtime.backend.claims import CLAIMS
from scheduler_runtime.config import load_configuration
from scheduler_runtime.framework.podgroups import COSCHEDULING_POD_GROUP, POD_GROUP_LABEL
from scheduler_runtime.framework.podinfo import pod_info
from scheduler_runtime.live import scheduler as live
from scheduler_runtime.live.api_calls import PodStatusPatchCall
from scheduler_runtime.live.apiconfig import ApiConfig
from scheduler_runtime.live.kube import Kube
from scheduler_runtime.live.metrics import STATE_OBJECTS, SchedulerMetrics
from scheduler_runtime.live.outcomes import Outcomes

OURS = "ours"


@pytest.fixture
def scheduler() -> Iterator[live.Scheduler]:
    config = load_configuration(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [
                {
                    "schedulerName": OURS,
                    "plugins": {
                        "multiPoint": {"enabled": [{"name": "Coscheduling"}]},
                        "queueSort": {
                            "enabled": [{"name": "Coscheduling"}],
                            "disabled": [{"name": "*"}],
                        },
                    },
                }
            ],
        }
    )
    kube = Kube(ApiConfig.at("http://127.0.0.1:9"))
    made = live.Scheduler(config, kube, Outcomes(kube, kube, "test"), SchedulerMetrics())
    yield made
    made.stop(finish_bindings=False)


def claim(name: str, *devices: str) -> dict[str, Any]:
    results = [{"request": "r", "driver": "d", "pool": "p", "device": d} for d in devices]
    return {
        "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}", "resourceVersion": "1"},
        "status": {"allocation": {"devices": {"results": results}}} if devices else {},
    }


def member(name: str, group: str) -> dict[str, Any]:
    made = pod(name, scheduler=OURS)
    made["metadata"]["labels"] = {POD_GROUP_LABEL: group}
    return made


def scraped(scheduler: live.Scheduler) -> dict[str, float]:
    text = generate_latest(scheduler.metrics.registry).decode()
    (family,) = (f for f in text_string_to_metric_families(text) if f.name == STATE_OBJECTS)
    return {sample.labels["kind"]: sample.value for sample in family.samples}


def test_a_scheduler_reports_the_sizes_of_what_it_holds(scheduler: live.Scheduler) -> None:
    events = scheduler.backend.events
    for name in ("n1", "n2", "n3"):
        events.upsert(NODES, node(name))
    events.upsert(PODS, pod("bound", node_name="n1", scheduler="someone-else"))
    for name in ("p1", "p2"):
        events.upsert(PODS, pod(name, scheduler=OURS))
    events.upsert(PODS, member("m1", "gang"))
    events.upsert(PODS, member("m2", "gang"))
    group = {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": "gang", "namespace": "ns", "uid": "g"},
        "spec": {"minMember": 2},
    }
    events.upsert(COSCHEDULING_POD_GROUP, group)
    events.upsert(CLAIMS, claim("c1", "dev-0", "dev-1"))
    events.upsert(CLAIMS, claim("c2"))
    queue = scheduler.queue
    flying = queue.pop(timeout=1)  # one pod in flight, then assumed on n2
    assert flying is not None
    scheduler.backend.cache.assume(flying.pod_info, "n2")
    scheduler.backend.dra.claims.signal_pending_allocation("uid-c2", claim("c2", "dev-2"))
    # A refusal about p1 waiting for the dispatcher (its workers not started here).
    p1 = pod_info(pod("p1", scheduler=OURS))
    scheduler.dispatcher.queue.add(PodStatusPatchCall(scheduler.outcomes, p1, "Unschedulable"))

    sizes = scraped(scheduler)

    waiting = {k: sizes[k] for k in ("active_pods", "backoff_pods", "unschedulable_pods")}
    assert waiting == {"active_pods": 3, "backoff_pods": 0, "unschedulable_pods": 0}
    assert sizes["gated_pods"] == 0
    assert sizes["in_flight_pods"] == 1
    assert (sizes["nodes"], sizes["bound_pods"], sizes["assumed_pods"]) == (3, 1, 1)
    assert sizes["resource_claims"] == 2
    assert sizes["claim_allocations_in_flight"] == 1
    assert sizes["allocated_devices"] == 2  # c1's two; the one in flight is not yet allocated
    assert (sizes["pod_groups"], sizes["pod_group_objects"], sizes["pod_group_members"]) == (
        1,
        1,
        2,
    )
    assert sizes["pending_api_calls"] == 1
    assert sizes["scheduled_pod_groups"] == 0


def test_sizes_are_read_at_scrape_time_and_drop_as_work_drains(scheduler: live.Scheduler) -> None:
    events = scheduler.backend.events
    events.upsert(NODES, node("n1"))
    events.upsert(PODS, pod("p1", scheduler=OURS))
    assert scraped(scheduler)["active_pods"] == 1
    flying = scheduler.queue.pop(timeout=1)
    assert flying is not None
    scheduler.backend.cache.assume(flying.pod_info, "n1")
    assert (scraped(scheduler)["in_flight_pods"], scraped(scheduler)["assumed_pods"]) == (1, 1)
    scheduler.queue.done(flying.id)
    bound = pod("p1", node_name="n1", scheduler=OURS)
    events.upsert(PODS, bound)  # the watch confirms the binding
    assert pod_info(bound).id == flying.id
    after = scraped(scheduler)
    assert (after["active_pods"], after["in_flight_pods"], after["assumed_pods"]) == (0, 0, 0)
    assert after["bound_pods"] == 1
    events.delete(PODS, bound)
    assert scraped(scheduler)["bound_pods"] == 0


def test_pending_pods_are_the_queue_sizes_at_scrape_time(scheduler: live.Scheduler) -> None:
    events = scheduler.backend.events
    events.upsert(NODES, node("n1"))
    for name in ("p1", "p2", "p3"):
        events.upsert(PODS, pod(name, scheduler=OURS))
    assert scheduler.queue.pop(timeout=1) is not None

    text = generate_latest(scheduler.metrics.registry).decode()

    assert 'scheduler_pending_pods{queue="active"} 2.0' in text
    assert 'scheduler_pending_pods{queue="unschedulable"} 0.0' in text
