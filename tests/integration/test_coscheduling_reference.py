"""scheduler-plugins' Coscheduling, the reference for gangs of scheduling.x-k8s.io/v1alpha1
PodGroups, runs on the local control plane: built from the Go module proxy at the pinned
release, under its own scheduler name, with the PodGroup CRD the project ships. A gang of 3
with minMember 3 is placed; a gang whose minimum cannot be met waits, with Coscheduling's
reason, and the controller reports each group's phase."""

from __future__ import annotations

from collections.abc import Callable

from cluster import Cluster, kwok_node, wait_for
from coscheduling_support import (
    MODULE_CRD,
    create_pod_groups,
    gang_pod,
    module_dir,
    pod_group,
    read_pod_group,
    shipped_crd_body,
)
from runtime_support import Pods
from timing import settle


def test_the_shipped_crd_is_the_pinned_releases_byte_for_byte() -> None:
    assert shipped_crd_body() == (module_dir() / MODULE_CRD).read_text()


def test_a_gang_is_placed_whole_and_one_short_of_its_minimum_waits(
    cluster: Cluster,
    namespace: str,
    pods: Pods,
    make_nodes: Callable[..., list[str]],
    coscheduling: Callable[..., str],
) -> None:
    scheduler_name = coscheduling()
    # The gangs' own nodes: other tests' nodes of the same cluster stay out of the count.
    ours = {"gangs": namespace}
    nodes = make_nodes(
        *(kwok_node(f"gang-{namespace}-{i}", cpu="4", labels=ours) for i in range(3))
    )
    # Group names unique to the test: the controller counts a group's pods by label in every
    # namespace (it lists them without a namespace), so another test's "short" would count.
    whole, short = f"whole-{namespace}", f"short-{namespace}"
    create_pod_groups(cluster, namespace, pod_group(whole, 3), pod_group(short, 3))
    pods.create(
        *(
            gang_pod(f"whole-{i}", whole, scheduler_name, cpu="1", nodeSelector=ours)
            for i in range(3)
        ),
        *(
            gang_pod(f"short-{i}", short, scheduler_name, cpu="1", nodeSelector=ours)
            for i in range(2)
        ),
    )

    placed = pods.wait_placed("whole-0", "whole-1", "whole-2")
    assert set(placed.values()) <= set(nodes)
    # Both short members exist; until then the count in the message may still be 1.
    waiting = (
        "pre-filter pod short-0 cannot find enough sibling pods, current pods number: 2, "
        "minMember of group: 3"
    )
    wait_for(
        "Coscheduling to say short-0 waits for its siblings",
        lambda: [
            e
            for e in pods.events("short-0")
            if e["reason"] == "FailedScheduling" and waiting in e["note"]
        ],
    )
    wait_for(
        "the controller to report the whole gang running",
        lambda: (
            read_pod_group(cluster, namespace, whole).get("status", {}).get("phase") == "Running"
        ),
    )
    settle(2)  # the short gang had its chances to be placed in that time
    assert pods.nodes()["short-0"] is None
    assert pods.nodes()["short-1"] is None
    assert read_pod_group(cluster, namespace, short).get("status", {}).get("phase") != "Running"

    # Its third member completes it: the waiting two are retried and all three placed.
    pods.create(gang_pod("short-2", short, scheduler_name, cpu="1", nodeSelector=ours))
    pods.wait_placed("short-0", "short-1", "short-2")
