"""resource.k8s.io/v1 validation as the API server's (pkg/apis/resource/validation of
1.36.3): valid objects pass, each invalid one is refused with upstream's field path and
words, and (hypothesis) no object of any shape makes the validation or the model's parsing
fail with anything but a named field."""

from __future__ import annotations

import copy
import datetime
import re
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from json_paths import field_paths

from scheduler_runtime.dra import cel, validation
from scheduler_runtime.dra.model import ModelError, parse_claim, parse_class, parse_slice
from scheduler_runtime.dra.validation import InvalidObjectError, check, validate

DRIVER = "gpu.example.com"
UID = "0b6d2c4e-9a51-4f0c-8e2a-6d7f1c3b5a90"


def claim() -> dict[str, Any]:
    """A claim using most of what the API allows: both kinds of request, a constraint, a
    config, tolerations, capacity, and an allocation with reservations."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "train", "namespace": "team-a", "uid": "u1", "resourceVersion": "3"},
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": "gpu",
                        "exactly": {
                            "deviceClassName": "gpu.example.com",
                            "count": 2,
                            "selectors": [{"cel": {"expression": 'device.driver == "x"'}}],
                            "tolerations": [
                                {"key": "example.com/hot", "operator": "Exists"},
                                {"key": "k", "operator": "Equal", "value": "v", "effect": "None"},
                            ],
                            "capacity": {"requests": {"memory": "1Gi"}},
                        },
                    },
                    {
                        "name": "nic",
                        "firstAvailable": [
                            {"name": "fast", "deviceClassName": "nic", "allocationMode": "All"},
                            {"name": "slow", "deviceClassName": "nic", "count": 1},
                        ],
                    },
                ],
                "constraints": [
                    {"requests": ["gpu", "nic/fast"], "matchAttribute": f"{DRIVER}/numa"}
                ],
                "config": [
                    {
                        "requests": ["gpu"],
                        "opaque": {"driver": DRIVER, "parameters": {"kind": "Config"}},
                    }
                ],
            }
        },
        "status": {
            "allocation": {
                "devices": {
                    "results": [
                        {"request": "gpu", "driver": DRIVER, "pool": "node-1", "device": "gpu-0"},
                        {
                            "request": "nic/fast",
                            "driver": DRIVER,
                            "pool": "node-1",
                            "device": "nic-0",
                            "shareID": UID,
                        },
                    ],
                    "config": [
                        {
                            "source": "FromClaim",
                            "requests": ["gpu"],
                            "opaque": {"driver": DRIVER, "parameters": {"a": 1}},
                        }
                    ],
                },
                "nodeSelector": {
                    "nodeSelectorTerms": [
                        {
                            "matchFields": [
                                {"key": "metadata.name", "operator": "In", "values": ["node-1"]}
                            ]
                        }
                    ]
                },
            },
            "reservedFor": [{"resource": "pods", "name": "p", "uid": "pod-uid"}],
        },
    }


def template() -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "one-gpu", "namespace": "team-a"},
        "spec": {
            "metadata": {"labels": {"app": "train"}},
            "spec": {
                "devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}
            },
        },
    }


def device_class() -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "gpu.example.com"},
        "spec": {
            "selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}],
            "config": [{"opaque": {"driver": DRIVER, "parameters": {"x": True}}}],
            "extendedResourceName": "example.com/gpu",
        },
    }


def resource_slice() -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": "node-1-gpu"},
        "spec": {
            "driver": DRIVER,
            "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 1},
            "nodeName": "node-1",
            "devices": [
                {
                    "name": "gpu-0",
                    "attributes": {
                        "model": {"string": "a100"},
                        f"{DRIVER}/numa": {"int": 0},
                        "driverVersion": {"version": "1.2.3-rc.1+build.5"},
                        "healthy": {"bool": True},
                    },
                    "capacity": {"memory": {"value": "80Gi"}},
                    "taints": [{"key": "example.com/hot", "effect": "NoSchedule"}],
                    "bindingConditions": ["example.com/ready"],
                    "bindingFailureConditions": ["example.com/failed"],
                },
                {
                    "name": "gpu-1",
                    "allowMultipleAllocations": True,
                    "capacity": {
                        "memory": {
                            "value": "80Gi",
                            "requestPolicy": {
                                "default": "10Gi",
                                "validRange": {"min": "10Gi", "max": "80Gi", "step": "10Gi"},
                            },
                        },
                        "cores": {
                            "value": "8",
                            "requestPolicy": {"default": "2", "validValues": ["1", "2", "4"]},
                        },
                    },
                },
            ],
        },
    }


def counter_slice() -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": "node-1-counters"},
        "spec": {
            "driver": DRIVER,
            "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 2},
            "nodeName": "node-1",
            "sharedCounters": [{"name": "memory", "counters": {"mem": {"value": "80Gi"}}}],
        },
    }


def pod() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "team-a"},
        "spec": {
            "containers": [{"name": "c"}],
            "resourceClaims": [
                {"name": "gpu", "resourceClaimTemplateName": "one-gpu"},
                {"name": "shared", "resourceClaimName": "train"},
            ],
        },
        "status": {"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "p-gpu-x"}]},
    }


def taint_rule() -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceTaintRule",
        "metadata": {"name": "maintenance"},
        "spec": {
            "deviceSelector": {"driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"},
            "taint": {"key": "example.com/maintenance", "value": "now", "effect": "NoExecute"},
        },
    }


BUILDERS: dict[str, Callable[[], dict[str, Any]]] = {
    "claim": claim,
    "template": template,
    "class": device_class,
    "slice": resource_slice,
    "counters": counter_slice,
    "pod": pod,
    "rule": taint_rule,
}

_STEP = re.compile(r"([^.\[\]]+)|\[(\d+)\]")
DELETE = object()


Path = tuple[str | int, ...]


def mutate(obj: dict[str, Any], path: str | Path, value: Any) -> dict[str, Any]:
    """A copy of `obj` with the field at `path` (`a.b[0].c`, or its steps) set to `value`
    (DELETE: removed); missing maps on the way are made."""
    changed = copy.deepcopy(obj)
    steps = path if isinstance(path, tuple) else _steps(path)
    node: Any = changed
    for step in steps[:-1]:
        if isinstance(step, str) and step not in node:
            node[step] = {}
        node = node[step]
    if value is DELETE:
        del node[steps[-1]]
    else:
        node[steps[-1]] = value
    return changed


def _steps(path: str) -> Path:
    return tuple(int(index) if index else name for name, index in _STEP.findall(path))


@pytest.mark.parametrize("kind", sorted(BUILDERS))
def test_valid_objects_pass(kind: str) -> None:
    assert validate(BUILDERS[kind]()) == []


REQ = "spec.devices.requests[0].exactly"
SUB = "spec.devices.requests[1].firstAvailable"
DEV = "spec.devices[0]"
LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
REF_MSG = (
    "must be the name of a request in the claim or the name of a request and a subrequest "
    "separated by '/'"
)
C_ID_MSG = (
    "a valid C identifier must start with alphabetic character or '_', followed by a string of "
    "alphanumeric characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex used "
    "for validation is '[A-Za-z_][A-Za-z0-9_]*')"
)
SELECTION = "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection`"


def many(count: int, make: Callable[[int], Any]) -> list[Any]:
    return [make(i) for i in range(count)]


# (object, field path, new value, the first error the API server reports)
CASES: list[tuple[str, str, Any, str]] = [
    # DeviceTaintRule
    (
        "rule",
        "spec.taint.effect",
        "Sometimes",
        'spec.taint.effect: Unsupported value: "Sometimes": supported values: "NoExecute", '
        '"NoSchedule", "None"',
    ),
    (
        "rule",
        "spec.taint.key",
        "",
        'spec.taint.key: Invalid value: "": name part must be non-empty',
    ),
    (
        "rule",
        "spec.deviceSelector.driver",
        "Not_A_Driver",
        'spec.deviceSelector.driver: Invalid value: "Not_A_Driver": a lowercase RFC 1123 '
        "subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
        "start and end with an alphanumeric character (e.g. 'example.com', regex used for "
        "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    ),
    (
        "rule",
        "spec.deviceSelector.device",
        7,
        "spec.deviceSelector.device: Invalid value: 7: must be of type string",
    ),
    # ResourceClaim: requests
    ("claim", f"{REQ}.count", -5, f"{REQ}.count: Invalid value: -5: must be greater than zero"),
    ("claim", f"{REQ}.count", "abc", f'{REQ}.count: Invalid value: "abc": must be of type integer'),
    (
        "claim",
        f"{REQ}.count",
        2**64,
        f"{REQ}.count: Invalid value: {2**64}: must be of type integer",
    ),
    (
        "claim",
        f"{REQ}.selectors[0].cel.expression",
        42,
        f"{REQ}.selectors[0].cel.expression: Invalid value: 42: must be of type string",
    ),
    (
        "claim",
        f"{REQ}.selectors[0].cel.expression",
        "true || " * 2560 + "true",
        f"{REQ}.selectors[0].cel.expression: Too long: may not be more than 10240 bytes",
    ),
    (
        "claim",
        f"{REQ}.selectors[0].cel.expression",
        "device.foo",
        f'{REQ}.selectors[0].cel.expression: Invalid value: "device.foo": compilation failed: '
        "ERROR: <input>:1:7: undefined field 'foo'\n | device.foo\n | ......^",
    ),
    (
        "claim",
        f"{REQ}.selectors[0].cel.expression",
        "device.driver",
        f'{REQ}.selectors[0].cel.expression: Invalid value: "device.driver": must evaluate to '
        "bool or the unknown type, not string",
    ),
    ("claim", f"{REQ}.selectors[0]", {}, f"{REQ}.selectors[0].cel: Required value"),
    (
        "claim",
        f"{REQ}.selectors",
        many(33, lambda i: {"cel": {"expression": "true"}}),
        f"{REQ}.selectors: Too many: 33: must have at most 32 items",
    ),
    (
        "claim",
        "spec.devices.requests[1].firstAvailable",
        many(200, lambda i: {"name": f"s{i}", "deviceClassName": "nic"}),
        f"{SUB}: Too many: 200: must have at most 8 items",
    ),
    (
        "claim",
        "spec.devices.requests",
        many(33, lambda i: {"name": f"r{i}", "exactly": {"deviceClassName": "c"}}),
        "spec.devices.requests: Too many: 33: must have at most 32 items",
    ),
    (
        "claim",
        f"{REQ}.allocationMode",
        "Some",
        f'{REQ}.allocationMode: Unsupported value: "Some": supported values: "All", "ExactCount"',
    ),
    (
        "claim",
        f"{REQ}.allocationMode",
        "All",
        f"{REQ}.count: Invalid value: 2: must not be specified when allocationMode is 'All'",
    ),
    (
        "claim",
        f"{SUB}[1].count",
        -1,
        f"{SUB}[1].count: Invalid value: -1: must be greater than zero",
    ),
    (
        "claim",
        "spec.devices.requests[0].name",
        "GPU",
        f'spec.devices.requests[0].name: Invalid value: "GPU": {LABEL_MSG}',
    ),
    ("claim", f"{SUB}[1].name", "fast", f'{SUB}[1]: Duplicate value: "fast"'),
    (
        "claim",
        "spec.devices.requests[1].name",
        "gpu",
        'spec.devices.requests[1]: Duplicate value: "gpu"',
    ),
    (
        "claim",
        "spec.devices.requests[1].exactly",
        {"deviceClassName": "nic"},
        "spec.devices.requests[1]: Invalid value: null: exactly one of `exactly` or "
        "`firstAvailable` is required, but multiple fields are set",
    ),
    (
        "claim",
        "spec.devices.requests[0].exactly",
        DELETE,
        "spec.devices.requests[0]: Required value: exactly one of `exactly` or `firstAvailable` "
        "is required",
    ),
    ("claim", f"{REQ}.deviceClassName", DELETE, f"{REQ}.deviceClassName: Required value"),
    (
        "claim",
        f"{REQ}.deviceClassName",
        "GPU!",
        f'{REQ}.deviceClassName: Invalid value: "GPU!": {SUBDOMAIN_MSG}',
    ),
    (
        "claim",
        f"{REQ}.adminAccess",
        "yes",
        f'{REQ}.adminAccess: Invalid value: "yes": must be of type boolean',
    ),
    (
        "claim",
        f"{REQ}.tolerations[0].operator",
        "Maybe",
        f'{REQ}.tolerations[0].operator: Unsupported value: "Maybe": supported values: '
        '"Equal", "Exists"',
    ),
    (
        "claim",
        f"{REQ}.tolerations[0].value",
        "x",
        f'{REQ}.tolerations[0].value: Invalid value: "x": must be empty for operator `Exists`',
    ),
    (
        "claim",
        f"{REQ}.tolerations[1].effect",
        "Sometimes",
        f'{REQ}.tolerations[1].effect: Unsupported value: "Sometimes": supported values: '
        '"NoExecute", "NoSchedule", "None"',
    ),
    (
        "claim",
        f"{REQ}.tolerations",
        many(17, lambda i: {"operator": "Exists"}),
        f"{REQ}.tolerations: Too many: 17: must have at most 16 items",
    ),
    (
        "claim",
        f"{REQ}.capacity.requests.memory",
        "lots",
        f'{REQ}.capacity.requests[memory]: Invalid value: "lots": quantities must match the '
        "regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
    ),
    (
        "claim",
        f"{REQ}.capacity.requests.memory",
        "1e99999999",
        f'{REQ}.capacity.requests[memory]: Invalid value: "1e99999999": the exponent is out of '
        "range",
    ),
    # ResourceClaim: constraints and config
    (
        "claim",
        "spec.devices.constraints[0].requests[1]",
        "nope",
        f'spec.devices.constraints[0].requests[1]: Invalid value: "nope": {REF_MSG}',
    ),
    (
        "claim",
        "spec.devices.constraints[0].requests[1]",
        "gpu",
        'spec.devices.constraints[0].requests[1]: Duplicate value: "gpu"',
    ),
    (
        "claim",
        "spec.devices.constraints[0].matchAttribute",
        "numa",
        'spec.devices.constraints[0].matchAttribute: Invalid value: "numa": a fully qualified '
        "name must be a domain and a name separated by a slash",
    ),
    (
        "claim",
        "spec.devices.constraints[0].matchAttribute",
        DELETE,
        'spec.devices.constraints[0]: Required value: exactly one of "matchAttribute" or '
        '"distinctAttribute" is required, but multiple fields are set',
    ),
    (
        "claim",
        "spec.devices.constraints",
        many(33, lambda i: {"matchAttribute": "a.b/c"}),
        "spec.devices.constraints: Too many: 33: must have at most 32 items",
    ),
    (
        "claim",
        "spec.devices.config[0].opaque",
        DELETE,
        "spec.devices.config[0].opaque: Required value",
    ),
    (
        "claim",
        "spec.devices.config[0].opaque.parameters",
        [1, 2],
        'spec.devices.config[0].opaque.parameters: Invalid value: "<value omitted>": must be a '
        "valid JSON object",
    ),
    (
        "claim",
        "spec.devices.config[0].opaque.parameters",
        {"blob": "x" * 10240},
        "spec.devices.config[0].opaque.parameters: Too long: may not be more than 10240 bytes",
    ),
    (
        "claim",
        "spec.devices.config[0].opaque.driver",
        "",
        "spec.devices.config[0].opaque.driver: Required value",
    ),
    (
        "claim",
        "spec.devices.config[0].opaque.driver",
        "d" * 64,
        "spec.devices.config[0].opaque.driver: Too long: may not be more than 63 bytes",
    ),
    # ResourceClaim: status
    (
        "claim",
        "status.allocation",
        DELETE,
        "status.reservedFor: Forbidden: may not be specified when `allocated` is not set",
    ),
    (
        "claim",
        "status.reservedFor",
        many(257, lambda i: {"resource": "pods", "name": "p", "uid": str(i)}),
        "status.reservedFor: Too many: 257: must have at most 256 items",
    ),
    (
        "claim",
        "status.reservedFor[0].uid",
        DELETE,
        "status.reservedFor[0].uid: Required value",
    ),
    (
        "claim",
        "status.allocation.devices.results",
        many(33, lambda i: {"request": "gpu", "driver": DRIVER, "pool": "p", "device": f"d{i}"}),
        "status.allocation.devices.results: Too many: 33: must have at most 32 items",
    ),
    (
        "claim",
        "status.allocation.devices.results[0].request",
        "req-0",
        f'status.allocation.devices.results[0].request: Invalid value: "req-0": {REF_MSG}',
    ),
    (
        "claim",
        "status.allocation.devices.results[1].shareID",
        UID.upper(),
        f'status.allocation.devices.results[1].shareID: Invalid value: "{UID.upper()}": uid '
        "must be in RFC 4122 normalized form, `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` with "
        "lowercase hexadecimal characters",
    ),
    (
        "claim",
        "status.allocation.devices.config[0].source",
        "FromPod",
        'status.allocation.devices.config[0].source: Unsupported value: "FromPod": supported '
        'values: "FromClaim", "FromClass"',
    ),
    (
        "claim",
        "status.allocation.nodeSelector.nodeSelectorTerms[0].matchFields[0].key",
        "metadata.uid",
        "status.allocation.nodeSelector.nodeSelectorTerms[0].matchFields[0].key: Invalid value: "
        '"metadata.uid": not a valid field selector key',
    ),
    # ResourceClaim: the object
    (
        "claim",
        "metadata.name",
        DELETE,
        "metadata.name: Required value: name or generateName is required",
    ),
    (
        "claim",
        "metadata.name",
        "Train_1",
        f'metadata.name: Invalid value: "Train_1": {SUBDOMAIN_MSG}',
    ),
    (
        "claim",
        "apiVersion",
        "resource.k8s.io/v1beta1",
        'apiVersion: Unsupported value: "resource.k8s.io/v1beta1": supported values: '
        '"resource.k8s.io/v1"',
    ),
    ("claim", "spec", [], "spec: Invalid value: []: must be of type object"),
    (
        "claim",
        "spec.devices.requests",
        "gpu",
        'spec.devices.requests: Invalid value: "gpu": must be of type array',
    ),
    (
        "claim",
        "metadata.resourceVersion",
        [1],
        "metadata.resourceVersion: Invalid value: [1]: must be of type string",
    ),
    # ResourceClaimTemplate
    (
        "template",
        "spec.spec.devices.requests[0].exactly.count",
        -5,
        "spec.spec.devices.requests[0].exactly.count: Invalid value: -5: must be greater than zero",
    ),
    (
        "template",
        "spec.metadata.labels",
        {"app": "a b"},
        'spec.metadata.labels: Invalid value: "a b": a valid label must be an empty string or '
        "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
        "alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
        "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
    ),
    ("template", "spec.spec", 7, "spec.spec: Invalid value: 7: must be of type object"),
    # DeviceClass
    (
        "class",
        "spec.selectors",
        many(33, lambda i: {"cel": {"expression": "true"}}),
        "spec.selectors: Too many: 33: must have at most 32 items",
    ),
    (
        "class",
        "spec.extendedResourceName",
        "gpu",
        'spec.extendedResourceName: Invalid value: "gpu": must be a valid extended resource name',
    ),
    (
        "class",
        "spec.extendedResourceName",
        "kubernetes.io/gpu",
        'spec.extendedResourceName: Invalid value: "kubernetes.io/gpu": must be a valid '
        "extended resource name",
    ),
    ("class", "spec.config[0].opaque", DELETE, "spec.config[0].opaque: Required value"),
    (
        "class",
        "spec.config",
        many(33, lambda i: {"opaque": {"driver": DRIVER, "parameters": {}}}),
        "spec.config: Too many: 33: must have at most 32 items",
    ),
    # ResourceSlice: the spec
    (
        "slice",
        "spec.devices",
        many(129, lambda i: {"name": f"d{i}"}),
        "spec.devices: Too many: 129: must have at most 128 items",
    ),
    (
        "slice",
        "spec.devices",
        many(65, lambda i: {"name": f"d{i}", "taints": [{"key": "k", "effect": "NoSchedule"}]}),
        "spec.devices: Too many: 65: must have at most 64 items",
    ),
    ("slice", "spec.driver", "", "spec.driver: Required value"),
    ("slice", "spec.driver", 5, "spec.driver: Invalid value: 5: must be of type string"),
    (
        "slice",
        "spec.pool.resourceSliceCount",
        0,
        "spec.pool.resourceSliceCount: Invalid value: 0: must be greater than zero",
    ),
    (
        "slice",
        "spec.pool.generation",
        -1,
        "spec.pool.generation: Invalid value: -1: must be greater than or equal to zero",
    ),
    ("slice", "spec.pool.name", "", "spec.pool.name: Required value"),
    (
        "slice",
        "spec.nodeName",
        DELETE,
        f"spec: Required value: {SELECTION} is required",
    ),
    (
        "slice",
        "spec.allNodes",
        True,
        'spec: Invalid value: "{`nodeName`, `allNodes`}": '
        f"{SELECTION} is required, but multiple fields are set",
    ),
    (
        "slice",
        "spec.nodeName",
        "",
        'spec.nodeName: Invalid value: "": must be either unset or set to a non-empty string',
    ),
    (
        "slice",
        "spec.allNodes",
        False,
        "spec.allNodes: Invalid value: false: must be either unset or set to true",
    ),
    (
        "slice",
        "spec.sharedCounters",
        [{"name": "c", "counters": {"m": {"value": "1"}}}],
        'spec: Invalid value: "": only one of `sharedCounters` or `devices` is allowed',
    ),
    ("slice", "spec.devices[1].name", "gpu-0", 'spec.devices[1]: Duplicate value: "gpu-0"'),
    # ResourceSlice: devices
    (
        "slice",
        f"{DEV}.name",
        "GPU 0",
        f'{DEV}.name: Invalid value: "GPU 0": {LABEL_MSG}',
    ),
    (
        "slice",
        f"{DEV}.attributes",
        {f"a{i}": {"int": i} for i in range(33)},
        f"{DEV}: Invalid value: 34: the total number of attributes and capacities must not "
        "exceed 32",
    ),
    (
        "slice",
        f"{DEV}.attributes.model",
        {"string": "a100", "int": 1},
        f'{DEV}.attributes[model]: Invalid value: {{"IntValue":1,"BoolValue":null,"StringValue":'
        '"a100","VersionValue":null,"IntValues":null,"BoolValues":null,"StringValues":null,'
        '"VersionValues":null}: exactly one value must be specified',
    ),
    (
        "slice",
        f"{DEV}.attributes.model",
        {},
        f'{DEV}.attributes[model]: Invalid value: "": exactly one value must be specified',
    ),
    (
        "slice",
        f"{DEV}.attributes.model",
        {"string": "x" * 65},
        f"{DEV}.attributes[model].string: Too long: may not be more than 64 bytes",
    ),
    (
        "slice",
        f"{DEV}.attributes.driverVersion",
        {"version": "1.0"},
        f'{DEV}.attributes[driverVersion].version: Invalid value: "1.0": must be a string '
        "compatible with semver.org spec 2.0.0",
    ),
    (
        "slice",
        f"{DEV}.attributes",
        {"bad-name": {"int": 1}},
        f'{DEV}.attributes: Invalid value: "bad-name": {C_ID_MSG}',
    ),
    (
        "slice",
        f"{DEV}.attributes.model",
        {"int": "7"},
        f'{DEV}.attributes[model].int: Invalid value: "7": must be of type integer',
    ),
    (
        "slice",
        f"{DEV}.capacity.memory.value",
        "1e99999999",
        f'{DEV}.capacity[memory].value: Invalid value: "1e99999999": the exponent is out of range',
    ),
    (
        "slice",
        f"{DEV}.capacity.memory.value",
        "9" * 300,
        f"{DEV}.capacity[memory].value: Too long: may not be more than 256 bytes",
    ),
    (
        "slice",
        f"{DEV}.capacity.memory.requestPolicy",
        {"default": "1Gi"},
        f"{DEV}.capacity[memory].requestPolicy: Forbidden: allowMultipleAllocations must be true",
    ),
    (
        "slice",
        "spec.devices[1].capacity.memory.requestPolicy.default",
        "15Gi",
        'spec.devices[1].capacity[memory].requestPolicy.validRange.step: Invalid value: "15Gi": '
        "value is not a multiple of a given step (10Gi) from (10Gi)",
    ),
    (
        "slice",
        "spec.devices[1].capacity.cores.requestPolicy.validValues",
        ["1", "4", "2"],
        'spec.devices[1].capacity[cores].requestPolicy.validValues[2]: Invalid value: "2": '
        "values must be sorted in ascending order",
    ),
    (
        "slice",
        "spec.devices[1].capacity.cores.requestPolicy.validValues",
        many(11, str),
        "spec.devices[1].capacity[cores].requestPolicy.validValues: Too many: 11: must have at "
        "most 10 items",
    ),
    (
        "slice",
        "spec.devices[1].capacity.cores.requestPolicy.default",
        "3",
        'spec.devices[1].capacity[cores].requestPolicy.validValues: Invalid value: "3": default '
        "value is not valid according to the requestPolicy",
    ),
    (
        "slice",
        f"{DEV}.taints",
        many(17, lambda i: {"key": "k", "effect": "NoSchedule"}),
        f"{DEV}.taints: Too many: 17: must have at most 16 items",
    ),
    (
        "slice",
        f"{DEV}.taints[0].effect",
        "Evict",
        f'{DEV}.taints[0].effect: Unsupported value: "Evict": supported values: "NoExecute", '
        '"NoSchedule", "None"',
    ),
    (
        "slice",
        f"{DEV}.bindingFailureConditions",
        DELETE,
        f"{DEV}.bindingFailureConditions: Invalid value: null: bindingFailureConditions are "
        "required to use bindingConditions",
    ),
    (
        "slice",
        f"{DEV}.bindingConditions",
        many(5, lambda i: f"c{i}"),
        f"{DEV}.bindingConditions: Too many: 5: must have at most 4 items",
    ),
    (
        "slice",
        f"{DEV}.nodeName",
        "node-1",
        f"{DEV}: Invalid value: null: `nodeName`, `nodeSelector` and `allNodes` can only be set "
        "if `perDeviceNodeSelection` is set to true in the ResourceSlice spec",
    ),
    (
        "slice",
        f"{DEV}.consumesCounters",
        many(3, lambda i: {"counterSet": f"s{i}", "counters": {"m": {"value": "1"}}}),
        f"{DEV}.consumesCounters: Too many: 3: must have at most 2 items",
    ),
    (
        "slice",
        f"{DEV}.consumesCounters",
        [{"counterSet": "s", "counters": {}}],
        f"{DEV}.consumesCounters[0].counters: Required value",
    ),
    # ResourceSlice: shared counters
    (
        "counters",
        "spec.sharedCounters",
        many(9, lambda i: {"name": f"s{i}", "counters": {"m": {"value": "1"}}}),
        "spec.sharedCounters: Too many: 9: must have at most 8 items",
    ),
    (
        "counters",
        "spec.sharedCounters[0].counters",
        {f"c{i}": {"value": "1"} for i in range(33)},
        "spec.sharedCounters[0].counters: Too many: 33: must have at most 32 items",
    ),
    (
        "counters",
        "spec.sharedCounters[0].name",
        DELETE,
        "spec.sharedCounters[0].name: Required value",
    ),
    # A Pod's claims
    (
        "pod",
        "spec.resourceClaims[0].name",
        DELETE,
        "spec.resourceClaims[0].name: Required value",
    ),
    (
        "pod",
        "spec.resourceClaims[1].name",
        "gpu",
        'spec.resourceClaims[1].name: Duplicate value: "gpu"',
    ),
    (
        "pod",
        "spec.resourceClaims[0].resourceClaimName",
        "train",
        'spec.resourceClaims[0]: Invalid value: {"Name":"gpu","ResourceClaimName":"train",'
        '"ResourceClaimTemplateName":"one-gpu"}: at most one of `resourceClaimName` or '
        "`resourceClaimTemplateName` may be specified",
    ),
    (
        "pod",
        "spec.resourceClaims[0].resourceClaimTemplateName",
        DELETE,
        'spec.resourceClaims[0]: Invalid value: {"Name":"gpu","ResourceClaimName":null,'
        '"ResourceClaimTemplateName":null}: must specify one of: `resourceClaimName`, '
        "`resourceClaimTemplateName`",
    ),
    (
        "pod",
        "status.resourceClaimStatuses[0].name",
        "other",
        'status.resourceClaimStatuses[0].name: Invalid value: "other": must match the name of '
        "an entry in `spec.resourceClaims`",
    ),
    (
        "pod",
        "spec.resourceClaims",
        {"name": "gpu"},
        'spec.resourceClaims: Invalid value: {"name":"gpu"}: must be of type array',
    ),
]


@pytest.mark.parametrize(
    ("kind", "path", "value", "expected"),
    CASES,
    ids=[f"{kind}:{path}" for kind, path, _, _ in CASES],
)
def test_each_invalid_object_is_refused_in_the_api_servers_words(
    kind: str, path: str, value: Any, expected: str
) -> None:
    errors = validate(mutate(BUILDERS[kind](), path, value))
    assert errors, "accepted"
    assert str(errors[0]) == expected


def test_the_refusal_names_the_object_and_is_one_line() -> None:
    bad = mutate(claim(), f"{REQ}.selectors[0].cel.expression", "device.foo")
    with pytest.raises(InvalidObjectError) as raised:
        check(bad)
    message = str(raised.value)
    assert message.startswith(
        f"ResourceClaim team-a/train: {REQ}.selectors[0].cel.expression: Invalid value: "
        '"device.foo": compilation failed: '
    )
    assert "\n" not in message


def test_a_selector_that_does_not_compile_is_refused_with_the_compilers_diagnostic() -> None:
    bad = mutate(device_class(), "spec.selectors[0].cel.expression", "device.attributes[")
    assert str(validate(bad)[0]).startswith(
        'spec.selectors[0].cel.expression: Invalid value: "device.attributes[": compilation '
        "failed: ERROR: <input>:1:19: Syntax error: "
    )


@pytest.mark.parametrize(
    "expression",
    ["(" * 5000 + "true" + ")" * 5000, "[" * 3000 + "]" * 3000 + " == []", "1" + " + 1" * 2000],
    ids=["parentheses", "lists", "sums"],
)
def test_a_selector_nested_too_deeply_is_refused_naming_the_field(expression: str) -> None:
    errors = validate(mutate(device_class(), "spec.selectors[0].cel.expression", expression))
    assert [e.field for e in errors] == ["spec.selectors[0].cel.expression"]
    assert errors[0].type in {"Invalid value", "Internal error"}


def test_an_unquoted_yaml_timestamp_is_a_timestamp() -> None:
    stamped = mutate(claim(), "metadata.creationTimestamp", datetime.datetime.now(datetime.UTC))
    assert validate(mutate(stamped, "metadata.deletionTimestamp", datetime.date(2026, 1, 1))) == []


@pytest.mark.parametrize(
    ("path", "value", "expected"),
    [
        (
            "spec.devices.extra",
            2**70,
            f"spec.devices.extra: Invalid value: {2**70}: must fit in 64 bits",
        ),
        (
            "spec.devices.config[0].opaque.parameters.size",
            -(2**64),
            f"spec.devices.config[0].opaque.parameters.size: Invalid value: {-(2**64)}: must fit "
            "in 64 bits",
        ),
        (
            "metadata.annotations",
            {"a": b"binary"},
            "metadata.annotations[a]: Invalid value: must be of type string",
        ),
        (
            "spec.devices.extra",
            {"a", "b"},
            'spec.devices.extra: Invalid value: "<value omitted>": must be a JSON value',
        ),
    ],
)
def test_what_json_cannot_carry_is_refused_wherever_it_is(
    path: str, value: Any, expected: str
) -> None:
    """Even where the API server would drop the field: the runtime copies objects as JSON."""
    assert [str(e) for e in validate(mutate(claim(), path, value))] == [expected]


def test_several_errors_are_listed_as_the_api_server_lists_them() -> None:
    bad = mutate(mutate(claim(), f"{REQ}.count", -5), f"{SUB}[0].allocationMode", "Some")
    with pytest.raises(InvalidObjectError) as raised:
        check(bad)
    assert str(raised.value) == (
        f"ResourceClaim team-a/train: [{REQ}.count: Invalid value: -5: must be greater than "
        f'zero, {SUB}[0].allocationMode: Unsupported value: "Some": supported values: "All", '
        '"ExactCount"]'
    )


def test_defaults_are_applied_before_validation() -> None:
    """A count of 0 (or none) with ExactCount is defaulted to 1; an empty allocationMode
    is ExactCount; an empty toleration operator is Equal."""
    ok = mutate(claim(), f"{REQ}.count", 0)
    ok = mutate(ok, f"{REQ}.allocationMode", "")
    ok = mutate(ok, f"{REQ}.tolerations[1].operator", "")
    assert validate(ok) == []


def test_a_cluster_scoped_objects_namespace_is_ignored_as_the_api_server_clears_it() -> None:
    scoped = mutate(device_class(), "metadata.namespace", "team-a")
    assert validate(scoped) == []
    assert validation.describe(scoped) == "DeviceClass gpu.example.com"


def test_two_node_selector_terms_print_as_the_api_server_prints_them() -> None:
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n"]}]}
    bad = mutate(resource_slice(), "spec.nodeName", DELETE)
    bad = mutate(bad, "spec.nodeSelector", {"nodeSelectorTerms": [term, term]})
    assert [str(e) for e in validate(bad)] == [
        'spec.nodeSelector.nodeSelectorTerms: Invalid value: [{"MatchExpressions":null,'
        '"MatchFields":[{"Key":"metadata.name","Operator":"In","Values":["n"]}]},'
        '{"MatchExpressions":null,"MatchFields":[{"Key":"metadata.name","Operator":"In",'
        '"Values":["n"]}]}]: must have exactly one node selector term'
    ]


def test_other_kinds_are_not_looked_at() -> None:
    assert validate({"kind": "Node", "spec": []}) == []
    assert validate({"kind": "ConfigMap", "data": 5}) == []


def test_a_list_item_without_kind_is_validated_as_the_kind_given() -> None:
    bad = mutate(claim(), f"{REQ}.count", -5)
    del bad["kind"]
    assert validate(bad) == []
    assert str(validate(bad, kind="ResourceClaim")[0]).startswith(f"{REQ}.count")


def test_a_list_too_long_is_refused_without_reading_its_items() -> None:
    """Upstream's short-circuit: 10,000 bad subrequests give one error, not 10,000."""
    bad = mutate(
        claim(),
        "spec.devices.requests[1].firstAvailable",
        many(10_000, lambda i: {"name": "X", "count": "many"}),
    )
    errors = [str(e) for e in validate(bad)]
    assert errors[0] == f"{SUB}: Too many: 10000: must have at most 8 items"
    # What named a subrequest now names none: upstream says so too, once each.
    assert errors[1:] == [
        f'spec.devices.constraints[0].requests[1]: Invalid value: "nic/fast": {REF_MSG}',
        f'status.allocation.devices.results[1].request: Invalid value: "nic/fast": {REF_MSG}',
    ]


def test_the_same_selector_is_compiled_once_per_object(monkeypatch: pytest.MonkeyPatch) -> None:
    compiled: list[str] = []
    original = cel.compile_expression

    def counting(expression: str, features: Any = validation.DEFAULT_FEATURES) -> Any:
        compiled.append(expression)
        return original(expression, features)

    monkeypatch.setattr(cel, "compile_expression", counting)
    same = many(32, lambda i: {"cel": {"expression": "true"}})
    assert validate(mutate(device_class(), "spec.selectors", same)) == []
    assert compiled == ["true"]


# ---------------------------------------------------------------------------------------------
# Any shape at all: a named field, never a traceback.

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12)
    | st.sampled_from(["", "All", "ExactCount", "1Gi", "-1", "1e999999", "gpu", "a/b", "x/y/z"]),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3)
    ),
    max_leaves=8,
)


def _template_claim(obj: dict[str, Any]) -> object:
    spec = obj.get("spec")
    return parse_claim({**obj, "spec": spec.get("spec") if isinstance(spec, dict) else spec})


PARSERS: dict[str, Callable[[dict[str, Any]], object]] = {
    "claim": parse_claim,
    "template": _template_claim,
    "class": parse_class,
    "slice": parse_slice,
    "counters": parse_slice,
}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_any_mutation_is_valid_or_refused_with_a_field_and_parses_without_a_traceback(
    data: st.DataObject,
) -> None:
    kind = data.draw(st.sampled_from(sorted(PARSERS)))
    obj = BUILDERS[kind]()
    for _ in range(data.draw(st.integers(1, 3))):
        paths = field_paths(obj)
        path = data.draw(st.sampled_from(paths))
        obj = mutate(obj, path, data.draw(json_values | st.just(DELETE)))
    errors = validate(obj)
    for error in errors:
        assert re.match(r"^[A-Za-z]", error.field), error
        assert str(error).startswith(f"{error.field}: "), error
    # Parsed, or a ModelError naming the object: never a TypeError from inside the parse.
    try:
        PARSERS[kind](obj)
    except ModelError as error:
        message = str(error)
    else:
        message = "parsed"
    assert message
