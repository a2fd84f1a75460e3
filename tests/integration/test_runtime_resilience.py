"""The runtime keeps working when the control plane goes away and comes back: its watches
back off and resume, and pods created after the restart are placed."""

from __future__ import annotations

from collections.abc import Callable

from cluster import Cluster, kwok_node, wait_for
from runtime_support import (
    Pods,
    RuntimeProcess,
    make_pod,
    scheduler_config,
    unique_scheduler_name,
)

from benchmarks.tools import cluster_tool
from benchmarks.tools import shared_cluster_name as cluster_name


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

    cluster_tool("kwokctl", "--name", cluster_name(), "stop", "cluster")
    cluster_tool("kwokctl", "--name", cluster_name(), "start", "cluster")
    wait_for(
        "the API server to answer again",
        lambda: cluster.kubectl("get", "--raw", "/readyz", check=False).returncode == 0,
        timeout=120,
    )
    assert runtime.process.poll() is None, runtime.log()[-3000:]

    pods.create(make_pod("after", scheduler))
    assert pods.wait_placed("after", timeout=90) == {"after": "restart-1"}
    assert runtime.get("/readyz") == (200, "ok")
    assert "list/watch failed" in runtime.log()  # it did notice the outage
