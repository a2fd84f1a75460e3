"""What each engine accepts beyond the schema: plugin names, args shapes, one queueSort."""

from __future__ import annotations

from typing import Any

import pytest
from scheduler_operator.engines import UPSTREAM_PLUGINS, validate
from scheduler_operator.errors import SpecError
from scheduler_operator.parsing import parse


def check(spec: dict[str, Any]) -> None:
    validate(parse({"metadata": {"name": "s"}, "spec": spec}))


def score(*names: str) -> dict[str, Any]:
    return {"plugins": {"score": {"enabled": [{"name": n} for n in names]}}}


def upstream(**spec: Any) -> dict[str, Any]:
    return {"engine": "KubeScheduler", **spec}


def test_the_default_profile_is_valid_for_both_engines() -> None:
    check({})
    check(upstream())


def test_every_default_plugin_is_known_upstream() -> None:
    defaults = {
        "SchedulingGates", "PrioritySort", "NodeUnschedulable", "NodeName", "TaintToleration",
        "NodeAffinity", "NodePorts", "NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits",
        "VolumeBinding", "VolumeZone", "PodTopologySpread", "InterPodAffinity", "DefaultPreemption",
        "NodeResourcesBalancedAllocation", "ImageLocality", "DefaultBinder",
    }  # fmt: skip
    assert defaults <= UPSTREAM_PLUGINS


@pytest.mark.parametrize(
    ("spec", "path", "reason"),
    [
        (
            upstream(profiles=[score("ImageLocality", "GPUBinPacking")]),
            "spec.profiles[0].plugins.score.enabled[1].name",
            "unknown plugin 'GPUBinPacking' for engine KubeScheduler",
        ),
        (
            upstream(profiles=[{"plugins": {"filter": {"disabled": [{"name": "Taints"}]}}}]),
            "spec.profiles[0].plugins.filter.disabled[0].name",
            "unknown plugin 'Taints'",
        ),
        (
            upstream(profiles=[{"pluginConfig": [{"name": "Nope", "args": {}}]}]),
            "spec.profiles[0].pluginConfig[0].name",
            "unknown plugin 'Nope'",
        ),
        (
            upstream(
                profiles=[
                    {
                        "pluginConfig": [
                            {"name": "NodeResourcesFit", "args": {"scoringStrategy": []}}
                        ]
                    }
                ]
            ),
            "spec.profiles[0].pluginConfig[0].args.scoringStrategy",
            "must be an object",
        ),
        (
            upstream(
                profiles=[
                    {"pluginConfig": [{"name": "InterPodAffinity", "args": {"hardWeight": 1}}]}
                ]
            ),
            "spec.profiles[0].pluginConfig[0].args.hardWeight",
            "unknown field for InterPodAffinityArgs",
        ),
        (
            upstream(
                profiles=[
                    {
                        "pluginConfig": [
                            {
                                "name": "DefaultPreemption",
                                "args": {"minCandidateNodesAbsolute": True},
                            }
                        ]
                    }
                ]
            ),
            "spec.profiles[0].pluginConfig[0].args.minCandidateNodesAbsolute",
            "must be an integer",
        ),
        (
            upstream(
                profiles=[{"pluginConfig": [{"name": "NodeAffinity", "args": {"kind": "FitArgs"}}]}]
            ),
            "spec.profiles[0].pluginConfig[0].args.kind",
            "must be NodeAffinityArgs",
        ),
        (
            upstream(profiles=[{"pluginConfig": [{"name": "ImageLocality", "args": {"x": 1}}]}]),
            "spec.profiles[0].pluginConfig[0].args",
            "takes no args",
        ),
        (
            {"profiles": [score("ImageLocality", "ImageLocality")]},
            "spec.profiles[0].plugins.score.enabled[1].name",
            "enabled twice",
        ),
        (
            {
                "profiles": [
                    {"schedulerName": "a"},
                    {"schedulerName": "b", "plugins": {"queueSort": {"enabled": [{"name": "Q"}]}}},
                ]
            },
            "spec.profiles[1].plugins.queueSort",
            "must use the same queueSort plugin",
        ),
        (
            {"profiles": [score("NoSuchPlugin")]},
            "spec.profiles[0].plugins.score.enabled[0].name",
            "unknown plugin 'NoSuchPlugin'",
        ),
        (
            {
                "profiles": [
                    {"pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": 3}}]}
                ]
            },
            "spec.profiles[0].pluginConfig[0].args.scoringStrategy",
            "",
        ),
    ],
)
def test_what_the_engine_would_refuse_names_the_field(
    spec: dict[str, Any], path: str, reason: str
) -> None:
    with pytest.raises(SpecError) as caught:
        check(spec)
    assert caught.value.path == path
    assert reason in caught.value.reason


def test_upstream_args_with_the_right_shape_pass() -> None:
    args = {
        "scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu", "weight": 1}]},
        "kind": "NodeResourcesFitArgs",
        "apiVersion": "kubescheduler.config.k8s.io/v1",
    }
    check(upstream(profiles=[{"pluginConfig": [{"name": "NodeResourcesFit", "args": args}]}]))


def test_disabling_everything_with_a_star_is_allowed_upstream() -> None:
    check(upstream(profiles=[{"plugins": {"score": {"disabled": [{"name": "*"}]}}}]))


@pytest.mark.parametrize("engine", ["PythonRuntime", "KubeScheduler"])
def test_both_engines_take_pre_enqueue(engine: str) -> None:
    gates = {"preEnqueue": {"disabled": [{"name": "SchedulingGates"}]}}
    check({"engine": engine, "profiles": [{"plugins": gates}]})


def disabled(*names: str) -> dict[str, Any]:
    return {"disabled": [{"name": name} for name in names]}


@pytest.mark.parametrize("engine", ["PythonRuntime", "KubeScheduler"])
@pytest.mark.parametrize(
    ("profile", "path", "reason"),
    [
        (  # kube-scheduler starts, then fails every pod in Reserve
            {
                "plugins": {
                    "preFilter": disabled("*"),
                    "filter": disabled("*"),
                    "score": disabled("DynamicResources"),
                }
            },
            "spec.profiles[0].plugins.preFilter",
            # 1.37 (StorageCapacityScoring on) scores with VolumeBinding: PreScore fails first.
            "every pod would fail with 'running PreScore plugin \"VolumeBinding\": not found'",
        ),
        (
            {"plugins": {"preScore": disabled("*")}},
            "spec.profiles[0].plugins.preScore",
            "plugin 'TaintToleration' runs at score but not at preScore",
        ),
        (  # kube-scheduler does not start: NodePorts is no score plugin
            score("NodePorts"),
            "spec.profiles[0].plugins.score.enabled[0].name",
            "plugin 'NodePorts' does not ",
        ),
        (  # the values of an args field, not only its type
            {
                "pluginConfig": [
                    {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "Bogus"}}}
                ]
            },
            "spec.profiles[0].pluginConfig[0].args.scoringStrategy.type",
            "input should be 'LeastAllocated', 'MostAllocated' or 'RequestedToCapacityRatio'",
        ),
        (
            {"plugins": {"bind": disabled("*")}},
            "spec.profiles[0].plugins.bind",
            "at least one bind plugin is needed",
        ),
        (
            {"plugins": {"multiPoint": {"enabled": [{"name": "ImageLocality"}] * 2}}},
            "spec.profiles[0].plugins.multiPoint.enabled[1].name",
            "enabled twice",
        ),
    ],
)
def test_both_engines_check_the_configuration_alike(
    engine: str, profile: dict[str, Any], path: str, reason: str
) -> None:
    with pytest.raises(SpecError) as caught:
        check({"engine": engine, "profiles": [profile]})
    assert caught.value.path == path
    assert reason in caught.value.reason


def test_upstream_only_plugins_and_args_pass_the_full_check() -> None:
    dra = {"name": "DynamicResources", "args": {"filterTimeout": "5s"}}
    check(
        upstream(
            profiles=[
                {
                    "plugins": {
                        "score": {"enabled": [{"name": "DynamicResources"}]},
                        "permit": {"enabled": [{"name": "GangScheduling"}]},
                    },
                    "pluginConfig": [dra],
                }
            ]
        )
    )


@pytest.mark.parametrize(
    ("spec", "reason"),
    [
        ({"featureGates": {"Nope": True}}, "unrecognized feature gate: Nope"),
        (
            upstream(featureGates={"DynamicResourceAllocation": False}),
            "cannot set feature gate DynamicResourceAllocation to false, feature is locked to true",
        ),
        (
            upstream(featureGates={"GangScheduling": True}, kubernetesVersion="1.36"),
            "GangScheduling is enabled, but depends on features that are disabled: "
            "[GenericWorkload]",
        ),
        (  # 1.37 removed the gate (GenericWorkload took its place)
            upstream(featureGates={"GangScheduling": True}),
            "unrecognized feature gate: GangScheduling",
        ),
    ],
)
def test_feature_gates_are_refused_as_kube_scheduler_refuses_them(
    spec: dict[str, Any], reason: str
) -> None:
    with pytest.raises(SpecError) as refused:
        check(spec)
    assert (refused.value.path, refused.value.reason) == ("spec.featureGates", reason)


def test_a_gate_kube_scheduler_takes_may_be_beyond_what_the_runtime_implements() -> None:
    """The gates are kube-scheduler's for both engines; the runtime adds its own limit."""
    gates = {"featureGates": {"InPlacePodVerticalScaling": True, "DRAListTypeAttributes": True}}
    check(upstream(**gates))
    with pytest.raises(SpecError) as refused:
        check(gates)
    assert refused.value.path == "spec.featureGates"
    assert refused.value.reason.startswith("DRAListTypeAttributes=true is not supported")


def test_a_plugin_whose_gate_is_off_is_taken_and_reported() -> None:
    """kube-scheduler starts with such a plugin and never runs it; ConfigValid says so (at
    1.36: 1.37 locks the gate on)."""
    spec = {
        "kubernetesVersion": "1.36",
        "featureGates": {"NodeDeclaredFeatures": False, **NODE_DECLARED_FEATURES_DEPENDENTS},
        "profiles": [{"plugins": {"filter": {"enabled": [{"name": "NodeDeclaredFeatures"}]}}}],
    }
    for engine_spec in (spec, upstream(**spec)):
        warnings = validate(parse({"metadata": {"name": "s"}, "spec": engine_spec}))
        assert warnings == (
            "spec.profiles[0].plugins.filter.enabled[0].name: plugin 'NodeDeclaredFeatures' "
            "does nothing while feature gate NodeDeclaredFeatures is off",
        )


# kube-scheduler refuses NodeDeclaredFeatures=false unless the gates that need it are off too.
NODE_DECLARED_FEATURES_DEPENDENTS = {
    "ExtendWebSocketsToKubelet": False,
    "InPlacePodLevelResourcesVerticalScaling": False,
    "InPlacePodVerticalScalingInitContainers": False,
    "RestartAllContainersOnContainerExits": False,
}


@pytest.mark.parametrize("engine", ["PythonRuntime", "KubeScheduler"])
@pytest.mark.parametrize(
    ("args", "gates", "field", "reason"),
    [
        ({"filterTimeout": "-1s"}, {}, "filterTimeout", "must be zero or positive"),
        ({"bindingTimeout": "500ms"}, {}, "bindingTimeout", "must be at least 1 second"),
        (
            {"filterTimeout": "5s"},
            {"DRASchedulerFilterTimeout": False},
            "filterTimeout",
            "DRASchedulingFilterTimeout feature gate is disabled",
        ),
    ],
)
def test_both_engines_validate_dynamic_resources_args_as_upstream(
    engine: str, args: dict[str, Any], gates: dict[str, bool], field: str, reason: str
) -> None:
    """ValidateDynamicResourcesArgs: its rules and words, with the gates they depend on."""
    config = {"name": "DynamicResources", "args": args}
    spec = {"engine": engine, "featureGates": gates, "profiles": [{"pluginConfig": [config]}]}
    with pytest.raises(SpecError) as caught:
        check(spec)
    assert caught.value.path == f"spec.profiles[0].pluginConfig[0].args.{field}"
    assert reason in caught.value.reason
