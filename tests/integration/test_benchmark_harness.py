"""The benchmark's measuring parts against the real control plane (counts, not timings):
a scheduler process is started, probed, scraped and measured; the ceiling client binds."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from pathlib import Path

import kubernetes
import pytest
from cluster import Cluster, kwok_node

from benchmarks import workloads
from benchmarks.kube import Api, Endpoint, gather_all
from benchmarks.measure import (
    Binding,
    CeilingTiming,
    bind_as_created,
    binding_ceiling,
    create_namespace,
    remove_namespace,
    run_pods,
    wait_default_service_account,
)
from benchmarks.nodes import ensure_nodes
from benchmarks.schedulers import (
    ALGORITHM_HISTOGRAM,
    ATTEMPT_HISTOGRAM,
    BINDER,
    SCHEDULER_NAMES,
    UPSTREAM,
    SchedulerProcess,
)
from benchmarks.stats import histogram_buckets, histogram_quantile

PODS = 10


def test_upstream_run_is_watched_until_every_pod_is_bound(
    cluster: Cluster, make_nodes: Callable[..., list[str]], namespace: str, tmp_path: Path
) -> None:
    suffix = uuid.uuid4().hex[:6]
    make_nodes(*(kwok_node(f"bench-h-{suffix}-{i}") for i in range(2)))
    process = SchedulerProcess.for_scheduler(
        UPSTREAM, tmp_path, cluster.kubeconfig, cluster.bin_dir
    )
    manifests = workloads.pods("basic", PODS, SCHEDULER_NAMES[UPSTREAM])

    async def scenario() -> tuple[Binding, str]:
        await process.wait_ready()
        async with Api.open(Endpoint.from_kubeconfig(cluster.kubeconfig)) as api:
            binding = await run_pods(api, namespace, manifests, stall_seconds=60)
        return binding, await process.settled_metrics(attempts=PODS)

    process.start()
    try:
        binding, metrics = asyncio.run(scenario())
        peak_rss = process.peak_rss_bytes()
        cpu_seconds = process.cpu_seconds()
    finally:
        process.stop()

    assert (binding.pods, binding.bound) == (PODS, PODS)
    assert binding.create_seconds > 0
    assert binding.bound_seconds > 0
    pods = kubernetes.client.CoreV1Api(cluster.api).list_namespaced_pod(namespace).items
    assert all(pod.spec.node_name for pod in pods)
    buckets = histogram_buckets(metrics, ATTEMPT_HISTOGRAM)
    assert buckets[-1][1] >= PODS  # every pod took at least one attempt
    assert histogram_quantile(0.99, buckets) is not None
    # The algorithm's own histogram, under the name and buckets the runtime uses too.
    algorithm = histogram_buckets(metrics, ALGORITHM_HISTOGRAM)
    assert algorithm[0][0] == 0.001
    assert algorithm[-1][1] >= PODS
    assert peak_rss > 10 * 1024 * 1024
    assert cpu_seconds > 0


def test_ceiling_client_binds_every_pod_round_robin(
    cluster: Cluster, make_nodes: Callable[..., list[str]], namespace: str
) -> None:
    suffix = uuid.uuid4().hex[:6]
    nodes = make_nodes(*(kwok_node(f"bench-c-{suffix}-{i}") for i in range(2)))

    async def scenario() -> CeilingTiming:
        async with Api.open(Endpoint.from_kubeconfig(cluster.kubeconfig)) as api:
            return await binding_ceiling(api, namespace, PODS, nodes, qps=1000)

    timing = asyncio.run(scenario())

    assert timing.bindings == PODS
    assert len(timing.latencies) == PODS
    pods = kubernetes.client.CoreV1Api(cluster.api).list_namespaced_pod(namespace).items
    placed = sorted(pod.spec.node_name for pod in pods)
    assert placed == sorted(nodes * (PODS // 2))


def test_bench_nodes_are_created_ready_with_capacity_and_trimmed(cluster: Cluster) -> None:
    core = kubernetes.client.CoreV1Api(cluster.api)

    async def ensure(count: int) -> None:
        async with Api.open(Endpoint.from_kubeconfig(cluster.kubeconfig)) as api:
            await ensure_nodes(api, count, timeout=60)

    def bench_nodes() -> list[kubernetes.client.V1Node]:
        selector = "app.kubernetes.io/part-of=scheduler-benchmark"
        return core.list_node(label_selector=selector).items

    try:
        asyncio.run(ensure(3))
        created = bench_nodes()
        assert sorted(n.metadata.name for n in created) == [
            workloads.node_name(i) for i in range(3)
        ]
        for node in created:
            assert node.status.allocatable["pods"] == "110"
            assert node.metadata.labels["topology.kubernetes.io/zone"] in workloads.ZONES
        asyncio.run(ensure(2))
        assert sorted(n.metadata.name for n in bench_nodes()) == [
            workloads.node_name(i) for i in range(2)
        ]
    finally:
        asyncio.run(ensure(0))
    assert bench_nodes() == []


@pytest.mark.parametrize("rate", [None, 20.0])
def test_binder_binds_pods_as_they_are_created(
    cluster: Cluster, make_nodes: Callable[..., list[str]], namespace: str, rate: float | None
) -> None:
    """All at once, or paced at `rate` pods/s (each pod's latency is then its own)."""
    suffix = uuid.uuid4().hex[:6]
    nodes = make_nodes(*(kwok_node(f"bench-b-{suffix}-{i}") for i in range(2)))
    manifests = workloads.pods("mixed", PODS, SCHEDULER_NAMES[BINDER])

    async def scenario() -> Binding:
        async with Api.open(Endpoint.from_kubeconfig(cluster.kubeconfig)) as api:
            binder = asyncio.create_task(bind_as_created(api, namespace, nodes, qps=1000))
            try:
                return await run_pods(api, namespace, manifests, stall_seconds=60, rate=rate)
            finally:
                binder.cancel()

    binding = asyncio.run(scenario())

    assert (binding.pods, binding.bound) == (PODS, PODS)
    assert len(binding.pod_latencies) == PODS
    assert all(latency >= 0 for latency in binding.pod_latencies)
    if rate is not None:  # the last creation waits for its turn: (PODS - 1) / rate seconds
        assert binding.create_seconds >= (PODS - 1) / rate * 0.9
    pods = kubernetes.client.CoreV1Api(cluster.api).list_namespaced_pod(namespace).items
    assert sorted(pod.spec.node_name for pod in pods) == sorted(nodes * (PODS // 2))


def test_removing_a_namespace_deletes_its_pods_first(cluster: Cluster) -> None:
    name = f"bench-rm-{uuid.uuid4().hex[:6]}"
    manifests = workloads.pods("basic", PODS, SCHEDULER_NAMES[BINDER])

    async def scenario() -> None:
        async with Api.open(Endpoint.from_kubeconfig(cluster.kubeconfig)) as api:
            await create_namespace(api, name)
            await wait_default_service_account(api, name)
            await gather_all(api.post(f"/api/v1/namespaces/{name}/pods", m) for m in manifests)
            await remove_namespace(api, name)

    asyncio.run(scenario())

    core = kubernetes.client.CoreV1Api(cluster.api)
    assert core.list_namespaced_pod(name).items == []
    remaining = [n for n in core.list_namespace().items if n.metadata.name == name]
    assert not remaining or remaining[0].metadata.deletion_timestamp is not None
