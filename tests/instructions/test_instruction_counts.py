"""The instruction guard: each fixed workload's instructions per pod, counted by valgrind
(callgrind), within 5% of benchmarks/instructions.json. Counts, not times, so the machine's
load cannot fail it or hide a regression. `make instructions` prints the table;
`make instructions-baseline` rewrites the file after an accepted change."""

from __future__ import annotations

import shutil

import pytest

from benchmarks import instructions


def test_no_workload_costs_more_instructions_per_pod_than_its_baseline() -> None:
    if shutil.which("valgrind") is None:
        pytest.fail("valgrind is missing: tools/host-packages.sh instructions installs it")
    baseline = instructions.load_baseline()
    try:
        instructions.check_versions(baseline, instructions.tool_versions())
    except instructions.BaselineMismatchError as error:
        pytest.fail(str(error))
    now = instructions.measure(list(baseline["workloads"]))
    grown = instructions.regressions(baseline["workloads"], now)
    assert not grown, "\n".join([instructions.table(baseline["workloads"], now), *grown])
