"""The CEL environment against upstream: every case of testdata/cel_cases.json (upstream's
cel/compile_test.go table and the messages the plugin surfaces) was answered by the pinned
k8s.io/dynamic-resource-allocation code (oracle/main.go); ours must answer the same, byte for
byte."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scheduler_runtime.dra import cel
from scheduler_runtime.framework.quantity import parse

DATA = Path(__file__).with_name("testdata")
CASES = json.loads((DATA / "cel_cases.json").read_text())
GOLDEN = {g["name"]: g for g in json.loads((DATA / "cel_golden.json").read_text())}


def _outcome(case: dict[str, Any]) -> dict[str, Any]:
    features = cel.Features(list_type_attributes=bool(case.get("listTypeAttributes")))
    result = cel.Cache(features=features).get_or_compile(case["expression"])
    out: dict[str, Any] = {"name": case["name"], "match": False}
    if result.error is not None:
        out["compileError"] = result.error
        return out
    capacity = {k: parse(v["value"]) for k, v in (case.get("capacity") or {}).items()}
    device = cel.device_input(
        case["driver"],
        case.get("allowMultipleAllocations"),
        case.get("attributes") or {},
        capacity,
        features,
    )
    try:
        out["match"] = result.device_matches(device)
    except cel.CelRuntimeError as e:
        out["matchError"] = str(e)
    return out


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_matches_upstream(case: dict[str, Any]) -> None:
    assert _outcome(case) == GOLDEN[case["name"]]


def test_cache_compiles_each_expression_once() -> None:
    cache = cel.Cache()
    first = cache.get_or_compile("device.driver == 'x'")
    assert cache.get_or_compile("device.driver == 'x'") is first


def test_cache_keeps_no_failed_compilation() -> None:
    cache = cel.Cache()
    assert cache.get_or_compile("1").error is not None
    assert cache.get_or_compile("1") is not cache.get_or_compile("1")


def test_cost_limit_is_configurable() -> None:
    result = cel.compile_expression("[1, 2, 3].all(x, x > 0)")
    device = cel.device_input("", None, {}, {}, cel.Features())
    assert result.device_matches(device)
    with pytest.raises(cel.CelRuntimeError, match="actual cost limit exceeded"):
        result.device_matches(device, cost_limit=3)
