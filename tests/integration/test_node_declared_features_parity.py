"""NodeDeclaredFeatures side by side with the real kube-scheduler of the local control
plane: one kwok node declares RestartAllContainersOnContainerExits in status.declaredFeatures,
one declares nothing. Pods that need the feature (a restart rule that restarts all
containers) and pods that do not go to both schedulers: the same placements and the same
FailedScheduling messages. When the other node comes to declare the feature, both place the
pod that waited for it there. With the gate off (and the gates that depend on it), both
schedulers accept the plugin named in the profile and place such a pod anywhere."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from cluster import Cluster, kwok_node, wait_for
from operator_support import healthz, start_kube_scheduler
from runtime_support import (
    CLUSTER_MINOR,
    Pods,
    RuntimeProcess,
    make_pod,
    scheduler_config,
    unique_scheduler_name,
)

from benchmarks.processes import stop_process
from scheduler_runtime.config import ConfigError
from scheduler_runtime.config.features import known, parse_feature_gates

FEATURE = "RestartAllContainersOnContainerExits"
GATE_OFF = (
    "NodeDeclaredFeatures=false,ExtendWebSocketsToKubelet=false,"
    "InPlacePodLevelResourcesVerticalScaling=false,InPlacePodVerticalScalingInitContainers=false,"
    "RestartAllContainersOnContainerExits=false"
)


def declaring(name: str, *features: str) -> dict[str, Any]:
    node = kwok_node(name)
    node["status"]["declaredFeatures"] = list(features)
    return node


def pod(name: str, scheduler_name: str, *, needs: bool, on: str | None = None) -> dict[str, Any]:
    """A pod; one that `needs` the feature restarts all containers when one exits with 42."""
    manifest = make_pod(name, scheduler_name, cpu="100m")
    if needs:
        container = manifest["spec"]["containers"][0]
        container["restartPolicy"] = "Never"
        container["restartPolicyRules"] = [
            {"action": "RestartAllContainers", "exitCodes": {"operator": "In", "values": [42]}}
        ]
    if on is not None:
        manifest["spec"]["nodeSelector"] = {"kubernetes.io/hostname": on}
    return manifest


def declared(cluster: Cluster, node: str) -> list[str]:
    shown = cluster.kubectl("get", "node", node, "-o", "json").stdout
    features: list[str] = json.loads(shown)["status"].get("declaredFeatures") or []
    return features


def declare(cluster: Cluster, node: str, *features: str) -> None:
    patch = json.dumps({"status": {"declaredFeatures": list(features)}})
    cluster.kubectl("patch", "node", node, "--subresource=status", "--type=merge", "-p", patch)


@pytest.fixture
def two_nodes(
    cluster: Cluster, namespace: str, schedulable_nodes: Callable[..., list[str]]
) -> tuple[str, str]:
    """One node declaring the feature, one declaring nothing (kwok keeps what they declare)."""
    yes, no = f"ndf-yes-{namespace}", f"ndf-no-{namespace}"
    schedulable_nodes(declaring(yes, FEATURE), declaring(no))
    assert declared(cluster, yes) == [FEATURE]
    assert declared(cluster, no) == []
    return yes, no


@pytest.fixture
def start_upstream(cluster: Cluster, tmp_path: Path) -> Iterator[Callable[..., str]]:
    """Starts the real kube-scheduler under a scheduler name of its own (its --feature-gates
    as given), ready; stops it after the test, printing its log."""
    started: list[tuple[subprocess.Popen[bytes], Path]] = []

    def start(args: tuple[str, ...] = (), plugins: dict[str, Any] | None = None) -> str:
        name = unique_scheduler_name()
        workdir = tmp_path / name
        workdir.mkdir()
        config = scheduler_config(name, plugins=plugins)
        process, port, log = start_kube_scheduler(cluster, config, workdir, args=args)
        started.append((process, log))
        wait_for(f"kube-scheduler to be healthy ({log})", lambda: healthz(port), timeout=90)
        return name

    yield start
    for process, log in started:
        stop_process(process, timeout=30)
        print(f"----- kube-scheduler log -----\n{log.read_text(errors='replace')[-4000:]}")


def test_same_placements_and_messages_and_a_newly_declared_feature_helps_both(
    cluster: Cluster,
    pods: Pods,
    two_nodes: tuple[str, str],
    start_upstream: Callable[..., str],
    start_runtime: Callable[..., RuntimeProcess],
) -> None:
    yes, no = two_nodes
    upstream, runtime = start_upstream(), unique_scheduler_name()
    start_runtime(scheduler_config(runtime))
    for scheduler, tag in ((upstream, "up"), (runtime, "rt")):
        pods.create(
            pod(f"needs-{tag}", scheduler, needs=True),
            pod(f"plain-{tag}", scheduler, needs=False, on=no),
            pod(f"stuck-{tag}", scheduler, needs=True, on=no),
        )

    placed = pods.wait_placed("needs-up", "needs-rt", "plain-up", "plain-rt")
    assert placed == {"needs-up": yes, "needs-rt": yes, "plain-up": no, "plain-rt": no}
    upstream_message = pods.wait_event("stuck-up", "FailedScheduling")["note"]
    assert "didn't match Pod's required features" in upstream_message
    assert pods.wait_event("stuck-rt", "FailedScheduling")["note"] == upstream_message
    condition = pods.condition("stuck-rt") or {}
    assert (condition.get("status"), condition.get("reason")) == ("False", "Unschedulable")
    assert condition.get("message") == upstream_message

    declare(cluster, no, FEATURE)
    assert pods.wait_placed("stuck-up", "stuck-rt") == {"stuck-up": no, "stuck-rt": no}


def test_with_the_gate_off_both_accept_the_plugin_and_ignore_what_nodes_declare(
    cluster: Cluster,
    pods: Pods,
    two_nodes: tuple[str, str],
    start_upstream: Callable[..., str],
    start_runtime: Callable[..., RuntimeProcess],
) -> None:
    """Where the gate can be turned off (1.35, 1.36); from 1.37 it is GA and locked on, and
    both refuse to turn it off (the words compared in test_feature_gates_upstream.py)."""
    if known(CLUSTER_MINOR)["NodeDeclaredFeatures"].locked:
        refused = subprocess.run(
            [str(cluster.bin_dir / "kube-scheduler"), f"--feature-gates={GATE_OFF}", "--version"],
            capture_output=True,
            check=False,
            timeout=60,
        )
        assert refused.returncode != 0
        with pytest.raises(ConfigError, match="NodeDeclaredFeatures"):
            parse_feature_gates(GATE_OFF, CLUSTER_MINOR)
        return
    _, no = two_nodes
    named = {"multiPoint": {"enabled": [{"name": "NodeDeclaredFeatures"}]}}
    gates = (f"--feature-gates={GATE_OFF}",)
    upstream, runtime = start_upstream(gates, named), unique_scheduler_name()
    started = start_runtime(scheduler_config(runtime, plugins=named), args=gates)
    assert "does nothing while feature gate NodeDeclaredFeatures is off" in started.log()
    pods.create(
        pod("off-up", upstream, needs=True, on=no), pod("off-rt", runtime, needs=True, on=no)
    )
    assert pods.wait_placed("off-up", "off-rt") == {"off-up": no, "off-rt": no}
