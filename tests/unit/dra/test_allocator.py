"""The allocator against upstream: every scenario of testdata/alloc_cases.json (after
upstream's allocatortesting table, one or more per feature) was answered by the pinned
k8s.io/dynamic-resource-allocation allocator (oracle/main.go); ours must give the same
allocations field for field, or the same error."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from scheduler_runtime.dra import allocator as alloc
from scheduler_runtime.dra import cel, model

DATA = Path(__file__).with_name("testdata")
CASES = json.loads((DATA / "alloc_cases.json").read_text())
GOLDEN = {g["name"]: g for g in json.loads((DATA / "alloc_golden.json").read_text())}


def features(raw: dict[str, bool]) -> alloc.Features:
    binding = raw["DeviceBindingAndStatus"]
    return alloc.Features(
        admin_access=raw["AdminAccess"],
        prioritized_list=raw["PrioritizedList"],
        partitionable_devices=raw["PartitionableDevices"],
        device_taints=raw["DeviceTaints"],
        device_binding_conditions=binding,
        resource_claim_device_status=binding,
        consumable_capacity=raw["ConsumableCapacity"],
        list_type_attributes=raw["ListTypeAttributes"],
    )


def run(case: dict[str, Any]) -> dict[str, Any]:
    f = features(case["features"])
    state = alloc.AllocatedState({tuple(d.split()) for d in case["allocated"]})  # type: ignore[misc]
    classes = {c.name: c for c in map(model.parse_class, case["classes"])}
    index = alloc.SliceIndex(model.parse_slice(s) for s in case["slices"])
    allocator = alloc.Allocator(f, state, classes, index, cel.Cache(features=f.cel))
    meta = case["node"]["metadata"]
    out: dict[str, Any] = {"name": case["name"], "allocations": None}
    try:
        out["allocations"] = allocator.allocate(
            alloc.Node(meta["name"], meta.get("labels") or {}),
            [model.parse_claim(c) for c in case["claims"]],
        )
    except alloc.NodeAllocationError as e:
        out["error"], out["nodeError"] = str(e), True
    except alloc.AllocationError as e:
        out["error"] = str(e)
    return out


def normalized(outcome: dict[str, Any]) -> dict[str, Any]:
    """Share IDs are random UUIDs on both sides: compare that they are set."""
    text = json.dumps(outcome, sort_keys=True)
    data = json.loads(text)
    for allocation in data.get("allocations") or ():
        for result in allocation["devices"].get("results", ()):
            if "shareID" in result:
                result["shareID"] = "<uuid>"
    return data


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_matches_upstream(case: dict[str, Any]) -> None:
    assert normalized(run(case)) == normalized(GOLDEN[case["name"]])


def test_a_passed_deadline_stops_the_search() -> None:
    case = next(c for c in CASES if c["name"] == "count-3")
    f = features(case["features"])
    classes = {c.name: c for c in map(model.parse_class, case["classes"])}
    index = alloc.SliceIndex(model.parse_slice(s) for s in case["slices"])
    allocator = alloc.Allocator(f, alloc.AllocatedState(), classes, index, cel.Cache())
    claims = [model.parse_claim(c) for c in case["claims"]]
    node = alloc.Node("node-1")
    assert allocator.allocate(node, claims, deadline=time.monotonic() + 3600) is not None
    with pytest.raises(alloc.AllocationTimeoutError, match="context deadline exceeded"):
        allocator.allocate(node, claims, deadline=time.monotonic() - 1)


# Bounds: what a claim written by any user may make the allocator do.

DRIVER = "gpu.example.com"
GPU_CLASS = model.parse_class(
    {
        "metadata": {"name": "gpu"},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
    }
)


def gpus(count: int) -> alloc.SliceIndex:
    devices = [{"name": f"gpu-{i}", "attributes": {"index": {"int": i}}} for i in range(count)]
    spec = {
        "driver": DRIVER,
        "nodeName": "node-1",
        "pool": {"name": "node-1", "resourceSliceCount": 1},
        "devices": devices,
    }
    return alloc.SliceIndex([model.parse_slice({"metadata": {"name": "gpus"}, "spec": spec})])


def gpu_claim(name: str, *requests: dict[str, Any]) -> model.Claim:
    spec = {"devices": {"requests": list(requests)}}
    return model.parse_claim({"metadata": {"name": name, "namespace": "t"}, "spec": spec})


def gpu_request(name: str, *selectors: str, **exactly: Any) -> dict[str, Any]:
    cel_selectors = [{"cel": {"expression": s}} for s in selectors]
    return {
        "name": name,
        "exactly": {"deviceClassName": "gpu", "selectors": cel_selectors, **exactly},
    }


def gpu_allocator(index: alloc.SliceIndex) -> alloc.Allocator:
    return alloc.Allocator(
        alloc.Features(), alloc.AllocatedState(), {"gpu": GPU_CLASS}, index, cel.Cache()
    )


def test_a_pod_with_17_claims_of_32_devices_gets_its_544_devices() -> None:
    """Upstream allocates them in 0.04 s; a recursion per device hit Python's limit."""
    claims = [gpu_claim(f"c{k}", gpu_request("r", count=32)) for k in range(17)]
    allocations = gpu_allocator(gpus(17 * 32)).allocate(alloc.Node("node-1"), claims)
    assert allocations is not None
    taken = [r["device"] for a in allocations for r in a["devices"]["results"]]
    assert taken == [f"gpu-{i}" for i in range(17 * 32)]  # first fit, in upstream's order


def test_the_deadline_is_checked_in_the_device_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """No device matches: the search loops over 128 devices without going deeper; a deadline
    passing at the fifth evaluation (the class's selector on the third device) stops it at
    the next check, with upstream's outcome: before, all 256 evaluations ran."""
    evaluated = 0
    evaluate = alloc._Attempt._evaluate

    def counting(self: Any, *args: Any) -> Any:
        nonlocal evaluated
        evaluated += 1
        return evaluate(self, *args)

    monkeypatch.setattr(alloc._Attempt, "_evaluate", counting)
    monkeypatch.setattr(time, "monotonic", lambda: 0.0 if evaluated < 5 else 100.0)
    claim = gpu_claim("c", gpu_request("r", "device.attributes['gpu.example.com'].index < 0"))
    with pytest.raises(alloc.AllocationTimeoutError, match="context deadline exceeded"):
        gpu_allocator(gpus(128)).allocate(alloc.Node("node-1"), [claim], deadline=50.0)
    assert evaluated <= 6  # at most the third device's own selector, unless CEL stops first


def test_a_selector_interrupted_by_the_deadline_is_a_timeout_and_no_outcome(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The deadline goes into each CEL evaluation (upstream passes its context); an
    evaluation it interrupts says nothing about the device, so nothing is cached."""
    now = [0.0]
    deadlines = []

    def interrupted(self: Any, device: Any, cost_limit: int = 0, *, deadline: Any = None) -> bool:
        deadlines.append(deadline)
        now[0] = 100.0
        raise cel.CelRuntimeError("operation interrupted")

    monkeypatch.setattr(cel.CompilationResult, "device_matches", interrupted)
    monkeypatch.setattr(time, "monotonic", lambda: now[0])
    index = gpus(4)
    with pytest.raises(alloc.AllocationTimeoutError, match="context deadline exceeded"):
        gpu_allocator(index).allocate(
            alloc.Node("node-1"), [gpu_claim("c", gpu_request("r"))], deadline=50.0
        )
    assert deadlines == [50.0]
    assert len(index.matches) == 0


def test_the_match_cache_stays_within_its_bound_and_keeps_what_is_in_use(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A claim of 8 requests x 8 selectors over all of 64 devices: 4096 outcomes, more than
    the bound holds; before, every outcome stayed for as long as the slices."""
    evaluated = 0
    evaluate = alloc._Attempt._evaluate

    def counting(self: Any, *args: Any) -> Any:
        nonlocal evaluated
        evaluated += 1
        return evaluate(self, *args)

    monkeypatch.setattr(alloc._Attempt, "_evaluate", counting)
    index = gpus(64)
    index.matches = alloc.MatchCache(max_bytes=64 * 1024)
    bound = 2 * index.matches.max_bytes // alloc.MatchCache.ENTRY_BYTES
    allocator = gpu_allocator(index)
    node = alloc.Node("node-1")
    common = gpu_claim("common", gpu_request("r", count=2))
    assert allocator.allocate(node, [common]) is not None
    assert evaluated == len(index.matches) == 2  # the class's selector, two devices
    assert allocator.allocate(node, [common]) is not None
    assert evaluated == 2  # found, not evaluated again
    requests = [
        gpu_request(
            f"r{r}",
            *(f"device.attributes['{DRIVER}'].index >= {-(8 * r + s)}" for s in range(8)),
            allocationMode="All",
        )
        for r in range(8)
    ]
    with pytest.raises(alloc.AllocationError, match="exceeds the claim limit of 32"):
        allocator.allocate(node, [gpu_claim("big", *requests)])
    assert evaluated == 2 + 8 * 8 * 64 + 62  # every pair once, the class's on 62 devices more
    assert 0 < len(index.matches) <= bound < evaluated


def test_a_huge_quantity_in_a_selector_parses_and_refuses_to_be_compared() -> None:
    """isQuantity answers at once; comparing (Go: forever) is the claim's CEL runtime error."""
    node = alloc.Node("node-1")
    fine = gpu_claim("fine", gpu_request("r", 'isQuantity("1e999999999")'))
    allocations = gpu_allocator(gpus(1)).allocate(node, [fine])
    assert allocations is not None
    assert allocations[0]["devices"]["results"][0]["device"] == "gpu-0"
    compared = 'quantity("1e999999999").isGreaterThan(quantity("1"))'
    with pytest.raises(alloc.AllocationError) as e:
        gpu_allocator(gpus(1)).allocate(node, [gpu_claim("huge", gpu_request("r", compared))])
    assert str(e.value) == (
        'claim t/huge: selector #0: CEL runtime error: quantity "1e999999999" has more than '
        "1000 digits: too large to compare or compute with"
    )


@pytest.mark.parametrize(
    ("device_in_runtime_errors", "error"),
    [
        (False, "claim t/c: selector #0: CEL runtime error: no such key: model"),
        (
            True,
            f"claim t/c: selector #0 on device {DRIVER}/node-1/gpu-0: CEL runtime error: "
            "no such key: model. consider using CEL optional chaining (.? followed by "
            "orValue()) or guarding the check with has() for optional fields",
        ),
    ],
)
def test_a_runtime_error_names_the_device_from_1_37(
    device_in_runtime_errors: bool, error: str
) -> None:
    """dynamic-resource-allocation v0.37's words (v0.36's without the device and the hint)."""
    allocator = alloc.Allocator(
        alloc.Features(device_in_runtime_errors=device_in_runtime_errors),
        alloc.AllocatedState(),
        {"gpu": GPU_CLASS},
        gpus(1),
        cel.Cache(),
    )
    missing = f"device.attributes['{DRIVER}'].model == 'a100'"
    with pytest.raises(alloc.AllocationError) as e:
        allocator.allocate(alloc.Node("node-1"), [gpu_claim("c", gpu_request("r", missing))])
    assert str(e.value) == error
