"""`scheduler-runtime simulate` on a state file reproduces what the live runtime then does on
that state: pods are created while no runtime runs, the state is taken with
`kubectl get nodes,pods -A -o yaml` (what users would type), simulated, and only then is the
runtime started on the same configuration."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import kubernetes
import pytest
import yaml
from cluster import Cluster, kwok_node, wait_for
from runtime_support import (
    CLUSTER_MINOR,
    RuntimeProcess,
    make_pod,
    scheduler_config,
    unique_scheduler_name,
)

from scheduler_runtime.cli import main

SEEDS = ("1", "2", "3")


def nodes(prefix: str) -> list[dict[str, Any]]:
    """Nodes of distinct sizes, so that no two score alike for the pods below."""
    shapes = [("3", "5Gi"), ("5", "7Gi"), ("7", "13Gi"), ("11", "17Gi"), ("13", "23Gi")]
    made = []
    for index, (cpu, memory) in enumerate(shapes):
        taints = [{"key": "team", "value": "ml", "effect": "NoSchedule"}] if index == 4 else []
        made.append(
            kwok_node(
                f"{prefix}-{index}",
                cpu=cpu,
                memory=memory,
                labels={"disk": "ssd" if index % 2 else "hdd"},
                taints=taints,
            )
        )
    return made


def workload(scheduler: str) -> list[dict[str, Any]]:
    requests = [
        ("1", "1Gi"),
        ("2", "3Gi"),
        ("500m", "512Mi"),
        ("3", "1Gi"),
        ("1500m", "6Gi"),
        ("4", "2Gi"),
        ("250m", "256Mi"),
        ("2", "2Gi"),
        ("40", "1Gi"),  # fits nowhere
        ("1", "4Gi"),
    ]
    pods = []
    for index, (cpu, memory) in enumerate(requests):
        spec: dict[str, Any] = {}
        if index % 4 == 1:
            spec["nodeSelector"] = {"disk": "ssd"}
        if index == 5:
            spec["tolerations"] = [{"key": "team", "operator": "Exists"}]
        pods.append(make_pod(f"p{index:02}", scheduler, cpu=cpu, memory=memory, **spec))
    return pods


def simulated(
    capsys: pytest.CaptureFixture[str], config: Path, state: Path, seed: str
) -> list[dict[str, Any]]:
    capsys.readouterr()
    flags = ["--state", str(state), "--seed", seed, "-o", "json"]
    # The minor the live runtime emulates there (the API server's).
    code = main(
        ["simulate", "--config", str(config), *flags, f"--emulated-version={CLUSTER_MINOR}"]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    placements: list[dict[str, Any]] = json.loads(out)["placements"]
    return placements


def decided(core: kubernetes.client.CoreV1Api, namespace: str, count: int) -> Any:
    """Each pod's node, or the message of its PodScheduled=False condition, once all have one."""
    pods = json.loads(core.list_namespaced_pod(namespace, _preload_content=False).data)["items"]
    outcome: dict[str, Any] = {}
    for pod in pods:
        conditions = pod.get("status", {}).get("conditions") or []
        failed = [c for c in conditions if c["type"] == "PodScheduled" and c["status"] == "False"]
        if pod["spec"].get("nodeName"):
            outcome[pod["metadata"]["name"]] = (pod["spec"]["nodeName"], None)
        elif failed:
            outcome[pod["metadata"]["name"]] = (None, failed[0]["message"])
    return outcome if len(outcome) == count else None


def test_simulate_predicts_the_live_runtime(
    cluster: Cluster,
    namespace: str,
    schedulable_nodes: Callable[..., list[str]],
    start_runtime: Callable[..., RuntimeProcess],
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    schedulable_nodes(*nodes(namespace))
    scheduler = unique_scheduler_name()
    pods = workload(scheduler)
    core = kubernetes.client.CoreV1Api(cluster.api)
    for pod in pods:
        core.create_namespaced_pod(namespace, pod)

    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(scheduler_config(scheduler)))
    state = tmp_path / "state.yaml"
    state.write_text(cluster.kubectl("get", "nodes,pods", "-A", "-o", "yaml").stdout)
    runs = [simulated(capsys, config, state, seed) for seed in SEEDS]
    assert runs[0] == runs[1] == runs[2], "the workload must not depend on tie-breaks"
    prediction = {p["name"]: (p["node"], p["message"]) for p in runs[0]}
    assert [p["name"] for p in runs[0]] == [p["metadata"]["name"] for p in pods]
    assert prediction["p08"][0] is None

    start_runtime(config=scheduler_config(scheduler))
    live = wait_for(
        "the runtime to decide on every pod", lambda: decided(core, namespace, len(pods))
    )
    assert live == prediction
