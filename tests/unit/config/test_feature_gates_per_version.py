"""Each emulated minor's gates (kube_feature_gates/, generated from each release's
kube-scheduler), as facts of pkg/features/kube_features.go of that release say they must be;
the refusals at each minor; the gates plugins read there; and each minor's default plugins
(pkg/scheduler/apis/config/v1/default_plugins.go of 1.35.4, 1.36.3 and 1.37.2)."""

from __future__ import annotations

import pytest

from scheduler_runtime.config import ConfigError, load_configuration
from scheduler_runtime.config.defaults import BASE_MULTI_POINT, default_plugins
from scheduler_runtime.config.features import (
    DEFAULTS,
    KNOWN,
    NEWEST,
    RELEASE,
    SCHEDULING,
    VERSIONS,
    FeatureGates,
    check_runtime_gates,
    feature_gates,
    known,
    parse_feature_gates,
    unfollowed_defaults,
)
from scheduler_runtime.config.kube_feature_gates import RELEASES

HEADER = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
ABSENT = None


def spec(version: str, gate: str) -> tuple[bool, str, bool] | None:
    found = known(version).get(gate)
    return None if found is None else (found.default, found.stage, found.locked)


def test_one_table_per_minor_each_from_the_newest_patch() -> None:
    assert {minor: release for minor, (release, _) in RELEASES.items()} == {
        "1.35": "v1.35.4",
        "1.36": "v1.36.3",
        "1.37": "v1.37.2",
    }
    assert dict(RELEASE) == {"1.35": "v1.35.4", "1.36": "v1.36.3", "1.37": "v1.37.2"}
    assert NEWEST == "1.37"
    assert KNOWN is known("1.37")
    assert DEFAULTS.version == "1.37"
    for version in VERSIONS:
        names = [gate[0] for gate in RELEASES[version][1]]
        assert names == sorted(set(names))  # one entry per gate, sorted
        assert len(names) > 200


ALPHA_OFF, BETA_OFF, BETA_ON = (
    (False, "ALPHA", False),
    (False, "BETA", False),
    (True, "BETA", False),
)
GA, GA_LOCKED = (True, "GA", False), (True, "GA", True)


@pytest.mark.parametrize(
    ("gate", "at_1_35", "at_1_36", "at_1_37"),
    [
        # Beta and on in 1.36, GA and locked in 1.37.
        ("DRAExtendedResource", ALPHA_OFF, BETA_ON, GA_LOCKED),
        ("NodeDeclaredFeatures", ALPHA_OFF, BETA_ON, GA_LOCKED),
        # GA in 1.37 but not locked until 1.38.
        ("DRADeviceTaints", ALPHA_OFF, BETA_ON, GA),
        # The workload API's gate: alpha until 1.36, beta (still off) in 1.37.
        ("GenericWorkload", ALPHA_OFF, ALPHA_OFF, BETA_OFF),
        # Gone in 1.37: the GangScheduling plugin follows GenericWorkload.
        ("GangScheduling", ALPHA_OFF, ALPHA_OFF, ABSENT),
        ("WorkloadAwarePreemption", ABSENT, ALPHA_OFF, ABSENT),
        ("TopologyAwareWorkloadScheduling", ABSENT, ALPHA_OFF, ALPHA_OFF),
        ("SchedulerQueueingHints", GA_LOCKED, GA_LOCKED, ABSENT),
        ("CompositePodGroup", ABSENT, ABSENT, ALPHA_OFF),
        ("InPlacePodVerticalScalingSchedulerPreemption", ABSENT, ABSENT, ALPHA_OFF),
        ("NominatedNodeNameForExpectation", BETA_ON, BETA_ON, BETA_ON),
        ("DynamicResourceAllocation", GA_LOCKED, GA_LOCKED, GA_LOCKED),
    ],
)  # fmt: skip
def test_each_minor_holds_the_gate_as_its_release_does(
    gate: str,
    at_1_35: tuple[bool, str, bool] | None,
    at_1_36: tuple[bool, str, bool] | None,
    at_1_37: tuple[bool, str, bool] | None,
) -> None:
    assert [spec(version, gate) for version in VERSIONS] == [at_1_35, at_1_36, at_1_37]


def test_dependencies_are_each_minors() -> None:
    assert known("1.37")["CompositePodGroup"].dependencies == (
        "GenericWorkload",
        "TopologyAwareWorkloadScheduling",
    )
    assert known("1.36")["GangScheduling"].dependencies == ("GenericWorkload",)


@pytest.mark.parametrize(
    ("version", "flag", "reason"),
    [
        ("1.37", "GangScheduling=true", "unrecognized feature gate: GangScheduling"),
        ("1.35", "TopologyAwareWorkloadScheduling=true", "unrecognized feature gate: "
         "TopologyAwareWorkloadScheduling"),
        ("1.37", "NodeDeclaredFeatures=false", "cannot set feature gate NodeDeclaredFeatures to "
         "false, feature is locked to true"),
        ("1.37", "DRAExtendedResource=false", "cannot set feature gate DRAExtendedResource to "
         "false, feature is locked to true"),
        ("1.37", "CompositePodGroup=true", "CompositePodGroup is enabled, but depends on "
         "features that are disabled: [GenericWorkload TopologyAwareWorkloadScheduling]"),
        ("1.36", "CompositePodGroup=true", "unrecognized feature gate: CompositePodGroup"),
    ],
)  # fmt: skip
def test_the_flag_is_judged_by_the_emulated_minors_gates(
    version: str, flag: str, reason: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_feature_gates(flag, version)
    assert (caught.value.path, caught.value.reason) == ("--feature-gates", reason)


def test_a_configurations_gates_are_judged_by_the_same_minor() -> None:
    with pytest.raises(ConfigError) as caught:
        feature_gates({"GangScheduling": True}, version="1.37")
    assert (caught.value.path, caught.value.reason) == (
        "featureGates",
        "unrecognized feature gate: GangScheduling",
    )
    at_1_36 = feature_gates({"GenericWorkload": True, "GangScheduling": True}, version="1.36")
    assert at_1_36.version == "1.36"
    assert at_1_36.enabled("GangScheduling")
    assert feature_gates({"NodeDeclaredFeatures": False}, version="1.35").version == "1.35"


def test_the_gates_plugins_read_at_each_minor() -> None:
    """A gate the minor does not have: off when added later; its last setting when removed
    (GA gates leave locked on), or the gate that took its place (GangScheduling: 1.37 appends
    the plugin and schedules gangs whenever GenericWorkload is on)."""
    newest = DEFAULTS.features
    assert newest.sidecar_containers
    assert newest.scheduler_queueing_hints
    assert not newest.gang_scheduling
    assert not newest.workload_aware_preemption
    assert newest.node_declared_features
    assert newest.dra_extended_resource
    assert parse_feature_gates("GenericWorkload=true", "1.37").features.gang_scheduling
    assert not parse_feature_gates("GenericWorkload=true", "1.36").features.gang_scheduling
    oldest = FeatureGates(version="1.35").features
    assert not oldest.topology_aware_workload_scheduling
    assert not oldest.composite_pod_group
    assert not oldest.node_declared_features
    assert not oldest.dra_extended_resource
    for version in VERSIONS:
        gates = FeatureGates(version=version)
        for gate in SCHEDULING & set(gates.known):
            assert gates.scheduling(gate) == gates.known[gate].default, (version, gate)


def test_the_runtime_names_the_emulated_release_when_it_refuses_a_gate() -> None:
    gates = parse_feature_gates("InPlacePodVerticalScalingSchedulerPreemption=true", "1.37")
    with pytest.raises(ConfigError) as caught:
        check_runtime_gates(gates)
    assert caught.value.reason == (
        "InPlacePodVerticalScalingSchedulerPreemption=true is not supported by the scheduler "
        "runtime: it schedules as kube-scheduler v1.37.2 does with "
        "InPlacePodVerticalScalingSchedulerPreemption=false, the default"
    )


def names(version: str, flag: str = "") -> list[str]:
    gates = parse_feature_gates(flag, version)
    plugins = default_plugins(gates.features, version).multi_point.enabled
    return [plugin.name for plugin in plugins]


BASE = [name for name, _ in BASE_MULTI_POINT]


def with_dynamic_resources(plugins: list[str]) -> list[str]:
    preemption = plugins.index("DefaultPreemption")
    return [*plugins[:preemption], "DynamicResources", *plugins[preemption:]]


def test_each_minor_has_its_default_plugins() -> None:
    # 1.35: NodeDeclaredFeatures is alpha and off.
    assert names("1.35") == with_dynamic_resources(BASE)
    assert names("1.36") == [*with_dynamic_resources(BASE), "NodeDeclaredFeatures"]
    # 1.37: NodeName runs before NodeUnschedulable.
    swapped = [*BASE[:2], "NodeName", "NodeUnschedulable", *BASE[4:]]
    assert BASE[2:4] == ["NodeUnschedulable", "NodeName"]
    assert names("1.37") == [*with_dynamic_resources(swapped), "NodeDeclaredFeatures"]
    assert names(NEWEST) == [plugin.name for plugin in default_plugins().multi_point.enabled]


def test_the_gang_plugin_comes_with_each_minors_gate() -> None:
    assert names("1.35", "GenericWorkload=true,GangScheduling=true")[-1] == "GangScheduling"
    assert "GangScheduling" not in names("1.36", "GenericWorkload=true")
    assert names("1.36", "GenericWorkload=true,GangScheduling=true")[-1] == "GangScheduling"
    assert names("1.37", "GenericWorkload=true")[-1] == "GangScheduling"
    assert names("1.37", "GenericWorkload=true,TopologyAwareWorkloadScheduling=true")[-3:] == [
        "GangScheduling",
        "TopologyPlacementGenerator",
        "PodGroupPodsCount",
    ]


def test_a_configuration_resolves_with_its_minors_plugins() -> None:
    for version, first in (("1.35", "NodeUnschedulable"), ("1.37", "NodeName")):
        profile = load_configuration(HEADER, feature_gates=FeatureGates(version=version)).profiles[
            0
        ]
        assert profile.enabled("filter")[0] == first, version
        assert ("NodeDeclaredFeatures" in profile.plugin_names) == (version != "1.35")


def test_the_gates_1_37_turns_on_are_followed() -> None:
    """No scheduling gate is on at a minor where the runtime schedules as if it were off."""
    for version in ("1.35", "1.36", "1.37"):
        assert unfollowed_defaults(FeatureGates(version=version)) == []
    # A gate the runtime does not follow is still refused set away from 1.36's default.
    with pytest.raises(ConfigError, match="DRAListTypeAttributes=true is not supported"):
        check_runtime_gates(parse_feature_gates("DRAListTypeAttributes=true", "1.37"))
    # The gates 1.37 turns on are followed either way, at either minor.
    for version in ("1.36", "1.37"):
        for setting in ("true", "false"):
            for gate, attribute in (
                ("DRADeviceTaintRules", "dra_device_taint_rules"),
                ("StorageCapacityScoring", "storage_capacity_scoring"),
                ("VolumeLimitScaling", "volume_limit_scaling"),
            ):
                gates = parse_feature_gates(f"{gate}={setting}", version)
                check_runtime_gates(gates)
                assert getattr(gates.features, attribute) == (setting == "true")
    assert FeatureGates(version="1.36").features.storage_capacity_scoring is False
    assert FeatureGates(version="1.37").features.storage_capacity_scoring is True
    assert FeatureGates(version="1.37").features.volume_limit_scaling is True


def volume_binding_args(version: str, args: dict[str, object] | None = None) -> object:
    doc = {
        **HEADER,
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                **({"pluginConfig": [{"name": "VolumeBinding", "args": args}]} if args else {}),
            }
        ],
    }
    profile = load_configuration(doc, feature_gates=FeatureGates(version=version)).profiles[0]
    return profile.plugin_args["VolumeBinding"]


def test_volume_binding_shape_follows_storage_capacity_scoring() -> None:
    """SetDefaults_VolumeBindingArgs: the shape defaults to (0, 10), (100, 0) while the gate is
    on (1.37), stays unset while it is off (1.36), where ValidateVolumeBindingArgs refuses one."""
    on = volume_binding_args("1.37")
    assert [(p.utilization, p.score) for p in on.shape] == [(0, 10), (100, 0)]  # type: ignore[attr-defined]
    assert volume_binding_args("1.36").shape is None  # type: ignore[attr-defined]
    given = {"shape": [{"utilization": 0, "score": 0}, {"utilization": 80, "score": 7}]}
    custom = volume_binding_args("1.37", given)
    assert [(p.utilization, p.score) for p in custom.shape] == [(0, 0), (80, 7)]  # type: ignore[attr-defined]
    with pytest.raises(ConfigError) as refused:
        volume_binding_args("1.36", given)
    assert refused.value.path == "profiles[0].pluginConfig[0].args.shape"
    assert refused.value.reason == (
        "unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring"
    )
    unsorted = {"shape": [{"utilization": 50, "score": 1}, {"utilization": 50, "score": 2}]}
    with pytest.raises(ConfigError) as refused:
        volume_binding_args("1.37", unsorted)
    assert refused.value.path == "profiles[0].pluginConfig[0].args.shape[1].utilization"
    assert refused.value.reason == "values must be sorted in increasing order"
