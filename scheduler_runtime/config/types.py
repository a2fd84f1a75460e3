"""The `kubescheduler.config.k8s.io/v1` KubeSchedulerConfiguration document, with upstream
defaults (pkg/scheduler/apis/config/v1/defaults.go)."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, field_validator

from scheduler_runtime.config.model import ApiModel

API_VERSION = "kubescheduler.config.k8s.io/v1"
KIND = "KubeSchedulerConfiguration"
DEFAULT_SCHEDULER_NAME = "default-scheduler"

_GO_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_UNIT_SECONDS = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
}


def parse_go_duration(text: str) -> float:
    """Seconds in a Go duration string such as `15s`, `1m30s` or `500ms`."""
    if text in ("0", ""):
        return 0.0
    parts = _GO_DURATION_PART.findall(text)
    if not parts or "".join(number + unit for number, unit in parts) != text:
        raise ValueError(f"{text!r} is not a duration like 15s, 1m30s or 500ms")
    return sum(float(number) * _UNIT_SECONDS[unit] for number, unit in parts)


def _duration(value: Any) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        return parse_go_duration(value)
    raise ValueError("must be a duration string like 15s")


class LeaderElectionConfiguration(ApiModel):
    leader_elect: bool = True
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    resource_lock: Literal["leases"] = "leases"
    resource_name: str = "kube-scheduler"
    resource_namespace: str = "kube-system"

    @field_validator("lease_duration", "renew_deadline", "retry_period", mode="before")
    @classmethod
    def _seconds(cls, value: Any) -> float:
        return _duration(value)


class ClientConnectionConfiguration(ApiModel):
    kubeconfig: str = ""
    accept_content_types: str = ""
    content_type: str = "application/vnd.kubernetes.protobuf"
    qps: float = Field(default=50.0, ge=0)
    burst: int = Field(default=100, ge=0)


class Plugin(ApiModel):
    name: str = Field(min_length=1)
    weight: int = Field(default=0, ge=0, le=2**31 - 1)  # an int32, as upstream decodes it


class PluginSet(ApiModel):
    enabled: tuple[Plugin, ...] = ()
    disabled: tuple[Plugin, ...] = ()


class Plugins(ApiModel):
    pre_enqueue: PluginSet = PluginSet()
    queue_sort: PluginSet = PluginSet()
    pre_filter: PluginSet = PluginSet()
    filter: PluginSet = PluginSet()
    post_filter: PluginSet = PluginSet()
    pre_score: PluginSet = PluginSet()
    score: PluginSet = PluginSet()
    reserve: PluginSet = PluginSet()
    permit: PluginSet = PluginSet()
    pre_bind: PluginSet = PluginSet()
    bind: PluginSet = PluginSet()
    post_bind: PluginSet = PluginSet()
    placement_generate: PluginSet = PluginSet()
    placement_score: PluginSet = PluginSet()
    multi_point: PluginSet = PluginSet()


class PluginConfig(ApiModel):
    name: str = Field(min_length=1)
    args: dict[str, Any] | None = None


class KubeSchedulerProfile(ApiModel):
    # Unset means `default-scheduler` when it is the only profile, and is an error otherwise.
    scheduler_name: str | None = None
    percentage_of_nodes_to_score: int | None = Field(default=None, ge=0, le=100)
    plugins: Plugins = Plugins()
    plugin_config: tuple[PluginConfig, ...] = ()


class KubeSchedulerConfiguration(ApiModel):
    api_version: Literal["kubescheduler.config.k8s.io/v1"]
    kind: Literal["KubeSchedulerConfiguration"]
    parallelism: int = Field(default=16, gt=0)
    leader_election: LeaderElectionConfiguration = LeaderElectionConfiguration()
    client_connection: ClientConnectionConfiguration = ClientConnectionConfiguration()
    enable_profiling: bool = True
    enable_contention_profiling: bool = True
    percentage_of_nodes_to_score: int = Field(default=0, ge=0, le=100)
    pod_initial_backoff_seconds: int = Field(default=1, gt=0)
    pod_max_backoff_seconds: int = Field(default=10, gt=0)
    profiles: tuple[KubeSchedulerProfile, ...] = ()
    extenders: tuple[dict[str, Any], ...] = ()
    delay_cache_until_active: bool = False
