"""The runtime keeps working when the control plane goes away and comes back: its watches
back off and resume, and pods created after the restart are placed."""

from __future__ import annotations

from collections.abc import Callable

from cluster import Cluster, kwok_node
from fault_support import start_stopped_components, stop_control_plane
from runtime_support import (
    Pods,
    RuntimeProcess,
    make_pod,
    scheduler_config,
    unique_scheduler_name,
)


def test_runtime_survives_a_control_plane_restart(
    cluster: Cluster,
    schedulable_nodes,
    pods: Pods,
    start_runtime: Callable[..., RuntimeProcess],
) -> None:
    schedulable_nodes(kwok_node("restart-1"))
    scheduler = unique_scheduler_name()
    runtime = start_runtime(scheduler_config(scheduler))
    pods.create(make_pod("before", scheduler))
    assert pods.wait_placed("before") == {"before": "restart-1"}

    stop_control_plane(cluster)
    start_stopped_components(cluster)
    assert runtime.process.poll() is None, runtime.log()[-3000:]

    pods.create(make_pod("after", scheduler))
    assert pods.wait_placed("after", timeout=90) == {"after": "restart-1"}
    assert runtime.get("/readyz") == (200, "ok")
    assert "list/watch failed" in runtime.log()  # it did notice the outage
