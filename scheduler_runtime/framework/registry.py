"""Plugins by name (upstream's Registry): the in-tree plugins, each by the module that holds
it, and out-of-tree ones installed under the Python entry-point group
`scheduler_runtime.plugins` (name = plugin name, value = `module:Class`).

A plugin is a class constructed as `Class(args, handle)`, with a `name` and an optional
`args_type` (a pydantic model for its `pluginConfig` args). The class is the one source of
what the configuration needs to know: the extension points it implements follow from the
methods it defines (see `EXTENSION_POINT_METHODS`), its args from `args_type`. Classes are
imported on first use: listing the registry imports none, resolving a profile imports the
plugins it names. An in-tree plugin lives in `scheduler_runtime.plugins.<folder>`, where
`<folder>` is upstream's package name for it (`noderesources` holds two plugins).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib.metadata import entry_points
from typing import Any

from pydantic import BaseModel

ENTRY_POINT_GROUP = "scheduler_runtime.plugins"

EXTENSION_POINTS = (
    "preEnqueue",
    "queueSort",
    "preFilter",
    "filter",
    "postFilter",
    "preScore",
    "score",
    "reserve",
    "permit",
    "preBind",
    "bind",
    "postBind",
    # The pod group scheduling cycle's (upstream's, behind TopologyAwareWorkloadScheduling).
    "placementGenerate",
    "placementScore",
)

# A plugin implements an extension point when it defines any of these methods.
EXTENSION_POINT_METHODS: Mapping[str, tuple[str, ...]] = {
    "preEnqueue": ("pre_enqueue",),
    "queueSort": ("less",),
    "preFilter": ("pre_filter",),
    "filter": ("filter", "filter_nodes"),
    "postFilter": ("post_filter",),
    "preScore": ("pre_score",),
    "score": ("score", "score_nodes"),
    "reserve": ("reserve",),
    "permit": ("permit",),
    "preBind": ("pre_bind",),
    "bind": ("bind",),
    "postBind": ("post_bind",),
    "placementGenerate": ("generate_placements",),
    "placementScore": ("score_placement",),
}


class PluginLoadError(ImportError):
    """A plugin named in the registry cannot be imported."""


def extension_points_of(plugin_class: type) -> frozenset[str]:
    """The extension points a plugin class implements, judged by the methods it defines."""
    return frozenset(
        point
        for point, methods in EXTENSION_POINT_METHODS.items()
        if any(callable(getattr(plugin_class, method, None)) for method in methods)
    )


@dataclass(frozen=True)
class PluginEntry:
    """A plugin by name; its class is imported when first asked about."""

    name: str
    target: str  # "module:attribute" of the plugin class
    in_tree: bool = False

    def load(self) -> Any:
        """The plugin class."""
        module_name, _, attribute = self.target.partition(":")
        try:
            return getattr(importlib.import_module(module_name), attribute)
        except Exception as error:  # a broken plugin module must not take the loader down
            where = (
                f"is not available ({self.target})"
                if self.in_tree
                else f"from entry point {self.target!r} cannot be loaded"
            )
            raise PluginLoadError(f"plugin {self.name!r} {where}: {error}") from error

    @property
    def extension_points(self) -> frozenset[str]:
        return extension_points_of(self.load())

    @property
    def state_needs(self) -> Mapping[str, Any]:
        """Extension point -> the StateNeed the plugin has there (what it writes earlier)."""
        needs: Mapping[str, Any] = getattr(self.load(), "state_needs", None) or {}
        return needs

    @property
    def args_type(self) -> type[BaseModel] | None:
        """The pydantic model of the plugin's `pluginConfig` args (None: it takes none)."""
        args_type: type[BaseModel] | None = getattr(self.load(), "args_type", None)
        return args_type


def _in_tree(name: str, folder: str) -> PluginEntry:
    return PluginEntry(name, f"scheduler_runtime.plugins.{folder}:{name}", in_tree=True)


IN_TREE: tuple[PluginEntry, ...] = (
    _in_tree("SchedulingGates", "schedulinggates"),
    _in_tree("PrioritySort", "queuesort"),
    _in_tree("NodeUnschedulable", "nodeunschedulable"),
    _in_tree("NodeName", "nodename"),
    _in_tree("TaintToleration", "tainttoleration"),
    _in_tree("NodeAffinity", "nodeaffinity"),
    _in_tree("NodePorts", "nodeports"),
    _in_tree("NodeResourcesFit", "noderesources"),
    _in_tree("VolumeRestrictions", "volumerestrictions"),
    _in_tree("NodeVolumeLimits", "nodevolumelimits"),
    _in_tree("VolumeBinding", "volumebinding"),
    _in_tree("VolumeZone", "volumezone"),
    _in_tree("PodTopologySpread", "podtopologyspread"),
    _in_tree("InterPodAffinity", "interpodaffinity"),
    _in_tree("DynamicResources", "dynamicresources"),
    _in_tree("DefaultPreemption", "defaultpreemption"),
    _in_tree("NodeResourcesBalancedAllocation", "noderesources"),
    _in_tree("ImageLocality", "imagelocality"),
    _in_tree("DefaultBinder", "defaultbinder"),
    _in_tree("NodeDeclaredFeatures", "nodedeclaredfeatures"),
    # Pod groups: upstream's (scheduling.k8s.io/v1alpha2) and scheduler-plugins' Coscheduling.
    _in_tree("GangScheduling", "gangscheduling"),
    _in_tree("TopologyPlacementGenerator", "topologyaware"),
    _in_tree("PodGroupPodsCount", "podgrouppodscount"),
    _in_tree("Coscheduling", "coscheduling"),
)


@cache
def registry() -> Mapping[str, PluginEntry]:
    """Every plugin this scheduler can run, by name (in-tree first; out-of-tree may not shadow)."""
    entries = {entry.name: entry for entry in IN_TREE}
    for entry_point in entry_points(group=ENTRY_POINT_GROUP):
        if entry_point.name in entries:
            raise PluginLoadError(
                f"plugin {entry_point.name!r} from entry point {entry_point.value!r} "
                "has the name of an in-tree plugin"
            )
        entries[entry_point.name] = PluginEntry(entry_point.name, entry_point.value)
    return entries
