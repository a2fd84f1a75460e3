"""NodeLabelPreference: found through its entry point, scored by rank, and it places pods
as the custom-score sample configures it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from scheduler_operator.parsing import parse
from scheduler_operator.render import render

from scheduler_plugins.nodelabelpreference import NodeLabelPreference, NodeLabelPreferenceArgs
from scheduler_runtime.config import load_configuration
from scheduler_runtime.framework.podinfo import pod_info
from scheduler_runtime.framework.registry import registry
from scheduler_runtime.framework.snapshot import Snapshot
from scheduler_runtime.plugin_api import CycleState, Handle, NodeInfo
from scheduler_runtime.simulate import simulate

SAMPLE = Path(__file__).resolve().parents[3] / "manifests" / "samples" / "custom-score.yaml"


def node(name: str, tier: str | None = None) -> dict[str, Any]:
    labels = {"kubernetes.io/hostname": name, **({"example.com/tier": tier} if tier else {})}
    capacity = {"cpu": "4", "memory": "8Gi", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "status": {"allocatable": capacity, "capacity": capacity},
    }


def pod(name: str, scheduler: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "uid": name},
        "spec": {
            "schedulerName": scheduler,
            "containers": [
                {"name": "c", "image": "pause", "resources": {"requests": {"cpu": "100m"}}}
            ],
        },
    }


def test_the_plugin_is_registered_through_its_entry_point() -> None:
    entry = registry()["NodeLabelPreference"]
    assert entry.target == "scheduler_plugins.nodelabelpreference:NodeLabelPreference"
    assert entry.extension_points == frozenset({"score"})
    assert entry.args_type is NodeLabelPreferenceArgs


@pytest.mark.parametrize(
    ("preferred", "tier", "expected"),
    [
        (["gold", "silver"], "gold", 100),
        (["gold", "silver"], "silver", 50),
        (["gold", "silver"], "bronze", 0),
        (["gold", "silver"], None, 0),
        (["gold", "silver", "gold"], "gold", 100),
        ([], "gold", 0),
    ],
)
def test_scores_follow_the_rank_of_the_label_value(
    preferred: list[str], tier: str | None, expected: int
) -> None:
    plugin = NodeLabelPreference(
        NodeLabelPreferenceArgs(label="example.com/tier", preferred=preferred),
        Handle(snapshot=Snapshot()),
    )
    score, status = plugin.score(CycleState(), pod_info(pod("p", "s")), NodeInfo(node("n", tier)))
    assert status.is_success
    assert score == expected


def test_the_custom_score_sample_places_pods_on_the_preferred_tier() -> None:
    profile = parse(yaml.safe_load(SAMPLE.read_text()))
    config = load_configuration(render(profile).config)
    objects = [
        node("plain"),
        node("bronze-1", "bronze"),
        node("silver-1", "silver"),
        node("gold-1", "gold"),
    ]
    placements = simulate(config, [*objects, pod("web", profile.scheduler_name)], seed=1)
    assert [(p.name, p.node) for p in placements] == [("web", "gold-1")]
