"""One profile as the framework runs it: the configuration resolved to plugins per extension
point, in run order, with their weights and typed args (built by scheduler_runtime.config)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from pydantic import BaseModel


@dataclass(frozen=True)
class ResolvedProfile:
    """One profile, ready for the framework: plugins per extension point, in run order."""

    scheduler_name: str
    percentage_of_nodes_to_score: int | None
    plugins: Mapping[str, tuple[str, ...]]
    score_weights: Mapping[str, int]
    plugin_args: Mapping[str, BaseModel | None] = field(repr=False)
    placement_score_weights: Mapping[str, int] = field(default_factory=dict)

    def enabled(self, extension_point: str) -> tuple[str, ...]:
        return self.plugins.get(extension_point, ())

    @property
    def plugin_names(self) -> tuple[str, ...]:
        """Every plugin the profile runs, once, in first-use order."""
        ordered = dict.fromkeys(name for names in self.plugins.values() for name in names)
        return tuple(ordered)
