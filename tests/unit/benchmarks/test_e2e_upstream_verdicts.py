"""make e2e-upstream's reading of ginkgo's JSON reports and its verdicts: both pass, both fail
(an environment limit, with kube-scheduler's reason), only the runtime fails (a defect)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchmarks.e2e_upstream import Outcome, compare, read_report, table


def spec(leaf: str, state: str, message: str = "", kind: str = "It") -> dict[str, Any]:
    return {
        "ContainerHierarchyTexts": ["[sig-scheduling] SchedulerPredicates [Serial]"],
        "LeafNodeText": leaf,
        "LeafNodeType": kind,
        "State": state,
        **({"Failure": {"Message": message}} if message else {}),
    }


def test_the_report_lists_specs_that_ran_by_full_name(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    specs = [
        spec("a [Conformance]", "passed"),
        spec("b", "failed", "\nTimed out after 300s.\nmore"),
        spec("filtered out", "skipped"),
        spec("skipped at run time", "skipped", "Requires at least 2 zones"),
        spec("", "passed", kind="SynchronizedBeforeSuite"),
    ]
    report.write_text(json.dumps([{"SpecReports": specs}]))
    prefix = "[sig-scheduling] SchedulerPredicates [Serial] "
    assert read_report(report) == {
        prefix + "a [Conformance]": Outcome("passed"),
        prefix + "b": Outcome("failed", "Timed out after 300s."),
        prefix + "skipped at run time": Outcome("skipped", "Requires at least 2 zones"),
    }


def test_verdicts() -> None:
    passed, failed = Outcome("passed"), Outcome("failed", "kwok deleted the victim")
    rows = compare(
        {"both": passed, "limit": failed, "defect": passed, "control": failed},
        {"both": passed, "limit": Outcome("timedout", "x"), "defect": failed, "control": passed},
    )
    verdicts = {row.spec: (row.verdict, row.defect) for row in rows}
    assert verdicts == {
        "both": ("pass both", False),
        "limit": ("environment limit: kwok deleted the victim", False),
        "defect": ("runtime defect", True),
        "control": ("kube-scheduler only failed: kwok deleted the victim", False),
    }
    assert table(rows).splitlines()[2] == "both | passed | passed | pass both"
