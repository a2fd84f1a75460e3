"""The real kube-scheduler and the runtime's framework on profiles whose plugins lack the
state an earlier extension point writes (tests/missing_state.py): the same pods fail with
the same messages, the others are placed by both."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import kubernetes
import yaml
from cluster import Cluster, kwok_node, wait_for
from missing_state import CASES, disabled
from missing_state import cases as cases_of
from replay_parity import outcome, read_json
from runtime_support import CLUSTER_MINOR

from benchmarks.processes import stop_process
from scheduler_runtime.config import FeatureGates, load_configuration
from scheduler_runtime.simulate import simulate

# A pod that fits no node, where DynamicResources' PostFilter has no state to read.
POST_FILTER = {
    "preFilter": disabled("DynamicResources"),
    "filter": disabled("DynamicResources"),
    "score": disabled("DynamicResources"),
    "reserve": disabled("DynamicResources"),
    "preBind": disabled("DynamicResources"),
}


def test_missing_state_fails_pods_as_upstream_does(
    cluster: Cluster,
    namespace: str,
    schedulable_nodes: Callable[..., list[str]],
    tmp_path: Path,
) -> None:
    names = schedulable_nodes(
        *(kwok_node(f"{namespace}-n{i}", cpu="8", memory="16Gi") for i in range(2))
    )
    cases = {**{name: plugins for name, (plugins, _) in CASES.items()}, "post-filter": POST_FILTER}
    profiles = [
        {"schedulerName": f"{namespace}-{case}", "plugins": plugins}
        for case, plugins in cases.items()
    ]
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "leaderElection": {"leaderElect": False},
        "profiles": profiles,
    }
    path = tmp_path / "upstream.yaml"
    path.write_text(
        yaml.safe_dump({**config, "clientConnection": {"kubeconfig": str(cluster.kubeconfig)}})
    )
    log = (tmp_path / "upstream.log").open("wb")
    upstream = subprocess.Popen(
        [str(cluster.bin_dir / "kube-scheduler"), "--config", str(path), "--secure-port", "0"],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    core = kubernetes.client.CoreV1Api(cluster.api)
    pods: list[dict[str, Any]] = []
    try:
        # Only this test's nodes may fit: every pod asks for its hostname label's value.
        for case in cases:
            cpu = "100" if case == "post-filter" else "100m"
            pod = {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": case, "namespace": namespace},
                "spec": {
                    "schedulerName": f"{namespace}-{case}",
                    "affinity": {
                        "nodeAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": {
                                "nodeSelectorTerms": [
                                    {
                                        "matchExpressions": [
                                            {
                                                "key": "kubernetes.io/hostname",
                                                "operator": "In",
                                                "values": names,
                                            }
                                        ]
                                    }
                                ]
                            }
                        }
                    },
                    "containers": [
                        {"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}
                    ],
                },
            }
            core.create_namespaced_pod(namespace, pod)
            pods.append(pod)
        theirs = {
            pod["metadata"]["name"]: wait_for(
                f"kube-scheduler to decide on {pod['metadata']['name']}",
                lambda p=pod: outcome(core, namespace, p["metadata"]["name"]),
            )
            for pod in pods
        }
    finally:
        stop_process(upstream)
        log.close()
    # The other nodes too (the messages count them); list items leave out their kind.
    nodes = [{**node, "kind": "Node"} for node in read_json(core.list_node)["items"]]
    cluster_gates = FeatureGates(version=CLUSTER_MINOR)  # the minor the runtime emulates there
    loaded = load_configuration(config, strict=False, feature_gates=cluster_gates)
    ours = simulate(loaded, [*nodes, *pods], seed=1)
    mine = {p.name: (p.node is not None, p.message) for p in ours}
    expected = {name: (node is not None, message) for name, (node, message) in theirs.items()}
    assert mine == expected
    # The table the unit tests hold the runtime to is what the binary said.
    for case, (_, message) in cases_of(CLUSTER_MINOR).items():
        assert theirs[case][1] == message, case
    assert str(theirs["post-filter"][1]).endswith("2 Insufficient cpu. not found")
