"""The scheduler's configuration: `kubescheduler.config.k8s.io/v1` KubeSchedulerConfiguration.

The names below are the public surface (the operator builds and checks configurations with
them); the modules behind them are private to the runtime.
"""

from scheduler_runtime.config.defaults import DEFAULT_MULTI_POINT, default_plugins
from scheduler_runtime.config.documents import (
    DocumentError,
    parse_documents,
    read_document,
    read_documents,
)
from scheduler_runtime.config.errors import ConfigError, field_path, from_validation_error
from scheduler_runtime.config.features import FeatureGates, feature_gates, parse_feature_gates
from scheduler_runtime.config.loader import (
    SchedulerConfiguration,
    check_profiles,
    load_configuration,
    load_configuration_file,
)
from scheduler_runtime.config.model import ApiModel
from scheduler_runtime.config.types import (
    API_VERSION,
    DEFAULT_SCHEDULER_NAME,
    KIND,
    ClientConnectionConfiguration,
    KubeSchedulerConfiguration,
    KubeSchedulerProfile,
    LeaderElectionConfiguration,
    Plugin,
    PluginConfig,
    Plugins,
    PluginSet,
    parse_go_duration,
)
from scheduler_runtime.framework.profile import ResolvedProfile

__all__ = [
    "API_VERSION",
    "DEFAULT_MULTI_POINT",
    "DEFAULT_SCHEDULER_NAME",
    "KIND",
    "ApiModel",
    "ClientConnectionConfiguration",
    "ConfigError",
    "DocumentError",
    "FeatureGates",
    "KubeSchedulerConfiguration",
    "KubeSchedulerProfile",
    "LeaderElectionConfiguration",
    "Plugin",
    "PluginConfig",
    "PluginSet",
    "Plugins",
    "ResolvedProfile",
    "SchedulerConfiguration",
    "check_profiles",
    "default_plugins",
    "feature_gates",
    "field_path",
    "from_validation_error",
    "load_configuration",
    "load_configuration_file",
    "parse_documents",
    "parse_feature_gates",
    "parse_go_duration",
    "read_document",
    "read_documents",
]
