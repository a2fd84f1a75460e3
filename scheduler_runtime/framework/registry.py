"""Plugins by name: the in-tree plugins and out-of-tree ones installed under the Python
entry-point group `scheduler_runtime.plugins` (name = plugin name, value = `module:Class`).

A plugin is a class constructed as `Class(args, handle)`, with a `name` and an optional
`args_type` (a pydantic model for its `pluginConfig` args). The extension points it implements
follow from the methods it defines (see `EXTENSION_POINT_METHODS`). In-tree plugins are
imported lazily from `scheduler_runtime.plugins.<folder>`, where `<folder>` is the lower-cased
plugin name as upstream spells its package (`noderesources` holds two plugins).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, replace
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
}


class PluginLoadError(ImportError):
    """A plugin named in the registry cannot be imported."""


# The typed args of in-tree plugins live with the configuration, which imports this module.
IN_TREE_ARGS_MODULE = "scheduler_runtime.config.args"


@dataclass(frozen=True)
class PluginEntry:
    """What the configuration needs to know about a plugin before it is built."""

    name: str
    extension_points: frozenset[str]
    target: str  # "module:attribute" of the plugin class
    in_tree: bool = False
    own_args_type: type[BaseModel] | None = None  # an out-of-tree plugin's `args_type`

    @property
    def args_type(self) -> type[BaseModel] | None:
        """The pydantic model of the plugin's `pluginConfig` args (None: it takes none)."""
        if not self.in_tree:
            return self.own_args_type
        args: Mapping[str, type[BaseModel]] = importlib.import_module(
            IN_TREE_ARGS_MODULE
        ).IN_TREE_ARGS
        return args.get(self.name)

    def load(self) -> Any:
        """The plugin class (imported on first use)."""
        module_name, _, attribute = self.target.partition(":")
        try:
            return getattr(importlib.import_module(module_name), attribute)
        except Exception as error:  # a broken plugin module must not take the loader down
            raise PluginLoadError(
                f"plugin {self.name!r} is not available ({self.target}): {error}"
            ) from error


def _in_tree(name: str, folder: str, points: set[str]) -> PluginEntry:
    return PluginEntry(
        name=name,
        extension_points=frozenset(points),
        target=f"scheduler_runtime.plugins.{folder}:{name}",
        in_tree=True,
    )


IN_TREE: tuple[PluginEntry, ...] = (
    _in_tree("SchedulingGates", "schedulinggates", {"preEnqueue"}),
    _in_tree("PrioritySort", "queuesort", {"queueSort"}),
    _in_tree("NodeUnschedulable", "nodeunschedulable", {"filter"}),
    _in_tree("NodeName", "nodename", {"filter"}),
    _in_tree("TaintToleration", "tainttoleration", {"filter", "preScore", "score"}),
    _in_tree("NodeAffinity", "nodeaffinity", {"preFilter", "filter", "preScore", "score"}),
    _in_tree("NodePorts", "nodeports", {"preFilter", "filter"}),
    _in_tree("NodeResourcesFit", "noderesources", {"preFilter", "filter", "preScore", "score"}),
    _in_tree("VolumeRestrictions", "volumerestrictions", {"preFilter", "filter"}),
    _in_tree("NodeVolumeLimits", "nodevolumelimits", {"preFilter", "filter"}),
    _in_tree(
        "VolumeBinding",
        "volumebinding",
        {"preFilter", "filter", "reserve", "preBind", "preScore", "score"},
    ),
    _in_tree("VolumeZone", "volumezone", {"preFilter", "filter"}),
    _in_tree(
        "PodTopologySpread", "podtopologyspread", {"preFilter", "filter", "preScore", "score"}
    ),
    _in_tree("InterPodAffinity", "interpodaffinity", {"preFilter", "filter", "preScore", "score"}),
    _in_tree("DynamicResources", "dynamicresources", {"preFilter", "postFilter"}),
    _in_tree("DefaultPreemption", "defaultpreemption", {"postFilter"}),
    _in_tree("NodeResourcesBalancedAllocation", "noderesources", {"preScore", "score"}),
    _in_tree("ImageLocality", "imagelocality", {"score"}),
    _in_tree("DefaultBinder", "defaultbinder", {"bind"}),
)


def extension_points_of(plugin_class: type) -> frozenset[str]:
    """The extension points a plugin class implements, judged by the methods it defines."""
    return frozenset(
        point
        for point, methods in EXTENSION_POINT_METHODS.items()
        if any(callable(getattr(plugin_class, method, None)) for method in methods)
    )


def _out_of_tree() -> list[PluginEntry]:
    found = []
    for entry_point in entry_points(group=ENTRY_POINT_GROUP):
        try:
            plugin_class = entry_point.load()
        except Exception as error:
            raise PluginLoadError(
                f"plugin {entry_point.name!r} from entry point {entry_point.value!r} "
                f"cannot be loaded: {error}"
            ) from error
        found.append(
            PluginEntry(
                name=entry_point.name,
                extension_points=extension_points_of(plugin_class),
                target=entry_point.value,
                own_args_type=getattr(plugin_class, "args_type", None),
            )
        )
    return found


def _as_implemented(entry: PluginEntry) -> PluginEntry:
    """An in-tree entry with the extension points its class really implements (the table's
    when the class cannot be imported: building a framework with it will then say why)."""
    try:
        plugin_class = entry.load()
    except PluginLoadError:
        return entry
    return replace(entry, extension_points=extension_points_of(plugin_class))


@cache
def registry() -> Mapping[str, PluginEntry]:
    """Every plugin this scheduler can run, by name (in-tree first; out-of-tree may not shadow)."""
    entries = {entry.name: _as_implemented(entry) for entry in IN_TREE}
    for entry in _out_of_tree():
        if entry.name in entries:
            raise PluginLoadError(
                f"plugin {entry.name!r} from entry point {entry.target!r} "
                "has the name of an in-tree plugin"
            )
        entries[entry.name] = entry
    return entries


def known_plugins() -> frozenset[str]:
    """The names a configuration may use."""
    return frozenset(registry())
