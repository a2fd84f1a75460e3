"""Extended resources backed by DRA: the class behind a resource name (upstream's
extendedresourcecache tests) and the special claim's requests (the plugin's
createRequestsAndMappings tests)."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler_runtime.plugins.dynamicresources import extended
from scheduler_runtime.plugins.dynamicresources.model import DeviceClass


def cls(
    name: str, resource: str | None = None, created: str = "2026-01-01T00:00:00Z"
) -> DeviceClass:
    return DeviceClass(name, (), (), resource, created)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("example.com/gpu", True),
        ("deviceclass.resource.kubernetes.io/gpu-class", True),
        ("cpu", False),
        ("kubernetes.io/something", False),
        ("foo.kubernetes.io/bar", False),
        ("requests.example.com/gpu", False),
    ],
)
def test_dra_extended_resource_names(name: str, expected: bool) -> None:
    assert extended.is_dra_extended_resource_name(name) is expected


def test_explicit_and_implicit_names() -> None:
    classes = extended.ExtendedResourceClasses()
    gpu = cls("gpu", "example.com/gpu")
    classes.on_add(gpu)
    assert classes.device_class("example.com/gpu") is gpu
    assert classes.device_class("deviceclass.resource.kubernetes.io/gpu") is gpu
    assert classes.device_class("example.com/other") is None


def test_newer_class_wins_a_shared_name_and_the_lower_name_breaks_ties() -> None:
    classes = extended.ExtendedResourceClasses()
    old = cls("b-old", "example.com/gpu", "2026-01-01T00:00:00Z")
    new = cls("c-new", "example.com/gpu", "2026-02-01T00:00:00Z")
    same_time = cls("a-same", "example.com/gpu", "2026-02-01T00:00:00Z")
    classes.on_add(new)
    classes.on_add(old)  # older: ignored entirely, as upstream does
    assert classes.device_class("example.com/gpu") is new
    assert classes.device_class("deviceclass.resource.kubernetes.io/b-old") is None
    classes.on_add(same_time)
    assert classes.device_class("example.com/gpu") is same_time


def test_update_and_delete_drop_old_mappings() -> None:
    classes = extended.ExtendedResourceClasses()
    before, after = cls("gpu", "example.com/gpu"), cls("gpu", "example.com/accel")
    classes.on_add(before)
    classes.on_update(before, after)
    assert classes.device_class("example.com/gpu") is None
    assert classes.device_class("example.com/accel") is after
    classes.on_delete(after)
    assert classes.device_class("example.com/accel") is None
    assert classes.device_class("deviceclass.resource.kubernetes.io/gpu") is None


def container(name: str, **requests: Any) -> dict[str, Any]:
    return {"name": name, "resources": {"requests": dict(requests)}}


def test_requests_per_container_sorted_by_name() -> None:
    classes = extended.ExtendedResourceClasses()
    classes.on_add(cls("gpu-class", "example.com/gpu"))
    pod = {
        "spec": {
            "containers": [
                container("a", cpu="1", **{"example.com/gpu": "2"}),
                container("b", **{"example.com/gpu": "1"}),
            ]
        }
    }
    requests, mappings = extended.requests_and_mappings(pod, {"example.com/gpu": 3}, classes)
    assert requests == [
        {
            "name": "container-0-request-1",
            "exactly": {"deviceClassName": "gpu-class", "allocationMode": "ExactCount", "count": 2},
        },
        {
            "name": "container-1-request-0",
            "exactly": {"deviceClassName": "gpu-class", "allocationMode": "ExactCount", "count": 1},
        },
    ]
    assert mappings == [
        {
            "containerName": "a",
            "resourceName": "example.com/gpu",
            "requestName": "container-0-request-1",
        },
        {
            "containerName": "b",
            "resourceName": "example.com/gpu",
            "requestName": "container-1-request-0",
        },
    ]


def test_init_containers_reuse_later_requests_and_share_the_biggest() -> None:
    classes = extended.ExtendedResourceClasses()
    classes.on_add(cls("gpu-class", "example.com/gpu"))
    gpu = "example.com/gpu"
    pod = {
        "spec": {
            "initContainers": [
                container("init-1", **{gpu: "3"}),
                container("init-2", **{gpu: "1"}),
            ],
            "containers": [container("main", **{gpu: "2"})],
        }
    }
    requests, mappings = extended.requests_and_mappings(pod, {gpu: 2}, classes)
    # init-1 needs 3: it reuses main's 2 and asks 1 more; init-2 is covered by main's request.
    assert [r["name"] for r in requests] == ["container-0-request-0", "container-2-request-0"]
    assert requests[0]["exactly"]["count"] == 1
    assert {
        m["containerName"]: m["requestName"] for m in mappings if m["containerName"] != "init-1"
    } == {
        "main": "container-2-request-0",
        "init-2": "container-2-request-0",
    }


def test_resources_without_a_class_get_no_request() -> None:
    pod = {"spec": {"containers": [container("a", **{"example.com/gpu": "1"})]}}
    assert extended.requests_and_mappings(
        pod, {"example.com/gpu": 1}, extended.ExtendedResourceClasses()
    ) == ([], [])
