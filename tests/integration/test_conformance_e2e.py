"""Kubernetes' own `[Conformance]` scheduler specs (test/e2e/scheduling of the cluster's
release, built by `tools/build-binaries.sh e2e-scheduling` when the cache lacks it) against the
runtime serving default-scheduler, on a control plane of its own without kube-scheduler
(`e2e-upstream-runtime-<release>`, never the shared test cluster): every one must pass, as on
every certified cluster. `make e2e-upstream` runs all the sig-scheduling specs and compares
them with kube-scheduler's."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.e2e_upstream import (
    CONFORMANCE,
    PASSED,
    RUNTIME,
    Run,
    listed_specs,
    suite_binary,
)
from benchmarks.tools import kubernetes_version

pytestmark = pytest.mark.integration


@pytest.mark.timeout(1800)
def test_every_conformance_scheduling_spec_passes_against_the_runtime(tmp_path: Path) -> None:
    binary = suite_binary()
    expected = listed_specs(binary, CONFORMANCE, tmp_path)
    assert expected, f"{binary} lists no spec for {CONFORMANCE}"
    outcomes = Run(RUNTIME, kubernetes_version(), tmp_path).run(binary, CONFORMANCE)
    failed = {
        spec: outcome
        for spec in expected
        if (outcome := outcomes.get(spec)) is None or outcome.state != PASSED
    }
    assert not failed, f"{len(failed)} of {len(expected)} failed (logs in {tmp_path}): {failed}"
