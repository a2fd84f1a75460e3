"""The samples in manifests/samples, applied with kubectl, become running schedulers."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from cluster import REPO, Cluster, kwok_node, wait_for
from operator_support import (
    condition,
    get_json,
    healthz,
    start_kube_scheduler,
    wait_condition,
)
from scheduler_operator.engines import validate
from scheduler_operator.errors import SpecError
from scheduler_operator.parsing import parse
from scheduler_operator.render import render

from benchmarks.processes import stop_process

SAMPLES = sorted((REPO / "manifests" / "samples").glob("*.yaml"))
IN_TREE_SAMPLES = ["extra-scheduler.yaml", "image-locality.yaml", "multi-profile.yaml"]


def sample(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((REPO / "manifests" / "samples" / name).read_text())
    return loaded


def children(cluster: Cluster, name: str, namespace: str = "schedulers") -> list[Any]:
    return [
        get_json(cluster, "serviceaccount", name, "-n", namespace),
        get_json(cluster, "role", f"{name}-leader-election", "-n", namespace),
        get_json(cluster, "rolebinding", f"{name}-leader-election", "-n", namespace),
        get_json(cluster, "clusterrolebinding", f"schedulerprofile:{name}:kube-scheduler"),
        get_json(cluster, "clusterrolebinding", f"schedulerprofile:{name}:volume-scheduler"),
        get_json(
            cluster,
            "rolebinding",
            f"schedulerprofile:{name}:authentication-reader",
            "-n",
            "kube-system",
        ),
        get_json(cluster, "configmap", f"{name}-config", "-n", namespace),
        get_json(cluster, "deployment", name, "-n", namespace),
    ]


def test_there_is_one_sample_per_seed_scenario() -> None:
    assert [path.name for path in SAMPLES] == [
        "custom-score.yaml",
        "extra-scheduler.yaml",
        "image-locality.yaml",
        "multi-profile.yaml",
    ]


@pytest.mark.parametrize("name", [path.name for path in SAMPLES])
def test_a_sample_runs_ready_and_leaves_nothing_behind(
    cluster: Cluster,
    make_nodes: Callable[..., list[str]],
    apply_profile: Callable[[dict[str, Any]], str],
    name: str,
) -> None:
    stem = name.removesuffix(".yaml")
    make_nodes(kwok_node(f"{stem}-a"), kwok_node(f"{stem}-b"))
    body = sample(name)
    cluster.kubectl("apply", "-f", str(REPO / "manifests" / "samples" / name))
    profile = body["metadata"]["name"]
    ready = wait_condition(cluster, profile, "Ready", "True", timeout=120)
    assert condition(ready, "ConfigValid")["status"] == "True"
    assert condition(ready, "Available")["status"] == "True"
    assert ready["status"]["readyReplicas"] == body["spec"].get("replicas", 1)
    assert all(child is not None for child in children(cluster, profile))

    assert cluster.kubectl("get", "schedprof", profile, "-o", "name").stdout.strip() == (
        f"schedulerprofile.scheduling.schedops.io/{profile}"
    )
    table = cluster.kubectl("get", "schedulerprofiles", profile, "-o", "wide").stdout
    header, row = table.splitlines()
    assert header.split() == [
        "NAME", "SCHEDULERS", "ENGINE", "VERSION", "EMULATED", "READY", "REPLICAS", "READY",
        "REASON", "AGE",
    ]  # fmt: skip
    assert row.split()[:8] == [
        profile,
        ready["status"]["schedulerNames"],
        body["spec"].get("engine", "PythonRuntime"),
        ready["status"]["version"],
        ready["status"]["emulatedVersion"],
        str(body["spec"].get("replicas", 1)),
        "True",
        "SchedulerReady",
    ]

    cluster.kubectl("delete", "-f", str(REPO / "manifests" / "samples" / name), "--wait=true")
    wait_for(
        f"every child of {profile} to be garbage-collected",
        lambda: all(child is None for child in children(cluster, profile)),
        timeout=60,
    )


@pytest.mark.parametrize("name", IN_TREE_SAMPLES)
def test_the_generated_configuration_is_accepted_by_upstream_kube_scheduler(
    cluster: Cluster, name: str, tmp_path: Path
) -> None:
    profile = parse({**sample(name), "metadata": {"name": f"upstream-{name[:-5]}"}})
    process, port, log = start_kube_scheduler(cluster, render(profile).config, tmp_path)
    try:
        wait_for(
            f"kube-scheduler with the {name} configuration to be healthy",
            lambda: process.poll() is None and healthz(port),
            timeout=60,
        )
    except AssertionError as error:
        raise AssertionError(f"{error}\n{log.read_text()[-3000:]}") from None
    finally:
        stop_process(process)


def test_upstream_kube_scheduler_refuses_the_custom_plugin_the_operator_refuses(
    cluster: Cluster, tmp_path: Path
) -> None:
    upstream = sample("custom-score.yaml")
    upstream["spec"]["engine"] = "KubeScheduler"
    profile = parse(upstream)
    with pytest.raises(SpecError, match=r"plugins\.score\.enabled\[0\]\.name: unknown plugin"):
        validate(profile)
    process, _, log = start_kube_scheduler(cluster, render(profile).config, tmp_path)
    try:
        assert process.wait(timeout=60) != 0
    finally:
        stop_process(process)
    assert "NodeLabelPreference" in log.read_text()


def test_a_plugin_the_engine_lacks_is_reported_and_nothing_is_applied(
    cluster: Cluster, apply_profile: Callable[[dict[str, Any]], str]
) -> None:
    body = sample("custom-score.yaml")
    body["metadata"] = {"name": "custom-score-upstream"}
    body["spec"]["engine"] = "KubeScheduler"
    name = apply_profile(body)
    refused = condition(wait_condition(cluster, name, "ConfigValid", "False"), "ConfigValid")
    assert refused["reason"] == "InvalidSpec"
    assert refused["message"] == (
        "spec.profiles[0].plugins.score.enabled[0].name: "
        "unknown plugin 'NodeLabelPreference' for engine KubeScheduler"
    )
    assert all(child is None for child in children(cluster, name))
