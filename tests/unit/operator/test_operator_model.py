"""The SchedulerProfile model: defaults, resolved names, errors that name the field."""

from __future__ import annotations

from typing import Any

import pytest
from scheduler_operator import guards, model
from scheduler_operator.errors import SpecError
from scheduler_operator.model import Engine
from scheduler_operator.parsing import parse

from scheduler_runtime.config import types


def body(spec: dict[str, Any] | None = None, name: str = "tenant") -> dict[str, Any]:
    return {"metadata": {"name": name, "uid": "u-1"}, "spec": spec or {}}


def test_an_empty_spec_is_one_default_profile_named_after_the_object() -> None:
    profile = parse(body())
    assert profile.scheduler_name == "tenant"
    assert profile.scheduler_names() == ["tenant"]
    assert profile.spec.engine is Engine.PYTHON_RUNTIME
    assert profile.spec.namespace == "schedulers"
    assert profile.spec.replicas == 1


def test_the_profile_without_a_name_takes_the_scheduler_name() -> None:
    profile = parse(body({"schedulerName": "batch", "profiles": [{"schedulerName": "spread"}, {}]}))
    assert profile.scheduler_names() == ["spread", "batch"]


@pytest.mark.parametrize("replicas", [1, 2, 3])
def test_leader_election_is_on_by_default_as_in_kube_scheduler(replicas: int) -> None:
    assert parse(body({"replicas": replicas})).spec.leader_elect() is True


def test_leader_election_can_be_turned_off_for_one_replica() -> None:
    spec = {"replicas": 1, "leaderElection": {"leaderElect": False}}
    assert parse(body(spec)).spec.leader_elect() is False


@pytest.mark.parametrize(
    ("spec", "path", "reason"),
    [
        ({"replicas": 0}, "spec.replicas", "greater than or equal to 1"),
        # Three schedulers of one name, each binding the same pods.
        (
            {"replicas": 3, "leaderElection": {"leaderElect": False}},
            "spec.replicas",
            "more than one replica needs leader election (leaderElection.leaderElect)",
        ),
        ({"engine": "Nomad"}, "spec.engine", "'PythonRuntime' or 'KubeScheduler'"),
        ({"replica": 2}, "spec.replica", "Extra inputs are not permitted"),
        ({"schedulerName": "Not_A_Name"}, "spec.schedulerName", "should match pattern"),
        (
            {"profiles": [{"plugins": {"score": {"enabled": [{"name": "X", "weight": 101}]}}}]},
            "spec.profiles[0].plugins.score.enabled[0].weight",
            "less than or equal to 100",
        ),
        (
            {"profiles": [{"plugins": {"score": {"enabled": [{"name": "X", "weight": 0}]}}}]},
            "spec.profiles[0].plugins.score.enabled[0].weight",
            "greater than or equal to 1",
        ),
        (
            {"profiles": [{"plugins": {"filter": {"disabled": [{"name": "x" * 254}]}}}]},
            "spec.profiles[0].plugins.filter.disabled[0].name",
            "at most 253 characters",
        ),
        (
            {"profiles": [{"plugins": {"preEnqueue": {"enabled": [{"name": "X"}] * 65}}}]},
            "spec.profiles[0].plugins.preEnqueue.enabled",
            "at most 64 items",
        ),
        (
            {"profiles": [{"pluginConfig": [{"name": "x" * 254}]}]},
            "spec.profiles[0].pluginConfig[0].name",
            "at most 253 characters",
        ),
        (
            {"profiles": [{"plugins": {"scoring": {}}}]},
            "spec.profiles[0].plugins.scoring",
            "Extra inputs",
        ),
        (
            {"profiles": [{"schedulerName": "a"}, {"schedulerName": "a"}]},
            "spec.profiles[1].schedulerName",
            "duplicate scheduler name 'a'",
        ),
        (
            {"schedulerName": "a", "profiles": [{"schedulerName": "a"}, {}]},
            "spec.profiles[1].schedulerName",
            "duplicate",
        ),
    ],
)
def test_bad_input_names_the_field(spec: dict[str, Any], path: str, reason: str) -> None:
    with pytest.raises(SpecError) as caught:
        parse(body(spec))
    assert caught.value.path == path
    assert reason in caught.value.reason
    assert str(caught.value).startswith(f"{path}: ")


def test_a_missing_name_is_reported() -> None:
    with pytest.raises(SpecError, match=r"^metadata\.name: is required$"):
        parse({"spec": {}})


def test_the_plugin_models_are_the_runtimes_own() -> None:
    # One definition of a profile's plugins, shared with the runtime's loader.
    assert model.Plugins is types.Plugins
    assert model.PluginSet is types.PluginSet
    assert model.Plugin is types.Plugin
    assert model.PluginConfig is types.PluginConfig


def test_every_extension_point_of_the_runtime_is_one_of_the_api() -> None:
    assert set(model.EXTENSION_POINTS) == {
        info.alias for info in types.Plugins.model_fields.values()
    }
    assert model.EXTENSION_POINTS[0] == "multiPoint"


def nested(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = {"a": value}
    return value


ARGS = "spec.profiles[0].pluginConfig[0].args"


def with_args(args: Any) -> dict[str, Any]:
    return {"profiles": [{"pluginConfig": [{"name": "NodeResourcesFit", "args": args}]}]}


def test_free_form_values_nest_at_most_max_depth_from_the_spec() -> None:
    """The args are the sixth level from the spec (the spec is the first), so they may be 27
    levels deep, themselves included: what the limits policy lets through, the operator takes."""
    deepest = guards.MAX_DEPTH - 5
    guards.check_value(with_args(nested(deepest)), "spec")
    with pytest.raises(SpecError) as too_deep:
        parse(body(with_args(nested(deepest + 1))))
    assert too_deep.value.path.startswith(f"{ARGS}.a.a")
    assert too_deep.value.reason == f"nested deeper than {guards.MAX_DEPTH} levels"
    with pytest.raises(SpecError) as still_too_deep:
        parse(body(with_args(nested(3000))))  # checked without recursion
    assert still_too_deep.value.reason == too_deep.value.reason
    guards.check_value({"affinity": nested(guards.MAX_DEPTH - 1)}, "spec")
    with pytest.raises(SpecError) as affinity:
        parse(body({"affinity": nested(guards.MAX_DEPTH)}))
    assert affinity.value.path.startswith("spec.affinity.a")


@pytest.mark.parametrize(
    ("spec", "path", "limit"),
    [
        (with_args({"blob": "y" * guards.MAX_VALUE_BYTES}), ARGS, guards.MAX_VALUE_BYTES),
        (
            {"affinity": {"blob": "y" * guards.MAX_VALUE_BYTES}},
            "spec.affinity",
            guards.MAX_VALUE_BYTES,
        ),
        (
            {
                "profiles": [
                    {"pluginConfig": [{"name": f"P{i}", "args": {"blob": "y" * 60_000}}]}
                    for i in range(5)
                ]
            },
            "spec",
            guards.MAX_SPEC_BYTES,
        ),
    ],
)
def test_free_form_values_and_the_spec_have_a_size_limit(
    spec: dict[str, Any], path: str, limit: int
) -> None:
    with pytest.raises(SpecError) as caught:
        parse(body(spec))
    assert caught.value.path == path
    assert caught.value.reason.endswith(f"bytes as JSON, more than {limit}")


def test_values_within_the_size_limits_pass() -> None:
    guards.check_sizes(with_args({"blob": "y" * (guards.MAX_VALUE_BYTES - 20)}))
