"""The SchedulerProfile's status as the CRD declares it: metav1.Conditions and the summary
fields the printer columns read."""

from __future__ import annotations

from enum import StrEnum
from typing import Final

from pydantic import Field

from scheduler_runtime.config import ApiModel

# The longest condition message the API takes.
MAX_MESSAGE: Final = 32768


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
    version: str | None = Field(
        default=None,
        description="The kube-scheduler release the scheduler runs (KubeScheduler) or behaves "
        "as (PythonRuntime), such as v1.36.3.",
    )
    emulated_version: str | None = Field(
        default=None,
        description="The Kubernetes minor whose feature gates and default plugins the "
        "scheduler follows, such as 1.36.",
    )
