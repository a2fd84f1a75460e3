"""Every in-tree plugin honours the interface of each extension point it takes part in; every
filter also filters one node at a time (preemption and nominated pods need that)."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler_runtime.framework import interface
from scheduler_runtime.framework.interface import Handle
from scheduler_runtime.framework.registry import IN_TREE, registry
from scheduler_runtime.framework.snapshot import Snapshot

PROTOCOLS: dict[str, tuple[type[Any], ...]] = {
    "preEnqueue": (interface.PreEnqueuePlugin,),
    "queueSort": (interface.QueueSortPlugin,),
    "preFilter": (interface.PreFilterPlugin,),
    "filter": (interface.FilterPlugin,),
    "postFilter": (interface.PostFilterPlugin,),
    "preScore": (interface.PreScorePlugin,),
    "score": (interface.ScorePlugin, interface.BatchScorePlugin),
    "reserve": (interface.ReservePlugin,),
    "permit": (interface.PermitPlugin,),
    "preBind": (interface.PreBindPlugin,),
    "bind": (interface.BindPlugin,),
    "postBind": (interface.PostBindPlugin,),
    "placementGenerate": (interface.PlacementGeneratePlugin,),
    "placementScore": (interface.PlacementScorePlugin,),
}


@pytest.mark.parametrize("name", [entry.name for entry in IN_TREE])
def test_in_tree_plugin_honours_its_extension_points(name: str) -> None:
    entry = registry()[name]
    args_type = entry.args_type
    plugin = entry.load()(args_type() if args_type else None, Handle(Snapshot()))
    assert plugin.name == name
    assert entry.extension_points
    for point in entry.extension_points:
        assert isinstance(plugin, PROTOCOLS[point]), f"{name} does not implement {point}"
    if "score" in entry.extension_points and hasattr(plugin, "normalize_score"):
        assert isinstance(plugin, interface.ScoreExtensions)
    if isinstance(plugin, interface.BatchFilterPlugin):
        assert isinstance(plugin, interface.FilterPlugin)
