"""Dynamic Resource Allocation side by side with the upstream kube-scheduler on the local
control plane: kwok nodes with hand-made ResourceSlices (no driver is needed to schedule),
claims made from templates by kube-controller-manager's resourceclaim controller.

Each pod of a scenario is offered first to the runtime (its outcome noted, then the pod
deleted and its claims seen back to how they were), then to the cluster's own kube-scheduler
(default-scheduler), whose outcome stays and becomes the state for the next pod. So each
decision is made twice on one state: both must place the pod on the same node with the same
devices, or refuse it with the same message. Nodes differ in size, so that scoring never
ties and the node each picks says which nodes it found feasible."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import kubernetes
from cluster import Cluster, kwok_node, wait_for
from runtime_support import listed_events

GROUP, VERSION = "resource.k8s.io", "v1"
DRIVER = "gpu.example.com"
UPSTREAM = "default-scheduler"
PAUSE = "registry.k8s.io/pause:3.10"


def device(
    name: str, capacity: Mapping[str, str] | None = None, **attributes: Any
) -> dict[str, Any]:
    typed: dict[str, Any] = {}
    for key, value in attributes.items():
        if isinstance(value, bool):
            typed[key] = {"bool": value}
        elif isinstance(value, int):
            typed[key] = {"int": value}
        elif key.endswith("version"):
            typed[key] = {"version": value}
        else:
            typed[key] = {"string": value}
    made: dict[str, Any] = {"name": name, "attributes": typed}
    if capacity:
        made["capacity"] = {k: {"value": v} for k, v in capacity.items()}
    return made


def resource_slice(node: str, devices: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-{DRIVER}"},
        "spec": {
            "driver": DRIVER,
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": devices,
            **spec,
        },
    }


def device_taint_rule(name: str, pool: str, device: str, taint: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "DeviceTaintRule",
        "metadata": {"name": name},
        "spec": {
            "deviceSelector": {"driver": DRIVER, "pool": pool, "device": device},
            "taint": taint,
        },
    }


def device_class(name: str, expression: str | None = None, **spec: Any) -> dict[str, Any]:
    selector = expression or f'device.driver == "{DRIVER}"'
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "DeviceClass",
        "metadata": {"name": name},
        "spec": {"selectors": [{"cel": {"expression": selector}}], **spec},
    }


def exactly(cls: str, name: str = "gpu", **fields: Any) -> dict[str, Any]:
    return {"name": name, "exactly": {"deviceClassName": cls, **fields}}


def template(name: str, *requests: dict[str, Any], **devices: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name},
        "spec": {"spec": {"devices": {"requests": list(requests), **devices}}},
    }


def claim(name: str, *requests: dict[str, Any], **devices: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "ResourceClaim",
        "metadata": {"name": name},
        "spec": {"devices": {"requests": list(requests), **devices}},
    }


@dataclass
class PodSpec:
    """A pod of a scenario: its claims from templates or by name, extended resources."""

    name: str
    templates: tuple[str, ...] = ()
    claims: tuple[str, ...] = ()
    extended: Mapping[str, str] = field(default_factory=dict)
    node_selector: Mapping[str, str] = field(default_factory=dict)

    def manifest(self, name: str, scheduler: str, scenario: str) -> dict[str, Any]:
        resource_claims = [
            {"name": f"t{i}", "resourceClaimTemplateName": t} for i, t in enumerate(self.templates)
        ] + [{"name": f"c{i}", "resourceClaimName": c} for i, c in enumerate(self.claims)]
        requests = {"cpu": "1", **self.extended}
        container: dict[str, Any] = {
            "name": "main",
            "image": PAUSE,
            "resources": {"requests": requests, "limits": dict(self.extended) or None},
        }
        if not self.extended:
            del container["resources"]["limits"]
        spec: dict[str, Any] = {
            "schedulerName": scheduler,
            "containers": [container],
            "nodeSelector": {"dra-scenario": scenario, **self.node_selector},
            "terminationGracePeriodSeconds": 0,
        }
        if resource_claims:
            spec["resourceClaims"] = resource_claims
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


@dataclass
class Scenario:
    """Nodes (name suffix, cpus), their slices, classes, templates and standalone claims,
    and the pods offered in turn. `namespace_labels` go on the test's namespace;
    `driver` acts as a DRA driver would while pods wait (binding conditions)."""

    name: str
    nodes: tuple[tuple[str, str], ...]
    slices: Callable[[Mapping[str, str]], list[dict[str, Any]]]
    classes: tuple[dict[str, Any], ...]
    pods: tuple[PodSpec, ...]
    templates: tuple[dict[str, Any], ...] = ()
    claims: tuple[dict[str, Any], ...] = ()
    namespace_labels: Mapping[str, str] = field(default_factory=dict)
    node_allocatable: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    binding_conditions: bool = False
    # DeviceTaintRules, by node names; made where the API server serves them (from 1.37).
    taint_rules: Callable[[Mapping[str, str]], list[dict[str, Any]]] = lambda names: []


@dataclass
class Outcome:
    node: str | None
    message: str | None
    allocations: list[Any]

    def __str__(self) -> str:
        return f"node={self.node} message={self.message!r} allocations={self.allocations}"


def comparable(allocation: Mapping[str, Any] | None) -> Any:
    """What two schedulers must agree on in an allocation: all but timestamps and share IDs."""
    if allocation is None:
        return None
    kept = {k: v for k, v in allocation.items() if k != "allocationTimestamp"}
    devices = dict(kept.get("devices") or {})
    devices["results"] = [
        {k: v for k, v in r.items() if k != "shareID"} for r in devices.get("results") or ()
    ]
    kept["devices"] = devices
    return kept


class ClusterDRA:
    """The resource.k8s.io/v1 objects of one test, through the API."""

    def __init__(self, cluster: Cluster, namespace: str) -> None:
        self.api = kubernetes.client.CustomObjectsApi(cluster.api)
        self.core = kubernetes.client.CoreV1Api(cluster.api)
        self.api_client = cluster.api
        self.namespace = namespace
        self.cluster_scoped: list[tuple[str, str]] = []

    def create(self, obj: dict[str, Any], namespaced: bool) -> None:
        kind = obj["kind"].lower()
        plural = kind + ("es" if kind.endswith("s") else "s")
        if namespaced:
            self.api.create_namespaced_custom_object(GROUP, VERSION, self.namespace, plural, obj)
        else:
            self.api.create_cluster_custom_object(GROUP, VERSION, plural, obj)
            self.cluster_scoped.append((plural, obj["metadata"]["name"]))

    def remove_cluster_scoped(self) -> None:
        for plural, name in self.cluster_scoped:
            try:
                self.api.delete_cluster_custom_object(GROUP, VERSION, plural, name)
            except kubernetes.client.ApiException as error:
                if error.status != 404:
                    raise

    def claims(self) -> list[dict[str, Any]]:
        listed = self.api.list_namespaced_custom_object(
            GROUP, VERSION, self.namespace, "resourceclaims"
        )
        return list(listed["items"])

    def claim_state(self) -> dict[str, Any]:
        """Each claim's allocation and reservations, by name."""
        return {
            c["metadata"]["name"]: (
                comparable((c.get("status") or {}).get("allocation")),
                sorted(r["name"] for r in (c.get("status") or {}).get("reservedFor") or ()),
            )
            for c in self.claims()
        }

    def pod(self, name: str) -> dict[str, Any] | None:
        try:
            response = self.core.read_namespaced_pod(name, self.namespace, _preload_content=False)
        except kubernetes.client.ApiException as error:
            if error.status == 404:
                return None
            raise
        found: dict[str, Any] = json.loads(response.data)
        return found

    def pod_claims(self, pod: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The pod's claims in spec order, then its claim for extended resources."""
        status = pod.get("status") or {}
        generated = {
            s["name"]: s.get("resourceClaimName") for s in status.get("resourceClaimStatuses") or ()
        }
        names = [
            entry.get("resourceClaimName") or generated.get(entry["name"])
            for entry in pod["spec"].get("resourceClaims") or ()
        ]
        extended = (status.get("extendedResourceClaimStatus") or {}).get("resourceClaimName")
        names += [extended] if extended else []
        by_name = {c["metadata"]["name"]: c for c in self.claims()}
        return [by_name[n] for n in names if n in by_name]

    def failed_message(self, uid: str) -> str | None:
        events = listed_events(
            self.api_client, self.namespace, f"regarding.uid={uid},reason=FailedScheduling"
        )
        return str(events[0]["note"]) if events else None

    def outcome(self, manifest: dict[str, Any], timeout: float = 90) -> Outcome:
        """Creates the pod and waits until it is bound or refused."""
        created = self.core.create_namespaced_pod(self.namespace, manifest)
        name, uid = manifest["metadata"]["name"], created.metadata.uid

        def decided() -> Outcome | None:
            pod = self.pod(name)
            assert pod is not None
            if pod["spec"].get("nodeName"):
                allocations = [
                    comparable((c.get("status") or {}).get("allocation"))
                    for c in self.pod_claims(pod)
                ]
                return Outcome(pod["spec"]["nodeName"], None, allocations)
            message = self.failed_message(uid)
            return Outcome(None, message, []) if message else None

        found: Outcome = wait_for(f"a decision on {name}", decided, timeout=timeout, interval=0.2)
        return found

    def delete_pod(self, name: str) -> None:
        pod = self.pod(name)
        owned = {c["metadata"]["name"] for c in self.claims() if _owned_by(c, pod)}
        self.core.delete_namespaced_pod(name, self.namespace, grace_period_seconds=0)
        wait_for(f"pod {name} to be gone", lambda: self.pod(name) is None, interval=0.2)
        wait_for(
            f"claims {owned} of {name} to be gone",
            lambda: not owned & {c["metadata"]["name"] for c in self.claims()},
            interval=0.2,
        )


def _owned_by(claim: Mapping[str, Any], pod: Mapping[str, Any] | None) -> bool:
    if pod is None:
        return False
    uid = pod["metadata"]["uid"]
    return any(o.get("uid") == uid for o in claim["metadata"].get("ownerReferences") or ())


class FakeDriver:
    """What a driver with binding conditions does: reports each allocated device's binding
    conditions true, once the scheduler has written the allocation."""

    def __init__(self, dra: ClusterDRA) -> None:
        self.dra = dra
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def __enter__(self) -> FakeDriver:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        self.thread.join(10)

    def run(self) -> None:
        while not self.stopping.wait(0.3):
            for claim in self.dra.claims():
                with contextlib.suppress(kubernetes.client.ApiException):
                    self.report(claim)  # a conflict is tried again in the next round

    def report(self, claim: dict[str, Any]) -> None:
        status = claim.get("status") or {}
        allocation = status.get("allocation")
        if allocation is None or status.get("devices"):
            return
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        status["devices"] = [
            {
                "driver": r["driver"],
                "pool": r["pool"],
                "device": r["device"],
                "conditions": [
                    {
                        "type": condition,
                        "status": "True",
                        "reason": "Attached",
                        "message": "",
                        "lastTransitionTime": now,
                    }
                    for condition in r.get("bindingConditions") or ()
                ],
            }
            for r in allocation["devices"]["results"]
        ]
        self.dra.api.replace_namespaced_custom_object_status(
            GROUP, VERSION, self.dra.namespace, "resourceclaims", claim["metadata"]["name"], claim
        )


def set_up(
    scenario: Scenario,
    dra: ClusterDRA,
    make_nodes: Callable[..., list[str]],
    prefix: str,
) -> dict[str, str]:
    """The scenario's nodes, slices, classes, templates and claims; node names by suffix."""
    names = {suffix: f"{prefix}-{scenario.name}-{suffix}" for suffix, _ in scenario.nodes}
    make_nodes(
        *(
            kwok_node(
                names[suffix],
                cpu=cpu,
                memory="64Gi",
                labels={"dra-scenario": scenario.name},
                extended=scenario.node_allocatable.get(suffix),
            )
            for suffix, cpu in scenario.nodes
        )
    )
    if scenario.namespace_labels:
        dra.core.patch_namespace(
            dra.namespace, {"metadata": {"labels": dict(scenario.namespace_labels)}}
        )
    for cls in scenario.classes:
        dra.create(cls, namespaced=False)
    for piece in scenario.slices(names):
        dra.create(piece, namespaced=False)
    for made in (*scenario.templates, *scenario.claims):
        dra.create(made, namespaced=True)
    for rule in scenario.taint_rules(names):
        try:
            dra.create(rule, namespaced=False)
        except kubernetes.client.ApiException as error:
            if error.status != 404:  # not served: DRADeviceTaintRules off (before 1.37)
                raise
    time.sleep(1)  # both schedulers' watches see the objects before the first pod
    return names


def offer_all(scenario: Scenario, dra: ClusterDRA, ours: str) -> tuple[list[str], list[Outcome]]:
    """Each pod to the runtime, then to kube-scheduler; the disagreements, and upstream's
    outcomes."""
    differences: list[str] = []
    theirs: list[Outcome] = []
    for spec in scenario.pods:
        before = dra.claim_state()
        mine = dra.outcome(spec.manifest(f"{spec.name}-ours", ours, scenario.name))
        dra.delete_pod(f"{spec.name}-ours")
        wait_for(
            f"the claims as they were before {spec.name}-ours",
            lambda before=before: dra.claim_state() == before,
            interval=0.3,
        )
        reference = dra.outcome(spec.manifest(spec.name, UPSTREAM, scenario.name))
        theirs.append(reference)
        if (mine.node, mine.message, mine.allocations) != (
            reference.node,
            reference.message,
            reference.allocations,
        ):
            differences.append(f"{scenario.name}/{spec.name}: upstream {reference}; ours {mine}")
        if reference.node is None:
            dra.delete_pod(spec.name)
    return differences, theirs


def taken_twice(dra: ClusterDRA) -> list[tuple[str, str, str]]:
    """Devices in more than one claim's allocation (admin access and shares aside)."""
    seen: dict[tuple[str, str, str], int] = {}
    for c in dra.claims():
        allocation = (c.get("status") or {}).get("allocation") or {}
        for r in (allocation.get("devices") or {}).get("results") or ():
            if r.get("adminAccess") or r.get("shareID"):
                continue
            key = (r["driver"], r["pool"], r["device"])
            seen[key] = seen.get(key, 0) + 1
    return [device for device, count in seen.items() if count > 1]


def allocated_devices(
    dra: ClusterDRA, slices: list[dict[str, Any]]
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Each allocated (request, device as the slices publish it)."""
    published = {
        (s["spec"]["driver"], s["spec"]["pool"]["name"], d["name"]): d
        for s in slices
        for d in s["spec"].get("devices") or ()
    }
    for c in dra.claims():
        allocation = (c.get("status") or {}).get("allocation") or {}
        for r in (allocation.get("devices") or {}).get("results") or ():
            yield r["request"], published[(r["driver"], r["pool"], r["device"])]
