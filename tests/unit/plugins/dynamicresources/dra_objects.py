"""resource.k8s.io/v1 objects and pods for the DynamicResources tests, as a user (or a DRA
driver) writes them, and a simulation that schedules them."""

from __future__ import annotations

from typing import Any

from scheduler_runtime.config import load_configuration
from scheduler_runtime.config.features import feature_gates
from scheduler_runtime.simulate import Placement, Simulation

DRIVER = "gpu.example.com"
CLASS = "gpu.example.com"


def node(name: str, **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **labels}},
        "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}},
    }


def device(name: str, **attributes: Any) -> dict[str, Any]:
    typed = {
        key: {"int": value}
        if isinstance(value, int) and not isinstance(value, bool)
        else {"bool": value}
        if isinstance(value, bool)
        else {"string": value}
        for key, value in attributes.items()
    }
    return {"name": name, "attributes": typed}


def node_slice(
    node_name: str, *devices: dict[str, Any], driver: str = DRIVER, name: str = ""
) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": name or f"{node_name}-{driver}", "resourceVersion": "1"},
        "spec": {
            "driver": driver,
            "nodeName": node_name,
            "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1},
            "devices": list(devices),
        },
    }


def device_class(
    name: str = CLASS, expression: str | None = None, extended: str | None = None
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "selectors": [{"cel": {"expression": expression or f'device.driver == "{DRIVER}"'}}]
    }
    if extended is not None:
        spec["extendedResourceName"] = extended
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": name, "creationTimestamp": "2026-01-01T00:00:00Z"},
        "spec": spec,
    }


def exactly(name: str = "gpu", cls: str = CLASS, **fields: Any) -> dict[str, Any]:
    return {"name": name, "exactly": {"deviceClassName": cls, **fields}}


def claim_spec(*requests: dict[str, Any], **devices: Any) -> dict[str, Any]:
    return {"devices": {"requests": list(requests or [exactly()]), **devices}}


def template(name: str = "one-gpu", *requests: dict[str, Any], **devices: Any) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"spec": claim_spec(*requests, **devices)},
    }


def claim(name: str, *requests: dict[str, Any], **status: Any) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {
            "name": name,
            "namespace": "default",
            "uid": f"uid-{name}",
            "resourceVersion": "5",
        },
        "spec": claim_spec(*requests),
        "status": dict(status),
    }


def pod(
    name: str,
    *,
    template_name: str | None = "one-gpu",
    claim_name: str | None = None,
    created: int = 0,
    requests: dict[str, str] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    claims = []
    if template_name is not None:
        claims.append({"name": "gpu", "resourceClaimTemplateName": template_name})
    if claim_name is not None:
        claims.append({"name": "shared", "resourceClaimName": claim_name})
    container: dict[str, Any] = {"name": "c", "image": "registry.k8s.io/pause:3.10"}
    if requests:
        container["resources"] = {"requests": requests}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "default",
            "uid": f"uid-{name}",
            "creationTimestamp": f"2026-01-01T00:00:{created:02d}Z",
        },
        "spec": {"containers": [container], "resourceClaims": claims, **spec},
    }


CONFIG = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "leaderElection": {"leaderElect": False},
    "profiles": [{"schedulerName": "default-scheduler"}],
}


def simulation(
    *objects: dict[str, Any],
    plugin_config: list[dict[str, Any]] | None = None,
    gates: dict[str, bool] | None = None,
    version: str = "1.36",
) -> Simulation:
    config = dict(CONFIG)
    if plugin_config:
        config["profiles"] = [{"schedulerName": "default-scheduler", "pluginConfig": plugin_config}]
    # 1.36 unless told: the DRA gates these tests turn off are locked on from 1.37.
    loaded = load_configuration(config, feature_gates=feature_gates(gates or {}, version=version))
    run = Simulation(loaded, seed=1)
    run.load(objects)
    return run


def placements(*objects: dict[str, Any], **options: Any) -> dict[str, Placement]:
    run = simulation(*objects, **options)
    return {p.name: p for p in run.run()}


def devices_of(placement: Placement) -> list[tuple[str, str, str]]:
    return [
        (r["driver"], r["pool"], r["device"])
        for c in placement.resource_claims
        for r in (c["allocation"] or {}).get("devices", {}).get("results", ())
    ]
