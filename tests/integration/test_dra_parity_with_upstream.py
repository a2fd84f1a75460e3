"""Dynamic Resource Allocation as the upstream kube-scheduler does it, feature by feature:
each scenario's pods are offered to the runtime and to the cluster's kube-scheduler in the
same state (tests/dra_parity.py), and both must place each pod on the same node with the
same devices, or refuse it with the same message. At the end no device is allocated twice
and every allocated device satisfies what its request asked for."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pytest
from cluster import Cluster
from dra_parity import (
    DRIVER,
    ClusterDRA,
    FakeDriver,
    PodSpec,
    Scenario,
    allocated_devices,
    claim,
    device,
    device_class,
    device_taint_rule,
    exactly,
    offer_all,
    resource_slice,
    set_up,
    taken_twice,
    template,
)
from runtime_support import RuntimeProcess, scheduler_config, unique_scheduler_name

from benchmarks.tools import kubernetes_minor
from scheduler_runtime.config.features import known

ATTR = f'device.attributes["{DRIVER}"]'
CAPACITY = f'device.capacity["{DRIVER}"]'
BIG = f'{CAPACITY}.memory.compareTo(quantity("2Gi")) >= 0'
NEWER = f'{ATTR}.driverversion.isGreaterThan(semver("1.1.0"))'


def selected(expression: str) -> list[dict[str, Any]]:
    return [{"cel": {"expression": expression}}]


def _node_slices(devices: Mapping[str, list[dict[str, Any]]]) -> Callable[..., Any]:
    return lambda names: [resource_slice(names[n], d) for n, d in devices.items()]


def scenarios(p: str) -> dict[str, Scenario]:
    """Every scenario, its cluster-scoped names prefixed with `p` (the test's namespace)."""
    gpu = f"{p}-gpu"
    gpus = device_class(gpu)
    made: list[Scenario] = []
    made.append(
        Scenario(
            "counts",
            nodes=(("a", "4"), ("b", "6"), ("c", "10")),
            slices=_node_slices(
                {
                    "a": [device(f"d{i}", model="a100") for i in range(3)],
                    "b": [device(f"d{i}", model="a100") for i in range(4)],
                }
            ),
            classes=(gpus,),
            templates=(
                template("one", exactly(gpu)),
                template("two", exactly(gpu, count=2)),
                template("all", exactly(gpu, allocationMode="All")),
            ),
            pods=(
                PodSpec("p1", ("two",)),
                PodSpec("p2", ("all",)),
                PodSpec("p3", ("one",)),
                PodSpec("p4", ("two",)),
                PodSpec("p5", ("one", "one")),
            ),
        )
    )
    made.append(
        Scenario(
            "selectors",
            nodes=(("a", "4"), ("b", "10")),
            slices=_node_slices(
                {
                    "a": [
                        device(
                            "g0", {"memory": "1Gi"}, model="a100", driverversion="1.0.0", index=0
                        ),
                        device(
                            "g1", {"memory": "2Gi"}, model="h100", driverversion="1.2.0", index=1
                        ),
                    ],
                    "b": [
                        device(
                            "g0", {"memory": "4Gi"}, model="a100", driverversion="2.0.0", index=0
                        ),
                        device(
                            "n0", {"memory": "8Gi"}, model="nic", driverversion="9.0.0", index=5
                        ),
                    ],
                }
            ),
            classes=(device_class(gpu, f'device.driver == "{DRIVER}" && {ATTR}.model != "nic"'),),
            templates=(
                template("h100", exactly(gpu, selectors=selected(f'{ATTR}.model == "h100"'))),
                template("big", exactly(gpu, selectors=selected(BIG))),
                template("newer", exactly(gpu, selectors=selected(NEWER))),
                template("indexed", exactly(gpu, selectors=selected(f"{ATTR}.index >= 1"))),
            ),
            pods=(
                PodSpec("p1", ("h100",)),
                PodSpec("p2", ("big",)),
                PodSpec("p3", ("newer",)),
                PodSpec("p4", ("indexed",)),
                PodSpec("p5", ("big",)),
            ),
        )
    )
    first_choice = {"cel": {"expression": f'{ATTR}.model == "h100"'}}
    made.append(
        Scenario(
            "prioritized",
            nodes=(("a", "4"), ("b", "10")),
            slices=_node_slices(
                {
                    "a": [device("h0", model="h100")],
                    "b": [device(f"a{i}", model="a100") for i in range(3)],
                }
            ),
            classes=(gpus,),
            templates=(
                template(
                    "choice",
                    {
                        "name": "gpu",
                        "firstAvailable": [
                            {"name": "big", "deviceClassName": gpu, "selectors": [first_choice]},
                            {"name": "small", "deviceClassName": gpu, "count": 2},
                        ],
                    },
                ),
            ),
            pods=(
                PodSpec("p1", ("choice",)),
                PodSpec("p2", ("choice",)),
                PodSpec("p3", ("choice",)),
            ),
        )
    )
    # distinctAttribute comes with DRAConsumableCapacity (on from 1.36): 1.35's API server
    # drops it, and then refuses the constraint as empty.
    distinct = [{"distinctAttribute": f"{DRIVER}/numa"}]
    apart = (
        [template("apart", exactly(gpu, name="x"), exactly(gpu, name="y"), constraints=distinct)]
        if known(kubernetes_minor())["DRAConsumableCapacity"].default
        else []
    )
    made.append(
        Scenario(
            "constraints",
            nodes=(("a", "4"), ("b", "10")),
            slices=_node_slices(
                {
                    "a": [device("d0", numa=0), device("d1", numa=1), device("d2", numa=1)],
                    "b": [device("d0", numa=0), device("d1", numa=1)],
                }
            ),
            classes=(gpus,),
            templates=(
                template(
                    "together",
                    exactly(gpu, name="x"),
                    exactly(gpu, name="y"),
                    constraints=[{"matchAttribute": f"{DRIVER}/numa"}],
                ),
                *apart,
            ),
            pods=(
                PodSpec("p1", ("together",)),
                PodSpec("p2", ("together",)),
                *(PodSpec("p3", ("apart",)) for _ in apart),
            ),
        )
    )
    made.append(
        Scenario(
            "admin",
            nodes=(("a", "4"), ("b", "10")),
            slices=_node_slices({"a": [device("d0")]}),
            classes=(gpus,),
            templates=(
                template("one", exactly(gpu)),
                template("admin", exactly(gpu, adminAccess=True)),
            ),
            namespace_labels={"resource.kubernetes.io/admin-access": "true"},
            pods=(PodSpec("p1", ("one",)), PodSpec("p2", ("admin",)), PodSpec("p3", ("one",))),
        )
    )
    made.append(
        Scenario(
            "shared",
            nodes=(("a", "4"), ("b", "10")),
            slices=_node_slices({"a": [device("d0")], "b": [device("d0"), device("d1")]}),
            classes=(gpus,),
            claims=(claim("shared", exactly(gpu)),),
            pods=(
                PodSpec("p1", claims=("shared",)),
                PodSpec("p2", claims=("shared",)),
                PodSpec("p3", claims=("shared",), node_selector={"size": "small"}),
            ),
        )
    )
    taint = {"key": "dedicated", "value": "ml", "effect": "NoSchedule"}
    made.append(
        Scenario(
            "taints",
            nodes=(("a", "4"), ("b", "10")),
            slices=_node_slices({"a": [{**device("d0"), "taints": [taint]}], "b": [device("d0")]}),
            classes=(gpus,),
            templates=(
                template("plain", exactly(gpu)),
                template(
                    "tolerant",
                    exactly(
                        gpu,
                        tolerations=[
                            {
                                "key": "dedicated",
                                "operator": "Equal",
                                "value": "ml",
                                "effect": "NoSchedule",
                            }
                        ],
                    ),
                ),
            ),
            pods=(
                PodSpec("p1", ("plain",)),
                PodSpec("p2", ("plain",)),
                PodSpec("p3", ("tolerant",)),
            ),
        )
    )
    # DRADeviceTaintRules (GA in 1.37): a rule taints a/d0, so the plain claim gets d1 and
    # only the tolerant one d0; before 1.37 no rule is served and the devices go in order.
    made.append(
        Scenario(
            "taint-rules",
            nodes=(("a", "4"),),
            slices=_node_slices({"a": [device("d0"), device("d1")]}),
            classes=(gpus,),
            templates=(
                template("plain", exactly(gpu)),
                template(
                    "tolerant",
                    exactly(gpu, tolerations=[{"key": "dedicated", "operator": "Exists"}]),
                ),
            ),
            pods=(PodSpec("p1", ("plain",)), PodSpec("p2", ("tolerant",))),
            taint_rules=lambda names: [
                device_taint_rule(f"{p}-dedicated", names["a"], "d0", taint),
            ],
        )
    )

    def partitions(names: Mapping[str, str]) -> list[dict[str, Any]]:
        node = names["a"]
        pool = {"name": node, "generation": 1, "resourceSliceCount": 2}
        counters = resource_slice(
            node, [], sharedCounters=[{"name": "mem", "counters": {"memory": {"value": "4Gi"}}}]
        )
        counters["metadata"]["name"] = f"{node}-counters"
        counters["spec"]["pool"] = pool
        del counters["spec"]["devices"]
        consuming = [{"counterSet": "mem", "counters": {"memory": {"value": "2Gi"}}}]
        devices = resource_slice(
            node, [{**device(f"part{i}"), "consumesCounters": consuming} for i in range(4)]
        )
        devices["spec"]["pool"] = pool
        return [counters, devices]

    made.append(
        Scenario(
            "partitionable",
            nodes=(("a", "4"), ("b", "10")),
            slices=partitions,
            classes=(gpus,),
            templates=(template("one", exactly(gpu)),),
            pods=(PodSpec("p1", ("one",)), PodSpec("p2", ("one",)), PodSpec("p3", ("one",))),
        )
    )
    shared_device = {
        **device("d0"),
        "allowMultipleAllocations": True,
        "capacity": {
            "memory": {
                "value": "4Gi",
                "requestPolicy": {"default": "1Gi", "validRange": {"min": "1Gi", "step": "1Gi"}},
            }
        },
    }
    made.append(
        Scenario(
            "capacity",
            nodes=(("a", "4"), ("b", "10")),
            slices=_node_slices({"a": [shared_device]}),
            classes=(gpus,),
            templates=(template("half", exactly(gpu, capacity={"requests": {"memory": "2Gi"}})),),
            pods=(PodSpec("p1", ("half",)), PodSpec("p2", ("half",)), PodSpec("p3", ("half",))),
        )
    )
    attachable = {
        **device("d0"),
        "bindingConditions": ["attached"],
        "bindingFailureConditions": ["failed"],
    }
    made.append(
        Scenario(
            "binding",
            nodes=(("a", "4"), ("b", "10")),
            slices=_node_slices({"a": [attachable]}),
            classes=(gpus,),
            templates=(template("one", exactly(gpu)),),
            pods=(PodSpec("p1", ("one",)),),
            binding_conditions=True,
        )
    )
    resource = f"example.com/{p}"
    made.append(
        Scenario(
            "extended",
            nodes=(("a", "4"), ("b", "10")),
            slices=_node_slices({"a": [device("d0"), device("d1")]}),
            classes=(device_class(gpu, extendedResourceName=resource),),
            node_allocatable={"b": {resource: "1"}},
            pods=(
                PodSpec("p1", extended={resource: "1"}),
                PodSpec("p2", extended={resource: "2"}),
                PodSpec("p3", extended={resource: "1"}),
            ),
        )
    )
    made.append(
        Scenario(
            "errors",
            nodes=(("a", "4"), ("b", "10")),
            slices=_node_slices({"a": [device("d0")]}),
            classes=(device_class(gpu, f'{ATTR}.model == "x"'),),
            templates=(template("missing", exactly(f"{p}-none")), template("broken", exactly(gpu))),
            pods=(PodSpec("p1", ("missing",)), PodSpec("p2", ("broken",))),
        )
    )
    return {scenario.name: scenario for scenario in made}


# What the devices of each scenario's requests must satisfy, as the slices publish them.
def _attr(published: Mapping[str, Any], name: str) -> Any:
    value = (published.get("attributes") or {}).get(name) or {}
    return next(iter(value.values()), None)


SATISFIES: dict[str, Callable[[str, Mapping[str, Any]], bool]] = {
    "selectors": lambda request, d: _attr(d, "model") != "nic",
    "prioritized": lambda request, d: (
        _attr(d, "model") == ("h100" if request == "gpu/big" else "a100")
    ),
    "taints": lambda request, d: True,
}


@pytest.mark.parametrize("name", sorted(scenarios("x")))
def test_dra_as_upstream_does_it(
    name: str,
    cluster: Cluster,
    namespace: str,
    make_nodes: Callable[..., list[str]],
    start_runtime: Callable[..., RuntimeProcess],
) -> None:
    scenario = scenarios(namespace)[name]
    dra = ClusterDRA(cluster, namespace)
    ours = unique_scheduler_name()
    start_runtime(scheduler_config(ours))
    try:
        names = set_up(scenario, dra, make_nodes, namespace)
        if name == "shared":  # the third pod may only go to the node without the claim's device
            dra.core.patch_node(names["a"], {"metadata": {"labels": {"size": "small"}}})
        if scenario.binding_conditions:
            with FakeDriver(dra):
                differences, theirs = offer_all(scenario, dra, ours)
        else:
            differences, theirs = offer_all(scenario, dra, ours)
        print(f"{name}: upstream's outcomes: " + "; ".join(str(o) for o in theirs))
        assert differences == []
        assert taken_twice(dra) == []
        check = SATISFIES.get(name)
        if check is not None:
            for request, published in allocated_devices(dra, scenario.slices(names)):
                assert check(request, published), (request, published)
        placed = [o for o in theirs if o.node is not None]
        assert placed or name == "errors"  # every other scenario places pods
    finally:
        dra.remove_cluster_scoped()
