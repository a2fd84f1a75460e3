"""On a cluster that does not serve upstream's PodGroup API (the default test cluster: neither
scheduling.k8s.io/v1alpha2 on 1.36 nor v1beta1 on 1.37), the runtime with the workload gates
and both gang plugins starts, becomes ready, says once what it goes without, and schedules
pods; scheduler-plugins' PodGroups likewise, where their CRD is not installed."""

from __future__ import annotations

from collections.abc import Callable

from cluster import Cluster, kwok_node
from gang_support import UPSTREAM_GATES
from runtime_support import (
    Pods,
    RuntimeProcess,
    make_pod,
    scheduler_config,
    unique_scheduler_name,
)

from benchmarks.gangs import WORKLOAD

# What the runtime says it goes without: the workload API at the cluster's version.
WORKLOAD_PODGROUPS = f"{WORKLOAD.api_version} PodGroups"
ABSENT = {
    "podgroups.scheduling.k8s.io": WORKLOAD_PODGROUPS,
    "podgroups.scheduling.x-k8s.io": "scheduling.x-k8s.io/v1alpha1 PodGroups",
}


def served(cluster: Cluster, resource: str) -> bool:
    return cluster.kubectl("get", resource, "-A", check=False).returncode == 0


def test_the_runtime_runs_without_the_podgroup_apis(
    cluster: Cluster,
    schedulable_nodes: Callable[..., list[str]],
    start_runtime: Callable[..., RuntimeProcess],
    pods: Pods,
) -> None:
    absent = [what for resource, what in ABSENT.items() if not served(cluster, resource)]
    assert WORKLOAD_PODGROUPS in absent  # the default cluster's API
    [node] = schedulable_nodes(kwok_node(f"no-pg-{unique_scheduler_name()}", cpu="4"))
    name = unique_scheduler_name()
    plugins = {
        "multiPoint": {"enabled": [{"name": "Coscheduling"}]},
        "queueSort": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "*"}]},
    }
    runtime = start_runtime(  # waits for /readyz
        scheduler_config(name, plugins=plugins),
        args=(f"--feature-gates={UPSTREAM_GATES}",),
    )
    pods.create(make_pod("plain", name, cpu="1", nodeSelector={"kubernetes.io/hostname": node}))
    assert pods.wait_placed("plain") == {"plain": node}
    log = runtime.log()
    for what in absent:
        lines = [line for line in log.splitlines() if what in line]
        assert len(lines) == 1, log[-3000:]
        assert "scheduling goes on without them" in lines[0]
    assert "Traceback" not in log
