"""`python -m benchmarks.soak` (make soak): pod churn for an hour (--minutes) against the runtime
as a process on the local control plane, to find what only time shows: memory or threads that
grow, state that is never let go, a pod bound twice.

The run makes its own tainted kwok nodes (with ResourceSlices of a driver of its own) and
keeps workers creating and deleting, each in a loop: plain pods; pods with a claim from a
ResourceClaimTemplate; pods sharing claims made beforehand; gangs of scheduler-plugins'
v1alpha1 PodGroups (Coscheduling) and, when the API server serves it, of scheduling.k8s.io
PodGroups (v1alpha2 on 1.36, v1beta1 on 1.37); pods deleted and made again under the same name at
once, as a StatefulSet does, while their binding may be in flight; and pods no node can hold.
Every minute it prints the runtime's RSS, threads, pods bound per second and the sizes of
its internal state (scheduler_runtime_state_objects). At the end it stops the churn, deletes
what it made, waits for the runtime to settle and checks that its state is back to what the
objects still in the cluster justify, and that no pod was bound twice, no device allocated to
two claims and no node over-committed at any time. It exits 1 with the list otherwise.
See docs/reliability.md."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import random
import shutil
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import yaml

from benchmarks import dra, workloads
from benchmarks.gangs import GANG_GATES, POD_GROUPS_PATH, WORKLOAD, WORKLOAD_CLUSTER_FLAGS
from benchmarks.gangs import workload_cluster_name as gang_cluster_name
from benchmarks.kube import Api, ApiError, Endpoint, gather_all
from benchmarks.measure import (
    RESOURCE_API,
    create_namespace,
    pods_path,
    remove_claims,
    wait_default_service_account,
)
from benchmarks.nodes import wait_ready
from benchmarks.processes import free_port
from benchmarks.schedulers import (
    CLIENT_QPS,
    SchedulerFailedError,
    SchedulerProcess,
    runtime_command,
)
from benchmarks.soak_checks import BindingLedger, ClusterState, allocatable, find_leaks
from benchmarks.soak_checks import state_objects as parse_state
from benchmarks.tools import REPO, cluster_tool

SCHEDULER = "soak-runtime"
RUN_LABEL = "soak.scheduler-operator.io/run"
COSCHEDULING_PATH = "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/{namespace}/podgroups"
POD_GROUP_CRD = REPO / "manifests" / "components" / "podgroup-crd"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
GANG_MEMBERS = 3
SHARED_CLAIMS = 6
BOUND_TIMEOUT = 60.0  # a pod not bound by then is deleted anyway (and counted)
RECREATE_SECONDS = 30.0  # how long a pod is made again while one of its name is still there
REPORT_SECONDS = 60.0


@dataclass(frozen=True)
class Run:
    """One soak run's names: everything it makes carries its run label."""

    id: str
    nodes: int

    @property
    def namespace(self) -> str:
        return f"soak-{self.id}"

    @property
    def driver(self) -> str:
        return f"soak-{self.id}.example.com"

    @property
    def device_class(self) -> str:
        return f"soak-{self.id}"

    def node_name(self, index: int) -> str:
        return f"soak-{self.id}-node-{index:03d}"

    @property
    def labels(self) -> dict[str, str]:
        return {**workloads.PART_OF, RUN_LABEL: self.id}


# ----- objects


def soak_node(run: Run, index: int) -> dict[str, Any]:
    """A kwok node of the benchmark's shape, small (4 CPUs) so the churn presses on it, and
    tainted so only the run's pods go there."""
    made = workloads.node(index)
    name = run.node_name(index)
    made["metadata"]["name"] = name
    made["metadata"]["labels"].update({"kubernetes.io/hostname": name, **run.labels})
    shape = {"cpu": "4", "memory": "8Gi", "pods": "110"}
    made["status"]["capacity"] = dict(shape)
    made["status"]["allocatable"] = dict(shape)
    made["spec"] = {"taints": [{"key": RUN_LABEL, "value": run.id, "effect": "NoSchedule"}]}
    return made


def node_slices(run: Run, node: str) -> list[dict[str, Any]]:
    """The benchmark's ten devices per node, under the run's own driver."""
    slices = dra.node_slices(node)
    for piece in slices:
        piece["metadata"] = {"name": f"{node}-soak", "labels": run.labels}
        piece["spec"]["driver"] = run.driver
    return slices


def device_class(run: Run) -> dict[str, Any]:
    made = dra.device_class(run.device_class, run.driver)
    made["metadata"]["labels"] = run.labels
    return made


def one_device(run: Run) -> dict[str, Any]:
    return {"requests": [{"name": "req-0", "exactly": {"deviceClassName": run.device_class}}]}


def claim_template(run: Run) -> dict[str, Any]:
    return {
        "apiVersion": dra.RESOURCE_API,
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "soak-template"},
        "spec": {"spec": {"devices": one_device(run)}},
    }


def shared_claim(run: Run, index: int) -> dict[str, Any]:
    return {
        "apiVersion": dra.RESOURCE_API,
        "kind": "ResourceClaim",
        "metadata": {"name": f"soak-shared-{index}"},
        "spec": {"devices": one_device(run)},
    }


def soak_pod(run: Run, name: str, cpu: str = "250m", **spec: Any) -> dict[str, Any]:
    """A pod for the runtime that only the run's nodes take."""
    container: dict[str, Any] = {
        "name": "app",
        "image": workloads.PAUSE_IMAGE,
        "resources": {"requests": {"cpu": cpu, "memory": "256Mi"}},
    }
    if "claims" in spec:
        container["resources"]["claims"] = spec.pop("claims")
    labels = spec.pop("labels", {})
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {RUN_LABEL: run.id, **labels}},
        "spec": {
            "schedulerName": SCHEDULER,
            "terminationGracePeriodSeconds": 0,
            "nodeSelector": {RUN_LABEL: run.id},
            "tolerations": [{"key": RUN_LABEL, "operator": "Exists", "effect": "NoSchedule"}],
            "containers": [container],
            **spec,
        },
    }


def templated_pod(run: Run, name: str) -> dict[str, Any]:
    return soak_pod(
        run,
        name,
        claims=[{"name": "gpu"}],
        resourceClaims=[{"name": "gpu", "resourceClaimTemplateName": "soak-template"}],
    )


def sharing_pod(run: Run, name: str, claim: int) -> dict[str, Any]:
    return soak_pod(
        run,
        name,
        cpu="100m",
        claims=[{"name": "gpu"}],
        resourceClaims=[{"name": "gpu", "resourceClaimName": f"soak-shared-{claim}"}],
    )


def runtime_configuration(kubeconfig: Path) -> dict[str, Any]:
    """One profile for every kind of pod: the default plugins, with Coscheduling (for the
    v1alpha1 gangs) at every point it has and as the queue's sort."""
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "clientConnection": {"kubeconfig": str(kubeconfig), "qps": CLIENT_QPS, "burst": CLIENT_QPS},
        "leaderElection": {"leaderElect": False},
        "profiles": [
            {
                "schedulerName": SCHEDULER,
                "plugins": {
                    "multiPoint": {"enabled": [{"name": "Coscheduling"}]},
                    "queueSort": {
                        "enabled": [{"name": "Coscheduling"}],
                        "disabled": [{"name": "*"}],
                    },
                },
                "pluginConfig": [
                    {"name": "Coscheduling", "args": {"permitWaitingTimeSeconds": 10}}
                ],
            }
        ],
    }


# ----- watching the run's pods and claims


# How the wait for a pod's binding ended.
BOUND, DELETED, TIMED_OUT = "bound", "deleted", "timed out"


@dataclass
class Watched:
    """The run's pods and claims as watched: the ledger, the pods bound so far and the pods
    deleted (by uid)."""

    ledger: BindingLedger
    bound: set[str] = field(default_factory=set)  # pod uids
    deleted: set[str] = field(default_factory=set)  # pod uids
    changed: asyncio.Condition = field(default_factory=asyncio.Condition)

    async def wait_bound(self, uid: str, timeout: float) -> str:
        """BOUND, DELETED (by someone else: it is gone unbound) or TIMED_OUT."""
        async with self.changed:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.changed.wait_for(lambda: self._over(uid)), timeout)
        return BOUND if uid in self.bound else DELETED if uid in self.deleted else TIMED_OUT

    def _over(self, uid: str) -> bool:
        return uid in self.bound or uid in self.deleted

    async def pod(self, event: str, pod: dict[str, Any]) -> None:
        self.ledger.pod(event, pod)
        if event == "DELETED":
            await self._note_deleted([str(pod["metadata"]["uid"])])
        else:
            await self._note_bound([pod])

    async def relist(self, pods: list[dict[str, Any]]) -> None:
        """A fresh list. A pod it lacks is not taken as deleted: the list may predate its
        creation (the wait then ends as TIMED_OUT, counted against the runtime)."""
        self.ledger.replace_pods(pods)
        await self._note_bound(pods)

    async def _note_bound(self, pods: list[dict[str, Any]]) -> None:
        bound = [p["metadata"]["uid"] for p in pods if (p.get("spec") or {}).get("nodeName")]
        if bound:
            async with self.changed:
                self.bound.update(bound)
                self.changed.notify_all()

    async def _note_deleted(self, uids: Collection[str]) -> None:
        if uids:
            async with self.changed:
                self.deleted.update(uids)
                self.changed.notify_all()


async def follow(
    api: Api,
    path: str,
    on_event: Callable[[str, dict[str, Any]], Awaitable[None]],
    on_list: Callable[[list[dict[str, Any]]], Awaitable[None]],
) -> None:
    """Lists, then watches from the list on; a watch that ends (expired version, dropped
    connection) starts again from a fresh list."""
    while True:
        listing = await api.get(path)
        await on_list(listing["items"])
        try:
            async for event in api.watch(path, listing["metadata"]["resourceVersion"]):
                await on_event(event["type"], event["object"])
        except (TimeoutError, ApiError, aiohttp.ClientError):
            await asyncio.sleep(1)


# ----- the churn


@dataclass
class Counts:
    created: int = 0
    deleted: int = 0
    recreated: int = 0
    not_bound: int = 0  # pods meant to fit that were not bound within BOUND_TIMEOUT
    lost: int = 0  # pods deleted by another client before their binding
    errors: int = 0


@dataclass
class Churn:
    """The workers' shared state: the API, where pods go and what happened."""

    api: Api
    run: Run
    watched: Watched
    stop: asyncio.Event
    counts: Counts = field(default_factory=Counts)
    rng: random.Random = field(default_factory=random.Random)
    names: itertools.count[int] = field(default_factory=itertools.count)
    errors: list[str] = field(default_factory=list)
    unbound: list[str] = field(default_factory=list)  # the first pods not bound in time
    lost: list[str] = field(default_factory=list)  # the first pods deleted by another client

    @property
    def pods(self) -> str:
        return pods_path(self.run.namespace)

    def name(self, kind: str) -> str:
        return f"{kind}-{next(self.names):06d}"

    async def create(self, manifest: dict[str, Any]) -> str:
        """Creates a pod (again, while one of its name is still going away); its uid."""
        deadline = time.monotonic() + RECREATE_SECONDS
        while time.monotonic() < deadline:
            try:
                made = await self.api.post(self.pods, manifest)
            except ApiError as error:
                if error.status != 409:
                    raise
                await asyncio.sleep(0.05)
                continue
            if made is None:  # a retried create whose lost first attempt had made the pod
                made = await self.api.get(f"{self.pods}/{manifest['metadata']['name']}")
            self.counts.created += 1
            return str(made["metadata"]["uid"])
        name = manifest["metadata"]["name"]
        raise RuntimeError(f"pod {name} still exists after {RECREATE_SECONDS:.0f} s")

    async def delete(self, name: str, uid: str) -> None:
        """Deletes the pod `uid` at once; never another pod made under its name since (the
        kubelet's deletions carry the same precondition)."""
        options = {"gracePeriodSeconds": 0, "preconditions": {"uid": uid}}
        await self.api.request("DELETE", f"{self.pods}/{name}", options, ok=(200, 202, 404, 409))
        self.counts.deleted += 1

    async def hold(self) -> None:
        await asyncio.sleep(self.rng.uniform(0.5, 3.0))

    async def bound_or_counted(self, uid: str, name: str) -> None:
        """Waits for the pod's binding; a pod not bound in time is counted, and so is one
        deleted meanwhile by another client (then nothing could bind it)."""
        outcome = await self.watched.wait_bound(uid, BOUND_TIMEOUT)
        if outcome == DELETED:
            self.counts.lost += 1
            if len(self.lost) < 20:
                self.lost.append(name)
        elif outcome == TIMED_OUT:
            self.counts.not_bound += 1
            if len(self.unbound) < 20:
                self.unbound.append(name)

    # ----- one iteration of each kind of worker

    async def plain(self) -> None:
        name = self.name("plain")
        cpu = workloads.REQUESTS[self.rng.randrange(len(workloads.REQUESTS))][0]
        uid = await self.create(soak_pod(self.run, name, cpu))
        await self.bound_or_counted(uid, name)
        await self.hold()
        await self.delete(name, uid)

    async def templated(self) -> None:
        name = self.name("template")
        uid = await self.create(templated_pod(self.run, name))
        await self.bound_or_counted(uid, name)
        await self.hold()
        await self.delete(name, uid)

    async def sharing(self) -> None:
        name = self.name("shared")
        claim = self.rng.randrange(SHARED_CLAIMS)
        uid = await self.create(sharing_pod(self.run, name, claim))
        await self.bound_or_counted(uid, name)
        await self.hold()
        await self.delete(name, uid)

    async def recreated(self) -> None:
        """A pod deleted and made again under its name at once, as a StatefulSet does, 0 to
        300 ms after its creation: before, during or after its binding; with a claim from a
        template every other time.

        Two other clients act on the first pod by name alone while it terminates: kwok
        deletes it again (the kubelet names its UID), and the resourceclaim controller writes
        its claims into its status (which the API server turns into its deletion). Either may
        land on the second pod and remove it: it then counts as lost, not as unbound."""
        name = self.name("sts")
        make = templated_pod if self.rng.random() < 0.5 else soak_pod
        manifest = make(self.run, name)
        first = await self.create(manifest)
        await asyncio.sleep(self.rng.uniform(0, 0.3))
        await self.delete(name, first)
        uid = await self.create(manifest)
        self.counts.recreated += 1
        await self.bound_or_counted(uid, name)
        await self.hold()
        await self.delete(name, uid)

    async def unschedulable(self) -> None:
        """A pod no node holds: it waits among the unschedulable pods until deleted."""
        name = self.name("toobig")
        uid = await self.create(soak_pod(self.run, name, cpu="64"))
        await asyncio.sleep(self.rng.uniform(5, 15))
        await self.delete(name, uid)

    async def gang(self, workload_api: bool) -> None:
        """A PodGroup of GANG_MEMBERS (either API) and its members, made together."""
        group = self.name("gang2" if workload_api else "gang1")
        namespace = self.run.namespace
        if workload_api:
            path = POD_GROUPS_PATH.format(namespace=namespace)
            body = {
                "apiVersion": WORKLOAD.api_version,
                "kind": "PodGroup",
                "metadata": {"name": group},
                "spec": {"schedulingPolicy": {"gang": {"minCount": GANG_MEMBERS}}},
            }
        else:
            path = COSCHEDULING_PATH.format(namespace=namespace)
            body = {
                "apiVersion": "scheduling.x-k8s.io/v1alpha1",
                "kind": "PodGroup",
                "metadata": {"name": group},
                "spec": {"minMember": GANG_MEMBERS},
            }
        await self.api.post(path, body)
        names = [f"{group}-{i}" for i in range(GANG_MEMBERS)]
        extra: dict[str, Any] = (
            {"schedulingGroup": {"podGroupName": group}}
            if workload_api
            else {"labels": {POD_GROUP_LABEL: group}}
        )
        uids = await gather_all(
            self.create(soak_pod(self.run, n, "500m", **dict(extra))) for n in names
        )
        await gather_all(self.bound_or_counted(uid, n) for uid, n in zip(uids, names, strict=True))
        await self.hold()
        await gather_all(self.delete(n, uid) for n, uid in zip(names, uids, strict=True))
        await self.api.delete(f"{path}/{group}")

    async def worker(self, step: Callable[[], Awaitable[None]]) -> None:
        while not self.stop.is_set():
            try:
                await step()
            except Exception as error:  # counted and shown: the worker goes on
                self.counts.errors += 1
                if len(self.errors) < 20:
                    self.errors.append(f"{type(error).__name__}: {str(error)[:300]}")
                await asyncio.sleep(1)


def worker_steps(
    churn: Churn, *, workload_api: bool, scale: int
) -> list[Callable[[], Awaitable[None]]]:
    """The workers, `scale` of the busiest kinds."""
    steps: list[Callable[[], Awaitable[None]]] = [
        *[churn.plain] * (2 * scale),
        *[churn.templated] * scale,
        *[churn.sharing] * scale,
        *[churn.recreated] * scale,
        churn.unschedulable,
        lambda: churn.gang(workload_api=False),
    ]
    if workload_api:
        steps.append(lambda: churn.gang(workload_api=True))
    return steps


# ----- every minute


@dataclass(frozen=True)
class Sample:
    minute: float
    rss_mib: float
    threads: int
    pods_per_second: float
    state: dict[str, int]


def process_status(pid: int) -> tuple[float, int]:
    """The process's resident set (MiB) and thread count, from /proc."""
    rss, threads = 0.0, 0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1]) / 1024
        elif line.startswith("Threads:"):
            threads = int(line.split()[1])
    return rss, threads


def sample_line(sample: Sample, counts: Counts) -> str:
    shown = " ".join(f"{k}={v}" for k, v in sorted(sample.state.items()) if v)
    return (
        f"[{sample.minute:5.1f} min] rss {sample.rss_mib:6.1f} MiB  threads {sample.threads:3d}  "
        f"{sample.pods_per_second:5.1f} pods/s  created {counts.created} deleted "
        f"{counts.deleted} recreated {counts.recreated} lost {counts.lost} "
        f"not-bound {counts.not_bound} errors {counts.errors}\n    state: {shown}"
    )


async def report_every_minute(
    process: SchedulerProcess, churn: Churn, samples: list[Sample], started: float
) -> None:
    last_bound, last_at = 0, started
    while not churn.stop.is_set():
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(churn.stop.wait(), REPORT_SECONDS)
        process.check_running()
        now = time.monotonic()
        bound = churn.watched.ledger.bindings
        rss, threads = process_status(process.pid)
        try:
            state = parse_state(await process.metrics())
        except (aiohttp.ClientError, TimeoutError) as error:  # shown; the next minute tries again
            churn.errors.append(f"/metrics not read: {error}")
            state = {}
        sample = Sample(
            (now - started) / 60, rss, threads, (bound - last_bound) / (now - last_at), state
        )
        samples.append(sample)
        print(sample_line(sample, churn.counts), flush=True)
        last_bound, last_at = bound, now


# ----- the end check


async def cluster_state(api: Api, workload_api: bool) -> ClusterState:
    async def items(path: str) -> list[dict[str, Any]]:
        try:
            found: list[dict[str, Any]] = (await api.get(path))["items"]
        except ApiError as error:  # an API not served: nothing of it
            if error.status == 404:
                return []
            raise
        return found

    groups = await items("/apis/scheduling.x-k8s.io/v1alpha1/podgroups")
    if workload_api:
        groups += await items(WORKLOAD.pod_groups_path())
    return ClusterState.of(
        nodes=await items("/api/v1/nodes"),
        pods=await items("/api/v1/pods"),
        claims=await items(f"{RESOURCE_API}/resourceclaims"),
        slices=await items(f"{RESOURCE_API}/resourceslices"),
        classes=await items(f"{RESOURCE_API}/deviceclasses"),
        pod_groups=groups,
        scheduler_names=(SCHEDULER,),
    )


async def settled_leaks(
    api: Api, process: SchedulerProcess, workload_api: bool, seconds: float
) -> tuple[list[str], dict[str, int]]:
    """The leaks the runtime's state shows once settled: empty as soon as one look finds
    none; else those of the last look after `seconds` (other users of a shared cluster
    change its objects meanwhile, so one look may catch the runtime a moment behind)."""
    deadline = time.monotonic() + seconds
    while True:
        state = parse_state(await process.metrics())
        leaks = find_leaks(state, await cluster_state(api, workload_api))
        if not leaks or time.monotonic() > deadline:
            return leaks, state
        await asyncio.sleep(3)


async def drain(api: Api, run: Run, workload_api: bool) -> list[str]:
    """Deletes the run's pods, then its PodGroups, then (once their pods' claims are gone)
    its shared claims; what would not go is said."""
    said = []
    path = pods_path(run.namespace)
    while names := [p["metadata"]["name"] for p in (await api.get(path))["items"]]:
        await gather_all(api.delete(f"{path}/{name}?gracePeriodSeconds=0") for name in names)
    group_paths = [COSCHEDULING_PATH] + ([POD_GROUPS_PATH] if workload_api else [])
    for template in group_paths:
        groups = template.format(namespace=run.namespace)
        listed = (await api.get(groups))["items"]
        await gather_all(api.delete(f"{groups}/{g['metadata']['name']}") for g in listed)
    claims = f"{RESOURCE_API}/namespaces/{run.namespace}/resourceclaims"
    if not await gone(api, claims, lambda c: not c["metadata"]["name"].startswith("soak-shared")):
        said.append("claims of deleted pods were still there after 120 s (the garbage collector)")
    listed = (await api.get(claims))["items"]
    await gather_all(api.delete(f"{claims}/{c['metadata']['name']}") for c in listed)
    if not await gone(api, claims, lambda c: True):
        said.append("shared claims were still there 120 s after their deletion")
        await remove_claims(api, run.namespace, time.monotonic() + 60)
    return said


async def gone(api: Api, path: str, which: Callable[[dict[str, Any]], bool]) -> bool:
    deadline = time.monotonic() + 120
    while any(which(item) for item in (await api.get(path))["items"]):
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(1)
    return True


# ----- setting up and tearing down


async def served(api: Api, path: str) -> bool:
    try:
        await api.get(path)
    except ApiError:
        return False
    return True


async def ensure_pod_group_crd(api: Api) -> None:
    """scheduler-plugins' PodGroup CRD, as the project ships it, unless already there."""
    if await served(api, "/apis/scheduling.x-k8s.io/v1alpha1"):
        return
    crd = yaml.safe_load((POD_GROUP_CRD / "podgroups.scheduling.x-k8s.io.yaml").read_text())
    await api.request("POST", CRDS, crd, ok=(201, 409))
    deadline = time.monotonic() + 60
    while not await served(api, "/apis/scheduling.x-k8s.io/v1alpha1/podgroups"):
        if time.monotonic() > deadline:
            raise TimeoutError("the PodGroup CRD is not served after 60 s")
        await asyncio.sleep(1)


async def set_up(api: Api, run: Run) -> None:
    await ensure_pod_group_crd(api)
    await create_namespace(api, run.namespace)
    await wait_default_service_account(api, run.namespace)
    names = [run.node_name(i) for i in range(run.nodes)]
    await gather_all(api.post("/api/v1/nodes", soak_node(run, i)) for i in range(run.nodes))
    await api.post(f"{RESOURCE_API}/deviceclasses", device_class(run))
    await gather_all(
        api.post(f"{RESOURCE_API}/resourceslices", piece)
        for node in names
        for piece in node_slices(run, node)
    )
    namespaced = f"{RESOURCE_API}/namespaces/{run.namespace}"
    await api.post(f"{namespaced}/resourceclaimtemplates", claim_template(run))
    await gather_all(
        api.post(f"{namespaced}/resourceclaims", shared_claim(run, i)) for i in range(SHARED_CLAIMS)
    )
    await wait_ready(api, set(names), 120 + 0.3 * run.nodes)


async def tear_down(api: Api, run: Run) -> None:
    """Everything the run made, whatever state it is in."""
    path = pods_path(run.namespace)
    with contextlib.suppress(ApiError):
        while names := [p["metadata"]["name"] for p in (await api.get(path))["items"]]:
            await gather_all(api.delete(f"{path}/{n}?gracePeriodSeconds=0") for n in names)
        await remove_claims(api, run.namespace, time.monotonic() + 120)
    await api.delete(f"/api/v1/namespaces/{run.namespace}")
    selector = f"labelSelector={RUN_LABEL}%3D{run.id}"
    for collection in (
        f"{RESOURCE_API}/resourceslices",
        f"{RESOURCE_API}/deviceclasses",
        "/api/v1/nodes",
    ):
        listed = (await api.get(f"{collection}?{selector}"))["items"]
        await gather_all(api.delete(f"{collection}/{i['metadata']['name']}") for i in listed)


# ----- the run


@dataclass(frozen=True)
class Outcome:
    samples: Sequence[Sample]
    leaks: Sequence[str]
    violations: Sequence[str]
    notes: Sequence[str]
    counts: Counts
    bindings: int
    seconds: float
    final_state: dict[str, int]
    unbound: Sequence[str] = ()  # the first pods not bound within BOUND_TIMEOUT
    lost: Sequence[str] = ()  # the first pods deleted by another client before their binding

    @property
    def failed(self) -> bool:
        """A leak, a double binding, or a pod that fits left unbound."""
        return bool(self.leaks or self.violations or self.counts.not_bound)


async def soak(args: argparse.Namespace, kubeconfig: Path, workdir: Path) -> Outcome:
    run = Run(uuid.uuid4().hex[:6], args.nodes)
    async with Api.open(Endpoint.from_kubeconfig(kubeconfig), connections=32) as api:
        workload_api = await served(api, f"/apis/{WORKLOAD.api_version}")
        progress(
            f"run {run.id}: {run.nodes} nodes, namespace {run.namespace}, "
            f"{WORKLOAD.api_version} PodGroups "
            f"{'served' if workload_api else 'not served: left out'}"
        )
        try:
            await set_up(api, run)
            return await churn_and_check(
                api, run, args, kubeconfig=kubeconfig, workdir=workdir, workload_api=workload_api
            )
        finally:
            await tear_down(api, run)


async def churn_and_check(
    api: Api,
    run: Run,
    args: argparse.Namespace,
    *,
    kubeconfig: Path,
    workdir: Path,
    workload_api: bool,
) -> Outcome:
    config = workdir / "soak.yaml"
    config.write_text(yaml.safe_dump(runtime_configuration(kubeconfig)))
    port = free_port()
    command = runtime_command(config, kubeconfig, port)
    if workload_api:
        command.append(f"--feature-gates={GANG_GATES}")
    process = SchedulerProcess("soak", command, f"https://127.0.0.1:{port}", workdir / "soak.log")
    nodes = (await api.get(f"/api/v1/nodes?labelSelector={RUN_LABEL}%3D{run.id}"))["items"]
    ledger = BindingLedger({n["metadata"]["name"]: allocatable(n) for n in nodes})
    watched = Watched(ledger)
    churn = Churn(api, run, watched, asyncio.Event())
    process.start()
    watchers: list[asyncio.Task[None]] = []
    try:
        await process.wait_ready()
        watchers = [
            asyncio.create_task(follow(api, churn.pods, watched.pod, watched.relist)),
            asyncio.create_task(
                follow(
                    api,
                    f"{RESOURCE_API}/namespaces/{run.namespace}/resourceclaims",
                    _event(ledger.claim),
                    _replace(ledger.replace_claims),
                )
            ),
        ]
        progress(f"runtime ready (pid {process.pid}, log {process.log_path}); churning")
        started = time.monotonic()
        samples: list[Sample] = []
        reporter = asyncio.create_task(report_every_minute(process, churn, samples, started))
        steps = worker_steps(churn, workload_api=workload_api, scale=args.workers)
        tasks = [asyncio.create_task(churn.worker(step)) for step in steps]
        await asyncio.sleep(args.minutes * 60)
        churn.stop.set()
        await asyncio.wait(tasks, timeout=BOUND_TIMEOUT + 30)
        for task in tasks:
            task.cancel()
        await reporter
        seconds = time.monotonic() - started
        progress("churn stopped; deleting what it made and waiting for the runtime to settle")
        notes = await drain(api, run, workload_api)
        process.check_running()
        leaks, final = await settled_leaks(api, process, workload_api, args.settle_seconds)
        rss, threads = process_status(process.pid)
        samples.append(Sample(seconds / 60, rss, threads, 0.0, final))
        notes += [f"worker error: {e}" for e in churn.errors]
        return Outcome(
            samples,
            leaks,
            list(ledger.violations),
            notes,
            churn.counts,
            ledger.bindings,
            seconds,
            final,
            churn.unbound,
            churn.lost,
        )
    finally:
        for task in watchers:
            task.cancel()
        process.stop()


def _replace(
    replace: Callable[[Sequence[dict[str, Any]]], None],
) -> Callable[[list[dict[str, Any]]], Awaitable[None]]:
    async def call(items: list[dict[str, Any]]) -> None:
        replace(items)

    return call


def _event(
    handle: Callable[[str, dict[str, Any]], None],
) -> Callable[[str, dict[str, Any]], Awaitable[None]]:
    async def call(event: str, obj: dict[str, Any]) -> None:
        handle(event, obj)

    return call


def summary(outcome: Outcome) -> str:
    """The run in a few lines, then the end check's verdict."""
    samples = outcome.samples
    rss = [s.rss_mib for s in samples]
    threads = [s.threads for s in samples]
    rates = [s.pods_per_second for s in samples[:-1]]
    lines = [
        f"soak: {outcome.seconds / 60:.1f} min, {outcome.bindings} pods bound "
        f"({outcome.bindings / max(outcome.seconds, 1):.1f} pods/s), "
        f"{outcome.counts.created} created, {outcome.counts.recreated} re-created under "
        f"their name, {outcome.counts.lost} deleted by another client before their binding, "
        f"{outcome.counts.not_bound} not bound within {BOUND_TIMEOUT:.0f} s",
        f"rss MiB: first {rss[0]:.1f}, max {max(rss):.1f}, after draining {rss[-1]:.1f}; "
        f"threads: first {threads[0]}, max {max(threads)}, after draining {threads[-1]}",
    ]
    if rates:
        lines.append(f"pods/s per minute: min {min(rates):.1f}, max {max(rates):.1f}")
    shown = " ".join(f"{k}={v}" for k, v in sorted(outcome.final_state.items()))
    lines.append(f"state after draining: {shown}")
    lines += [f"note: {note}" for note in outcome.notes]
    if outcome.counts.lost:
        lines.append(f"note: {lost_note(outcome)}")
    if not outcome.failed:
        which = "every pod still there bound" if outcome.counts.lost else "every pod bound"
        lines.append(
            "OK: no leak, no pod bound twice, no device in two claims, no node over-committed, "
            + which
        )
        return "\n".join(lines)
    lines.append("FAILED:")
    lines += [f"  leak: {leak}" for leak in outcome.leaks]
    lines += [f"  double binding: {v}" for v in outcome.violations[:50]]
    if len(outcome.violations) > 50:
        lines.append(f"  ... and {len(outcome.violations) - 50} more double bindings")
    if outcome.counts.not_bound:
        lines.append(
            f"  not bound within {BOUND_TIMEOUT:.0f} s: {outcome.counts.not_bound} pods "
            f"({', '.join(outcome.unbound)}{', ...' if outcome.counts.not_bound > 20 else ''})"
        )
    return "\n".join(lines)


def lost_note(outcome: Outcome) -> str:
    more = ", ..." if outcome.counts.lost > len(outcome.lost) else ""
    return (
        f"deleted by another client before their binding: {outcome.counts.lost} pods "
        f"({', '.join(outcome.lost)}{more}); a deletion or status write by name alone "
        "(kwok's, the claim controller's) can remove a pod made again under its name"
    )


def progress(message: str) -> None:
    print(f"soak: {message}", file=sys.stderr, flush=True)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.soak", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--minutes", type=float, default=60, help="how long pods churn (60)")
    parser.add_argument("--nodes", type=int, default=12, help="kwok nodes the run makes (12)")
    parser.add_argument(
        "--workers", type=int, default=2, help="workers per kind of pod, twice for plain pods (2)"
    )
    parser.add_argument(
        "--settle-seconds",
        type=float,
        default=120,
        help="how long the runtime may take to let go of its state after the drain (120)",
    )
    parser.add_argument(
        "--cluster",
        default=None,
        help="local cluster (tools/cluster.sh) to run on; default: the gang tests' cluster, "
        f"which serves {WORKLOAD.api_version} (started if not running)",
    )
    parser.add_argument(
        "--kubeconfig",
        type=Path,
        default=None,
        help="a running cluster's admin kubeconfig, instead of tools/cluster.sh",
    )
    parser.add_argument(
        "--keep-workdir", action="store_true", help="keep the runtime's log and configuration"
    )
    return parser.parse_args(argv)


def start_cluster(name: str | None) -> Path:
    """The cluster named, else the gang tests' (started with the workload API if need be)."""
    flags = () if name else WORKLOAD_CLUSTER_FLAGS
    name = name or gang_cluster_name()
    progress(f"cluster {name}")
    return Path(cluster_tool("up", name, *flags))


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    kubeconfig = args.kubeconfig or start_cluster(args.cluster)
    workdir = Path(tempfile.mkdtemp(prefix="soak-"))
    try:
        outcome = asyncio.run(soak(args, kubeconfig, workdir))
    except SchedulerFailedError as error:
        print(f"soak: FAILED: the runtime stopped: {error}", file=sys.stderr)
        return 1
    print(summary(outcome), flush=True)
    failed = outcome.failed
    if args.keep_workdir or failed:
        progress(f"runtime log and configuration kept in {workdir}")
    else:
        shutil.rmtree(workdir, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
