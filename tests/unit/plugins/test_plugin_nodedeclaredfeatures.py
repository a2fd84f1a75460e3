"""NodeDeclaredFeatures against upstream's plugin and component-helpers' feature inference
(v1.36.3): what a pod needs, which nodes declare it, the message, and the gate."""

from __future__ import annotations

from typing import Any

import pytest
from plugin_support import make_node, make_pod, run_filter, snapshot_of

from scheduler_runtime.config import ConfigError, load_configuration
from scheduler_runtime.config.features import parse_feature_gates
from scheduler_runtime.framework.features import Features
from scheduler_runtime.framework.interface import Code, CycleState, Handle
from scheduler_runtime.framework.snapshot import Snapshot
from scheduler_runtime.plugins.nodedeclaredfeatures import REASON, NodeDeclaredFeatures
from scheduler_runtime.plugins.nodedeclaredfeatures.features import (
    declared_features,
    required_features,
)

FILTER_ONLY = {
    "plugins": {
        "preFilter": {"disabled": [{"name": "NodeDeclaredFeatures"}]},
        "filter": {"enabled": [{"name": "NodeDeclaredFeatures"}]},
    }
}
RESTART_ALL = "RestartAllContainersOnContainerExits"
HOST_NETWORK_USERNS = "UserNamespacesHostNetworkSupport"
HEADER = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
# The gate off, with those that depend on it (kube-scheduler refuses it alone).
GATE_OFF = (
    "NodeDeclaredFeatures=false,ExtendWebSocketsToKubelet=false,"
    "InPlacePodLevelResourcesVerticalScaling=false,InPlacePodVerticalScalingInitContainers=false,"
    "RestartAllContainersOnContainerExits=false"
)


def restart_all_rule() -> dict[str, Any]:
    return {"action": "RestartAllContainers", "exitCodes": {"operator": "In", "values": [42]}}


def with_restart_rules(rules: list[dict[str, Any]], *, init: bool = False) -> dict[str, Any]:
    container = {"name": "c", "image": "busybox", "restartPolicy": "Never"}
    container["restartPolicyRules"] = rules  # type: ignore[assignment]
    return {"initContainers" if init else "containers": [container]}


def declaring(name: str, *features: str) -> dict[str, Any]:
    node = make_node(name)
    if features:
        node["status"]["declaredFeatures"] = list(features)
    return node


def plugin(snapshot: Snapshot, *, enabled: bool = True) -> NodeDeclaredFeatures:
    features = Features(node_declared_features=enabled)
    return NodeDeclaredFeatures(None, Handle(snapshot=snapshot, features=features))


@pytest.mark.parametrize(
    ("spec", "needed"),
    [
        ({}, frozenset()),
        (with_restart_rules([restart_all_rule()]), {RESTART_ALL}),
        (with_restart_rules([restart_all_rule()], init=True), {RESTART_ALL}),
        (with_restart_rules([{"action": "Restart", "exitCodes": {"operator": "In"}}]), set()),
        ({"hostNetwork": True, "hostUsers": False}, {HOST_NETWORK_USERNS}),
        ({"hostNetwork": True}, set()),  # hostUsers unset is the host's user namespace
        ({"hostNetwork": True, "hostUsers": True}, set()),
        ({"hostNetwork": False, "hostUsers": False}, set()),
        (
            {**with_restart_rules([restart_all_rule()]), "hostNetwork": True, "hostUsers": False},
            {RESTART_ALL, HOST_NETWORK_USERNS},
        ),
    ],
)
def test_what_a_pod_needs(spec: dict[str, Any], needed: set[str]) -> None:
    assert required_features(spec) == needed


def test_a_node_declares_only_features_the_library_knows() -> None:
    node = declaring("n", RESTART_ALL, "SomethingNewer", "InPlacePodLevelResourcesVerticalScaling")
    assert declared_features(node) == {RESTART_ALL, "InPlacePodLevelResourcesVerticalScaling"}
    assert declared_features(make_node("bare")) == frozenset()


def test_nodes_that_do_not_declare_a_needed_feature_are_unresolvable() -> None:
    snapshot = snapshot_of(
        declaring("all", RESTART_ALL, HOST_NETWORK_USERNS),
        declaring("restart-only", RESTART_ALL),
        declaring("none"),
    )
    pod = make_pod(**with_restart_rules([restart_all_rule()]), hostNetwork=True, hostUsers=False)
    statuses = run_filter(plugin(snapshot), snapshot, pod)
    assert statuses["all"].is_success
    for name in ("restart-only", "none"):
        assert statuses[name].code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert statuses[name].reasons == ("node(s) didn't match Pod's required features",)
    assert REASON == "node(s) didn't match Pod's required features"


def test_a_pod_that_needs_nothing_skips_the_plugin() -> None:
    snapshot = snapshot_of(declaring("none"))
    _, status = plugin(snapshot).pre_filter(CycleState(), make_pod(), snapshot)
    assert status.code == Code.SKIP


def test_with_the_gate_off_the_plugin_does_nothing() -> None:
    snapshot = snapshot_of(declaring("none"))
    pod = make_pod(**with_restart_rules([restart_all_rule()]))
    off = plugin(snapshot, enabled=False)
    _, status = off.pre_filter(CycleState(), pod, snapshot)
    assert status.code == Code.SKIP
    # Upstream's Filter answers nil when disabled, state or none.
    assert off.filter(CycleState(), pod, snapshot.node_infos()[0]).is_success
    assert run_filter(off, snapshot, pod)["none"].is_success


def test_filter_without_its_prefilter_state_fails_as_upstream_words_it() -> None:
    profile = load_configuration(
        {**HEADER, "profiles": [{"plugins": {"preFilter": {"disabled": [{"name": "*"}]}}}]},
        strict=False,
    ).profiles[0]
    assert "NodeDeclaredFeatures" in profile.enabled("filter")
    need = NodeDeclaredFeatures.state_needs["filter"]
    assert need.written_at == "preFilter"
    assert (
        need.missing == 'error reading "PreFilterNodeDeclaredFeatures" from cycle-state: not found'
    )
    # Upstream's Filter returns before reading its state while the gate is off.
    assert need.needed(Features())
    assert not need.needed(Features(node_declared_features=False))
    with pytest.raises(ConfigError, match="runs at filter but not at preFilter"):
        load_configuration({**HEADER, "profiles": [FILTER_ONLY]})
    gate_off = parse_feature_gates(GATE_OFF, "1.36")
    assert load_configuration({**HEADER, "profiles": [FILTER_ONLY]}, feature_gates=gate_off)


def test_the_configured_gate_reaches_the_plugin() -> None:
    off = load_configuration(HEADER, feature_gates=parse_feature_gates(GATE_OFF, "1.36"))
    assert not off.features.node_declared_features
    on = load_configuration(HEADER)
    assert on.features.node_declared_features
