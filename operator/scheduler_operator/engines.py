"""What each engine accepts, beyond what the CRD schema can check statically."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any, Final

from scheduler_runtime.config import ConfigError, check_profiles, load_configuration
from scheduler_runtime.config.features import FeatureGates, feature_gates, version_key
from scheduler_runtime.framework.registry import IN_TREE, PluginEntry, PluginLoadError
from scheduler_runtime.framework.runtime import FrameworkError

from .errors import SpecError
from .model import Engine, Profile, SchedulerProfile, extension_points
from .releases import Release, offline
from .render.config import scheduler_configuration

# The in-tree plugins registered by kube-scheduler v1.36 (pkg/scheduler/framework/plugins).
UPSTREAM_PLUGINS: Final = frozenset(
    {
        "DefaultBinder",
        "DefaultPreemption",
        "DynamicResources",
        "GangScheduling",
        "ImageLocality",
        "InterPodAffinity",
        "NodeAffinity",
        "NodeDeclaredFeatures",
        "NodeName",
        "NodePorts",
        "NodeResourcesBalancedAllocation",
        "NodeResourcesFit",
        "NodeUnschedulable",
        "NodeVolumeLimits",
        "PodGroupPodsCount",
        "PodTopologySpread",
        "PrioritySort",
        "SchedulingGates",
        "TaintToleration",
        "TopologyPlacementGenerator",
        "VolumeBinding",
        "VolumeRestrictions",
        "VolumeZone",
    }
)

# The plugins a minor's kube-scheduler does not register yet (its registry.go). 1.37's new
# DeferredPodScheduling is not among the runtime's plugins, so it is not known here either.
ADDED_IN: Final[Mapping[str, str]] = {
    "PodGroupPodsCount": "1.36",
    "TopologyPlacementGenerator": "1.36",
}

# The top-level fields of each in-tree *Args type (k8s.io/kube-scheduler/config/v1), with
# their JSON type; kube-scheduler decodes plugin args strictly, so any other field fails it.
_TYPE_META: Final = {"apiVersion": str, "kind": str}
UPSTREAM_ARGS: Final[Mapping[str, Mapping[str, type]]] = {
    "DefaultPreemption": {
        "minCandidateNodesPercentage": int,
        "minCandidateNodesAbsolute": int,
    },
    "InterPodAffinity": {"hardPodAffinityWeight": int, "ignorePreferredTermsOfExistingPods": bool},
    "NodeAffinity": {"addedAffinity": dict},
    "NodeResourcesBalancedAllocation": {"resources": list},
    "NodeResourcesFit": {
        "ignoredResources": list,
        "ignoredResourceGroups": list,
        "scoringStrategy": dict,
    },
    "PodTopologySpread": {"defaultConstraints": list, "defaultingType": str},
    "VolumeBinding": {"bindTimeoutSeconds": int, "shape": list},
    "DynamicResources": {"filterTimeout": str, "bindingTimeout": str},
}

DEFAULT_QUEUE_SORT: Final = ("PrioritySort",)
FEATURE_GATES: Final = "spec.featureGates"
_JSON_TYPE_NAMES: Final = {
    int: "an integer",
    bool: "a boolean",
    str: "a string",
    list: "a list",
    dict: "an object",
}


def validate(
    profile: SchedulerProfile,
    config: Mapping[str, Any] | None = None,
    release: Release | None = None,
) -> tuple[str, ...]:
    """Raises SpecError for what the chosen engine would refuse at start-up; `config` is the
    profile's scheduler configuration, when the caller has it already; `release` what the
    scheduler runs (by default as on a cluster of the pinned release). Returns what the
    engine would take but the author should know (a plugin whose feature gate is off)."""
    release = release or offline(profile.spec.kubernetes_version)
    for index, entry in enumerate(profile.profiles()):
        check_duplicates(f"spec.profiles[{index}]", entry)
    check_queue_sort(profile.profiles())
    gates = spec_feature_gates(profile, release.emulated)
    config = scheduler_configuration(profile) if config is None else config
    if profile.spec.engine is Engine.KUBE_SCHEDULER:
        for index, entry in enumerate(profile.profiles()):
            check_upstream_profile(f"spec.profiles[{index}]", entry, release.emulated)
        return check_upstream_configuration(config, gates)
    return check_runtime(config, gates)


def spec_feature_gates(profile: SchedulerProfile, minor: str) -> FeatureGates:
    """spec.featureGates as kube-scheduler's --feature-gates takes them (the same gates,
    locks and dependencies for both engines, those of the minor the scheduler runs; the
    runtime's own limits come with its check)."""
    try:
        return feature_gates(profile.spec.feature_gates, path=FEATURE_GATES, version=minor)
    except ConfigError as error:
        raise SpecError(error.path, error.reason) from None


def upstream_plugins(minor: str) -> frozenset[str]:
    """The in-tree plugins kube-scheduler of that minor registers."""
    return frozenset(
        name
        for name in UPSTREAM_PLUGINS
        if version_key(minor) >= version_key(ADDED_IN.get(name, minor))
    )


@cache
def upstream_registry(minor: str) -> Mapping[str, PluginEntry]:
    """kube-scheduler's in-tree plugins of a minor as the runtime registers them: it has each
    one, with upstream's extension points, state needs and args (upstream's rules)."""
    runtime = {entry.name: entry for entry in IN_TREE}
    return {name: runtime[name] for name in sorted(upstream_plugins(minor))}


def check_upstream_configuration(config: Mapping[str, Any], gates: FeatureGates) -> tuple[str, ...]:
    """The configuration checks the runtime makes where kube-scheduler means the same: the
    merge rules (plugins per extension point, duplicates, queueSort and bind), the args of
    the plugins both have (upstream's validation rules), leader election, and profiles that
    would fail every pod."""
    try:
        loaded = load_configuration(
            config, known=upstream_registry(gates.version), feature_gates=gates
        )
    except ConfigError as error:
        reason = error.reason.replace("does not implement", "does not extend")
        raise SpecError(spec_path(error.path), reason) from None
    return tuple(f"spec.{warning}" for warning in loaded.warnings)


def spec_path(path: str) -> str:
    """A configuration's field as the spec names it (the configuration mirrors the spec
    field for field, so only the root differs; the gates are named already)."""
    if path == "<root>":
        return "spec"
    return path if path.startswith("spec.") else f"spec.{path}"


def check_runtime(config: Mapping[str, Any], gates: FeatureGates) -> tuple[str, ...]:
    """The Python runtime judges its own configuration, installed plugins included."""
    try:
        loaded = load_configuration(config, feature_gates=gates)
    except ConfigError as error:
        raise SpecError(spec_path(error.path), error.reason) from None
    except ValueError as error:  # a plugin's args type that cannot default itself
        raise SpecError("spec.profiles", str(error).splitlines()[0]) from None
    try:
        # Builds each profile's plugins as the scheduler will at start-up. Out-of-tree plugins
        # are third-party code, so whatever their constructors raise is the verdict.
        check_profiles(loaded)
    except (FrameworkError, PluginLoadError, ValueError, TypeError) as error:
        raise SpecError("spec.profiles", str(error).splitlines()[0]) from None
    return tuple(f"spec.{warning}" for warning in loaded.warnings)


def check_duplicates(path: str, profile: Profile) -> None:
    if profile.plugins is None:
        return
    for point, plugins in extension_points(profile.plugins).items():
        seen: set[str] = set()
        for index, plugin in enumerate(plugins.enabled):
            if plugin.name in seen:
                raise SpecError(
                    f"{path}.plugins.{point}.enabled[{index}].name",
                    f"plugin {plugin.name!r} is enabled twice",
                )
            seen.add(plugin.name)


def queue_sort(profile: Profile) -> tuple[str, ...]:
    """The queueSort plugins a profile ends up with (PrioritySort unless it names others)."""
    explicit = profile.plugins and profile.plugins.queue_sort
    names = tuple(p.name for p in explicit.enabled) if explicit else ()
    return names or DEFAULT_QUEUE_SORT


def check_queue_sort(profiles: list[Profile]) -> None:
    """All profiles of one scheduler share its single queue, so they must sort it alike."""
    first = queue_sort(profiles[0])
    for index, profile in enumerate(profiles[1:], start=1):
        if queue_sort(profile) != first:
            raise SpecError(
                f"spec.profiles[{index}].plugins.queueSort",
                f"uses {list(queue_sort(profile))} but profile 0 uses {list(first)}; "
                "all profiles of one scheduler must use the same queueSort plugin",
            )


def check_upstream_profile(path: str, profile: Profile, minor: str) -> None:
    known = upstream_plugins(minor)
    if profile.plugins is not None:
        for point, plugins in extension_points(profile.plugins).items():
            for kind, listed in (("enabled", plugins.enabled), ("disabled", plugins.disabled)):
                for index, plugin in enumerate(listed):
                    if plugin.name == "*" and kind == "disabled":
                        continue
                    where = f"{path}.plugins.{point}.{kind}[{index}].name"
                    check_upstream_name(where, plugin.name, known, minor)
    for index, config in enumerate(profile.plugin_config):
        entry = f"{path}.pluginConfig[{index}]"
        check_upstream_name(f"{entry}.name", config.name, known, minor)
        check_upstream_args(f"{entry}.args", config.name, config.args or {})


def check_upstream_name(path: str, name: str, known: frozenset[str], minor: str) -> None:
    if name in known:
        return
    if name in UPSTREAM_PLUGINS:
        raise SpecError(
            path, f"plugin {name!r} is not in kube-scheduler {minor}: it came in {ADDED_IN[name]}"
        )
    raise SpecError(path, f"unknown plugin {name!r} for engine KubeScheduler")


def check_upstream_args(path: str, plugin: str, args: Mapping[str, Any]) -> None:
    fields = UPSTREAM_ARGS.get(plugin)
    if fields is None:
        if args:
            raise SpecError(path, f"plugin {plugin!r} takes no args")
        return
    allowed = {**_TYPE_META, **fields}
    for key, value in args.items():
        expected = allowed.get(key)
        if expected is None:
            raise SpecError(f"{path}.{key}", f"unknown field for {plugin}Args")
        if not is_json_type(value, expected):
            raise SpecError(f"{path}.{key}", f"must be {_JSON_TYPE_NAMES[expected]}")
    kind = args.get("kind")
    if kind is not None and kind != f"{plugin}Args":
        raise SpecError(f"{path}.kind", f"must be {plugin}Args")


def is_json_type(value: Any, expected: type) -> bool:
    # bool is a subclass of int in Python but not in JSON.
    if expected is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, expected)
