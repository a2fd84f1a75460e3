"""Upstream's default plugin set (pkg/scheduler/apis/config/v1/default_plugins.go) of each
emulated minor: the plugins every release has, then what `applyFeatureGates` adds for the
gates that are on."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from pydantic.alias_generators import to_camel

from scheduler_runtime.config.features import DEFAULTS, NEWEST, FeatureGates, version_key
from scheduler_runtime.config.types import KubeSchedulerProfile, Plugin, Plugins, PluginSet
from scheduler_runtime.framework.features import Features

Defaults = tuple[tuple[str, int], ...]

# Order matters: it is the order the framework runs the plugins in at every extension point.
BASE_MULTI_POINT: Final[Defaults] = (
    ("SchedulingGates", 0),
    ("PrioritySort", 0),
    ("NodeUnschedulable", 0),
    ("NodeName", 0),
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodePorts", 0),
    ("NodeResourcesFit", 1),
    ("VolumeRestrictions", 0),
    ("NodeVolumeLimits", 0),
    ("VolumeBinding", 0),
    ("VolumeZone", 0),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("DefaultPreemption", 0),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("DefaultBinder", 0),
)


def base_multi_point(version: str = NEWEST) -> Defaults:
    """getDefaultPlugins' list before the gates: 1.37 runs NodeName before NodeUnschedulable."""
    if version_key(version) < (1, 37):
        return BASE_MULTI_POINT
    plugins = list(BASE_MULTI_POINT)
    plugins[2], plugins[3] = plugins[3], plugins[2]
    return tuple(plugins)


# Plugins that do nothing in kube-scheduler while a gate is off, by the gate. kube-scheduler
# accepts a profile that names one of them with that gate off (the v1.36.3 binary starts with
# it), so the configuration does too, and says so (`inert_plugins`).
INERT_WITHOUT: Final[Mapping[str, str]] = {
    "NodeDeclaredFeatures": "NodeDeclaredFeatures",  # its New returns a disabled plugin
    "GangScheduling": "GenericWorkload",  # no pod names a pod group
    "TopologyPlacementGenerator": "TopologyAwareWorkloadScheduling",  # placement never runs
    "PodGroupPodsCount": "TopologyAwareWorkloadScheduling",
}


def default_multi_point(features: Features, version: str = NEWEST) -> Defaults:
    """getDefaultPlugins with applyFeatureGates of that minor, in its order:
    NodeDeclaredFeatures appended; (1.37) DeferredPodScheduling before NodeResourcesFit;
    DynamicResources (weight 2) before DefaultPreemption, so an idle claim is deallocated
    before a pod is evicted; GangScheduling appended (its own gate until 1.36,
    GenericWorkload's from 1.37: `features` say so either way); TopologyPlacementGenerator and
    PodGroupPodsCount (weight 1) appended."""
    plugins = list(base_multi_point(version))
    if features.node_declared_features:
        plugins.append(("NodeDeclaredFeatures", 0))
    if features.in_place_pod_vertical_scaling_scheduler_preemption:
        fit = [name for name, _ in plugins].index("NodeResourcesFit")
        plugins.insert(fit, ("DeferredPodScheduling", 0))
    if features.dynamic_resource_allocation:
        preemption = [name for name, _ in plugins].index("DefaultPreemption")
        plugins.insert(preemption, ("DynamicResources", 2))
    if features.gang_scheduling:
        plugins.append(("GangScheduling", 0))
    if features.topology_aware_workload_scheduling:
        plugins += [("TopologyPlacementGenerator", 0), ("PodGroupPodsCount", 1)]
    return tuple(plugins)


# The defaults of the newest minor, with its own gates.
DEFAULT_MULTI_POINT: Final[Defaults] = default_multi_point(DEFAULTS.features)


def default_plugins(features: Features | None = None, version: str = NEWEST) -> Plugins:
    """A fresh copy of a minor's defaults for these gates (that minor's own by default):
    everything under multiPoint."""
    if features is None:
        features = FeatureGates(version=version).features
    chosen = default_multi_point(features, version)
    enabled = tuple(Plugin(name=name, weight=weight) for name, weight in chosen)
    return Plugins(multi_point=PluginSet(enabled=enabled))


def inert_plugins(profiles: Sequence[KubeSchedulerProfile], gates: FeatureGates) -> list[str]:
    """Where a profile names a plugin whose gate is off: one line each, naming the field and
    the gate."""
    found = []
    for index, profile in enumerate(profiles):
        for point, plugin_set in profile.plugins:
            for position, plugin in enumerate(plugin_set.enabled):
                gate = INERT_WITHOUT.get(plugin.name)
                if gate is None or gates.scheduling(gate):
                    continue
                found.append(
                    f"profiles[{index}].plugins.{to_camel(point)}.enabled[{position}].name: "
                    f"plugin {plugin.name!r} does nothing while feature gate {gate} is off"
                )
    return found
