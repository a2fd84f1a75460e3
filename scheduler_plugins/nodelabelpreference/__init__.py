"""NodeLabelPreference: prefer nodes whose label takes one of a ranked list of values.

A score plugin in a few lines on `scheduler_runtime.plugin_api`, configured by pluginConfig:

    - name: NodeLabelPreference
      args: {label: example.com/tier, preferred: [gold, silver]}

A node labelled with the first value scores 100, the next ones less, evenly; any other node 0.
Without args it prefers nothing (every node scores 0).
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field

from scheduler_runtime.plugin_api import (
    MAX_NODE_SCORE,
    SUCCESS,
    CycleState,
    Handle,
    NodeInfo,
    PluginArgs,
    PluginBase,
    PodInfo,
    Status,
)


class NodeLabelPreferenceArgs(PluginArgs):
    label: str = Field(default="example.com/tier", min_length=1, description="The label.")
    preferred: list[str] = Field(default_factory=list, description="Values, best first.")


class NodeLabelPreference(PluginBase[NodeLabelPreferenceArgs]):
    name: ClassVar[str] = "NodeLabelPreference"
    args_type = NodeLabelPreferenceArgs

    def __init__(self, args: Any, handle: Handle) -> None:
        super().__init__(args, handle)
        ranked = self.args.preferred
        # Reversed, so that a value listed twice keeps its better rank.
        self.scores = {
            value: MAX_NODE_SCORE * (len(ranked) - rank) // len(ranked)
            for rank, value in reversed(list(enumerate(ranked)))
        }

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status]:
        return self.scores.get(node.labels.get(self.args.label, ""), 0), SUCCESS
