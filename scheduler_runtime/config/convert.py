"""Rewriting a `kubescheduler.config.k8s.io/v1beta2` or `v1beta3` configuration (which
kube-scheduler stopped serving in 1.28 and 1.29) as `v1`, keeping what it meant.

Upstream's rules between the versions, applied in order, each change said in one line:

- the apiVersion, of the document and of every plugin's args;
- fields v1 no longer has (v1beta2's `healthzBindAddress` and `metricsBindAddress`: health
  and metrics are served on the secure port);
- plugins v1 no longer has, dropped wherever they are named (enabled, disabled, their
  pluginConfig): `SelectorSpread` (PodTopologySpread's system defaults spread pods the same
  way), `NodePreferAvoidPods`, the in-tree volume limits merged into `NodeVolumeLimits`, and
  the scoring plugins folded into `NodeResourcesFit`'s `scoringStrategy` before v1beta2;
- v1beta2's default score weights, which v1 changed (TaintToleration 3, NodeAffinity 2,
  InterPodAffinity 2, where v1beta2 weighed each 1): written out, so scores stay as they were.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from scheduler_runtime.config.errors import ConfigError
from scheduler_runtime.config.types import API_VERSION, KIND, Plugins

V1BETA2: Final = "kubescheduler.config.k8s.io/v1beta2"
V1BETA3: Final = "kubescheduler.config.k8s.io/v1beta3"
# The release of kube-scheduler that stopped serving each version.
REMOVED_IN: Final = {V1BETA2: "1.28", V1BETA3: "1.29"}

REMOVED_FIELDS: Final = {
    "healthzBindAddress": "health is served on the secure port (--secure-port)",
    "metricsBindAddress": "metrics are served on the secure port (--secure-port)",
}
REMOVED_PLUGINS: Final = {
    "SelectorSpread": "removed in v1; PodTopologySpread's system default constraints spread "
    "pods of a Service or controller the same way",
    "NodePreferAvoidPods": "removed in v1beta3 (the node annotation it read is gone)",
    "EBSLimits": "removed; NodeVolumeLimits counts these volumes through CSI migration",
    "GCEPDLimits": "removed; NodeVolumeLimits counts these volumes through CSI migration",
    "AzureDiskLimits": "removed; NodeVolumeLimits counts these volumes through CSI migration",
    "CinderLimits": "removed; NodeVolumeLimits counts these volumes through CSI migration",
    "NodeResourcesLeastAllocated": "removed; use NodeResourcesFit's scoringStrategy "
    "(type LeastAllocated, the default)",
    "NodeResourcesMostAllocated": "removed; use NodeResourcesFit's scoringStrategy "
    "(type MostAllocated)",
    "RequestedToCapacityRatio": "removed; use NodeResourcesFit's scoringStrategy "
    "(type RequestedToCapacityRatio)",
    "NodeLabel": "removed; use NodeAffinity (its addedAffinity args apply to every pod)",
    "ServiceAffinity": "removed; use InterPodAffinity",
}
# v1beta2's default score weights where v1's differ: (v1beta2, v1).
V1BETA2_SCORE_WEIGHTS: Final = {
    "TaintToleration": (1, 3),
    "NodeAffinity": (1, 2),
    "InterPodAffinity": (1, 2),
}
# Every field of a profile's plugins, as the file spells it (multiPoint included).
POINTS: Final = tuple(str(spec.alias) for spec in Plugins.model_fields.values())


@dataclass
class Conversion:
    """The v1 document, and what was changed to make it, one line each."""

    document: dict[str, Any]
    changes: list[str] = field(default_factory=list)


def removed_version_hint(api_version: object) -> str | None:
    """The reason an old apiVersion is refused, with the way out; None for other values."""
    if api_version not in REMOVED_IN:
        return None
    return (
        f"{api_version} is no longer served (kube-scheduler removed it in "
        f"{REMOVED_IN[str(api_version)]}); `scheduler-runtime convert-config FILE` rewrites "
        f"it as {API_VERSION}"
    )


def convert(doc: Mapping[str, Any]) -> Conversion:
    """A v1beta2/v1beta3 KubeSchedulerConfiguration as v1 (a v1 one unchanged)."""
    if not isinstance(doc, Mapping):
        raise ConfigError("<root>", "must be a KubeSchedulerConfiguration mapping")
    version, kind = doc.get("apiVersion"), doc.get("kind")
    if kind != KIND:
        raise ConfigError("kind", f"must be {KIND!r}")
    result = Conversion(copy.deepcopy(dict(doc)))
    if version == API_VERSION:
        result.changes.append(f"already {API_VERSION}: nothing to change")
        return result
    if version not in REMOVED_IN:
        raise ConfigError("apiVersion", f"must be {V1BETA2!r}, {V1BETA3!r} or {API_VERSION!r}")
    converted = result.document
    converted["apiVersion"] = API_VERSION
    result.changes.append(f"apiVersion: {version} -> {API_VERSION}")
    for name, why in REMOVED_FIELDS.items():
        if name in converted:
            del converted[name]
            result.changes.append(f"{name}: removed ({why})")
    profiles = converted.get("profiles") or []
    if version == V1BETA2 and not profiles:
        profiles = converted["profiles"] = [{}]
    if not isinstance(profiles, list):
        raise ConfigError("profiles", "must be a list")
    for index, profile in enumerate(profiles):
        if not isinstance(profile, dict):
            raise ConfigError(f"profiles[{index}]", "must be an object")
        _convert_profile(profile, f"profiles[{index}]", version, result.changes)
    return result


def _convert_profile(
    profile: dict[str, Any], path: str, version: object, changes: list[str]
) -> None:
    plugins = profile.get("plugins")
    if plugins is not None and not isinstance(plugins, dict):
        raise ConfigError(f"{path}.plugins", "must be an object")
    plugins = plugins or {}
    _drop_removed_plugins(plugins, path, changes)
    configs = profile.get("pluginConfig")
    if isinstance(configs, list):
        profile["pluginConfig"] = _converted_plugin_config(configs, path, changes)
    if version == V1BETA2:
        _keep_v1beta2_weights(plugins, path, changes)
        if plugins:
            profile["plugins"] = plugins


def _drop_removed_plugins(plugins: dict[str, Any], path: str, changes: list[str]) -> None:
    for point in POINTS:
        plugin_set = plugins.get(point)
        if not isinstance(plugin_set, dict):
            continue
        for which in ("enabled", "disabled"):
            listed = plugin_set.get(which)
            if not isinstance(listed, list):
                continue
            kept = []
            for entry in listed:
                name = entry.get("name") if isinstance(entry, dict) else None
                if name in REMOVED_PLUGINS:
                    changes.append(
                        f"{path}.plugins.{point}.{which}: {name} dropped ({REMOVED_PLUGINS[name]})"
                    )
                    continue
                kept.append(entry)
            plugin_set[which] = kept


def _converted_plugin_config(configs: list[Any], path: str, changes: list[str]) -> list[Any]:
    kept = []
    for index, config in enumerate(configs):
        name = config.get("name") if isinstance(config, dict) else None
        if name in REMOVED_PLUGINS:
            changes.append(f"{path}.pluginConfig[{index}]: {name}'s args dropped (plugin removed)")
            continue
        args = config.get("args") if isinstance(config, dict) else None
        if isinstance(args, dict) and args.get("apiVersion") in REMOVED_IN:
            changes.append(
                f"{path}.pluginConfig[{index}].args.apiVersion: {args['apiVersion']} -> "
                f"{API_VERSION}"
            )
            args["apiVersion"] = API_VERSION
        kept.append(config)
    return kept


def _keep_v1beta2_weights(plugins: dict[str, Any], path: str, changes: list[str]) -> None:
    """Writes v1beta2's default score weights where v1's differ, unless the profile already
    weighs (or drops) the plugin at score."""
    score = plugins.get("score")
    score = score if isinstance(score, dict) else {}
    disabled = {e.get("name") for e in score.get("disabled") or () if isinstance(e, dict)}
    enabled = {e.get("name") for e in score.get("enabled") or () if isinstance(e, dict)}
    if "*" in disabled:
        return
    kept = []
    for name, (old, new) in V1BETA2_SCORE_WEIGHTS.items():
        if name in disabled or name in enabled:
            continue
        score.setdefault("enabled", []).append({"name": name, "weight": old})
        kept.append(f"{name} {old} (v1: {new})")
    if kept:
        plugins["score"] = score
        changes.append(f"{path}.plugins.score: v1beta2's default weights kept: {', '.join(kept)}")
