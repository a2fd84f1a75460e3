"""The error every check of a SchedulerProfile raises."""

from __future__ import annotations

from scheduler_runtime.config import ConfigError


class SpecError(ConfigError):
    """Input that cannot become a scheduler; names the offending field of the SchedulerProfile."""
