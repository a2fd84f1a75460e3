"""The public interface for scheduler plugins written in Python (see docs/plugins.md).

A plugin is a class registered under the entry-point group `scheduler_runtime.plugins`, built
as `Plugin(args, handle)`. It has a `name`, optionally an `args_type` (a `PluginArgs` model
for its `pluginConfig` args, camelCase keys, unknown keys refused) and a `time_budget` in
seconds per call, and takes part in every extension point whose method it defines, with the
names and signatures of the Protocols below (upstream's names in snake_case).

Out-of-tree plugins run behind a guard: an exception, a call over its time budget or a result
of the wrong type becomes the plugin's Error status for that pod, logged once; the scheduler
carries on with the next pod.
"""

from __future__ import annotations

from scheduler_runtime.config.model import ApiModel
from scheduler_runtime.framework.features import Features
from scheduler_runtime.framework.interface import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    BindPlugin,
    CycleState,
    FilterPlugin,
    Handle,
    PermitPlugin,
    PluginBase,
    PostBindPlugin,
    PostFilterPlugin,
    PostFilterResult,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterExtensions,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    ReservePlugin,
    ScoreExtensions,
    ScorePlugin,
    Services,
    StateNeed,
    default_normalize_score,
)
from scheduler_runtime.framework.nodeinfo import NodeInfo
from scheduler_runtime.framework.podinfo import PodInfo
from scheduler_runtime.framework.registry import ENTRY_POINT_GROUP
from scheduler_runtime.framework.snapshot import Int64s, Slots, Snapshot
from scheduler_runtime.framework.status import SKIP, SUCCESS, Code, NodeVerdicts, Status
from scheduler_runtime.framework.waiting import WaitingPod

__all__ = [
    "ENTRY_POINT_GROUP",
    "MAX_NODE_SCORE",
    "MIN_NODE_SCORE",
    "SKIP",
    "SUCCESS",
    "BindPlugin",
    "Code",
    "CycleState",
    "Features",
    "FilterPlugin",
    "Handle",
    "Int64s",
    "NodeInfo",
    "NodeVerdicts",
    "PermitPlugin",
    "PluginArgs",
    "PluginBase",
    "PodInfo",
    "PostBindPlugin",
    "PostFilterPlugin",
    "PostFilterResult",
    "PreBindPlugin",
    "PreEnqueuePlugin",
    "PreFilterExtensions",
    "PreFilterPlugin",
    "PreFilterResult",
    "PreScorePlugin",
    "ReservePlugin",
    "ScoreExtensions",
    "ScorePlugin",
    "Services",
    "Slots",
    "Snapshot",
    "StateNeed",
    "Status",
    "WaitingPod",
    "default_normalize_score",
]


class PluginArgs(ApiModel):
    """Base of a plugin's args model: camelCase keys, unknown keys refused, immutable."""
