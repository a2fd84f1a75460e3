"""Upstream's default plugin set (pkg/scheduler/apis/config/v1/default_plugins.go), with
DynamicResources before DefaultPreemption as upstream adds it since DRA is on by default."""

from __future__ import annotations

from scheduler_runtime.config.types import Plugin, Plugins, PluginSet

# Order matters: it is the order the framework runs the plugins in at every extension point.
DEFAULT_MULTI_POINT: tuple[tuple[str, int], ...] = (
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
    ("DynamicResources", 2),
    ("DefaultPreemption", 0),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("DefaultBinder", 0),
)


def default_plugins() -> Plugins:
    """A fresh copy of the defaults: everything under multiPoint."""
    enabled = tuple(Plugin(name=name, weight=weight) for name, weight in DEFAULT_MULTI_POINT)
    return Plugins(multi_point=PluginSet(enabled=enabled))
