"""Plugins that read at one extension point what they write at an earlier one, in a profile
that does not run them there: the framework fails each pod as kube-scheduler v1.36.3 does
(the messages below are the real binary's, on two nodes; the integration tier asks it
again), and the configuration refuses such a profile unless told not to (`strict=False`).
Plugins that fall back (NodeAffinity, NodeResourcesFit's and BalancedAllocation's scores,
VolumeZone, NodeVolumeLimits) place the pod."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from missing_state import CASES, cases, disabled

from scheduler_runtime.cli import main
from scheduler_runtime.config import ConfigError, FeatureGates, load_configuration
from scheduler_runtime.simulate import simulate

NODES = [
    {
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"}},
    }
    for name in ("n1", "n2")
]


def configuration(plugins: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "s", "plugins": plugins}],
    }


def pod(cpu: str = "100m") -> dict[str, Any]:
    return {
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default"},
        "spec": {
            "schedulerName": "s",
            "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}],
        },
    }


MINORS = ("1.35", "1.36", "1.37")


@pytest.mark.parametrize("minor", MINORS)
@pytest.mark.parametrize("case", CASES)
def test_the_pod_fails_as_upstream_fails_it(case: str, minor: str) -> None:
    plugins, message = cases(minor)[case]
    gates = FeatureGates(version=minor)
    config = load_configuration(configuration(plugins), strict=False, feature_gates=gates)
    [placement] = simulate(config, [*NODES, pod()], seed=1)
    assert placement.message == message
    assert (placement.node is None) == (message is not None)


@pytest.mark.parametrize("minor", MINORS)
@pytest.mark.parametrize("case", CASES)
def test_the_configuration_refuses_a_profile_that_fails_every_pod(case: str, minor: str) -> None:
    plugins, message = cases(minor)[case]
    gates = FeatureGates(version=minor)
    if message is None:
        load_configuration(configuration(plugins), feature_gates=gates)
        return
    with pytest.raises(ConfigError) as caught:
        load_configuration(configuration(plugins), feature_gates=gates)
    error = caught.value
    assert error.path in ("profiles[0].plugins.preFilter", "profiles[0].plugins.preScore")
    assert f"every pod would fail with {message!r}, as in kube-scheduler" in error.reason


def test_a_pod_that_fits_nowhere_without_dynamic_resources_state() -> None:
    """Upstream: DynamicResources' PostFilter fails without its state, and its "not found"
    ends the message (and preemption does not run); the configuration refuses it too."""
    plugins = {
        "preFilter": disabled("DynamicResources"),
        "filter": disabled("DynamicResources"),
        "score": disabled("DynamicResources"),
        "reserve": disabled("DynamicResources"),
        "preBind": disabled("DynamicResources"),
    }
    config = load_configuration(configuration(plugins), strict=False)
    [placement] = simulate(config, [*NODES, pod(cpu="100")], seed=1)
    assert placement.message == "0/2 nodes are available: 2 Insufficient cpu. not found"
    with pytest.raises(ConfigError, match="a pod that fits no node would get 'not found'"):
        load_configuration(configuration(plugins))


@pytest.mark.parametrize(
    ("minor", "refused"),
    [
        ("1.36", "plugin 'DynamicResources' runs at score but not at preFilter"),
        # StorageCapacityScoring on: VolumeBinding's PreScore is the first to miss its state.
        ("1.37", "plugin 'VolumeBinding' runs at preScore but not at preFilter"),
    ],
)
def test_the_scheduler_refuses_to_start_with_such_a_profile(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], minor: str, refused: str
) -> None:
    config = tmp_path / "config.yaml"
    plugins = {"preFilter": disabled("*"), "filter": disabled("*")}
    config.write_text(yaml.safe_dump(configuration(plugins)))
    flags = ["--config", str(config), "--kubeconfig", "/nonexistent", f"--emulated-version={minor}"]
    assert main(["run", *flags]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(f"scheduler-runtime run: profiles[0].plugins.preFilter: {refused}")
