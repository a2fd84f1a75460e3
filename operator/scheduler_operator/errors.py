"""The error every check of a SchedulerProfile raises."""

from __future__ import annotations

from typing import ClassVar

from scheduler_runtime.config import ConfigError


class SpecError(ConfigError):
    """Input that cannot become a scheduler; names the offending field of the SchedulerProfile."""

    status_reason: ClassVar[str] = "InvalidSpec"  # ConfigValid's reason when refused for it
