"""On a cluster that serves neither PodGroup API (the default test cluster: no
scheduling.k8s.io/v1alpha2, no scheduling.x-k8s.io CRD), the runtime with the gang plugins
configured starts, becomes ready, says once what it goes without, and schedules pods."""

from __future__ import annotations

from collections.abc import Callable

from cluster import Cluster, kwok_node
from runtime_support import (
    Pods,
    RuntimeProcess,
    make_pod,
    scheduler_config,
    unique_scheduler_name,
)


def test_the_runtime_runs_without_the_podgroup_apis(
    cluster: Cluster,
    schedulable_nodes: Callable[..., list[str]],
    start_runtime: Callable[..., RuntimeProcess],
    pods: Pods,
) -> None:
    [node] = schedulable_nodes(kwok_node(f"no-pg-{unique_scheduler_name()}", cpu="4"))
    name = unique_scheduler_name()
    plugins = {
        "multiPoint": {"enabled": [{"name": "GangScheduling"}, {"name": "Coscheduling"}]},
        "queueSort": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "*"}]},
    }
    runtime = start_runtime(scheduler_config(name, plugins=plugins))  # waits for /readyz
    pods.create(make_pod("plain", name, cpu="1", nodeSelector={"kubernetes.io/hostname": node}))
    assert pods.wait_placed("plain") == {"plain": node}
    log = runtime.log()
    for absent in (
        "scheduling.k8s.io/v1alpha2 PodGroups",
        "scheduling.x-k8s.io/v1alpha1 PodGroups",
    ):
        lines = [line for line in log.splitlines() if absent in line]
        assert len(lines) == 1, log[-3000:]
        assert "scheduling goes on without them" in lines[0]
    assert "Traceback" not in log
