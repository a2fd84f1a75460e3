"""The SchedulerProfile API: a typed model of the spec, the single source of the CRD's schema."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Annotated, Any, Final

from pydantic import BaseModel, ConfigDict, Field, JsonValue, TypeAdapter, ValidationError

from scheduler_runtime.config import (
    ApiModel,
    ConfigError,
    Plugin,
    PluginConfig,
    Plugins,
    PluginSet,
    field_path,
)

GROUP = "scheduling.schedops.io"
VERSION = "v1alpha1"
KIND = "SchedulerProfile"
PLURAL = "schedulerprofiles"
SHORT_NAME = "schedprof"
API_VERSION = f"{GROUP}/{VERSION}"

# Pod.spec.schedulerName and Lease names are DNS-1123 subdomains; namespaces are DNS-1123 labels.
DNS_SUBDOMAIN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
DNS_LABEL = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
DURATION = r"^([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+$"
# Label keys and resource names are qualified names (an optional DNS-subdomain prefix and "/");
# label values are at most 63 characters of the same alphabet.
QUALIFIED_NAME = (
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$"
)
LABEL_VALUE = r"^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$"
QUANTITY = (
    r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)"
    r"(([KMGTPE]i)|[numkMGTPE]|[eE][+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+))?$"
)
# Where a SchedulerProfile's scheduler runs unless it says otherwise: a namespace of its own,
# which the install creates (manifests/) and the operator may write to.
DEFAULT_NAMESPACE: Final = "schedulers"
# A scheduler's Lease is its name behind this prefix, so no SchedulerProfile can name the Lease
# of a component it is not (kube-controller-manager, say) and take it over when it expires.
LEASE_PREFIX: Final = "schedulerprofile."
# How deep a free-form value (plugin args, affinity) may nest: far beyond any real one, and far
# below what recursion in a decoder or validator survives.
MAX_DEPTH: Final = 32
# How large a free-form value, and the whole spec, may be as compact JSON: far beyond any real
# one, and far below what an object may hold (etcd takes 1.5 MiB).
MAX_VALUE_BYTES: Final = 64 * 1024
MAX_SPEC_BYTES: Final = 256 * 1024
# The longest condition message the API takes.
MAX_MESSAGE: Final = 32768

SchedulerName = Annotated[str, Field(pattern=DNS_SUBDOMAIN, min_length=1, max_length=253)]
QualifiedName = Annotated[str, Field(pattern=QUALIFIED_NAME, min_length=1, max_length=316)]
LabelValue = Annotated[str, Field(pattern=LABEL_VALUE, max_length=63)]
Quantity = Annotated[
    int | Annotated[str, Field(pattern=QUANTITY, max_length=64)],
    Field(description="A resource quantity such as 100m or 128Mi."),
]


def keys_match(pattern: str, what: str) -> dict[str, JsonValue]:
    """A CEL rule for a map's keys (a structural schema cannot constrain them otherwise)."""
    rule = f"self.all(k, k.size() <= 316 && k.matches({pattern!r}))"
    return {"x-kubernetes-validations": [{"rule": rule, "message": f"keys must be {what}"}]}


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
    image: str | None = Field(
        default=None, min_length=1, max_length=512, description="Defaults per engine."
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

    def leader_elect(self) -> bool:
        election = self.leader_election
        if election is None or election.leader_elect is None:
            return True
        return election.leader_elect


def scheduler_of_lease(lease_name: str) -> str | None:
    """The scheduler name a Lease is named after, None for a Lease no scheduler would hold."""
    return lease_name.removeprefix(LEASE_PREFIX) if lease_name.startswith(LEASE_PREFIX) else None


class SpecError(ConfigError):
    """Input that cannot become a scheduler; names the offending field of the SchedulerProfile."""


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


def parse(body: Mapping[str, Any]) -> SchedulerProfile:
    """Validates a SchedulerProfile object; raises SpecError naming the first bad field."""
    metadata = body.get("metadata") or {}
    name = metadata.get("name")
    if not isinstance(name, str) or not name:
        raise SpecError("metadata.name", "is required")
    if len(name) > 63 or not re.fullmatch(DNS_SUBDOMAIN, name):
        raise SpecError(
            "metadata.name", "must be a DNS subdomain of at most 63 characters (lowercase)"
        )
    check_depth(body.get("spec"), "spec")
    check_sizes(body.get("spec"))
    try:
        spec = SchedulerProfileSpec.model_validate(body.get("spec") or {})
    except ValidationError as error:
        first = error.errors()[0]
        raise SpecError(field_path(first["loc"], "spec"), first["msg"]) from None
    check_refined(spec, "spec")
    if spec.replicas > 1 and not spec.leader_elect():
        raise SpecError("spec.replicas", LONE_REPLICAS)
    profile = SchedulerProfile(name=name, uid=str(metadata.get("uid", "")), spec=spec)
    check_unique_names(profile)
    return profile


def check_depth(value: Any, path: str) -> None:
    """Refuses a value nested deeper than MAX_DEPTH, without recursion (a hostile value may be
    nested deeper than Python's recursion limit)."""
    pending: list[tuple[Any, str, int]] = [(value, path, 1)]
    while pending:
        item, where, depth = pending.pop()
        if not isinstance(item, dict | list):
            continue
        if depth > MAX_DEPTH:
            raise SpecError(where, f"nested deeper than {MAX_DEPTH} levels")
        children = item.items() if isinstance(item, dict) else enumerate(item)
        for key, child in children:
            step = f"[{key}]" if isinstance(item, list) else f".{key}"
            pending.append((child, where + step, depth + 1))


def free_form_values(spec: Any) -> list[tuple[str, Any]]:
    """The values of a raw spec the schema leaves free-form, with their paths: each profile's
    plugin args, and the affinity of the scheduler's pods."""
    if not isinstance(spec, dict):
        return []
    found: list[tuple[str, Any]] = []
    if "affinity" in spec:
        found.append(("spec.affinity", spec["affinity"]))
    profiles = spec.get("profiles")
    for i, profile in enumerate(profiles if isinstance(profiles, list) else []):
        configs = profile.get("pluginConfig") if isinstance(profile, dict) else None
        for j, config in enumerate(configs if isinstance(configs, list) else []):
            if isinstance(config, dict) and "args" in config:
                found.append((f"spec.profiles[{i}].pluginConfig[{j}].args", config["args"]))
    return found


def json_size(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


def check_sizes(spec: Any) -> None:
    """Refuses a spec, or a free-form value in it, larger than the API's limits allow (as the
    limits policy does at admission, for objects stored before it)."""
    size = json_size(spec)
    if size > MAX_SPEC_BYTES:
        raise SpecError("spec", f"is {size} bytes as JSON, more than {MAX_SPEC_BYTES}")
    for path, value in free_form_values(spec):
        size = json_size(value)
        if size > MAX_VALUE_BYTES:
            raise SpecError(path, f"is {size} bytes as JSON, more than {MAX_VALUE_BYTES}")


def check_unique_names(profile: SchedulerProfile) -> None:
    seen: set[str] = set()
    for index, name in enumerate(profile.scheduler_names()):
        if name in seen:
            raise SpecError(
                f"spec.profiles[{index}].schedulerName", f"duplicate scheduler name {name!r}"
            )
        seen.add(name)


def check_refined(model: BaseModel, path: str) -> None:
    """Checks every field a spec sets against the API's bounds on the runtime's models."""
    refined = REFINED_FIELDS.get(type(model), {})
    for name, info in type(model).model_fields.items():
        value = getattr(model, name)
        where = f"{path}.{info.alias or name}"
        adapter = refined.get(name)
        if adapter is not None and name in model.model_fields_set:
            try:
                # The runtime keeps lists as tuples; the API's bounds speak of lists.
                adapter.validate_python(list(value) if isinstance(value, tuple) else value)
            except ValidationError as error:
                raise SpecError(where, error.errors()[0]["msg"]) from None
        if isinstance(value, BaseModel):
            check_refined(value, where)
        elif isinstance(value, list | tuple):
            for index, item in enumerate(value):
                if isinstance(item, BaseModel):
                    check_refined(item, f"{where}[{index}]")


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
    message: str = Field(max_length=MAX_MESSAGE)


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
