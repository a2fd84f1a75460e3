"""The scheduler's configuration: `kubescheduler.config.k8s.io/v1` KubeSchedulerConfiguration."""

from scheduler_runtime.config.errors import ConfigError
from scheduler_runtime.config.loader import (
    SchedulerConfiguration,
    check_profiles,
    load_configuration,
    load_configuration_file,
)
from scheduler_runtime.config.resolve import ResolvedProfile
from scheduler_runtime.config.types import KubeSchedulerConfiguration

__all__ = [
    "ConfigError",
    "KubeSchedulerConfiguration",
    "ResolvedProfile",
    "SchedulerConfiguration",
    "check_profiles",
    "load_configuration",
    "load_configuration_file",
]
