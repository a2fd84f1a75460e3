"""Gangs as a watcher sees them, for the gang benchmark and the gang tests alike: which pods
belong to which pod group (either PodGroup API), when each was created and bound, and the
invariant a gang scheduler must keep: no group is left with fewer than its minimum bound
while others of it are bound (a partial gang), and none of a group's pending members keeps a
nominated node once the group is unschedulable (nothing reserved for a group that gave up).

Bindings of one gang land one after another, so a group is partly bound for the moment its
bindings take; the ledger records how long each group was partly bound, and which are partly
bound now."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from benchmarks.tools import kubernetes_minor, shared_cluster_name
from scheduler_runtime.config.features import version_key
from scheduler_runtime.framework.podgroups import workload_api

WORKLOAD_API = "scheduling.k8s.io"
COSCHEDULING_API = "scheduling.x-k8s.io"
POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"


def group_of(pod: Mapping[str, Any]) -> tuple[str, str, str] | None:
    """(api, namespace, name) of the group a pod names, in either API."""
    metadata = pod.get("metadata") or {}
    namespace = str(metadata.get("namespace") or "default")
    name = ((pod.get("spec") or {}).get("schedulingGroup") or {}).get("podGroupName")
    if name:
        return WORKLOAD_API, namespace, str(name)
    label = (metadata.get("labels") or {}).get(POD_GROUP_LABEL)
    return (COSCHEDULING_API, namespace, str(label)) if label else None


@dataclass
class GroupRecord:
    """One group's members as watched: each member's node (None: pending) and nominated
    node, and the moments its first and last members were bound."""

    minimum: int
    nodes: dict[str, str | None] = field(default_factory=dict)
    nominated: dict[str, str] = field(default_factory=dict)
    partial_since: float | None = None
    longest_partial: float = 0.0
    last_created: float | None = None
    last_bound: float | None = None

    @property
    def bound(self) -> int:
        return sum(1 for node in self.nodes.values() if node)

    @property
    def partial(self) -> bool:
        return 0 < self.bound < self.minimum


class GangLedger:
    """Pods of pod groups as a watch reports them (thread-safe); `minimums` gives each
    group's minimum (its PodGroup's minCount or minMember)."""

    def __init__(self, minimums: Mapping[tuple[str, str, str], int]) -> None:
        self.groups = {key: GroupRecord(minimum) for key, minimum in minimums.items()}
        self._lock = threading.Lock()

    def created(self, pod: Mapping[str, Any], at: float) -> None:
        """A member was created (at `at`, seconds on the caller's clock)."""
        key = group_of(pod)
        with self._lock:
            record = self.groups.get(key) if key else None
            if record is not None:
                record.last_created = max(record.last_created or at, at)

    def observe(self, pod: Mapping[str, Any], at: float) -> None:
        """A pod as the watch reports it (added or modified)."""
        key = group_of(pod)
        with self._lock:
            record = self.groups.get(key) if key else None
            if record is None:
                return
            name = str((pod.get("metadata") or {}).get("name"))
            node = (pod.get("spec") or {}).get("nodeName") or None
            if node and not record.nodes.get(name):
                record.last_bound = at
            record.nodes[name] = node
            nominated = (pod.get("status") or {}).get("nominatedNodeName")
            if nominated and not node:
                record.nominated[name] = nominated
            else:
                record.nominated.pop(name, None)
            self._track_partial(record, at)

    def deleted(self, pod: Mapping[str, Any], at: float) -> None:
        key = group_of(pod)
        with self._lock:
            record = self.groups.get(key) if key else None
            if record is not None:
                name = str((pod.get("metadata") or {}).get("name"))
                record.nodes.pop(name, None)
                record.nominated.pop(name, None)
                self._track_partial(record, at)

    @staticmethod
    def _track_partial(record: GroupRecord, at: float) -> None:
        if record.partial and record.partial_since is None:
            record.partial_since = at
        elif not record.partial and record.partial_since is not None:
            record.longest_partial = max(record.longest_partial, at - record.partial_since)
            record.partial_since = None

    # ----- what the watch has seen

    def partial_groups(self) -> list[tuple[str, str, str]]:
        """Groups with some but fewer than their minimum members bound now."""
        with self._lock:
            return [key for key, record in self.groups.items() if record.partial]

    def reserved_by_unplaced(self) -> dict[tuple[str, str, str], dict[str, str]]:
        """Pending members that keep a nominated node while their group has none bound."""
        with self._lock:
            return {
                key: dict(record.nominated)
                for key, record in self.groups.items()
                if record.nominated and record.bound == 0
            }

    def placed(self) -> list[tuple[str, str, str]]:
        with self._lock:
            return [
                key for key, record in self.groups.items() if record.bound >= max(record.minimum, 1)
            ]

    def longest_partial(self) -> float:
        """The longest time any group was partly bound (seconds)."""
        with self._lock:
            return max((r.longest_partial for r in self.groups.values()), default=0.0)

    def completion_delays(self) -> list[float]:
        """For each group placed, from its last member's creation to its last binding."""
        with self._lock:
            return [
                record.last_bound - record.last_created
                for record in self.groups.values()
                if record.last_bound is not None
                and record.last_created is not None
                and record.bound >= max(record.minimum, 1)
            ]


def minimums_of(pod_groups: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str, str], int]:
    """Each PodGroup's key and minimum, for either API."""
    found: dict[tuple[str, str, str], int] = {}
    for group in pod_groups:
        metadata = group.get("metadata") or {}
        spec = group.get("spec") or {}
        api = str(group.get("apiVersion", "")).split("/")[0]
        key = (api, str(metadata.get("namespace") or "default"), str(metadata.get("name")))
        if api == WORKLOAD_API:
            gang = (spec.get("schedulingPolicy") or {}).get("gang")
            found[key] = int(gang.get("minCount", 1)) if gang else 1
        else:
            found[key] = int(spec.get("minMember") or 0)
    return found


# ----- the gang benchmark's workload (make bench): gangs of GANG_SIZE pods, each gang a
# scheduling.k8s.io PodGroup whose minCount is its size, created before its pods.

GANG_SIZE = 8
GANGS, GANGS_HALF = "gangs", "gangs-half"
GANG_WORKLOADS = (GANGS, GANGS_HALF)
# Every gang fits; or each pod asks 15 CPUs, so the benchmark's node pool (16, 32 and 64 CPU
# nodes in equal numbers) holds 7 of every 24 pods: a little over half of the gangs.
GANG_REQUESTS = {GANGS: ("2", "2Gi"), GANGS_HALF: ("15", "15Gi")}
# The gangs that fit come after one that fits nowhere (its pods ask more CPUs than any node
# has), which waits the whole run: what it costs a scheduler while it places the rest.
STUCK = "gang-stuck"
STUCK_REQUESTS = ("100", "1Gi")
# The workload API of the clusters' release: scheduling.k8s.io/v1alpha2 on 1.36, v1beta1 on
# 1.37 (which removed v1alpha2 and the GangScheduling gate: GenericWorkload alone turns
# GangScheduling on).
WORKLOAD = workload_api(kubernetes_minor())
GANG_GATE_NAMES = (
    ("GenericWorkload",)
    if WORKLOAD.version == "v1beta1"
    else (
        "GenericWorkload",
        "GangScheduling",
    )
)
GANG_GATES = ",".join(f"{gate}=true" for gate in GANG_GATE_NAMES)
# What the local control plane needs for the workload API (tools/cluster.sh up NAME FLAGS...):
# the workload API served, and the workload gates on for the API server, the controller
# manager (the Job controller's PodGroups) and the cluster's own scheduler.
# On 1.36 the API server keeps a PodGroup's priority and disruption mode only with
# WorkloadAwarePreemption (alpha there, gone in 1.37), which the tests' schedulers turn on when a
# test asks for it.
WORKLOAD_GATES = (
    *GANG_GATE_NAMES,
    "WorkloadWithJob",
    "TopologyAwareWorkloadScheduling",
    *(("WorkloadAwarePreemption",) if WORKLOAD.version == "v1alpha2" else ()),
)
# 1.35 serves no PodGroup (its workload API is the alpha v1alpha1 Workload) and knows none of
# the later gates: its gang cluster is a plain one, for scheduler-plugins' PodGroups alone.
SERVES_POD_GROUPS = version_key(kubernetes_minor()) >= (1, 36)
WORKLOAD_CLUSTER_FLAGS = (
    (
        f"--kube-runtime-config={WORKLOAD.api_version}=true",
        "--kube-feature-gates=" + ",".join(f"{gate}=true" for gate in WORKLOAD_GATES),
    )
    if SERVES_POD_GROUPS
    else ()
)
POD_GROUPS_PATH = WORKLOAD.pod_groups_path("{namespace}")


def workload_cluster_name(base: str | None = None) -> str:
    """The local cluster serving the workload API that the gang tests and the soak share:
    the test cluster's name (`shared_cluster_name()`) and a digest of its flags."""
    digest = hashlib.sha256(" ".join(WORKLOAD_CLUSTER_FLAGS).encode()).hexdigest()[:6]
    return f"{base or shared_cluster_name()}-wl-{digest}"


def gang_objects(
    workload: str, pods: int, scheduler_name: str, image: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The PodGroups and pods of `pods // GANG_SIZE` gangs for `scheduler_name`, after one
    that fits nowhere (GANGS only)."""
    groups: list[dict[str, Any]] = []
    members: list[dict[str, Any]] = []
    names = [f"gang-{gang:04d}" for gang in range(pods // GANG_SIZE)]
    if workload == GANGS:
        names.insert(0, STUCK)
    for name in names:
        cpu, memory = STUCK_REQUESTS if name == STUCK else GANG_REQUESTS[workload]
        groups.append(
            {
                "apiVersion": WORKLOAD.api_version,
                "kind": "PodGroup",
                "metadata": {"name": name},
                "spec": {"schedulingPolicy": {"gang": {"minCount": GANG_SIZE}}},
            }
        )
        for index in range(GANG_SIZE):
            members.append(
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {"name": f"{name}-{index}", "labels": {"gang": name}},
                    "spec": {
                        "schedulerName": scheduler_name,
                        "schedulingGroup": {"podGroupName": name},
                        "terminationGracePeriodSeconds": 0,
                        "containers": [
                            {
                                "name": "worker",
                                "image": image,
                                "resources": {"requests": {"cpu": cpu, "memory": memory}},
                            }
                        ],
                    },
                }
            )
    return groups, members


@dataclass(frozen=True)
class GangTimeline:
    """A gang run as its pods' creations and bindings tell it: the gangs placed whole, the
    longest a gang was partly bound, the gangs partly bound at the end, and for each gang
    placed the time from its last pod's creation to its last binding."""

    placed: int
    partial_at_end: int
    longest_partial: float
    completions: tuple[float, ...]


def gang_timeline(
    created_at: Mapping[str, float], bound_at: Mapping[str, float], end: float
) -> GangTimeline:
    """Replays the bindings in order; members are named `<gang>-<index>`."""
    ledger = GangLedger({})
    sizes: dict[str, int] = {}
    for pod in created_at:
        sizes[pod.rsplit("-", 1)[0]] = sizes.get(pod.rsplit("-", 1)[0], 0) + 1
    ledger.groups = {
        (WORKLOAD_API, RUN_NAMESPACE, gang): GroupRecord(size) for gang, size in sizes.items()
    }
    for pod, at in created_at.items():
        ledger.created(_member(pod), at)
    for pod, at in sorted(bound_at.items(), key=lambda item: item[1]):
        ledger.observe({**_member(pod), "spec": {**_member(pod)["spec"], "nodeName": "n"}}, at)
    partial = ledger.partial_groups()
    for record in ledger.groups.values():  # still partial at the end: count until the end
        if record.partial_since is not None:
            record.longest_partial = max(record.longest_partial, end - record.partial_since)
    return GangTimeline(
        placed=len(ledger.placed()),
        partial_at_end=len(partial),
        longest_partial=ledger.longest_partial(),
        completions=tuple(ledger.completion_delays()),
    )


RUN_NAMESPACE = "run"  # one run's pods share a namespace: the replay needs no other


def _member(pod: str) -> dict[str, Any]:
    return {
        "metadata": {"name": pod, "namespace": RUN_NAMESPACE},
        "spec": {"schedulingGroup": {"podGroupName": pod.rsplit("-", 1)[0]}},
    }
