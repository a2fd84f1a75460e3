"""The CEL environment against upstream: every case of testdata/cel_cases.json (upstream's
cel/compile_test.go table and the messages the plugin surfaces) was answered by the pinned
k8s.io/dynamic-resource-allocation code (oracle/main.go); ours must answer the same, byte for
byte."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from scheduler_runtime.dra import cel, celparse
from scheduler_runtime.framework.quantity import parse

DATA = Path(__file__).with_name("testdata")
CASES = json.loads((DATA / "cel_cases.json").read_text())
# Each minor's answers, by its k8s.io/dynamic-resource-allocation (oracle/main.go run with
# go.mod, go.v0.37.2.mod or go.v0.35.4.mod): testdata/cel_golden_<minor>.json.
MINORS = ("1.35", "1.36", "1.37")
GOLDEN = {
    minor: {g["name"]: g for g in json.loads((DATA / f"cel_golden_{minor}.json").read_text())}
    for minor in MINORS
}


def _features(case: dict[str, Any], minor: str) -> cel.Features:
    """The scheduler's CEL features at `minor`: DRAListTypeAttributes exists from 1.36; from
    1.37 the stored-expressions environment declares list-valued attributes regardless."""
    lists = bool(case.get("listTypeAttributes")) and minor != "1.35"
    return cel.Features(
        list_type_attributes=lists, stored_list_types=minor == "1.37", includes=minor != "1.35"
    )


def _outcome(case: dict[str, Any], minor: str = "1.36") -> dict[str, Any]:
    features = _features(case, minor)
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


@pytest.mark.parametrize("minor", MINORS)
@pytest.mark.parametrize("case", [pytest.param(c, id=c["name"]) for c in CASES])
def test_matches_upstream(case: dict[str, Any], minor: str) -> None:
    assert _outcome(case, minor) == GOLDEN[minor][case["name"]]


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


@pytest.mark.timeout(60)
def test_regexes_take_linear_time() -> None:
    """A pattern that backtracks exponentially in Python's `re` (2**10000 paths here) is
    answered at once by RE2, on a literal, an attribute and a pattern known only at run time."""
    subject = "a" * 10_000 + "!"
    device = cel.device_input("d", None, {"s": {"string": subject}}, {}, cel.Features())
    for expression in (
        'device.attributes["d"].s.matches("^(a+)+$")',
        'device.attributes["d"].s.matches("^(" + "a|a" + ")*$")',
        'device.attributes["d"].s.find("(a*)*b") == ""',
        'device.attributes["d"].s.findAll("(a|aa)+$").size() == 0',
    ):
        result = cel.compile_expression(expression)
        assert result.error is None
        assert result.device_matches(device) is expression.endswith(("0", '""')), expression


NESTED = "[1, 2, 3].exists(x, lists.range(300).exists(y, x * y == -1))"


def test_deadline_stops_comprehensions() -> None:
    """cel-go's interrupt check: every 100th iteration a comprehension looks at the deadline
    and stops with `operation interrupted`, which the context's cause completes."""
    device = cel.device_input("", None, {}, {}, cel.Features())
    result = cel.compile_expression(NESTED)
    assert result.device_matches(device, deadline=time.monotonic() + 3600) is False
    with pytest.raises(cel.CelDeadlineError) as caught:
        result.device_matches(device, deadline=time.monotonic() - 1)
    assert str(caught.value) == "operation interrupted: context deadline exceeded"
    assert isinstance(caught.value, cel.CelRuntimeError)


def test_deadline_is_looked_at_every_hundred_iterations() -> None:
    device = cel.device_input("", None, {}, {}, cel.Features())
    past = time.monotonic() - 1
    assert not cel.compile_expression("lists.range(99).exists(x, x < 0)").device_matches(
        device, deadline=past
    )
    with pytest.raises(cel.CelDeadlineError):
        cel.compile_expression("lists.range(100).exists(x, x < 0)").device_matches(
            device, deadline=past
        )
    # Without a comprehension nothing looks at it, as upstream.
    assert cel.compile_expression("1 < 2").device_matches(device, deadline=past)


def test_interrupted_comprehension_is_an_error_value() -> None:
    """As a CEL error, the interruption can be absorbed by `||` like any other."""
    device = cel.device_input("", None, {}, {}, cel.Features())
    result = cel.compile_expression(f"{NESTED} || true")
    assert result.device_matches(device, deadline=time.monotonic() - 1) is True


def test_dynamic_patterns_are_cached_with_a_bound() -> None:
    result = cel.compile_expression('"x1".matches("^x" + device.driver)')
    for n in range(300):
        device = cel.device_input(str(n), None, {}, {}, cel.Features())
        assert result.device_matches(device) is (n == 1)
    info = cel._cached_regex.cache_info()
    assert info.maxsize is not None
    assert 0 < info.currsize <= info.maxsize


def test_long_chains_evaluate_without_recursion_errors() -> None:
    """Chains the parser keeps flat or balanced stay within Python's recursion limit, however
    long the selector makes them."""
    device = cel.device_input("", None, {}, {}, cel.Features())
    for expression in (
        "!" * 9000 + "true",
        "-" * 9000 + "1 == 1",
        " && ".join(["true"] * 3000),
        " || ".join(["false"] * 3000) + " || true",
        "[" + ", ".join(["[1]"] * 3000) + "].size() > 0",
    ):
        result = cel.compile_expression(expression)
        assert result.error is None
        assert result.device_matches(device) is True


def test_deepest_selectors_evaluate_on_a_worker_thread() -> None:
    """The deepest nesting upstream accepts evaluates on a thread with the default stack and
    recursion limit, with 200 frames of the caller's already on it."""
    deepest = ("nested-macros-248", "nested-members-in-macros", "nested-lists-of-members")
    cases = [c for c in CASES if c["name"] in deepest]
    extra = "[1].all(x, " + "[" * 240 + "+".join(["x"] * 248) + "]" * 240 + " != [])"
    device = cel.device_input("", None, {}, {}, cel.Features())
    results: list[Any] = []

    def nested(depth: int, expression: str) -> bool:
        if depth:
            return nested(depth - 1, expression)
        result = cel.compile_expression(expression)
        assert result.error is None
        return result.device_matches(device)

    def run() -> None:
        for expression in [c["expression"] for c in cases] + [extra]:
            try:
                results.append(nested(200, expression))
            except Exception as e:  # reported by the assertion below
                results.append(e)

    worker = threading.Thread(target=run)
    worker.start()
    worker.join(timeout=300)
    assert len(cases) == len(deepest)
    assert results == [True] * (len(deepest) + 1)


def test_deep_selectors_are_sliced_where_the_parser_needs() -> None:
    """Only paths longer than the C++ parser allows are cut: a deep selector whose other
    operands are shallow compiles in one slice per 20 levels of its deepest path."""
    expression = "(" * 100 + "true" + ")" * 100 + " && " + " && ".join(["(((true)))"] * 500)
    root = celparse.parse(expression)
    slices = cel._Slices(expression, root)
    assert 5 <= len(slices.slices) <= 6
    assert cel.compile_expression(expression).device_matches(
        cel.device_input("", None, {}, {}, cel.Features())
    )


SHALLOW = [
    c
    for c in CASES
    if not c["name"].startswith(("nested-", "chained-")) and c["name"] != "expression-too-long"
]


@pytest.mark.parametrize("minor", MINORS)
@pytest.mark.parametrize("case", [pytest.param(c, id=c["name"]) for c in SHALLOW])
def test_cases_nested_forty_deep_keep_their_outcome(case: dict[str, Any], minor: str) -> None:
    """Each case of the table inside 40 parentheses (sliced past the C++ parser's depth) has
    the outcome upstream gives the case itself; a compile error stays one."""
    nested = dict(case, expression="(" * 40 + case["expression"] + ")" * 40)
    golden = GOLDEN[minor][case["name"]]
    outcome = _outcome(nested, minor)
    if "compileError" in golden:
        assert "compileError" in outcome
    else:
        assert outcome == golden


def test_the_checker_library_is_loaded_by_the_first_selector_not_by_the_runtime() -> None:
    """cel_expr_python holds about 14 MiB: a scheduler with no device selector does without."""
    probe = (
        "import sys, scheduler_runtime.cli.run, scheduler_runtime.simulate;"
        "loaded = 'cel_expr_python' in sys.modules;"
        "from scheduler_runtime.dra import cel;"
        "assert cel.compile_expression('device.driver == \"x\"').error is None;"
        "print(loaded, 'cel_expr_python' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "True"]
