"""What a soak run checks (benchmarks.soak), as pure functions of what it saw:

- while pods churn, a ledger fed by the watches of the run's pods and claims finds any pod
  bound twice, any device allocated to two claims at once and any node whose bound pods
  request more than it has;
- once the churn stopped and everything drained, the runtime's internal state
  (scheduler_runtime_state_objects on /metrics) must be back to what the objects still in the
  cluster justify: anything more is a leak."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from scheduler_runtime.framework.podinfo import pod_requests as framework_pod_requests
from scheduler_runtime.framework.quantity import CPU, PODS, resource_list

STATE_OBJECTS = "scheduler_runtime_state_objects"
POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
WORKLOAD_API = "scheduling.k8s.io"

Object = Mapping[str, Any]
Device = tuple[str, str, str, str]  # driver, pool, device, shareID ("" when not shared)


def state_objects(metrics_text: str) -> dict[str, int]:
    """The runtime's scheduler_runtime_state_objects gauges, by kind."""
    for family in text_string_to_metric_families(metrics_text):
        if family.name == STATE_OBJECTS:
            return {s.labels["kind"]: int(s.value) for s in family.samples}
    return {}


# ----- double bindings, seen as they happen


def _name(obj: Object) -> str:
    metadata = obj.get("metadata") or {}
    return f"{metadata.get('namespace') or ''}/{metadata.get('name') or ''}"


def _uid(obj: Object) -> str:
    return str((obj.get("metadata") or {}).get("uid") or "")


def pod_requests(pod: Object) -> dict[str, int]:
    """What a pod asks of its node, as the scheduler counts it (milli-CPU, units otherwise),
    and one pod."""
    return {**framework_pod_requests(pod.get("spec") or {}, non_missing=False), PODS: 1}


def allocatable(node: Object) -> dict[str, int]:
    return resource_list((node.get("status") or {}).get("allocatable"))


def allocated_devices(claim: Object) -> list[Device]:
    """The devices a claim's allocation holds (admin access holds none)."""
    allocation = (claim.get("status") or {}).get("allocation") or {}
    return [
        (
            str(r.get("driver", "")),
            str(r.get("pool", "")),
            str(r.get("device", "")),
            str(r.get("shareID") or ""),
        )
        for r in (allocation.get("devices") or {}).get("results") or ()
        if not r.get("adminAccess")
    ]


@dataclass
class BindingLedger:
    """The run's pods and claims as their watches report them, and every violation of
    "bound once, never over-committed, a device to one claim" the moment it shows. The
    nodes checked for over-commitment are those given (the run's own, which nothing else
    may use: they are tainted for it)."""

    nodes: Mapping[str, Mapping[str, int]]  # node -> allocatable, in nano-units
    violations: list[str] = field(default_factory=list)
    bindings: int = 0  # pods seen bound (each once)
    _node_of: dict[str, str] = field(default_factory=dict)  # pod uid -> node, once bound
    _bound_pods: dict[str, tuple[str, dict[str, int]]] = field(default_factory=dict)
    _used: dict[str, dict[str, int]] = field(default_factory=dict)  # node -> requests
    _holder: dict[Device, str] = field(default_factory=dict)  # device -> claim uid
    _devices_of: dict[str, list[Device]] = field(default_factory=dict)  # claim uid -> devices
    _claim_names: dict[str, str] = field(default_factory=dict)

    # ----- pods

    def pod(self, event: str, pod: Object) -> None:
        """A watch event (ADDED, MODIFIED, DELETED) about a pod."""
        uid = _uid(pod)
        self._release_pod(uid)
        if event == "DELETED":
            return
        node = str((pod.get("spec") or {}).get("nodeName") or "")
        if not node:
            return
        first = self._node_of.get(uid)
        if first is None:
            self._node_of[uid] = node
            self.bindings += 1
        elif first != node:
            self.violations.append(
                f"pod {_name(pod)} (uid {uid}) bound twice: to {first}, then to {node}"
            )
        phase = (pod.get("status") or {}).get("phase")
        if phase in ("Succeeded", "Failed"):
            return
        requests = pod_requests(pod)
        self._bound_pods[uid] = (node, requests)
        used = self._used.setdefault(node, {})
        for name, amount in requests.items():
            used[name] = used.get(name, 0) + amount
        self._check_node(node, _name(pod))

    def replace_pods(self, pods: Sequence[Object]) -> None:
        """A relist: pods gone from it were deleted meanwhile."""
        listed = {_uid(pod) for pod in pods}
        for uid in [uid for uid in self._bound_pods if uid not in listed]:
            self._release_pod(uid)
        for pod in pods:
            self.pod("MODIFIED", pod)

    def _release_pod(self, uid: str) -> None:
        held = self._bound_pods.pop(uid, None)
        if held is None:
            return
        node, requests = held
        used = self._used[node]
        for name, amount in requests.items():
            used[name] -= amount

    def _check_node(self, node: str, pod: str) -> None:
        capacity = self.nodes.get(node)
        if capacity is None:
            return
        used = self._used[node]
        over = [name for name, amount in used.items() if amount > capacity.get(name, 0)]
        for name in sorted(over):
            asked, has = _show(name, used[name]), _show(name, capacity.get(name, 0))
            self.violations.append(
                f"node {node} over-committed in {name} once {pod} was bound: bound pods "
                f"request {asked}, allocatable {has}"
            )

    # ----- claims

    def claim(self, event: str, claim: Object) -> None:
        """A watch event about a ResourceClaim."""
        uid = _uid(claim)
        for device in self._devices_of.pop(uid, ()):
            if self._holder.get(device) == uid:
                del self._holder[device]
        if event == "DELETED":
            self._claim_names.pop(uid, None)
            return
        self._claim_names[uid] = _name(claim)
        devices = allocated_devices(claim)
        for device in devices:
            holder = self._holder.setdefault(device, uid)
            if holder != uid:
                self.violations.append(
                    f"device {'/'.join(d for d in device if d)} allocated to two claims: "
                    f"{self._claim_names.get(holder, holder)} and {_name(claim)}"
                )
        if devices:
            self._devices_of[uid] = devices

    def replace_claims(self, claims: Sequence[Object]) -> None:
        listed = {_uid(claim) for claim in claims}
        for uid in [uid for uid in self._claim_names if uid not in listed]:
            self.claim("DELETED", {"metadata": {"uid": uid}})
        for claim in claims:
            self.claim("MODIFIED", claim)


def _show(resource: str, amount: int) -> str:
    return f"{amount / 1000:g}" if resource == CPU else str(amount)


# ----- leaks, once everything drained


@dataclass(frozen=True)
class ClusterState:
    """The objects in the cluster at the end check, counted as the runtime's state should
    count them."""

    nodes: int
    pods: int  # every pod
    bound_pods: int  # bound and not finished (the cache drops finished pods)
    pending_ours: int  # pods for the runtime's schedulers, unbound, not finished or deleted
    ours: int  # every pod for the runtime's schedulers
    claims: int
    allocated_devices: int
    slices: int
    classes: int
    pod_groups: int  # groups named by a pod or by a PodGroup object, either API
    pod_group_objects: int
    group_members: int  # pods naming a group
    workload_pod_groups: int  # scheduling.k8s.io PodGroup objects

    @classmethod
    def of(
        cls,
        *,
        nodes: Sequence[Object],
        pods: Sequence[Object],
        claims: Sequence[Object],
        slices: Sequence[Object],
        classes: Sequence[Object],
        pod_groups: Sequence[Object],
        scheduler_names: Iterable[str],
    ) -> ClusterState:
        names = set(scheduler_names)
        ours = [p for p in pods if (p.get("spec") or {}).get("schedulerName") in names]
        groups = {_group_of(p) for p in pods} - {None}
        objects = {_object_group(g) for g in pod_groups}
        devices = {d for claim in claims for d in allocated_devices(claim)}
        return cls(
            nodes=len(nodes),
            pods=len(pods),
            bound_pods=sum(1 for p in pods if _node(p) and not _finished(p)),
            pending_ours=sum(
                1
                for p in ours
                if not _node(p)
                and not _finished(p)
                and not (p.get("metadata") or {}).get("deletionTimestamp")
            ),
            ours=len(ours),
            claims=len(claims),
            allocated_devices=len(devices),
            slices=len(slices),
            classes=len(classes),
            pod_groups=len(groups | objects),
            pod_group_objects=len(objects),
            group_members=sum(1 for p in pods if _group_of(p) is not None),
            workload_pod_groups=sum(1 for key in objects if key[0] == WORKLOAD_API),
        )


def _node(pod: Object) -> str:
    return str((pod.get("spec") or {}).get("nodeName") or "")


def _finished(pod: Object) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def _group_of(pod: Object) -> tuple[str, str, str] | None:
    metadata = pod.get("metadata") or {}
    namespace = str(metadata.get("namespace") or "default")
    name = ((pod.get("spec") or {}).get("schedulingGroup") or {}).get("podGroupName")
    if name:
        return WORKLOAD_API, namespace, str(name)
    label = (metadata.get("labels") or {}).get(POD_GROUP_LABEL)
    return ("scheduling.x-k8s.io", namespace, str(label)) if label else None


def _object_group(group: Object) -> tuple[str, str, str]:
    metadata = group.get("metadata") or {}
    api = str(group.get("apiVersion", "")).split("/")[0]
    return api, str(metadata.get("namespace") or "default"), str(metadata.get("name") or "")


@dataclass(frozen=True)
class Rule:
    """What the cluster justifies of one kind: exactly `count`, or at most `count`."""

    count: int
    exact: bool
    why: str


def justified(cluster: ClusterState) -> dict[str, Rule]:
    """For each kind of state, what the objects still in the cluster justify."""
    pending = Rule(cluster.pending_ours, False, "pending pods of the runtime's schedulers")
    return {
        **dict.fromkeys(
            (
                "active_pods",
                "backoff_pods",
                "unschedulable_pods",
                "gated_pods",
                "in_flight_pods",
                "assumed_pods",
                "nominated_pods",
                "claim_allocations_in_flight",
                "pod_group_assumed_members",
            ),
            pending,
        ),
        "pending_api_calls": Rule(cluster.ours, False, "pods of the runtime's schedulers"),
        "nodes": Rule(cluster.nodes, True, "nodes"),
        "bound_pods": Rule(cluster.bound_pods, True, "bound pods not finished"),
        "resource_claims": Rule(cluster.claims, True, "ResourceClaims"),
        "allocated_devices": Rule(cluster.allocated_devices, True, "devices claims hold"),
        "resource_slices": Rule(cluster.slices, True, "ResourceSlices"),
        "device_classes": Rule(cluster.classes, True, "DeviceClasses"),
        "extended_claim_owners": Rule(cluster.pods, False, "pods"),
        "pod_groups": Rule(cluster.pod_groups, False, "pod groups named by pods or PodGroups"),
        "pod_group_objects": Rule(cluster.pod_group_objects, True, "PodGroups"),
        "pod_group_members": Rule(cluster.group_members, True, "pods naming a pod group"),
        "scheduled_pod_groups": Rule(
            cluster.workload_pod_groups, False, "scheduling.k8s.io PodGroups"
        ),
    }


def find_leaks(state: Mapping[str, int], cluster: ClusterState) -> list[str]:
    """Each kind whose count the cluster's objects do not justify, said in a line: more is a
    leak; fewer, where the count must be exact, is state lost."""
    found = []
    for kind, rule in justified(cluster).items():
        held = state.get(kind)
        if held is None:
            continue
        if held > rule.count:
            bound = "" if rule.exact else "at most "
            found.append(
                f"{kind}: the runtime holds {held}, the cluster justifies {bound}{rule.count} "
                f"({rule.why}): {held - rule.count} leaked"
            )
        elif rule.exact and held < rule.count:
            found.append(
                f"{kind}: the runtime holds {held}, the cluster has {rule.count} "
                f"({rule.why}): {rule.count - held} missing"
            )
    return found
