"""From a KubeSchedulerConfiguration document to per-profile plugin lists, the way upstream's
defaulting (mergePlugins) and framework construction (expandMultiPointPlugins,
getScoreWeights) do it, with every mistake reported against the field that caused it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from scheduler_runtime.config.defaults import default_multi_point
from scheduler_runtime.config.errors import ConfigError, from_validation_error
from scheduler_runtime.config.features import NEWEST, FeatureGates
from scheduler_runtime.config.types import (
    API_VERSION,
    DEFAULT_SCHEDULER_NAME,
    KubeSchedulerConfiguration,
    KubeSchedulerProfile,
    PluginConfig,
    Plugins,
)
from scheduler_runtime.framework.features import Features
from scheduler_runtime.framework.interface import missing_state_failure
from scheduler_runtime.framework.profile import ResolvedProfile
from scheduler_runtime.framework.registry import EXTENSION_POINTS, PluginEntry, registry

MULTI_POINT = "multiPoint"


@dataclass(frozen=True)
class _Ref:
    """A plugin named somewhere in the configuration (path is "" for an upstream default)."""

    name: str
    weight: int
    path: str


@dataclass(frozen=True)
class _MergedSet:
    enabled: tuple[_Ref, ...]
    disabled: frozenset[str]


def _profile_path(index: int) -> str:
    return f"profiles[{index}]"


def _merge_set(defaults: tuple[_Ref, ...], plugins: Plugins, point: str, base: str) -> _MergedSet:
    """mergePluginSet: disabled defaults drop out (`*`: all of them), re-enabled defaults are
    replaced in place, other enabled plugins are appended."""
    custom = getattr(plugins, _attribute(point))
    disabled = frozenset(plugin.name for plugin in custom.disabled)
    custom_refs = [
        _Ref(plugin.name, plugin.weight, f"{base}.{point}.enabled[{index}].name")
        for index, plugin in enumerate(custom.enabled)
    ]
    first_by_name: dict[str, int] = {}
    for index, ref in enumerate(custom_refs):
        first_by_name.setdefault(ref.name, index)
    replaced: set[int] = set()
    enabled: list[_Ref] = []
    if "*" not in disabled:
        for default in defaults:
            if default.name in disabled:
                continue
            position = first_by_name.get(default.name)
            if position is None:
                enabled.append(default)
            else:
                enabled.append(custom_refs[position])
                replaced.add(position)
    enabled.extend(ref for index, ref in enumerate(custom_refs) if index not in replaced)
    return _MergedSet(tuple(enabled), disabled)


def _attribute(point: str) -> str:
    return "".join("_" + char.lower() if char.isupper() else char for char in point)


def _entry(ref: _Ref, known: Mapping[str, PluginEntry]) -> PluginEntry:
    entry = known.get(ref.name)
    if entry is None:
        raise ConfigError(ref.path, f"unknown plugin {ref.name!r}")
    return entry


def _expand_point(
    point: str, specific: _MergedSet, multi: _MergedSet, known: Mapping[str, PluginEntry]
) -> tuple[str, ...]:
    """expandMultiPointPlugins for one extension point: plugins configured at the point
    itself override multiPoint; the result is overrides, then multiPoint plugins, then the
    rest of the point's own plugins."""
    own: list[str] = []
    for ref in specific.enabled:
        if point not in _entry(ref, known).extension_points:
            raise ConfigError(ref.path, f"plugin {ref.name!r} does not implement {point}")
        if ref.name in own:
            raise ConfigError(ref.path, f"plugin {ref.name!r} is already enabled for {point}")
        own.append(ref.name)
    if "*" in specific.disabled:
        return tuple(own)
    overrides: list[str] = []
    from_multi: list[str] = []
    for ref in multi.enabled:
        entry = _entry(ref, known)
        if point not in entry.extension_points or ref.name in specific.disabled:
            continue
        if ref.name in own:
            if ref.name not in overrides:
                overrides.append(ref.name)
            continue
        if ref.name in from_multi:
            raise ConfigError(ref.path, f"plugin {ref.name!r} is already enabled for {point}")
        from_multi.append(ref.name)
    rest = [name for name in own if name not in overrides]
    return (*overrides, *from_multi, *rest)


def _check_multi_point(multi: _MergedSet, known: Mapping[str, PluginEntry]) -> None:
    seen: set[str] = set()
    for ref in multi.enabled:
        _entry(ref, known)
        if ref.name in seen:
            raise ConfigError(ref.path, f"plugin {ref.name!r} is already enabled in multiPoint")
        seen.add(ref.name)


def _score_weights(
    score: _MergedSet, multi: _MergedSet, scorers: tuple[str, ...]
) -> dict[str, int]:
    """getScoreWeights: a weight given at `score` beats one given at multiPoint; 0 means 1."""
    weights: dict[str, int] = {}
    for ref in (*score.enabled, *multi.enabled):
        if ref.name in scorers and ref.name not in weights:
            weights[ref.name] = ref.weight or 1
    return weights


def _check_framework_shape(points: Mapping[str, tuple[str, ...]], base: str) -> None:
    if not points["queueSort"]:
        raise ConfigError(f"{base}.plugins.queueSort", "no queueSort plugin is enabled")
    if len(points["queueSort"]) > 1:
        raise ConfigError(f"{base}.plugins.queueSort", "only one queueSort plugin can be enabled")
    if not points["bind"]:
        raise ConfigError(f"{base}.plugins.bind", "at least one bind plugin is needed")


def check_state_needs(
    points: Mapping[str, tuple[str, ...]],
    known: Mapping[str, PluginEntry],
    base: str,
    features: Features,
) -> None:
    """Refuses a profile that runs a plugin at an extension point but not at the earlier one
    where it writes what it reads there (VolumeBinding at reserve without preFilter, say):
    kube-scheduler accepts such a profile and then fails every pod with it."""
    for point in ("filter", "preScore", "score", "reserve", "preBind", "postFilter"):
        for name in points[point]:
            need = known[name].state_needs.get(point)
            if need is None or not need.needed(features) or name in points[need.written_at]:
                continue
            failure = missing_state_failure(point, name, need)
            outcome = (
                f"a pod that fits no node would get {failure!r} instead of preemption"
                if point == "postFilter"
                else f"every pod would fail with {failure!r}"
            )
            raise ConfigError(
                f"{base}.plugins.{need.written_at}",
                f"plugin {name!r} runs at {point} but not at {need.written_at}, where it "
                f"prepares what it reads at {point}: {outcome}, as in kube-scheduler; "
                f"enable it at {need.written_at} too, or disable it at {point}",
            )


def _typed_args(
    config: PluginConfig, path: str, known: Mapping[str, PluginEntry], features: Features
) -> BaseModel | None:
    entry = known.get(config.name)
    if entry is None:
        raise ConfigError(f"{path}.name", f"unknown plugin {config.name!r}")
    raw: dict[str, Any] = dict(config.args or {})
    api_version = raw.pop("apiVersion", None)
    kind = raw.pop("kind", None)
    if api_version is not None and api_version != API_VERSION:
        raise ConfigError(f"{path}.args.apiVersion", f"must be {API_VERSION!r}")
    if kind is not None and kind != f"{config.name}Args":
        raise ConfigError(f"{path}.args.kind", f"must be {config.name + 'Args'!r}")
    if entry.args_type is None:
        if raw:
            raise ConfigError(f"{path}.args", f"plugin {config.name!r} takes no args")
        return None
    try:
        # Some args are checked against the gates, as kube-scheduler validates them.
        return entry.args_type.model_validate(raw, context={"features": features})
    except ValidationError as error:
        raise from_validation_error(error, f"{path}.args") from None


def _plugin_args(
    profile: KubeSchedulerProfile,
    base: str,
    names: tuple[str, ...],
    known: Mapping[str, PluginEntry],
    features: Features,
) -> dict[str, BaseModel | None]:
    given: dict[str, BaseModel | None] = {}
    for index, config in enumerate(profile.plugin_config):
        path = f"{base}.pluginConfig[{index}]"
        if config.name in given:
            raise ConfigError(f"{path}.name", f"duplicate pluginConfig for {config.name!r}")
        given[config.name] = _typed_args(config, path, known, features)
    args: dict[str, BaseModel | None] = {}
    for name in names:
        if name in given:
            args[name] = given[name]
        else:
            args_type = known[name].args_type
            # Some defaults follow the gates (VolumeBindingArgs.shape).
            args[name] = (
                None
                if args_type is None
                else args_type.model_validate({}, context={"features": features})
            )
    return args


def resolve_profile(
    profile: KubeSchedulerProfile,
    index: int,
    scheduler_name: str,
    *,
    strict: bool = True,
    known: Mapping[str, PluginEntry] | None = None,
    features: Features | None = None,
    version: str = NEWEST,
) -> ResolvedProfile:
    """One profile's plugins per extension point, weights and typed args. `strict` refuses
    profiles that would fail every pod (check_state_needs); `known` are the plugins the
    scheduler has (default: this runtime's registry); `features` the gates, which choose the
    default plugins with the Kubernetes minor `version` (default: that minor's own gates)."""
    known = registry() if known is None else known
    base = _profile_path(index)
    plugins_path = f"{base}.plugins"
    features = features or FeatureGates(version=version).features
    chosen = default_multi_point(features, version)
    defaults = tuple(_Ref(name, weight, "") for name, weight in chosen)
    multi = _merge_set(defaults, profile.plugins, MULTI_POINT, plugins_path)
    _check_multi_point(multi, known)
    merged = {
        point: _merge_set((), profile.plugins, point, plugins_path) for point in EXTENSION_POINTS
    }
    points = {
        point: _expand_point(point, merged[point], multi, known) for point in EXTENSION_POINTS
    }
    _check_framework_shape(points, base)
    if strict:
        check_state_needs(points, known, base, features)
    weights = _score_weights(merged["score"], multi, points["score"])
    placement = _score_weights(merged["placementScore"], multi, points["placementScore"])
    names = tuple(dict.fromkeys(name for plugins in points.values() for name in plugins))
    return ResolvedProfile(
        scheduler_name=scheduler_name,
        percentage_of_nodes_to_score=profile.percentage_of_nodes_to_score,
        plugins=points,
        score_weights=weights,
        plugin_args=_plugin_args(profile, base, names, known, features),
        placement_score_weights=placement,
    )


def scheduler_names(document: KubeSchedulerConfiguration) -> list[str]:
    """Each profile's schedulerName; only a lone profile may leave it unset."""
    if not document.profiles:
        return [DEFAULT_SCHEDULER_NAME]
    names: list[str] = []
    for index, profile in enumerate(document.profiles):
        name = profile.scheduler_name
        if name is None and len(document.profiles) == 1:
            name = DEFAULT_SCHEDULER_NAME
        if not name:
            raise ConfigError(f"profiles[{index}].schedulerName", "required field is missing")
        if name in names:
            raise ConfigError(f"profiles[{index}].schedulerName", f"duplicate value {name!r}")
        names.append(name)
    return names


def check_common_queue_sort(profiles: tuple[ResolvedProfile, ...]) -> None:
    """All profiles of one scheduler share one queue, so they must sort it the same way."""
    first = profiles[0].enabled("queueSort")
    for index, profile in enumerate(profiles[1:], start=1):
        if profile.enabled("queueSort") != first:
            raise ConfigError(
                f"profiles[{index}].plugins.queueSort",
                "queueSort must be the same for all profiles",
            )
