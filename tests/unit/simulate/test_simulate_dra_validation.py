"""`scheduler-runtime simulate` on a state file whose resource.k8s.io objects the API server
would refuse: exit 2 with one line naming the object, the field and the reason, before any
pod is scheduled; and (hypothesis) any DRA object mutated either runs or is refused that way,
never with a traceback or a Python type name."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from json_paths import field_paths

from scheduler_runtime.cli import main

CONFIG = Path(__file__).parents[2] / "data" / "simulate" / "config.yaml"
DRIVER = "gpu.example.com"
SELECTOR = f'device.attributes["{DRIVER}"].model == "a100"'
REQ = "spec.devices.requests[0].exactly"


def node() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1"}},
        "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}},
    }


def device_class() -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "gpu"},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
    }


def resource_slice() -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": "n1-gpu"},
        "spec": {
            "driver": DRIVER,
            "nodeName": "n1",
            "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
            "devices": [
                {"name": f"gpu-{i}", "attributes": {"model": {"string": "a100"}}} for i in range(4)
            ],
        },
    }


def claim() -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "shared", "namespace": "default"},
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": "gpu",
                        "exactly": {
                            "deviceClassName": "gpu",
                            "count": 2,
                            "selectors": [{"cel": {"expression": SELECTOR}}],
                        },
                    }
                ]
            }
        },
    }


def template() -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "one-gpu", "namespace": "default"},
        "spec": {
            "spec": {
                "devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}
            }
        },
    }


def pod(name: str, claim: dict[str, str]) -> dict[str, Any]:
    """A pending pod of the profile with one pod claim."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "default",
            "creationTimestamp": "2026-01-01T00:00:00Z",
        },
        "spec": {
            "schedulerName": "what-if",
            "containers": [{"name": "c", "image": "pause"}],
            "resourceClaims": [claim],
        },
    }


def state(*replacing: dict[str, Any], kind: str | None = None) -> list[dict[str, Any]]:
    """A state where one pod takes the claim and one a template's claim; an object given
    replaces the one of its kind (`kind`: of that kind, whatever the object says)."""
    objects = {
        "DeviceClass": device_class(),
        "ResourceSlice": resource_slice(),
        "ResourceClaim": claim(),
        "ResourceClaimTemplate": template(),
    }
    for obj in replacing:
        objects[kind or obj["kind"]] = obj
    return [
        node(),
        pod("first", {"name": "shared", "resourceClaimName": "shared"}),
        *objects.values(),
        pod("second", {"name": "gpu", "resourceClaimTemplateName": "one-gpu"}),
    ]


def run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], objects: list[dict[str, Any]]
) -> tuple[int, str, str]:
    path = tmp_path / "state.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": objects}))
    capsys.readouterr()
    code = main(
        [
            "simulate",
            *("--config", str(CONFIG), "--state", str(path), "-o", "json", "--seed", "1"),
            # The cluster's minor: 1.37's gates the runtime does not follow yet are warned of.
            *("--emulated-version", "1.36"),
        ]
    )
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def changed(obj: dict[str, Any], path: list[str | int], value: Any) -> dict[str, Any]:
    result = copy.deepcopy(obj)
    node: Any = result
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = value
    return result


def test_a_valid_state_places_both_pods(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(tmp_path, capsys, state())
    assert (code, err) == (0, "")
    placed = {p["name"]: p["node"] for p in json.loads(out)["placements"]}
    assert placed == {"first": "n1", "second": "n1"}


EXACTLY: list[str | int] = ["spec", "devices", "requests", 0, "exactly"]
INVALID = [
    pytest.param(
        changed(claim(), [*EXACTLY, "count"], -5),
        f"ResourceClaim default/shared: {REQ}.count: Invalid value: -5: must be greater than zero",
        id="count -5",
    ),
    pytest.param(
        changed(claim(), [*EXACTLY, "count"], "abc"),
        f'ResourceClaim default/shared: {REQ}.count: Invalid value: "abc": must be of type integer',
        id="count abc",
    ),
    pytest.param(
        changed(claim(), [*EXACTLY, "selectors", 0, "cel", "expression"], 42),
        f"ResourceClaim default/shared: {REQ}.selectors[0].cel.expression: Invalid value: 42: "
        "must be of type string",
        id="expression 42",
    ),
    pytest.param(
        changed(claim(), [*EXACTLY, "selectors", 0, "cel", "expression"], "true && " * 2500 + "1"),
        f"ResourceClaim default/shared: {REQ}.selectors[0].cel.expression: Too long: may not be "
        "more than 10240 bytes",
        id="20K selector",
    ),
    pytest.param(
        changed(
            claim(),
            ["spec", "devices", "requests", 0],
            {
                "name": "gpu",
                "firstAvailable": [{"name": f"s{i}", "deviceClassName": "gpu"} for i in range(200)],
            },
        ),
        "ResourceClaim default/shared: spec.devices.requests[0].firstAvailable: Too many: 200: "
        "must have at most 8 items",
        id="200 subrequests",
    ),
    pytest.param(
        changed(template(), ["spec", "spec", "devices", "requests", 0, "exactly", "count"], -5),
        "ResourceClaimTemplate default/one-gpu: spec.spec.devices.requests[0].exactly.count: "
        "Invalid value: -5: must be greater than zero",
        id="template count -5",
    ),
    pytest.param(
        changed(
            device_class(),
            ["spec", "selectors"],
            [{"cel": {"expression": "true"}} for _ in range(33)],
        ),
        "DeviceClass gpu: spec.selectors: Too many: 33: must have at most 32 items",
        id="class 33 selectors",
    ),
    pytest.param(
        changed(device_class(), ["spec", "selectors", 0, "cel", "expression"], "device.driver"),
        'DeviceClass gpu: spec.selectors[0].cel.expression: Invalid value: "device.driver": '
        "must evaluate to bool or the unknown type, not string",
        id="class selector not bool",
    ),
    pytest.param(
        changed(
            resource_slice(),
            ["spec", "devices"],
            [{"name": f"gpu-{i}"} for i in range(129)],
        ),
        "ResourceSlice n1-gpu: spec.devices: Too many: 129: must have at most 128 items",
        id="slice 129 devices",
    ),
    pytest.param(
        changed(resource_slice(), ["spec", "pool", "resourceSliceCount"], 0),
        "ResourceSlice n1-gpu: spec.pool.resourceSliceCount: Invalid value: 0: must be greater "
        "than zero",
        id="slice count 0",
    ),
    pytest.param(
        changed(
            resource_slice(),
            ["spec", "devices", 0, "capacity"],
            {"memory": {"value": "1e99999999"}},
        ),
        "ResourceSlice n1-gpu: spec.devices[0].capacity[memory].value: Invalid value: "
        '"1e99999999": the exponent is out of range',
        id="slice capacity 1e99999999",
    ),
    pytest.param(
        changed(resource_slice(), ["spec", "devices", 0, "attributes", "model"], {"string": 5}),
        "ResourceSlice n1-gpu: spec.devices[0].attributes[model].string: Invalid value: 5: must "
        "be of type string",
        id="slice attribute type",
    ),
]


@pytest.mark.parametrize(("invalid", "message"), INVALID)
def test_an_invalid_object_stops_the_run_before_anything_is_scheduled(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], invalid: dict[str, Any], message: str
) -> None:
    code, out, err = run(tmp_path, capsys, state(invalid))
    assert code == 2
    assert out == ""  # the pod before the invalid object was not placed either
    assert err == f"error: {message}\n"


def test_a_pods_claim_without_a_name_names_the_pod(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = pod("third", {"resourceClaimTemplateName": "one-gpu"})
    code, out, err = run(tmp_path, capsys, [*state(), bad])
    assert (code, out) == (2, "")
    assert err == "error: Pod default/third: spec.resourceClaims[0].name: Required value\n"


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**66), max_value=2**66)
    | st.text(max_size=10)
    | st.sampled_from(["All", "ExactCount", "gpu", "1Gi", "device.driver", "true", "a/b"]),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3)
    ),
    max_leaves=6,
)


BUILDERS = {
    "ResourceClaim": claim,
    "ResourceClaimTemplate": template,
    "DeviceClass": device_class,
    "ResourceSlice": resource_slice,
}
REFUSAL = re.compile(
    r"error: (.*: document 0 items\[\d\]: )?"
    r"(ResourceClaim|ResourceClaimTemplate|DeviceClass|ResourceSlice|Pod) .*?: "  # any name
    r"\[?(apiVersion|metadata|spec|status)[^ ]*(: | must be)"
)


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_a_mutated_object_runs_or_is_refused_naming_it_and_a_field(
    data: st.DataObject, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Any field of any of the DRA objects (its metadata and kind included) replaced."""
    kind = data.draw(st.sampled_from(sorted(BUILDERS)))
    mutated = BUILDERS[kind]()
    path = data.draw(st.sampled_from(field_paths(mutated)))
    mutated = changed(mutated, list(path), data.draw(json_values))
    code, out, err = run(tmp_path, capsys, state(mutated, kind=kind))
    assert code in {0, 2}, err
    if code == 2:
        assert out == ""
        assert err.count("\n") == 1
        assert "cannot simulate" not in err, err
        if mutated.get("kind") == kind and isinstance(mutated.get("metadata"), dict):
            assert REFUSAL.match(err), err


@pytest.mark.parametrize("minor", ["1.35", "1.36"])
def test_includes_is_a_selector_function_from_1_36(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], minor: str
) -> None:
    """1.35's API server refuses a selector calling `includes` (its CEL environment does not
    declare it), 1.36's takes it: simulate emulating each says the same."""
    selector = f'device.attributes["{DRIVER}"].model.includes("a100")'
    objects = state(changed(claim(), [*EXACTLY, "selectors", 0, "cel", "expression"], selector))
    path = tmp_path / "state.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": objects}))
    capsys.readouterr()
    flags = ("--config", str(CONFIG), "--state", str(path), "-o", "json", "--seed", "1")
    code = main(["simulate", *flags, "--emulated-version", minor])
    err = capsys.readouterr().err
    if minor == "1.36":
        assert (code, err) == (0, "")
        return
    assert code == 2
    assert err.startswith(
        f"error: ResourceClaim default/shared: {REQ}.selectors[0].cel.expression: Invalid value:"
    ), err
    assert "undeclared reference to 'includes' (in container '')" in err
