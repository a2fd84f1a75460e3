"""Objects and a backend for unit tests of what happens between the watch and the cycle."""

from __future__ import annotations

from typing import Any

from scheduler_runtime.backend import NODES, Backend
from scheduler_runtime.config import load_configuration
from scheduler_runtime.framework.interface import Handle
from scheduler_runtime.live.kube import Kube
from scheduler_runtime.live.metrics import SchedulerMetrics
from scheduler_runtime.live.outcomes import Outcomes
from scheduler_runtime.live.scheduler import Scheduler

OURS = "ours"


def node(name: str, **labels: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **labels}},
        "status": {
            "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
            "conditions": [
                {"type": "Ready", "status": "True", "lastHeartbeatTime": "2026-01-01T00:00:00Z"}
            ],
        },
    }


def pod(
    name: str, node_name: str = "", scheduler: str = OURS, phase: str = "Pending", cpu: str = "1"
) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}"},
        "spec": {
            "schedulerName": scheduler,
            "nodeName": node_name,
            "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}],
        },
        "status": {"phase": phase},
    }


def backend_of(scheduler_name: str) -> Backend:
    """The backend of a scheduler with one default profile named `scheduler_name`."""
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "leaderElection": {"leaderElect": False},
        "profiles": [{"schedulerName": scheduler_name}],
    }
    made = Backend(load_configuration(config))
    made.build_frameworks(Handle(snapshot=made.snapshot, nominator=made.nominator))
    return made


def live_scheduler(kube: Kube, scheduler_name: str = OURS) -> Scheduler:
    """The live scheduler of one default profile named `scheduler_name`, writing through
    `kube`, with one node, n1."""
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": scheduler_name}],
    }
    made = Scheduler(
        load_configuration(config), kube, Outcomes(kube, kube, "test"), SchedulerMetrics()
    )
    made.backend.events.replace(NODES, [node("n1")])
    return made
