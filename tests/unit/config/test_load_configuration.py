"""KubeSchedulerConfiguration loading: upstream defaults, merge rules and error paths."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scheduler_runtime.config import ConfigError, load_configuration, load_configuration_file
from scheduler_runtime.config.args import NodeResourcesFitArgs, PodTopologySpreadArgs
from scheduler_runtime.config.types import parse_go_duration
from scheduler_runtime.framework.registry import registry

HEADER = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}

DEFAULT_FILTERS = (  # the newest minor's (1.37 runs NodeName first)
    "NodeName",
    "NodeUnschedulable",
    "TaintToleration",
    "NodeAffinity",
    "NodePorts",
    "NodeResourcesFit",
    "VolumeRestrictions",
    "NodeVolumeLimits",
    "VolumeBinding",
    "VolumeZone",
    "PodTopologySpread",
    "InterPodAffinity",
    "DynamicResources",  # as upstream's: it needs its PreFilter state here, reserve and preBind
    "NodeDeclaredFeatures",  # appended by applyFeatureGates: its gate is GA and locked in 1.37
)


def load(**fields: Any) -> Any:
    return load_configuration({**HEADER, **fields})


def profile(**fields: Any) -> Any:
    return load(profiles=[fields]).profiles[0]


def error_of(**fields: Any) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        load(**fields)
    return caught.value


def test_defaults_match_upstream() -> None:
    config = load()
    assert config.parallelism == 16
    assert config.percentage_of_nodes_to_score == 0
    assert (config.pod_initial_backoff_seconds, config.pod_max_backoff_seconds) == (1, 10)
    election = config.leader_election
    assert election.leader_elect
    assert (election.lease_duration, election.renew_deadline, election.retry_period) == (
        15.0,
        10.0,
        2.0,
    )
    assert (election.resource_namespace, election.resource_name) == (
        "kube-system",
        "kube-scheduler",
    )
    assert (config.client_connection.qps, config.client_connection.burst) == (50.0, 100)
    assert config.scheduler_names == ("default-scheduler",)


def test_default_plugins_per_extension_point() -> None:
    resolved = load().profiles[0]
    assert resolved.enabled("queueSort") == ("PrioritySort",)
    assert resolved.enabled("preEnqueue") == ("SchedulingGates", "DynamicResources")
    assert resolved.enabled("filter") == DEFAULT_FILTERS
    assert resolved.enabled("postFilter") == ("DynamicResources", "DefaultPreemption")
    assert resolved.enabled("bind") == ("DefaultBinder",)
    assert resolved.enabled("reserve") == ("VolumeBinding", "DynamicResources")
    assert resolved.enabled("preBind") == ("VolumeBinding", "DynamicResources")
    assert resolved.enabled("score") == (
        "TaintToleration",
        "NodeAffinity",
        "NodeResourcesFit",
        "VolumeBinding",
        "PodTopologySpread",
        "InterPodAffinity",
        "DynamicResources",
        "NodeResourcesBalancedAllocation",
        "ImageLocality",
    )
    assert resolved.score_weights == {
        "TaintToleration": 3,
        "NodeAffinity": 2,
        "NodeResourcesFit": 1,
        "VolumeBinding": 1,
        "PodTopologySpread": 2,
        "InterPodAffinity": 2,
        "DynamicResources": 2,
        "NodeResourcesBalancedAllocation": 1,
        "ImageLocality": 1,
    }


def test_default_args_are_typed_with_upstream_values() -> None:
    args = load().profiles[0].plugin_args
    fit = args["NodeResourcesFit"]
    assert isinstance(fit, NodeResourcesFitArgs)
    assert fit.scoring_strategy.type == "LeastAllocated"
    assert [(r.name, r.weight) for r in fit.scoring_strategy.resources] == [
        ("cpu", 1),
        ("memory", 1),
    ]
    spread = args["PodTopologySpread"]
    assert isinstance(spread, PodTopologySpreadArgs)
    assert [(c.topology_key, c.max_skew) for c in spread.effective_constraints] == [
        ("kubernetes.io/hostname", 3),
        ("topology.kubernetes.io/zone", 5),
    ]
    assert args["DefaultBinder"] is None


def test_score_point_weight_beats_multi_point_and_keeps_order() -> None:
    resolved = profile(plugins={"score": {"enabled": [{"name": "ImageLocality", "weight": 7}]}})
    assert resolved.score_weights["ImageLocality"] == 7
    # A plugin re-enabled at the point itself moves to the front of that point.
    assert resolved.enabled("score")[0] == "ImageLocality"


def test_multi_point_reenable_replaces_default_in_place() -> None:
    resolved = profile(
        plugins={"multiPoint": {"enabled": [{"name": "TaintToleration", "weight": 9}]}}
    )
    assert resolved.enabled("score")[0] == "TaintToleration"
    assert resolved.score_weights["TaintToleration"] == 9


def test_disable_one_plugin_at_one_point() -> None:
    resolved = profile(plugins={"score": {"disabled": [{"name": "ImageLocality"}]}})
    assert "ImageLocality" not in resolved.enabled("score")
    assert "ImageLocality" not in resolved.score_weights


def test_star_disables_all_defaults_at_a_point() -> None:
    resolved = profile(
        plugins={
            "score": {
                "disabled": [{"name": "*"}],
                "enabled": [{"name": "NodeResourcesFit", "weight": 4}],
            }
        }
    )
    assert resolved.enabled("score") == ("NodeResourcesFit",)
    assert resolved.score_weights == {"NodeResourcesFit": 4}
    assert resolved.enabled("filter") == DEFAULT_FILTERS


def test_star_in_multi_point_drops_every_default() -> None:
    resolved = profile(
        plugins={
            "multiPoint": {
                "disabled": [{"name": "*"}],
                "enabled": [
                    {"name": "PrioritySort"},
                    {"name": "NodeResourcesFit"},
                    {"name": "DefaultBinder"},
                ],
            }
        }
    )
    assert resolved.enabled("filter") == ("NodeResourcesFit",)
    assert resolved.score_weights == {"NodeResourcesFit": 1}


def test_weight_zero_means_one() -> None:
    resolved = profile(plugins={"score": {"enabled": [{"name": "ImageLocality", "weight": 0}]}})
    assert resolved.score_weights["ImageLocality"] == 1


@pytest.mark.parametrize(
    ("fields", "path", "reason"),
    [
        (
            {"profiles": [{"plugins": {"score": {"enabled": [{"name": "X"}, {"name": "Nope"}]}}}]},
            "profiles[0].plugins.score.enabled[0].name",
            "unknown plugin 'X'",
        ),
        (
            {
                "profiles": [
                    {
                        "plugins": {
                            "filter": {"enabled": [{"name": "NodeName"}, {"name": "NodeName"}]}
                        }
                    }
                ]
            },
            "profiles[0].plugins.filter.enabled[1].name",
            "plugin 'NodeName' is already enabled for filter",
        ),
        (
            {"profiles": [{"plugins": {"multiPoint": {"enabled": [{"name": "Nope"}]}}}]},
            "profiles[0].plugins.multiPoint.enabled[0].name",
            "unknown plugin 'Nope'",
        ),
        (
            {"profiles": [{"plugins": {"score": {"enabled": [{"name": "NodeName"}]}}}]},
            "profiles[0].plugins.score.enabled[0].name",
            "plugin 'NodeName' does not implement score",
        ),
        (
            {
                "profiles": [
                    {
                        "pluginConfig": [
                            {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "X"}}}
                        ]
                    }
                ]
            },
            "profiles[0].pluginConfig[0].args.scoringStrategy.type",
            "input should be 'LeastAllocated', 'MostAllocated' or 'RequestedToCapacityRatio'",
        ),
        (
            {
                "profiles": [
                    {
                        "pluginConfig": [
                            {"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": 101}},
                        ]
                    }
                ]
            },
            "profiles[0].pluginConfig[0].args.hardPodAffinityWeight",
            "input should be less than or equal to 100",
        ),
        (
            {
                "profiles": [
                    {
                        "pluginConfig": [
                            {"name": "ImageLocality"},
                            {"name": "ImageLocality"},
                        ]
                    }
                ]
            },
            "profiles[0].pluginConfig[1].name",
            "duplicate pluginConfig for 'ImageLocality'",
        ),
        (
            {"profiles": [{"pluginConfig": [{"name": "ImageLocality", "args": {"x": 1}}]}]},
            "profiles[0].pluginConfig[0].args",
            "plugin 'ImageLocality' takes no args",
        ),
        (
            {
                "profiles": [
                    {
                        "pluginConfig": [
                            {"name": "NodeResourcesFit", "args": {"kind": "InterPodAffinityArgs"}}
                        ]
                    }
                ]
            },
            "profiles[0].pluginConfig[0].args.kind",
            "must be 'NodeResourcesFitArgs'",
        ),
        (
            {"profiles": [{"schedulerName": "a"}, {"schedulerName": "a"}]},
            "profiles[1].schedulerName",
            "duplicate value 'a'",
        ),
        (
            {"profiles": [{"schedulerName": "a"}, {}]},
            "profiles[1].schedulerName",
            "required field is missing",
        ),
        (
            {
                "profiles": [
                    {"schedulerName": "a"},
                    {
                        "schedulerName": "b",
                        "plugins": {"queueSort": {"disabled": [{"name": "*"}]}},
                    },
                ]
            },
            "profiles[1].plugins.queueSort",
            "no queueSort plugin is enabled",
        ),
        ({"podInitialBackoffSeconds": 5, "podMaxBackoffSeconds": 2}, "podMaxBackoffSeconds", None),
        ({"percentageOfNodesToScore": 101}, "percentageOfNodesToScore", None),
        ({"parallelism": 0}, "parallelism", None),
        ({"profile": []}, "profile", "unknown field"),
        ({"leaderElection": {"leaseDuration": "5s"}}, "leaderElection.leaseDuration", None),
        ({"leaderElection": {"retryPeriod": "soon"}}, "leaderElection.retryPeriod", None),
        ({"extenders": [{"urlPrefix": "http://x"}]}, "extenders", None),
    ],
)
def test_invalid_configuration_names_the_field(
    fields: dict[str, Any], path: str, reason: str | None
) -> None:
    error = error_of(**fields)
    assert error.path == path
    if reason is not None:
        assert error.reason == reason
    assert str(error) == f"{error.path}: {error.reason}"


def test_several_profiles_by_scheduler_name() -> None:
    config = load(profiles=[{"schedulerName": "a"}, {"schedulerName": "b"}])
    assert config.scheduler_names == ("a", "b")
    assert config.profile("b") is config.profiles[1]
    assert config.profile("c") is None


def test_requested_to_capacity_ratio_shape_is_validated() -> None:
    error = error_of(
        profiles=[
            {
                "pluginConfig": [
                    {
                        "name": "NodeResourcesFit",
                        "args": {
                            "scoringStrategy": {
                                "type": "RequestedToCapacityRatio",
                                "requestedToCapacityRatio": {
                                    "shape": [
                                        {"utilization": 50, "score": 1},
                                        {"utilization": 10, "score": 2},
                                    ]
                                },
                            }
                        },
                    }
                ]
            }
        ]
    )
    assert error.path == (
        "profiles[0].pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio"
        ".shape[1].utilization"
    )
    assert error.reason == "values must be sorted in increasing order"


def test_wrong_api_version_is_rejected() -> None:
    with pytest.raises(ConfigError) as caught:
        load_configuration({**HEADER, "apiVersion": "kubescheduler.config.k8s.io/v1beta3"})
    assert caught.value.path == "apiVersion"


def test_load_configuration_file(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\n"
        "leaderElection:\n  leaseDuration: 1m30s\n"
        "profiles:\n- schedulerName: batch\n"
    )
    config = load_configuration_file(path)
    assert config.scheduler_names == ("batch",)
    assert config.leader_election.lease_duration == 90.0
    path.write_text("- just\n- a list\n")
    with pytest.raises(ConfigError, match="must hold one KubeSchedulerConfiguration"):
        load_configuration_file(path)
    with pytest.raises(ConfigError, match="cannot read the file"):
        load_configuration_file(tmp_path / "missing.yaml")


def test_known_plugins_include_every_default() -> None:
    assert {"PrioritySort", "InterPodAffinity", "DefaultBinder", "VolumeZone"} <= registry().keys()


@given(st.integers(min_value=0, max_value=10**6), st.sampled_from(["ms", "s", "m", "h"]))
def test_go_durations(amount: int, unit: str) -> None:
    seconds = {"ms": 0.001, "s": 1, "m": 60, "h": 3600}[unit]
    assert parse_go_duration(f"{amount}{unit}") == pytest.approx(amount * seconds)


@given(st.text(max_size=8))
def test_go_duration_parser_never_crashes(text: str) -> None:
    outcome: float | str
    try:
        outcome = parse_go_duration(text)
    except ValueError as error:
        outcome = str(error)
    assert (isinstance(outcome, float) and outcome >= 0) or "is not a duration" in str(outcome)
