"""Upstream's default plugin set (pkg/scheduler/apis/config/v1/default_plugins.go): the plugins
every release has, then what `applyFeatureGates` adds for the gates that are on."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from scheduler_runtime.config.types import Plugin, Plugins, PluginSet
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

# The plugins a gate brings into the defaults, and the gate that turns each plugin on: a
# profile that names one of these while its gate is off gets a plugin that does nothing.
GATED_PLUGINS: Final[Mapping[str, str]] = {
    "NodeDeclaredFeatures": "NodeDeclaredFeatures",
    "DynamicResources": "DynamicResourceAllocation",
    "GangScheduling": "GangScheduling",
    "TopologyPlacementGenerator": "TopologyAwareWorkloadScheduling",
    "PodGroupPodsCount": "TopologyAwareWorkloadScheduling",
}


def default_multi_point(features: Features) -> Defaults:
    """getDefaultPlugins with applyFeatureGates, in its order: NodeDeclaredFeatures appended;
    DynamicResources (weight 2) before DefaultPreemption, so an idle claim is deallocated
    before a pod is evicted; GangScheduling appended; TopologyPlacementGenerator and
    PodGroupPodsCount (weight 1) appended."""
    plugins = list(BASE_MULTI_POINT)
    if features.node_declared_features:
        plugins.append(("NodeDeclaredFeatures", 0))
    if features.dynamic_resource_allocation:
        preemption = [name for name, _ in plugins].index("DefaultPreemption")
        plugins.insert(preemption, ("DynamicResources", 2))
    if features.gang_scheduling:
        plugins.append(("GangScheduling", 0))
    if features.topology_aware_workload_scheduling:
        plugins += [("TopologyPlacementGenerator", 0), ("PodGroupPodsCount", 1)]
    return tuple(plugins)


# The defaults with kube-scheduler 1.36's own gates.
DEFAULT_MULTI_POINT: Final[Defaults] = default_multi_point(Features())


def default_plugins(features: Features | None = None) -> Plugins:
    """A fresh copy of the defaults for these gates (kube-scheduler's by default): everything
    under multiPoint."""
    chosen = DEFAULT_MULTI_POINT if features is None else default_multi_point(features)
    enabled = tuple(Plugin(name=name, weight=weight) for name, weight in chosen)
    return Plugins(multi_point=PluginSet(enabled=enabled))
