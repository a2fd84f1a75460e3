"""The timed parts: a workload's pods created and watched until bound, and the binding
ceiling of the API server for a minimal client."""

from __future__ import annotations

import asyncio
import math
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from aiolimiter import AsyncLimiter

from benchmarks import dra, workloads
from benchmarks.kube import Api, gather_all
from benchmarks.workloads import PART_OF, PART_OF_SELECTOR

UNKNOWN_SCHEDULER = "bench-nobody"
RESOURCE_API = "/apis/resource.k8s.io/v1"
BOUND = "fieldSelector=spec.nodeName%21%3D"  # spec.nodeName!=
UNBOUND = "fieldSelector=spec.nodeName%3D"  # spec.nodeName=


@dataclass(frozen=True)
class Binding:
    """How many of a run's pods were bound and when, in seconds from the first creation, and
    each bound pod's latency from its creation (the API server's answer) to its binding."""

    pods: int
    bound: int
    create_seconds: float
    bound_seconds: float
    pod_latencies: Sequence[float] = ()
    # Each pod's creation and binding, on the benchmark's monotonic clock, by name.
    created_at: Mapping[str, float] = field(default_factory=dict)
    bound_at: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class CeilingTiming:
    """Bindings posted by the minimal client: how many, how long, and each call's latency."""

    bindings: int
    seconds: float
    latencies: Sequence[float]


def pods_path(namespace: str) -> str:
    return f"/api/v1/namespaces/{namespace}/pods"


async def create_namespace(api: Api, name: str) -> None:
    await api.post("/api/v1/namespaces", {"metadata": {"name": name, "labels": PART_OF}})


async def wait_default_service_account(api: Api, namespace: str, timeout: float = 60) -> None:
    """Pods are admitted once their namespace's default ServiceAccount exists."""
    deadline = time.monotonic() + timeout
    path = f"/api/v1/namespaces/{namespace}/serviceaccounts?fieldSelector=metadata.name%3Ddefault"
    while not (await api.get(path))["items"]:
        if time.monotonic() > deadline:
            raise TimeoutError(f"namespace {namespace} has no default ServiceAccount")
        await asyncio.sleep(0.2)


async def remove_namespace(api: Api, name: str, timeout: float = 900) -> None:
    """Force-deletes the pods (so no scheduler counts them any longer), then their
    ResourceClaims (so none holds a device for the next run), then the namespace.

    Pods go one request each, many at once: a collection delete works through thousands of
    pods one at a time on the server."""
    deadline = time.monotonic() + timeout
    path = pods_path(name)
    while names := [item["metadata"]["name"] for item in (await api.get(path))["items"]]:
        if time.monotonic() > deadline:
            raise TimeoutError(f"pods of namespace {name} still there after {timeout}s")
        await gather_all(api.delete(f"{path}/{pod}?gracePeriodSeconds=0") for pod in names)
    await remove_claims(api, name, deadline)
    await api.delete(f"/api/v1/namespaces/{name}")


async def remove_claims(api: Api, namespace: str, deadline: float) -> None:
    """Deletes the namespace's ResourceClaims at once, their finalizers taken off (the
    resourceclaim controller would deallocate them one by one, at its own pace)."""
    path = f"{RESOURCE_API}/namespaces/{namespace}/resourceclaims"
    while names := [item["metadata"]["name"] for item in (await api.get(path))["items"]]:
        if time.monotonic() > deadline:
            raise TimeoutError(f"claims of namespace {namespace} still there")
        await gather_all(
            api.merge_patch(f"{path}/{claim}", {"metadata": {"finalizers": None}})
            for claim in names
        )
        await gather_all(api.delete(f"{path}/{claim}") for claim in names)


async def claims_check(api: Api, namespace: str) -> dra.ClaimsCheck:
    """The namespace's ResourceClaims: how many, how many allocated, devices allocated twice."""
    listing = await api.get(f"{RESOURCE_API}/namespaces/{namespace}/resourceclaims")
    return dra.check_claims(listing["items"])


async def failure_messages(api: Api, namespace: str, top: int = 2) -> list[tuple[str, int]]:
    """The namespace's most frequent FailedScheduling messages, with how often each was given:
    why a scheduler tried pods again or left them unbound."""
    path = f"/api/v1/namespaces/{namespace}/events?fieldSelector=reason%3DFailedScheduling"
    counts: Counter[str] = Counter()
    for event in (await api.get(path))["items"]:
        series = (event.get("series") or {}).get("count")
        counts[str(event.get("message") or event.get("note") or "")] += int(
            series or event.get("count") or 1
        )
    return counts.most_common(top)


async def create_dra_objects(api: Api, workload: dra.DraWorkload, nodes: Sequence[str]) -> None:
    """The workload's DeviceClasses and every node's ResourceSlices, as a driver publishes
    them before any pod comes."""
    await gather_all(api.post(f"{RESOURCE_API}/deviceclasses", cls) for cls in workload.classes)
    await gather_all(
        api.post(f"{RESOURCE_API}/resourceslices", piece)
        for node in nodes
        for piece in workload.slices(node)
    )


async def remove_dra_objects(api: Api) -> None:
    """The benchmark's ResourceSlices and DeviceClasses (left by any earlier run too)."""
    for plural in ("resourceslices", "deviceclasses"):
        path = f"{RESOURCE_API}/{plural}"
        listing = await api.get(f"{path}?{PART_OF_SELECTOR}")
        await gather_all(
            api.delete(f"{path}/{item['metadata']['name']}") for item in listing["items"]
        )


async def create_namespaced(api: Api, namespace: str, objects: Sequence[dict[str, Any]]) -> None:
    """ResourceClaimTemplates and ResourceClaims a workload makes before its pods."""
    for obj in objects:
        kind = obj["kind"].lower()
        await api.post(f"{RESOURCE_API}/namespaces/{namespace}/{kind}s", obj)


async def remove_leftovers(api: Api) -> None:
    """Namespaces, ResourceSlices and DeviceClasses an interrupted earlier run left behind."""
    listing = await api.get(f"/api/v1/namespaces?{PART_OF_SELECTOR}")
    for item in listing["items"]:
        if not item["metadata"].get("deletionTimestamp"):
            await remove_namespace(api, item["metadata"]["name"])
    await remove_dra_objects(api)


async def run_pods(
    api: Api,
    namespace: str,
    manifests: Sequence[dict[str, Any]],
    stall_seconds: float = 60,
    *,
    rate: float | None = None,
    run_seconds: float = 0,
) -> Binding:
    """Creates the pods (all at once, or `rate` per second) while a watch notes when each gets
    a node; stops when all are bound, none was bound for stall_seconds, or (when set)
    run_seconds have passed since the first creation."""
    await wait_default_service_account(api, namespace)
    path = pods_path(namespace)
    version = (await api.get(f"{path}?limit=1"))["metadata"]["resourceVersion"]
    bound_at: dict[str, float] = {}
    created_at: dict[str, float] = {}
    watcher = asyncio.create_task(watch_bound(api, path, version, len(manifests), bound_at))
    pace = AsyncLimiter(1, 1 / rate) if rate else None

    async def create(manifest: dict[str, Any]) -> None:
        if pace is not None:
            await pace.acquire()
        await api.post(path, manifest)
        created_at[manifest["metadata"]["name"]] = time.monotonic()

    first = time.monotonic()
    await gather_all(create(manifest) for manifest in manifests)
    created = time.monotonic()
    deadline = first + run_seconds if run_seconds else math.inf
    await wait_while_progressing(watcher, bound_at, stall_seconds, deadline)
    last = max(bound_at.values(), default=first)
    # A watch may report a binding before the creation's answer arrives: latency 0, not less.
    latencies = [max(0.0, at - created_at[name]) for name, at in bound_at.items()]
    return Binding(
        len(manifests),
        len(bound_at),
        created - first,
        last - first,
        latencies,
        created_at,
        bound_at,
    )


async def watch_bound(
    api: Api, path: str, version: str, expected: int, bound_at: dict[str, float]
) -> None:
    async for event in api.watch(f"{path}?{BOUND}", version):
        bound_at.setdefault(event["object"]["metadata"]["name"], time.monotonic())
        if len(bound_at) >= expected:
            return


async def wait_while_progressing(
    watcher: asyncio.Task[None],
    bound_at: dict[str, float],
    stall_seconds: float,
    deadline: float = math.inf,
) -> None:
    seen = -1
    while len(bound_at) != seen and time.monotonic() < deadline:
        seen = len(bound_at)
        timeout = min(stall_seconds, deadline - time.monotonic())
        done, _ = await asyncio.wait({watcher}, timeout=max(0.0, timeout))
        if done:
            watcher.result()  # a failed watch fails the run
            return
    watcher.cancel()


async def bind_as_created(
    api: Api, namespace: str, node_names: Sequence[str], *, qps: int, in_flight: int = 48
) -> None:
    """A scheduler without an algorithm: binds each pod of `namespace` that names no node
    to the next node round-robin, as soon as the watch shows it, until cancelled."""
    path = pods_path(namespace)
    version = (await api.get(f"{path}?limit=1"))["metadata"]["resourceVersion"]
    limiter = AsyncLimiter(qps, time_period=1)
    slots = asyncio.Semaphore(in_flight)
    bindings: set[asyncio.Task[None]] = set()

    async def bind(name: str, node_name: str) -> None:
        async with slots, limiter:
            await api.post(f"{path}/{name}/binding", binding_body(name, node_name))

    count = 0
    try:
        async for event in api.watch(f"{path}?{UNBOUND}", version):
            if event["type"] == "ADDED":
                name = event["object"]["metadata"]["name"]
                task = asyncio.create_task(bind(name, node_names[count % len(node_names)]))
                bindings.add(task)
                task.add_done_callback(bindings.discard)
                count += 1
    finally:
        for task in bindings:
            task.cancel()


def binding_body(pod_name: str, node_name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": pod_name},
        "target": {"apiVersion": "v1", "kind": "Node", "name": node_name},
    }


async def binding_ceiling(
    api: Api,
    namespace: str,
    count: int,
    node_names: Sequence[str],
    *,
    qps: int,
    in_flight: int = 48,
) -> CeilingTiming:
    """Pre-creates pods no scheduler owns, then binds them round-robin as fast as `qps` lets,
    `in_flight` at a time; a call's latency is timed from when it may start."""
    await wait_default_service_account(api, namespace)
    path = pods_path(namespace)
    manifests = workloads.pods("basic", count, UNKNOWN_SCHEDULER)
    await gather_all(api.post(path, manifest) for manifest in manifests)
    limiter = AsyncLimiter(qps, time_period=1)
    slots = asyncio.Semaphore(in_flight)

    async def bind(index: int, pod: dict[str, Any]) -> float:
        name = pod["metadata"]["name"]
        body = binding_body(name, node_names[index % len(node_names)])
        async with slots, limiter:
            started = time.monotonic()
            await api.post(f"{path}/{name}/binding", body)
            return time.monotonic() - started

    started = time.monotonic()
    latencies = await gather_all(bind(index, pod) for index, pod in enumerate(manifests))
    return CeilingTiming(count, time.monotonic() - started, latencies)
