"""NodeLabelPreference: prefer nodes whose label takes one of a ranked list of values.

A score plugin in a few lines, configured through pluginConfig:

    - name: NodeLabelPreference
      args: {label: example.com/tier, preferred: [gold, silver]}

A node labelled with the first value scores 100, the next ones less, evenly; any other node 0.
Without args it prefers nothing (every node scores 0).
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from scheduler_runtime.framework.interface import (
    MAX_NODE_SCORE,
    SUCCESS,
    CycleState,
    Handle,
    Status,
)
from scheduler_runtime.framework.nodeinfo import NodeInfo
from scheduler_runtime.framework.podinfo import PodInfo


class NodeLabelPreferenceArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    label: str = Field(default="example.com/tier", min_length=1, description="The label.")
    preferred: list[str] = Field(default_factory=list, description="Values, best first.")


class NodeLabelPreference:
    name: ClassVar[str] = "NodeLabelPreference"
    args_type: ClassVar[type[BaseModel]] = NodeLabelPreferenceArgs

    def __init__(self, args: BaseModel | None, handle: Handle) -> None:
        del handle
        given = args if isinstance(args, NodeLabelPreferenceArgs) else NodeLabelPreferenceArgs()
        ranked = given.preferred
        self.label = given.label
        # Reversed, so that a value listed twice keeps its better rank.
        self.scores = {
            value: MAX_NODE_SCORE * (len(ranked) - rank) // len(ranked)
            for rank, value in reversed(list(enumerate(ranked)))
        }

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status]:
        return self.scores.get(node.labels.get(self.label, ""), 0), SUCCESS
