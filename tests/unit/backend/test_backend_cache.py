"""The cache's bound pods: the watch's copy of a pod bound as it was assumed keeps the count
the assumption made (nothing parsed or counted again); one that differs in what plugins read
is counted anew."""

from __future__ import annotations

import copy

from backend_support import node, pod

from scheduler_runtime.backend.cache import Cache
from scheduler_runtime.framework.podinfo import pod_info
from scheduler_runtime.framework.snapshot import Snapshot


def assumed_cache() -> tuple[Cache, dict]:
    cache = Cache(Snapshot())
    cache.upsert_node(node("n1"))
    pending = pod("p")
    cache.assume(pod_info(pending), "n1")
    bound = copy.deepcopy(pending)
    bound["spec"]["nodeName"] = "n1"
    bound["metadata"]["resourceVersion"] = "7"
    bound["status"] = {"phase": "Pending", "conditions": [{"type": "PodScheduled"}]}
    return cache, bound


def test_a_pod_bound_as_it_was_assumed_keeps_its_count() -> None:
    cache, bound = assumed_cache()
    counted = cache.snapshot.pod("uid-p")

    change = cache.add_bound_pod(bound, "uid-p")

    assert change == (None, bound)  # an added pod, as before
    assert cache.snapshot.pod("uid-p") is counted
    assert not cache.is_assumed("uid-p")


def test_a_pod_bound_otherwise_than_assumed_is_counted_anew() -> None:
    cache, bound = assumed_cache()
    counted = cache.snapshot.pod("uid-p")
    bound["metadata"]["labels"] = {"topology.kubernetes.io/zone": "a"}

    change = cache.add_bound_pod(bound, "uid-p")

    assert change == (None, bound)
    now = cache.snapshot.pod("uid-p")
    assert now is not counted
    assert now is not None
    assert now.labels == {"topology.kubernetes.io/zone": "a"}
