"""Writes testdata/alloc_cases.json: allocator scenarios after upstream's allocatortesting
table, one or more per feature. The oracle (oracle/main.go) answers them with the pinned
upstream allocator; test_allocator.py compares ours field for field."""

import json
from pathlib import Path

DRIVER, DRIVER2 = "driver-a", "driver-b"
FEATURES = {
    "AdminAccess": True,
    "ConsumableCapacity": True,
    "DeviceBindingAndStatus": True,
    "DeviceTaints": True,
    "ListTypeAttributes": False,
    "PartitionableDevices": True,
    "PrioritizedList": True,
}


def dev(name, **extra):
    return {"name": name, **extra}


def slice_(name, devices, node="node-1", driver=DRIVER, pool=None, count=1, gen=1, **spec):
    s = {
        "driver": driver,
        "pool": {"name": pool or node or name, "generation": gen, "resourceSliceCount": count},
    }
    if node:
        s["nodeName"] = node
    s.update(spec)
    if devices is not None:
        s["devices"] = devices
    return {"metadata": {"name": name}, "spec": s}


def cls(name, *exprs, config=None):
    spec = {"selectors": [{"cel": {"expression": e}} for e in exprs]}
    if config:
        spec["config"] = config
    return {"metadata": {"name": name}, "spec": spec}


def req(name, klass="class-a", **extra):
    return {
        "name": name,
        "exactly": {
            "deviceClassName": klass,
            "allocationMode": extra.pop("mode", "ExactCount"),
            **(
                {"count": extra.pop("count", 1)}
                if extra.get("mode", "ExactCount") == "ExactCount"
                else {}
            ),
            **extra,
        },
    }


def claim(name, *requests, constraints=None, config=None):
    devices = {"requests": list(requests)}
    if constraints:
        devices["constraints"] = constraints
    if config:
        devices["config"] = config
    return {
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": {"devices": devices},
    }


def node(name="node-1", labels=None):
    return {"metadata": {"name": name, "labels": labels or {}}}


CLASS_A = cls("class-a", f'device.driver == "{DRIVER}"')
CLASS_B = cls("class-b", f'device.driver == "{DRIVER2}"')
TEN = [
    dev(
        f"dev-{i}", attributes={"numa": {"int": i // 4}, "model": {"string": "A" if i % 2 else "B"}}
    )
    for i in range(6)
]


def case(name, claims, slices, classes=(CLASS_A, CLASS_B), allocated=(), features=None, at=None):
    return {
        "name": name,
        "features": {**FEATURES, **(features or {})},
        "classes": list(classes),
        "slices": slices,
        "claims": claims,
        "allocated": list(allocated),
        "node": at or node(),
    }


cases = [
    case("simple", [claim("c1", req("r"))], [slice_("s1", [dev("d1"), dev("d2")])]),
    case("no-slices", [claim("c1", req("r"))], []),
    case("other-node", [claim("c1", req("r"))], [slice_("s1", [dev("d1")], node="node-2")]),
    case("count-3", [claim("c1", req("r", count=3))], [slice_("s1", TEN)]),
    case("too-many", [claim("c1", req("r", count=7))], [slice_("s1", TEN)]),
    case("all-devices", [claim("c1", req("r", mode="All"))], [slice_("s1", TEN)]),
    case(
        "all-devices-none",
        [claim("c1", req("r", mode="All", selectors=[{"cel": {"expression": "false"}}]))],
        [slice_("s1", TEN)],
    ),
    case(
        "allocated-skipped",
        [claim("c1", req("r", count=2))],
        [slice_("s1", TEN)],
        allocated=[f"{DRIVER} node-1 dev-0", f"{DRIVER} node-1 dev-2"],
    ),
    case(
        "two-claims",
        [claim("c1", req("r")), claim("c2", req("r", count=2))],
        [slice_("s1", TEN[:3])],
    ),
    case(
        "two-claims-not-enough",
        [claim("c1", req("r", count=2)), claim("c2", req("r", count=2))],
        [slice_("s1", TEN[:3])],
    ),
    case(
        "request-selector",
        [
            claim(
                "c1",
                req(
                    "r",
                    selectors=[
                        {"cel": {"expression": 'device.attributes["driver-a"].model == "A"'}}
                    ],
                ),
            )
        ],
        [slice_("s1", TEN)],
    ),
    case(
        "selector-runtime-error",
        [
            claim(
                "c1",
                req(
                    "r",
                    selectors=[
                        {"cel": {"expression": 'device.attributes["driver-a"].missing == "A"'}}
                    ],
                ),
            )
        ],
        [slice_("s1", TEN)],
    ),
    case(
        "class-compile-error",
        [claim("c1", req("r", klass="class-bad"))],
        [slice_("s1", TEN)],
        classes=[cls("class-bad", "device.nope")],
    ),
    case("class-missing", [claim("c1", req("r", klass="class-x"))], [slice_("s1", TEN)]),
    case(
        "match-attribute",
        [
            claim(
                "c1",
                req("r1"),
                req("r2"),
                constraints=[{"requests": ["r1", "r2"], "matchAttribute": "driver-a/numa"}],
            )
        ],
        [
            slice_(
                "s1",
                [
                    dev("d0", attributes={"numa": {"int": 0}}),
                    dev("d1", attributes={"numa": {"int": 1}}),
                    dev("d2", attributes={"numa": {"int": 1}}),
                ],
            )
        ],
        allocated=[f"{DRIVER} node-1 d0"],
    ),
    case(
        "match-attribute-backtrack",
        [claim("c1", req("r", count=2), constraints=[{"matchAttribute": "driver-a/numa"}])],
        [
            slice_(
                "s1",
                [
                    dev("d0", attributes={"numa": {"int": 0}}),
                    dev("d1", attributes={"numa": {"int": 1}}),
                    dev("d2", attributes={"numa": {"int": 1}}),
                ],
            )
        ],
    ),
    case(
        "match-attribute-missing",
        [claim("c1", req("r", count=2), constraints=[{"matchAttribute": "driver-a/nope"}])],
        [slice_("s1", TEN)],
    ),
    case(
        "first-available",
        [
            claim(
                "c1",
                {
                    "name": "r",
                    "firstAvailable": [
                        {
                            "name": "s0",
                            "deviceClassName": "class-b",
                            "allocationMode": "ExactCount",
                            "count": 1,
                        },
                        {
                            "name": "s1",
                            "deviceClassName": "class-a",
                            "allocationMode": "ExactCount",
                            "count": 2,
                        },
                    ],
                },
            )
        ],
        [slice_("s1", TEN)],
    ),
    case(
        "first-available-disabled",
        [
            claim(
                "c1",
                {
                    "name": "r",
                    "firstAvailable": [
                        {
                            "name": "s0",
                            "deviceClassName": "class-a",
                            "allocationMode": "ExactCount",
                            "count": 1,
                        }
                    ],
                },
            )
        ],
        [slice_("s1", TEN)],
        features={"PrioritizedList": False},
    ),
    case(
        "admin-access",
        [claim("c1", req("r", adminAccess=True))],
        [slice_("s1", [dev("d1")])],
        allocated=[f"{DRIVER} node-1 d1"],
    ),
    case(
        "admin-access-disabled",
        [claim("c1", req("r", adminAccess=True))],
        [slice_("s1", [dev("d1")])],
        features={"AdminAccess": False},
    ),
    case(
        "taint-not-tolerated",
        [claim("c1", req("r"))],
        [
            slice_(
                "s1",
                [dev("d1", taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}]), dev("d2")],
            )
        ],
    ),
    case(
        "taint-tolerated",
        [
            claim(
                "c1",
                req("r", tolerations=[{"key": "k", "operator": "Exists", "effect": "NoSchedule"}]),
            )
        ],
        [slice_("s1", [dev("d1", taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}])])],
    ),
    case(
        "taint-disabled",
        [claim("c1", req("r"))],
        [slice_("s1", [dev("d1", taints=[{"key": "k", "value": "v", "effect": "NoExecute"}])])],
        features={"DeviceTaints": False},
    ),
    case(
        "partitionable",
        [claim("c1", req("r", count=2))],
        [
            slice_(
                "counters",
                None,
                node="",
                pool="pool-1",
                count=2,
                sharedCounters=[{"name": "gpu-0", "counters": {"memory": {"value": "8Gi"}}}],
            ),
            slice_(
                "devices",
                [
                    dev(
                        f"part-{i}",
                        consumesCounters=[
                            {"counterSet": "gpu-0", "counters": {"memory": {"value": "4Gi"}}}
                        ],
                    )
                    for i in range(3)
                ],
                pool="pool-1",
                count=2,
            ),
        ],
    ),
    case(
        "partitionable-used",
        [claim("c1", req("r", count=2))],
        [
            slice_(
                "counters",
                None,
                node="",
                pool="pool-1",
                count=2,
                sharedCounters=[{"name": "gpu-0", "counters": {"memory": {"value": "8Gi"}}}],
            ),
            slice_(
                "devices",
                [
                    dev(
                        f"part-{i}",
                        consumesCounters=[
                            {"counterSet": "gpu-0", "counters": {"memory": {"value": "4Gi"}}}
                        ],
                    )
                    for i in range(3)
                ],
                pool="pool-1",
                count=2,
            ),
        ],
        allocated=[f"{DRIVER} pool-1 part-2"],
    ),
    case("incomplete-pool", [claim("c1", req("r"))], [slice_("s1", [dev("d1")], count=2)]),
    case(
        "incomplete-pool-all",
        [claim("c1", req("r", mode="All"))],
        [slice_("s1", [dev("d1")], count=2)],
    ),
    case(
        "invalid-pool",
        [claim("c1", req("r", count=2))],
        [
            slice_("s1", [dev("d1")], count=2, pool="p"),
            slice_("s2", [dev("d1")], count=2, pool="p"),
        ],
    ),
    case(
        "generations",
        [claim("c1", req("r"))],
        [
            slice_("old", [dev("d-old")], gen=1, pool="p"),
            slice_("new", [dev("d-new")], gen=2, pool="p"),
        ],
    ),
    case(
        "node-selector-slice",
        [claim("c1", req("r"))],
        [
            slice_(
                "s1",
                [dev("d1")],
                node="",
                pool="net",
                nodeSelector={
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}
                    ]
                },
            )
        ],
        at=node(labels={"zone": "a"}),
    ),
    case(
        "all-nodes",
        [claim("c1", req("r"))],
        [slice_("s1", [dev("d1")], node="", pool="global", allNodes=True)],
    ),
    case(
        "config",
        [
            claim(
                "c1",
                req("r1"),
                req("r2", klass="class-c"),
                config=[
                    {"requests": ["r2"], "opaque": {"driver": DRIVER, "parameters": {"b": 2}}},
                    {"opaque": {"driver": DRIVER, "parameters": {"c": 3}}},
                ],
            )
        ],
        [slice_("s1", TEN)],
        classes=[
            CLASS_A,
            cls(
                "class-c",
                f'device.driver == "{DRIVER}"',
                config=[{"opaque": {"driver": DRIVER, "parameters": {"a": 1}}}],
            ),
        ],
    ),
    case(
        "binding-conditions",
        [claim("c1", req("r"))],
        [
            slice_(
                "s1",
                [
                    dev(
                        "d1",
                        bindingConditions=["ready"],
                        bindingFailureConditions=["failed"],
                        bindsToNode=True,
                    )
                ],
            )
        ],
    ),
    case(
        "binding-conditions-disabled",
        [claim("c1", req("r"))],
        [
            slice_(
                "s1", [dev("d1", bindingConditions=["ready"], bindingFailureConditions=["failed"])]
            )
        ],
        features={"DeviceBindingAndStatus": False},
    ),
    case(
        "consumable-capacity",
        [
            claim("c1", req("r", capacity={"requests": {"memory": "10Gi"}})),
            claim("c2", req("r", capacity={"requests": {"memory": "5Gi"}})),
        ],
        [
            slice_(
                "s1",
                [
                    dev(
                        "shared",
                        allowMultipleAllocations=True,
                        capacity={
                            "memory": {
                                "value": "16Gi",
                                "requestPolicy": {
                                    "default": "1Gi",
                                    "validRange": {"min": "1Gi", "step": "2Gi"},
                                },
                            }
                        },
                    )
                ],
            )
        ],
    ),
    case(
        "consumable-capacity-too-much",
        [
            claim("c1", req("r", capacity={"requests": {"memory": "10Gi"}})),
            claim("c2", req("r", capacity={"requests": {"memory": "8Gi"}})),
        ],
        [
            slice_(
                "s1",
                [
                    dev(
                        "shared",
                        allowMultipleAllocations=True,
                        capacity={"memory": {"value": "16Gi"}},
                    )
                ],
            )
        ],
    ),
    case(
        "consumable-capacity-disabled",
        [claim("c1", req("r", capacity={"requests": {"memory": "1Gi"}}))],
        [slice_("s1", TEN)],
        features={"ConsumableCapacity": False},
    ),
    case(
        "max-size",
        [claim("c1", req("r", count=20), req("r2", count=13))],
        [slice_("s1", [dev(f"d{i}") for i in range(40)])],
    ),
    case(
        "pools-sorted",
        [claim("c1", req("r", count=2))],
        [slice_("z", [dev("z1")], pool="zz"), slice_("a", [dev("a1")], pool="aa")],
    ),
]

Path(__file__).with_name("testdata").joinpath("alloc_cases.json").write_text(
    json.dumps(cases, indent=1) + "\n"
)
