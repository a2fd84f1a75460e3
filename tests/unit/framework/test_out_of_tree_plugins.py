"""Out-of-tree plugins from the `scheduler_runtime.plugins` entry-point group: found by name,
typed args validated, per-node filter and score adapted by the framework."""

from __future__ import annotations

import random
from collections.abc import Iterator
from importlib.metadata import EntryPoint
from typing import Any, ClassVar

import pytest
from pydantic import BaseModel, ConfigDict

from scheduler_runtime.config import ConfigError, load_configuration
from scheduler_runtime.framework import registry as registry_module
from scheduler_runtime.framework.algorithm import SchedulingAlgorithm
from scheduler_runtime.framework.interface import (
    SUCCESS,
    CycleState,
    Handle,
    Status,
    default_normalize_score,
)
from scheduler_runtime.framework.nodeinfo import NodeInfo
from scheduler_runtime.framework.podinfo import PodInfo, pod_info
from scheduler_runtime.framework.runtime import Framework
from scheduler_runtime.framework.snapshot import Int64s, Snapshot
from scheduler_runtime.framework.types import FitError


class RackArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    avoid: str
    preferred_suffix: str = "0"


class RackAware:
    """Refuses one rack; prefers nodes whose name ends with a digit."""

    name: ClassVar[str] = "RackAware"
    args_type: ClassVar[type[BaseModel]] = RackArgs

    def __init__(self, args: BaseModel | None, handle: Handle) -> None:
        assert isinstance(args, RackArgs)
        self.args = args

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        if node.labels.get("rack") == self.args.avoid:
            return Status.unschedulable(f"node(s) are in rack {self.args.avoid}")
        return SUCCESS

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status]:
        return (10 if node.name.endswith(self.args.preferred_suffix) else 1), SUCCESS

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: Int64s) -> Status:
        default_normalize_score(scores, reverse=False)
        return SUCCESS


@pytest.fixture
def installed(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    point = EntryPoint("RackAware", f"{__name__}:RackAware", registry_module.ENTRY_POINT_GROUP)

    def entry_points(group: str) -> list[EntryPoint]:
        return [point] if group == registry_module.ENTRY_POINT_GROUP else []

    monkeypatch.setattr(registry_module, "entry_points", entry_points)
    registry_module.registry.cache_clear()
    yield
    registry_module.registry.cache_clear()


def config(args: dict[str, Any]) -> Any:
    return load_configuration(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [
                {
                    "schedulerName": "racks",
                    "plugins": {
                        "multiPoint": {
                            "disabled": [{"name": "*"}],
                            "enabled": [
                                {"name": "PrioritySort"},
                                {"name": "RackAware", "weight": 5},
                                {"name": "DefaultBinder"},
                            ],
                        }
                    },
                    "pluginConfig": [{"name": "RackAware", "args": args}],
                }
            ],
        }
    )


def node(name: str, rack: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": {"rack": rack}},
        "status": {"allocatable": {"cpu": "1", "memory": "1Gi", "pods": "10"}},
    }


@pytest.mark.usefixtures("installed")
def test_out_of_tree_plugin_filters_and_scores() -> None:
    resolved = config({"avoid": "r1"}).profiles[0]
    assert resolved.enabled("filter") == ("RackAware",)
    assert resolved.score_weights == {"RackAware": 5}
    snapshot = Snapshot()
    for name, rack in [("a1", "r1"), ("b0", "r2"), ("b7", "r2")]:
        snapshot.add_node(node(name, rack))
    fwk = Framework(resolved, Handle(snapshot))
    algorithm = SchedulingAlgorithm(snapshot, 0, random.Random(1))
    pod = pod_info({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}})
    assert algorithm.schedule_pod(fwk, CycleState(), pod).suggested_host == "b0"
    placement = algorithm.last_placement
    assert placement is not None
    assert list(placement.totals) == [500, 50]
    snapshot.remove_node("b0")
    snapshot.remove_node("b7")
    with pytest.raises(FitError, match=r"^0/1 nodes are available: 1 node\(s\) are in rack r1\.$"):
        algorithm.schedule_pod(fwk, CycleState(), pod)


@pytest.mark.usefixtures("installed")
def test_out_of_tree_args_are_validated() -> None:
    with pytest.raises(ConfigError) as caught:
        config({"avoid": "r1", "colour": "red"})
    assert caught.value.path == "profiles[0].pluginConfig[0].args.colour"
    with pytest.raises(ConfigError) as caught:
        config({})
    assert caught.value.path == "profiles[0].pluginConfig[0].args.avoid"
