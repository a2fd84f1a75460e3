"""Typed `pluginConfig[].args` of the in-tree plugins (`kubescheduler.config.k8s.io/v1`), with
upstream defaults and upstream validation rules."""

from __future__ import annotations

from typing import Any, Literal, Self

from pydantic import Field, ValidationInfo, field_validator, model_validator

from scheduler_runtime.config.model import ApiModel
from scheduler_runtime.config.types import parse_go_duration
from scheduler_runtime.framework.features import Features


class ResourceSpec(ApiModel):
    """A resource and its weight in a scoring strategy."""

    name: str = Field(min_length=1)
    weight: int = 1


DEFAULT_RESOURCES = (ResourceSpec(name="cpu", weight=1), ResourceSpec(name="memory", weight=1))


def _check_resources(resources: tuple[ResourceSpec, ...], *, fixed_weight: int | None) -> None:
    seen: set[str] = set()
    for index, resource in enumerate(resources):
        if resource.name in seen:
            raise ValueError(f"resources[{index}].name: duplicate resource {resource.name!r}")
        seen.add(resource.name)
        if fixed_weight is not None and resource.weight != fixed_weight:
            raise ValueError(f"resources[{index}].weight: must be {fixed_weight}")
        if fixed_weight is None and not 1 <= resource.weight <= 100:
            raise ValueError(
                f"resources[{index}].weight: {resource.weight} is not in the range [1, 100]"
            )


class UtilizationShapePoint(ApiModel):
    """One point of a RequestedToCapacityRatio shape: utilization 0-100 maps to score 0-10."""

    utilization: int = Field(ge=0, le=100)
    score: int = Field(ge=0, le=10)


class RequestedToCapacityRatioParam(ApiModel):
    shape: tuple[UtilizationShapePoint, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _increasing(self) -> Self:
        for index in range(1, len(self.shape)):
            if self.shape[index].utilization <= self.shape[index - 1].utilization:
                raise ValueError(
                    f"shape[{index}].utilization: values must be sorted in increasing order"
                )
        return self


class ScoringStrategy(ApiModel):
    type: Literal["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"] = "LeastAllocated"
    resources: tuple[ResourceSpec, ...] = DEFAULT_RESOURCES
    requested_to_capacity_ratio: RequestedToCapacityRatioParam | None = None

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        if not self.resources:
            object.__setattr__(self, "resources", DEFAULT_RESOURCES)
        _check_resources(self.resources, fixed_weight=None)
        if self.type == "RequestedToCapacityRatio" and self.requested_to_capacity_ratio is None:
            raise ValueError(
                "requestedToCapacityRatio: required when type is RequestedToCapacityRatio"
            )
        return self


class NodeResourcesFitArgs(ApiModel):
    ignored_resources: tuple[str, ...] = ()
    ignored_resource_groups: tuple[str, ...] = ()
    scoring_strategy: ScoringStrategy = ScoringStrategy()

    @model_validator(mode="after")
    def _groups_have_no_slash(self) -> Self:
        for index, group in enumerate(self.ignored_resource_groups):
            if "/" in group:
                raise ValueError(f"ignoredResourceGroups[{index}]: must not contain '/'")
        return self


class NodeResourcesBalancedAllocationArgs(ApiModel):
    resources: tuple[ResourceSpec, ...] = DEFAULT_RESOURCES

    @model_validator(mode="after")
    def _weights(self) -> Self:
        _check_resources(self.resources, fixed_weight=1)
        return self


class DefaultPreemptionArgs(ApiModel):
    min_candidate_nodes_percentage: int = Field(default=10, ge=0, le=100)
    min_candidate_nodes_absolute: int = Field(default=100, ge=0)

    @model_validator(mode="after")
    def _not_both_zero(self) -> Self:
        if self.min_candidate_nodes_percentage == 0 and self.min_candidate_nodes_absolute == 0:
            raise ValueError(
                "minCandidateNodesPercentage and minCandidateNodesAbsolute cannot both be zero"
            )
        return self


class InterPodAffinityArgs(ApiModel):
    hard_pod_affinity_weight: int = Field(default=1, ge=0, le=100)
    ignore_preferred_terms_of_existing_pods: bool = False


class NodeAffinityArgs(ApiModel):
    """`addedAffinity` is a core/v1 NodeAffinity applied to every pod of the profile."""

    added_affinity: dict[str, Any] | None = None


class TopologySpreadConstraint(ApiModel):
    max_skew: int = Field(gt=0)
    topology_key: str = Field(min_length=1)
    when_unsatisfiable: Literal["DoNotSchedule", "ScheduleAnyway"]
    min_domains: int | None = Field(default=None, gt=0)
    node_affinity_policy: Literal["Honor", "Ignore"] | None = None
    node_taints_policy: Literal["Honor", "Ignore"] | None = None
    match_label_keys: tuple[str, ...] = ()
    label_selector: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _no_selector(self) -> Self:
        if self.label_selector is not None:
            raise ValueError(
                "labelSelector: default constraints must not define a selector, "
                "it is deduced for each pod"
            )
        return self


SYSTEM_DEFAULT_CONSTRAINTS = (
    TopologySpreadConstraint(
        max_skew=3, topology_key="kubernetes.io/hostname", when_unsatisfiable="ScheduleAnyway"
    ),
    TopologySpreadConstraint(
        max_skew=5, topology_key="topology.kubernetes.io/zone", when_unsatisfiable="ScheduleAnyway"
    ),
)


class PodTopologySpreadArgs(ApiModel):
    default_constraints: tuple[TopologySpreadConstraint, ...] = ()
    defaulting_type: Literal["System", "List"] = "System"

    @model_validator(mode="after")
    def _system_means_no_list(self) -> Self:
        if self.defaulting_type == "System" and self.default_constraints:
            raise ValueError('defaultConstraints: must be empty when defaultingType is "System"')
        keys = [(c.topology_key, c.when_unsatisfiable) for c in self.default_constraints]
        if len(keys) != len(set(keys)):
            raise ValueError("defaultConstraints: duplicate topologyKey and whenUnsatisfiable")
        return self

    @property
    def effective_constraints(self) -> tuple[TopologySpreadConstraint, ...]:
        """The constraints applied to pods that define none."""
        if self.defaulting_type == "System":
            return SYSTEM_DEFAULT_CONSTRAINTS
        return self.default_constraints


# VolumeBindingArgs.shape's default with StorageCapacityScoring on: the emptier a node's
# storage stays, the better.
DEFAULT_VOLUME_SHAPE = (
    UtilizationShapePoint(utilization=0, score=10),
    UtilizationShapePoint(utilization=100, score=0),
)


class VolumeBindingArgs(ApiModel):
    """`shape` scores nodes by storage utilization, with StorageCapacityScoring: defaulted
    (DEFAULT_VOLUME_SHAPE) while the gate is on, refused while it is off, as
    SetDefaults_VolumeBindingArgs and ValidateVolumeBindingArgs do."""

    bind_timeout_seconds: int = Field(default=600, ge=0)
    shape: tuple[UtilizationShapePoint, ...] | None = None

    @model_validator(mode="after")
    def _shape_follows_the_gate(self, info: ValidationInfo) -> Self:
        features = (info.context or {}).get("features")
        if not (features or Features()).storage_capacity_scoring:
            if self.shape:
                raise ValueError(
                    "shape: unexpected field `shape`, remove it or turn on the feature gate "
                    "StorageCapacityScoring"
                )
            object.__setattr__(self, "shape", None)
            return self
        if not self.shape:
            object.__setattr__(self, "shape", DEFAULT_VOLUME_SHAPE)
        shape = self.shape or ()
        for index in range(1, len(shape)):
            if shape[index - 1].utilization >= shape[index].utilization:
                raise ValueError(
                    f"shape[{index}].utilization: values must be sorted in increasing order"
                )
        return self


def _go_duration(value: Any) -> float:
    """A metav1.Duration: a Go duration string (`10s`, `1m30s`, `-1s`)."""
    if isinstance(value, str):
        if value.startswith(("-", "+")):
            return (-1.0 if value[0] == "-" else 1.0) * parse_go_duration(value[1:])
        return parse_go_duration(value)
    raise ValueError("must be a duration string like 10s")


class DynamicResourcesArgs(ApiModel):
    """`filterTimeout` bounds one Filter call's allocation (DRASchedulerFilterTimeout; 0: no
    bound); `bindingTimeout` how long PreBind waits for devices' binding conditions
    (DRADeviceBindingConditions). Defaults and checks are upstream's, in seconds; validated
    with the configuration's gates (the `features` of the validation context), each timeout
    is refused while the gates it depends on are off, as ValidateDynamicResourcesArgs does."""

    filter_timeout: float = 10.0
    binding_timeout: float = 600.0

    @field_validator("filter_timeout", "binding_timeout", mode="before")
    @classmethod
    def _seconds(cls, value: Any) -> float:
        return _go_duration(value)

    @field_validator("filter_timeout")
    @classmethod
    def _not_negative(cls, value: float, info: ValidationInfo) -> float:
        if not _gates_on(info, "dra_scheduler_filter_timeout"):
            raise ValueError("not allowed: DRASchedulingFilterTimeout feature gate is disabled")
        if value < 0:
            raise ValueError("must be zero or positive")
        return value

    @field_validator("binding_timeout")
    @classmethod
    def _at_least_a_second(cls, value: float, info: ValidationInfo) -> float:
        gates = ("dra_device_binding_conditions", "dra_resource_claim_device_status")
        if not _gates_on(info, *gates):
            raise ValueError(
                "not allowed: DRADeviceBindingConditions or DRAResourceClaimDeviceStatus feature "
                "gate is disabled"
            )
        if value < 1:
            raise ValueError("must be at least 1 second")
        return value


def _gates_on(info: ValidationInfo, *gates: str) -> bool:
    """Whether the gates are on in the `features` the args are validated with (the 1.36
    defaults, all on, without them)."""
    features = (info.context or {}).get("features")
    return features is None or all(getattr(features, gate) for gate in gates)


class CoschedulingArgs(ApiModel):
    """scheduler-plugins' CoschedulingArgs (registered under kubescheduler.config.k8s.io/v1),
    with its defaults and validation: how long placed members wait at Permit for the rest
    (a PodGroup's scheduleTimeoutSeconds beats it), how long a group that failed is held back,
    and below what share of missing members PostFilter does not give the group up."""

    permit_waiting_time_seconds: int = Field(default=60, ge=0)
    pod_group_backoff_seconds: int = Field(default=0, ge=0)
    pod_group_reject_percentage: int = Field(default=10, ge=0, le=100)
