"""The SchedulerProfile's spec: a typed model, the single source of the CRD's schema."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Annotated, Any, Final

from pydantic import BaseModel, ConfigDict, Field, JsonValue, TypeAdapter

from scheduler_runtime.config import ApiModel, Plugin, PluginConfig, Plugins, PluginSet

from .api import DEFAULT_NAMESPACE, LEASE_PREFIX
from .patterns import (
    DNS_LABEL,
    DURATION,
    FEATURE_GATE,
    KUBERNETES_MINOR,
    QUALIFIED_NAME,
    LabelValue,
    QualifiedName,
    Quantity,
    SchedulerName,
    keys_match,
)


class Engine(StrEnum):
    """Which scheduler program runs the generated KubeSchedulerConfiguration."""

    PYTHON_RUNTIME = "PythonRuntime"
    KUBE_SCHEDULER = "KubeScheduler"


class PullPolicy(StrEnum):
    ALWAYS = "Always"
    IF_NOT_PRESENT = "IfNotPresent"
    NEVER = "Never"


# A profile's plugins and pluginConfig are the runtime's own configuration models: one definition
# of their shape, shared with the runtime's loader. Their extension points include preEnqueue:
# upstream's v1 Plugins has it, both engines honour it (SchedulingGates is a PreEnqueue plugin),
# and a schema without it would refuse configurations both engines accept.
#
# What the API adds to fields of those models, as types carrying the API's constraints: parse()
# checks the fields a spec sets against them, and the CRD carries them.
REFINED_FIELDS: Final[Mapping[type[BaseModel], Mapping[str, TypeAdapter[Any]]]] = {
    Plugin: {
        "name": TypeAdapter(
            Annotated[str, Field(max_length=253, description="The plugin's registered name.")]
        ),
        # Upstream takes any weight (0 meaning 1); the API keeps weights in 1-100.
        "weight": TypeAdapter(
            Annotated[
                int, Field(ge=1, le=100, description="Score weight; only score plugins use it.")
            ]
        ),
    },
    PluginSet: {
        "enabled": TypeAdapter(
            Annotated[
                list[Any],
                Field(
                    max_length=64,
                    description="Added after the defaults; naming a default replaces it "
                    "(to reweight it).",
                ),
            ]
        ),
        "disabled": TypeAdapter(
            Annotated[
                list[Any],
                Field(max_length=64, description="Defaults to drop; `*` drops them all."),
            ]
        ),
    },
    PluginConfig: {"name": TypeAdapter(Annotated[str, Field(max_length=253)])},
}
# Descriptions and CEL rules the CRD adds to the runtime's models.
REFINED_MODELS: Final[Mapping[type[BaseModel], dict[str, JsonValue]]] = {
    PluginSet: {
        "description": "Plugins enabled at, or disabled from, one extension point; "
        "`*` disables every default.",
        "x-kubernetes-validations": [
            {
                "rule": "!has(self.enabled) || self.enabled.all(p, p.name != '*')",
                "message": "'*' may only be used in disabled",
            }
        ],
    },
    Plugins: {
        "description": "The extension points of the scheduling framework, "
        "as in KubeSchedulerConfiguration v1."
    },
    PluginConfig: {
        "description": "Arguments for one plugin, as its <Plugin>Args type defines them."
    },
}

# The extension points in the order the configuration lists them: multiPoint first, as the
# operator has always written it (so configuration hashes stay as they were), then the points
# in framework order.
_POINT_FIELDS: Final = {info.alias or name: name for name, info in Plugins.model_fields.items()}
EXTENSION_POINTS: Final = ("multiPoint", *(p for p in _POINT_FIELDS if p != "multiPoint"))


def extension_points(plugins: Plugins) -> dict[str, PluginSet]:
    """The extension points that name any plugin, keyed by their wire name."""
    return {
        point: plugin_set
        for point in EXTENSION_POINTS
        if (plugin_set := getattr(plugins, _POINT_FIELDS[point])).enabled or plugin_set.disabled
    }


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

    requests: dict[QualifiedName, Quantity] = Field(
        default_factory=dict,
        max_length=16,
        json_schema_extra=keys_match(QUALIFIED_NAME, "resource names such as cpu or memory"),
    )
    limits: dict[QualifiedName, Quantity] = Field(
        default_factory=dict,
        max_length=16,
        json_schema_extra=keys_match(QUALIFIED_NAME, "resource names such as cpu or memory"),
    )


class TolerationOperator(StrEnum):
    EXISTS = "Exists"
    EQUAL = "Equal"


class TaintEffect(StrEnum):
    NO_SCHEDULE = "NoSchedule"
    PREFER_NO_SCHEDULE = "PreferNoSchedule"
    NO_EXECUTE = "NoExecute"


class Toleration(ApiModel):
    """core/v1 Toleration, for the scheduler's own pods."""

    model_config = ConfigDict(
        json_schema_extra={
            "x-kubernetes-validations": [
                {
                    "rule": "has(self.key) || (has(self.operator) && self.operator == 'Exists')",
                    "message": "a toleration without a key must use operator Exists",
                },
                {
                    "rule": "!has(self.operator) || self.operator != 'Exists' || "
                    "!has(self.value) || self.value == ''",
                    "message": "a toleration with operator Exists takes no value",
                },
            ]
        }
    )

    key: QualifiedName | None = None
    operator: TolerationOperator | None = None
    value: LabelValue | None = None
    effect: TaintEffect | None = None
    toleration_seconds: int | None = None


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


# Several replicas of one scheduler name without leader election would bind the same pods.
LONE_REPLICAS: Final = "more than one replica needs leader election (leaderElection.leaderElect)"


class SchedulerProfileSpec(ApiModel):
    """What a platform engineer asks for: one extra scheduler, its profiles and how it runs."""

    model_config = ConfigDict(
        json_schema_extra={
            "x-kubernetes-validations": [
                {
                    "rule": "!has(self.leaderElection) || !has(self.leaderElection.leaderElect) "
                    "|| self.leaderElection.leaderElect || self.replicas <= 1",
                    "message": LONE_REPLICAS,
                    "fieldPath": ".replicas",
                }
            ]
        }
    )

    scheduler_name: SchedulerName | None = Field(
        default=None,
        # The Lease, named schedulerprofile.<schedulerName>, is a DNS subdomain too.
        max_length=253 - len(LEASE_PREFIX),
        description="The schedulerName pods use; defaults to the object's name.",
    )
    engine: Engine = Field(default=Engine.PYTHON_RUNTIME)
    namespace: str = Field(
        default=DEFAULT_NAMESPACE,
        pattern=DNS_LABEL,
        max_length=63,
        description="Namespace of the scheduler's Deployment, ConfigMap and Lease; immutable. "
        "It must be one the operator manages (its --namespace).",
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
    kubernetes_version: str | None = Field(
        default=None,
        max_length=16,
        description="The Kubernetes minor this scheduler runs, such as 1.36: KubeScheduler runs "
        "kube-scheduler's image of that minor's release, PythonRuntime emulates it "
        "(--emulated-version); its feature gates and default plugins judge the profiles. "
        "Defaults to the API server's minor; never newer than the API server.",
        json_schema_extra={
            "x-kubernetes-validations": [
                {
                    "rule": f"self.matches('{KUBERNETES_MINOR}')",
                    "message": "must be a Kubernetes minor such as 1.36",
                }
            ]
        },
    )
    image: str | None = Field(
        default=None,
        min_length=1,
        max_length=512,
        description="Defaults per engine: kube-scheduler's image of the minor run, or the "
        "operator's own for PythonRuntime. A custom image is taken to be of that minor "
        "(kubernetesVersion, else the API server's): its gates judge the profiles.",
    )
    image_pull_policy: PullPolicy = Field(default=PullPolicy.IF_NOT_PRESENT)
    resources: Resources | None = None
    node_selector: dict[QualifiedName, LabelValue] = Field(
        default_factory=dict,
        max_length=64,
        description="Where the scheduler's own pods may run.",
        json_schema_extra=keys_match(QUALIFIED_NAME, "label keys"),
    )
    tolerations: list[Toleration] = Field(default_factory=list, max_length=64)
    affinity: dict[str, Any] | None = None
    log_verbosity: int = Field(default=2, ge=0, le=10, description="klog-style -v level.")
    feature_gates: dict[str, bool] = Field(
        default_factory=dict,
        max_length=300,
        description="kube-scheduler's feature gates for this scheduler (its --feature-gates, "
        "for either engine), by name; unset gates keep their defaults.",
        json_schema_extra=keys_match(FEATURE_GATE, "feature gate names"),
    )

    def leader_elect(self) -> bool:
        election = self.leader_election
        if election is None or election.leader_elect is None:
            return True
        return election.leader_elect


@dataclass(frozen=True)
class SchedulerProfile:
    """A parsed SchedulerProfile object: identity plus validated spec."""

    name: str
    uid: str
    spec: SchedulerProfileSpec

    @property
    def scheduler_name(self) -> str:
        return self.spec.scheduler_name or self.name

    @property
    def lease_name(self) -> str:
        return LEASE_PREFIX + self.scheduler_name

    def profiles(self) -> list[Profile]:
        """The profiles with every schedulerName resolved (no profiles: one default profile)."""
        given = self.spec.profiles or [Profile()]
        return [
            p if p.scheduler_name else p.model_copy(update={"scheduler_name": self.scheduler_name})
            for p in given
        ]

    def scheduler_names(self) -> list[str]:
        return [p.scheduler_name or self.scheduler_name for p in self.profiles()]
