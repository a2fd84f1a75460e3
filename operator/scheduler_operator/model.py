"""The SchedulerProfile API: a typed model of the spec, the single source of the CRD's schema."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError
from pydantic.alias_generators import to_camel

GROUP = "scheduling.schedops.io"
VERSION = "v1alpha1"
KIND = "SchedulerProfile"
PLURAL = "schedulerprofiles"
SHORT_NAME = "schedprof"

# Pod.spec.schedulerName and Lease names are DNS-1123 subdomains; namespaces are DNS-1123 labels.
DNS_SUBDOMAIN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
DNS_LABEL = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
DURATION = r"^([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+$"

SchedulerName = Annotated[str, Field(pattern=DNS_SUBDOMAIN, min_length=1, max_length=253)]
Quantity = Annotated[int | str, Field(description="A resource quantity such as 100m or 128Mi.")]
FreeForm = Annotated[
    dict[str, Any], Field(json_schema_extra={"x-kubernetes-preserve-unknown-fields": True})
]


class Engine(StrEnum):
    """Which scheduler program runs the generated KubeSchedulerConfiguration."""

    PYTHON_RUNTIME = "PythonRuntime"
    KUBE_SCHEDULER = "KubeScheduler"


class PullPolicy(StrEnum):
    ALWAYS = "Always"
    IF_NOT_PRESENT = "IfNotPresent"
    NEVER = "Never"


class ApiModel(BaseModel):
    """camelCase on the wire, unknown fields refused, immutable once parsed."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True
    )


class Plugin(ApiModel):
    name: str = Field(min_length=1, max_length=253, description="The plugin's registered name.")
    weight: int | None = Field(
        default=None, ge=1, le=100, description="Score weight; only score plugins use it."
    )


class PluginSet(ApiModel):
    """Plugins enabled at, or disabled from, one extension point; `*` disables every default."""

    model_config = ConfigDict(
        json_schema_extra={
            "x-kubernetes-validations": [
                {
                    "rule": "!has(self.enabled) || self.enabled.all(p, p.name != '*')",
                    "message": "'*' may only be used in disabled",
                }
            ]
        }
    )

    enabled: list[Plugin] = Field(
        default_factory=list,
        max_length=64,
        description="Added after the defaults; naming a default replaces it (to reweight it).",
    )
    disabled: list[Plugin] = Field(
        default_factory=list, max_length=64, description="Defaults to drop; `*` drops them all."
    )


class Plugins(ApiModel):
    """The extension points of the scheduling framework, as in KubeSchedulerConfiguration v1."""

    multi_point: PluginSet | None = None
    queue_sort: PluginSet | None = None
    pre_filter: PluginSet | None = None
    filter: PluginSet | None = None
    post_filter: PluginSet | None = None
    pre_score: PluginSet | None = None
    score: PluginSet | None = None
    reserve: PluginSet | None = None
    permit: PluginSet | None = None
    pre_bind: PluginSet | None = None
    bind: PluginSet | None = None
    post_bind: PluginSet | None = None

    def extension_points(self) -> dict[str, PluginSet]:
        """The extension points that are set, keyed by their wire name, in framework order."""
        return {
            to_camel(field): value
            for field in type(self).model_fields
            if (value := getattr(self, field)) is not None
        }


class PluginConfig(ApiModel):
    """Arguments for one plugin, as its <Plugin>Args type defines them."""

    name: str = Field(min_length=1, max_length=253)
    args: FreeForm | None = None


class Profile(ApiModel):
    """One scheduling profile; pods choose it by its schedulerName."""

    model_config = ConfigDict(
        json_schema_extra={
            "x-kubernetes-validations": [
                {
                    "rule": "!has(self.pluginConfig) || self.pluginConfig.all(c, "
                    "self.pluginConfig.exists_one(d, d.name == c.name))",
                    "message": "pluginConfig names must be unique within a profile",
                }
            ]
        }
    )

    scheduler_name: SchedulerName | None = Field(
        default=None, description="Defaults to spec.schedulerName; at most one profile omits it."
    )
    plugins: Plugins | None = None
    plugin_config: list[PluginConfig] = Field(default_factory=list, max_length=64)
    percentage_of_nodes_to_score: int | None = Field(
        default=None, ge=0, le=100, description="0 or unset: adaptive, as kube-scheduler."
    )


class LeaderElection(ApiModel):
    """Leader election among the replicas, on a Lease named after the scheduler."""

    leader_elect: bool | None = Field(
        default=None,
        description=(
            "Defaults to true, as kube-scheduler's: a rollout hands the Lease over instead of "
            "stopping the scheduler first. False runs one replica at a time (Recreate)."
        ),
    )
    lease_duration: str = Field(default="15s", pattern=DURATION, max_length=32)
    renew_deadline: str = Field(default="10s", pattern=DURATION, max_length=32)
    retry_period: str = Field(default="2s", pattern=DURATION, max_length=32)


class Resources(ApiModel):
    """Compute resources of the scheduler container."""

    requests: dict[str, Quantity] = Field(default_factory=dict)
    limits: dict[str, Quantity] = Field(default_factory=dict)


_PROFILE_RULES: list[JsonValue] = [
    {
        "rule": "self.filter(p, !has(p.schedulerName)).size() <= 1",
        "message": "at most one profile may omit schedulerName",
    },
    {
        "rule": "self.all(p, !has(p.schedulerName) || "
        "self.exists_one(q, has(q.schedulerName) && q.schedulerName == p.schedulerName))",
        "message": "profile schedulerNames must be unique",
    },
]


class SchedulerProfileSpec(ApiModel):
    """What a platform engineer asks for: one extra scheduler, its profiles and how it runs."""

    scheduler_name: SchedulerName | None = Field(
        default=None, description="The schedulerName pods use; defaults to the object's name."
    )
    engine: Engine = Field(default=Engine.PYTHON_RUNTIME)
    namespace: str = Field(
        default="kube-system",
        pattern=DNS_LABEL,
        max_length=63,
        description="Namespace of the scheduler's Deployment, ConfigMap and Lease; immutable.",
        # Moving would leave the old scheduler running beside the new one.
        json_schema_extra={
            "x-kubernetes-validations": [
                {"rule": "self == oldSelf", "message": "namespace is immutable"}
            ]
        },
    )
    profiles: list[Profile] = Field(
        default_factory=list,
        max_length=20,
        description="Scheduling profiles; none means one profile with every default.",
        json_schema_extra={"x-kubernetes-validations": _PROFILE_RULES},
    )
    replicas: int = Field(default=1, ge=1, le=100, description="Scheduler pods.")
    leader_election: LeaderElection | None = None
    image: str | None = Field(
        default=None, min_length=1, max_length=512, description="Defaults per engine."
    )
    image_pull_policy: PullPolicy = Field(default=PullPolicy.IF_NOT_PRESENT)
    resources: Resources | None = None
    node_selector: dict[str, str] = Field(
        default_factory=dict, description="Where the scheduler's own pods may run."
    )
    tolerations: list[FreeForm] = Field(default_factory=list, max_length=64)
    affinity: FreeForm | None = None
    log_verbosity: int = Field(default=2, ge=0, le=10, description="klog-style -v level.")

    def leader_elect(self) -> bool:
        election = self.leader_election
        if election is None or election.leader_elect is None:
            return True
        return election.leader_elect


class SpecError(ValueError):
    """Input that cannot become a scheduler; names the offending field."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


@dataclass(frozen=True)
class SchedulerProfile:
    """A parsed SchedulerProfile object: identity plus validated spec."""

    name: str
    uid: str
    spec: SchedulerProfileSpec

    @property
    def scheduler_name(self) -> str:
        return self.spec.scheduler_name or self.name

    def profiles(self) -> list[Profile]:
        """The profiles with every schedulerName resolved (no profiles: one default profile)."""
        given = self.spec.profiles or [Profile()]
        return [
            p if p.scheduler_name else p.model_copy(update={"scheduler_name": self.scheduler_name})
            for p in given
        ]

    def scheduler_names(self) -> list[str]:
        return [p.scheduler_name or self.scheduler_name for p in self.profiles()]


def parse(body: Mapping[str, Any]) -> SchedulerProfile:
    """Validates a SchedulerProfile object; raises SpecError naming the first bad field."""
    metadata = body.get("metadata") or {}
    name = metadata.get("name")
    if not isinstance(name, str) or not name:
        raise SpecError("metadata.name", "is required")
    try:
        spec = SchedulerProfileSpec.model_validate(body.get("spec") or {})
    except ValidationError as error:
        first = error.errors()[0]
        raise SpecError(field_path(("spec", *first["loc"])), first["msg"]) from None
    profile = SchedulerProfile(name=name, uid=str(metadata.get("uid", "")), spec=spec)
    check_unique_names(profile)
    return profile


def check_unique_names(profile: SchedulerProfile) -> None:
    seen: set[str] = set()
    for index, name in enumerate(profile.scheduler_names()):
        if name in seen:
            raise SpecError(
                f"spec.profiles[{index}].schedulerName", f"duplicate scheduler name {name!r}"
            )
        seen.add(name)


def field_path(loc: tuple[str | int, ...]) -> str:
    """('spec', 'profiles', 0, 'plugins') -> 'spec.profiles[0].plugins'."""
    path = ""
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else part)
    return path


class ConditionStatus(StrEnum):
    TRUE = "True"
    FALSE = "False"
    UNKNOWN = "Unknown"


class Condition(ApiModel):
    """metav1.Condition."""

    type: str = Field(max_length=316)
    status: ConditionStatus
    observed_generation: int | None = Field(default=None, ge=0)
    last_transition_time: str = Field(json_schema_extra={"format": "date-time"})
    reason: str = Field(max_length=1024, pattern=r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$")
    message: str = Field(max_length=32768)


class SchedulerProfileStatus(ApiModel):
    """What the operator reports; printer columns read the summary fields."""

    observed_generation: int | None = None
    conditions: list[Condition] = Field(default_factory=list)
    scheduler_names: str | None = Field(
        default=None, description="The schedulerNames this object serves, comma-separated."
    )
    replicas: int | None = None
    ready_replicas: int | None = None
    leader: str | None = Field(default=None, description="Holder of the scheduler's Lease.")
    config_hash: str | None = None
