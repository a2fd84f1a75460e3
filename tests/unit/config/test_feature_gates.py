"""Feature gates as kube-scheduler v1.36.3 takes them (component-base's featuregate and the
component registry in front of it), the default plugins they choose, and the runtime's own
limits. The integration tier holds the words to the real binary's
(tests/integration/test_feature_gates_upstream.py). Every helper here works at 1.36 (the
other minors: test_feature_gates_per_version.py)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scheduler_runtime import config
from scheduler_runtime.config import ConfigError, SchedulerConfiguration
from scheduler_runtime.config import features as gates_module
from scheduler_runtime.config.defaults import BASE_MULTI_POINT, Defaults
from scheduler_runtime.config.defaults import default_multi_point as any_default_multi_point
from scheduler_runtime.config.features import (
    BUILT_AS,
    RUNTIME_FOLLOWS,
    SCHEDULING,
    FeatureGates,
    known,
)
from scheduler_runtime.framework.features import Features
from scheduler_runtime.framework.registry import registry

MINOR = "1.36"
KNOWN = known(MINOR)
DEFAULTS = FeatureGates(version=MINOR)


def parse_feature_gates(values: str | list[str]) -> FeatureGates:
    return gates_module.parse_feature_gates(values, MINOR)


def feature_gates(settings: dict[str, bool]) -> FeatureGates:
    return gates_module.feature_gates(settings, version=MINOR)


def default_multi_point(features: Features) -> Defaults:
    return any_default_multi_point(features, MINOR)


def load_configuration(doc: dict[str, Any], **options: Any) -> SchedulerConfiguration:
    options.setdefault("feature_gates", DEFAULTS)
    return config.load_configuration(doc, **options)


DEFAULT_MULTI_POINT = default_multi_point(DEFAULTS.features)

HEADER = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
# NodeDeclaredFeatures off, with the gates that depend on it (kube-scheduler refuses it alone).
NODE_DECLARED_FEATURES_OFF = (
    "NodeDeclaredFeatures=false,ExtendWebSocketsToKubelet=false,"
    "InPlacePodLevelResourcesVerticalScaling=false,InPlacePodVerticalScalingInitContainers=false,"
    "RestartAllContainersOnContainerExits=false"
)


def refusal(*flags: str) -> str:
    with pytest.raises(ConfigError) as caught:
        parse_feature_gates(list(flags))
    assert caught.value.path == "--feature-gates"
    return caught.value.reason


@pytest.mark.parametrize(
    ("gate", "default", "stage", "locked"),
    [
        ("NodeDeclaredFeatures", True, "BETA", False),
        ("GangScheduling", False, "ALPHA", False),
        ("GenericWorkload", False, "ALPHA", False),
        ("TopologyAwareWorkloadScheduling", False, "ALPHA", False),
        ("WorkloadWithJob", False, "ALPHA", False),
        ("NominatedNodeNameForExpectation", True, "BETA", False),
        ("DynamicResourceAllocation", True, "GA", True),
        ("DRAPrioritizedList", True, "GA", False),
        ("DRAAdminAccess", True, "GA", True),
        ("DRADeviceTaints", True, "BETA", False),
        ("DRAPartitionableDevices", True, "BETA", False),
        ("DRAConsumableCapacity", True, "BETA", False),
        ("DRAExtendedResource", True, "BETA", False),
        ("DRADeviceBindingConditions", True, "BETA", False),
        ("DRAResourceClaimDeviceStatus", True, "BETA", False),
        ("SchedulerQueueingHints", True, "GA", True),
        ("AllAlpha", False, "ALPHA", False),
        ("APIResponseCompression", True, "BETA", False),  # not scheduling, but kube-scheduler's
    ],
)
def test_gates_have_their_1_36_specs(gate: str, default: bool, stage: str, locked: bool) -> None:
    spec = KNOWN[gate]
    assert (spec.default, spec.stage, spec.locked) == (default, stage, locked)


def test_every_gate_the_scheduler_reads_is_known_with_its_default() -> None:
    """The framework's defaults are the pinned minor's (BUILT_AS); at 1.36 the gates 1.37
    added are off."""
    assert Features() == FeatureGates(version=BUILT_AS).features
    added_later = SCHEDULING - set(KNOWN)
    at_136 = DEFAULTS.features
    for gate, attribute in Features.gate_names().items():
        assert gate in KNOWN or gate in known("1.37"), gate
        assert getattr(at_136, attribute) == (gate in KNOWN and KNOWN[gate].default), gate
    assert set(KNOWN) > SCHEDULING - added_later


def test_the_flag_sets_gates_and_the_last_setting_wins() -> None:
    gates = parse_feature_gates([NODE_DECLARED_FEATURES_OFF + ", APIResponseCompression=false"])
    assert not gates.enabled("NodeDeclaredFeatures")
    assert not gates.features.node_declared_features
    assert gates.enabled("DRADeviceTaints")  # untouched: its default
    again = parse_feature_gates(["DRADeviceTaints=false", "DRADeviceTaints=true"])
    assert again.enabled("DRADeviceTaints")
    assert parse_feature_gates("kube:DRADeviceTaints=False").explicit == {"DRADeviceTaints": False}
    assert parse_feature_gates([]) == DEFAULTS
    assert parse_feature_gates(["", ","]) == DEFAULTS


@pytest.mark.parametrize(
    ("flags", "reason"),
    [
        (["NoSuchGate=true"], "unrecognized feature gate: NoSuchGate"),
        (["NodeDeclaredFeatures"], "missing bool value for NodeDeclaredFeatures"),
        (
            ["NodeDeclaredFeatures=maybe"],
            'invalid value of NodeDeclaredFeatures=maybe, err: strconv.ParseBool: parsing "maybe"'
            ": invalid syntax",
        ),
        (
            ["NodeDeclaredFeatures=yes"],
            'invalid value of NodeDeclaredFeatures=yes, err: strconv.ParseBool: parsing "yes": '
            "invalid syntax",
        ),
        (
            ["DynamicResourceAllocation=false"],
            "cannot set feature gate DynamicResourceAllocation to false, feature is locked to true",
        ),
        (
            ["GangScheduling=true"],
            "GangScheduling is enabled, but depends on features that are disabled: "
            "[GenericWorkload]",
        ),
        (
            ["DRAWorkloadResourceClaims=true"],
            "DRAWorkloadResourceClaims is enabled, but depends on features that are disabled: "
            "[GenericWorkload]",
        ),
        (
            ["kube:NodeDeclaredFeatures=true", "NodeDeclaredFeatures=true"],
            "set kube feature gates with default empty prefix or kube: prefix consistently, "
            "do not mix use",
        ),
        (["wardle:FeatureA=true"], "component not registered: wardle"),
        (
            ["NodeDeclaredFeatures=false"],
            "[ExtendWebSocketsToKubelet is enabled, but depends on features that are disabled: "
            "[NodeDeclaredFeatures], InPlacePodLevelResourcesVerticalScaling is enabled, but "
            "depends on features that are disabled: [NodeDeclaredFeatures], "
            "InPlacePodVerticalScalingInitContainers is enabled, but depends on features that "
            "are disabled: [NodeDeclaredFeatures], RestartAllContainersOnContainerExits is "
            "enabled, but depends on features that are disabled: [NodeDeclaredFeatures]]",
        ),
    ],
)
def test_refusals_are_kube_schedulers(flags: list[str], reason: str) -> None:
    assert refusal(*flags) == reason


def test_several_refusals_are_reported_together_in_brackets() -> None:
    assert refusal("DynamicResourceAllocation=false,SchedulerQueueingHints=false") == (
        "[cannot set feature gate DynamicResourceAllocation to false, feature is locked to true, "
        "cannot set feature gate SchedulerQueueingHints to false, feature is locked to true]"
    )


def test_a_locked_gate_may_be_set_to_its_value() -> None:
    assert parse_feature_gates("DynamicResourceAllocation=true").enabled(
        "DynamicResourceAllocation"
    )


def test_all_alpha_and_all_beta_set_the_gates_of_their_stage_left_unset() -> None:
    gates = feature_gates(
        {"AllAlpha": True, "GangScheduling": False, "WorkloadAwarePreemption": False}
    )
    assert gates.enabled("GenericWorkload")
    assert gates.enabled("TopologyAwareWorkloadScheduling")
    assert not gates.enabled("GangScheduling")  # set explicitly
    assert gates.enabled("NodeDeclaredFeatures")  # beta: its default
    beta_off = feature_gates({"AllBeta": False})
    assert not beta_off.enabled("NodeDeclaredFeatures")
    assert not beta_off.enabled("InPlacePodLevelResourcesVerticalScaling")
    assert beta_off.enabled("DynamicResourceAllocation")  # GA: neither touches it
    with pytest.raises(ConfigError) as caught:
        feature_gates({"AllAlpha": True, "AllBeta": False})
    assert caught.value.reason == (
        "[PodLevelResourceManagers is enabled, but depends on features that are disabled: "
        "[PodLevelResources], StorageVersionAPI is enabled, but depends on features that are "
        "disabled: [APIServerIdentity], UserNamespacesHostNetworkSupport is enabled, but depends "
        "on features that are disabled: [NodeDeclaredFeatures]]"
    )


@given(
    st.dictionaries(
        st.sampled_from(sorted((SCHEDULING & set(KNOWN)) | {"APIResponseCompression", "AllBeta"})),
        st.booleans(),
        max_size=6,
    )
)
def test_a_map_is_either_refused_by_name_or_resolved_as_set(settings: dict[str, bool]) -> None:
    outcome = _resolved(settings)
    if isinstance(outcome, ConfigError):
        assert outcome.path == "featureGates"
        assert "cannot set feature gate" in outcome.reason or (
            "is enabled, but depends on features that are disabled" in outcome.reason
        )
        return
    for name, value in settings.items():
        assert outcome.enabled(name) == value
    assert FeatureGates(settings, version=MINOR) == outcome
    assert parse_feature_gates(outcome.as_flag()) == outcome


def _resolved(settings: dict[str, bool]) -> FeatureGates | ConfigError:
    try:
        return feature_gates(settings)
    except ConfigError as error:
        return error


def test_the_default_plugins_follow_the_gates() -> None:
    names = [name for name, _ in DEFAULT_MULTI_POINT]
    assert names[-1] == "NodeDeclaredFeatures"
    assert names.index("DynamicResources") == names.index("DefaultPreemption") - 1
    assert dict(DEFAULT_MULTI_POINT)["DynamicResources"] == 2
    assert [n for n in names if n not in ("NodeDeclaredFeatures", "DynamicResources")] == [
        name for name, _ in BASE_MULTI_POINT
    ]
    off = load_configuration(
        HEADER, feature_gates=parse_feature_gates(NODE_DECLARED_FEATURES_OFF)
    ).profiles[0]
    assert "NodeDeclaredFeatures" not in off.plugin_names
    on = load_configuration(HEADER).profiles[0]
    assert on.enabled("preFilter")[-1] == "NodeDeclaredFeatures"
    assert on.enabled("filter")[-1] == "NodeDeclaredFeatures"


def runtime_refusal(flag: str) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        load_configuration(HEADER, feature_gates=parse_feature_gates(flag))
    return caught.value


@pytest.mark.parametrize(
    ("flag", "gate", "value"),
    [
        ("TaintTolerationComparisonOperators=true", "TaintTolerationComparisonOperators", "true"),
        ("AllAlpha=true", "DRAListTypeAttributes", "true"),
    ],
)
def test_the_runtime_refuses_scheduling_gates_it_does_not_follow(
    flag: str, gate: str, value: str
) -> None:
    error = runtime_refusal(flag)
    assert error.path == "--feature-gates"
    assert error.reason.startswith(f"{gate}={value} is not supported by the scheduler runtime")
    assert "\n" not in str(error)


def test_the_workload_gates_are_followed_with_upstreams_default_plugins() -> None:
    gates = parse_feature_gates(
        "GenericWorkload=true,GangScheduling=true,TopologyAwareWorkloadScheduling=true"
    )
    loaded = load_configuration(HEADER, feature_gates=gates)
    assert loaded.features.generic_workload
    profile = loaded.profiles[0]
    assert profile.enabled("preEnqueue")[-1] == "GangScheduling"
    assert profile.enabled("permit") == ("GangScheduling",)
    assert profile.enabled("placementGenerate") == ("TopologyPlacementGenerator",)
    assert profile.enabled("placementScore") == ("PodGroupPodsCount",)
    assert profile.placement_score_weights == {"PodGroupPodsCount": 1}
    off = load_configuration(
        HEADER, feature_gates=parse_feature_gates("NominatedNodeNameForExpectation=false")
    )
    assert not off.features.nominated_node_name_for_expectation


def test_gates_kube_scheduler_knows_that_do_not_schedule_are_accepted() -> None:
    gates = parse_feature_gates(
        "APIResponseCompression=false,WatchList=false,OpportunisticBatching=false"
    )
    loaded = load_configuration(HEADER, feature_gates=gates)
    assert loaded.feature_gates == gates
    assert loaded.profiles == load_configuration(HEADER).profiles


def test_kube_schedulers_plugins_are_judged_without_the_runtimes_limits() -> None:
    """The operator checks a kube-scheduler profile against kube-scheduler's registry; the
    runtime's limits on gates are its own."""
    gates = parse_feature_gates("GenericWorkload=true,GangScheduling=true")
    known: dict[str, Any] = {**registry(), "GangScheduling": registry()["SchedulingGates"]}
    profile = load_configuration(HEADER, feature_gates=gates, known=known).profiles[0]
    assert "GangScheduling" in profile.plugin_names


def test_every_plugin_a_gate_the_runtime_takes_brings_is_in_the_runtime() -> None:
    for gate, attribute in Features.gate_names().items():
        on = {name for name, _ in default_multi_point(replace(Features(), **{attribute: True}))}
        off = {name for name, _ in default_multi_point(replace(Features(), **{attribute: False}))}
        spec = KNOWN.get(gate)
        if gate in RUNTIME_FOLLOWS or (spec is not None and spec.locked and spec.default):
            assert on - off <= set(registry()), gate


@pytest.mark.parametrize(
    ("flag", "plugin", "gate"),
    [
        (NODE_DECLARED_FEATURES_OFF, "NodeDeclaredFeatures", "NodeDeclaredFeatures"),
        ("", "GangScheduling", "GenericWorkload"),
        ("", "PodGroupPodsCount", "TopologyAwareWorkloadScheduling"),
    ],
)
def test_a_plugin_named_while_its_gate_is_off_is_accepted_as_kube_scheduler_does_and_reported(
    flag: str, plugin: str, gate: str
) -> None:
    profile = {"plugins": {"filter": {"enabled": [{"name": "NodeAffinity"}, {"name": plugin}]}}}
    loaded = load_configuration(
        {**HEADER, "profiles": [profile]},
        feature_gates=parse_feature_gates(flag),
        known={**registry(), plugin: registry()["NodeName"]},  # kube-scheduler has them all
    )
    assert loaded.warnings == (
        f"profiles[0].plugins.filter.enabled[1].name: plugin {plugin!r} does nothing while "
        f"feature gate {gate} is off",
    )
    assert load_configuration(HEADER).warnings == ()
