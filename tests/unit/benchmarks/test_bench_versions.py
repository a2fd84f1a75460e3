"""The Kubernetes release the local clusters run: the pin, or KUBE_VERSION's, and the shared
cluster's name that keeps one release's cluster from being remade for another."""

from __future__ import annotations

import pytest

from benchmarks.tools import (
    kubernetes_minor,
    kubernetes_version,
    pinned_versions,
    shared_cluster_name,
)

PINNED = pinned_versions()["KUBERNETES_VERSION"]
PINNED_CLUSTER = "test-" + PINNED.removeprefix("v").replace(".", "-")


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KUBE_VERSION", raising=False)
    monkeypatch.delenv("TEST_CLUSTER_NAME", raising=False)


def test_the_pin_is_the_default() -> None:
    assert kubernetes_version() == PINNED
    assert kubernetes_minor() == ".".join(PINNED.removeprefix("v").split(".")[:2])
    assert shared_cluster_name() == PINNED_CLUSTER


def test_kube_version_runs_another_release_on_its_own_cluster(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KUBE_VERSION", "v1.38.0-beta.0")
    assert kubernetes_version() == "v1.38.0-beta.0"
    assert kubernetes_minor() == "1.38"
    assert shared_cluster_name() == "test-1-38-0-beta-0"


def test_the_pinned_release_named_explicitly_is_the_same_cluster(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KUBE_VERSION", PINNED)
    assert shared_cluster_name() == PINNED_CLUSTER


def test_an_explicit_cluster_name_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUBE_VERSION", "v1.35.4")
    monkeypatch.setenv("TEST_CLUSTER_NAME", "mine")
    assert shared_cluster_name() == "mine"
