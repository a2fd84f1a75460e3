"""`make bench` deletes its cluster when it is done, unless --keep-cluster keeps it, and
--simulate-only needs no cluster at all."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchmarks import cli
from benchmarks.gangs import WORKLOAD_CLUSTER_FLAGS


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[tuple[str, ...]]:
    made: list[tuple[str, ...]] = []

    def cluster_tool(*args: str) -> str:
        made.append(args)
        return str(tmp_path / "kubeconfig")

    async def run_scales(settings: Any, report: Any) -> None:
        made.append(("run",))

    monkeypatch.setattr(cli, "cluster_tool", cluster_tool)
    monkeypatch.setattr(cli, "run_scales", run_scales)
    monkeypatch.setattr(cli, "kubernetes_version", lambda: "v1.36.3")
    return made


def bench(tmp_path: Path, *args: str) -> int:
    return cli.main(
        [
            "--simulate-nodes",
            "0",
            "--simulate-e2e-nodes",
            "0",
            "--no-ceiling",
            "--output",
            str(tmp_path / "out.json"),
            *args,
        ]
    )


def test_the_cluster_is_deleted_afterwards(calls: list[tuple[str, ...]], tmp_path: Path) -> None:
    assert bench(tmp_path) == 0
    # The workload API too, for the gang workloads.
    assert calls[0] == ("up", "bench", "--disable-qps-limits", *WORKLOAD_CLUSTER_FLAGS)
    assert ("run",) in calls
    assert calls[-1] == ("down", "bench")


def test_keep_cluster_keeps_it(calls: list[tuple[str, ...]], tmp_path: Path) -> None:
    assert bench(tmp_path, "--keep-cluster", "--cluster", "mine") == 0
    assert ("down", "mine") not in calls
    assert calls[0][:2] == ("up", "mine")


def test_the_cluster_is_deleted_after_a_failure_too(
    calls: list[tuple[str, ...]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken(settings: Any, report: Any) -> None:
        raise RuntimeError("the API server went away")

    monkeypatch.setattr(cli, "run_scales", broken)
    assert bench(tmp_path) == 1
    assert calls[-1] == ("down", "bench")


def test_simulate_only_starts_no_cluster(calls: list[tuple[str, ...]], tmp_path: Path) -> None:
    assert bench(tmp_path, "--simulate-only") == 0
    assert calls == []
