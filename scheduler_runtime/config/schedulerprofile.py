"""A SchedulerProfile (the operator's custom resource) read as the scheduler configuration it
asks for, so `simulate` can take the file a platform team applies.

Only the shape is known here, not the operator: the runtime never imports the operator (it
sits above the runtime), and a SchedulerProfile's `spec.profiles` are KubeSchedulerProfiles
field for field, so reading one takes two constants and one defaulting rule, the operator's
own: a profile without a schedulerName is `spec.schedulerName`, else `metadata.name`. What
the operator adds beyond scheduling (leader election on a Lease of its naming, the pods) does
not change where pods go and is left out. The operator's tests hold the two readings equal.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from scheduler_runtime.config.errors import ConfigError
from scheduler_runtime.config.types import API_VERSION, KIND

GROUP: Final = "scheduling.schedops.io"
SCHEDULER_PROFILE_KIND: Final = "SchedulerProfile"
SCHEDULER_PROFILE_API_VERSION: Final = f"{GROUP}/v1alpha1"


def is_scheduler_profile(doc: Any) -> bool:
    """Whether `doc` is a SchedulerProfile object (of any version of the group)."""
    return (
        isinstance(doc, Mapping)
        and doc.get("kind") == SCHEDULER_PROFILE_KIND
        and str(doc.get("apiVersion", "")).startswith(f"{GROUP}/")
    )


def configuration_of(doc: Mapping[str, Any]) -> dict[str, Any]:
    """The KubeSchedulerConfiguration a SchedulerProfile asks for, as far as placing pods
    goes (leader election off); ConfigError names the SchedulerProfile's field."""
    if doc.get("apiVersion") != SCHEDULER_PROFILE_API_VERSION:
        raise ConfigError("apiVersion", f"must be {SCHEDULER_PROFILE_API_VERSION!r}")
    metadata = doc.get("metadata")
    name = metadata.get("name") if isinstance(metadata, Mapping) else None
    if not isinstance(name, str) or not name:
        raise ConfigError("metadata.name", "required field is missing")
    spec = doc.get("spec") or {}
    if not isinstance(spec, Mapping):
        raise ConfigError("spec", "must be an object")
    default_name = spec.get("schedulerName") or name
    given = spec.get("profiles") or [{}]
    if not isinstance(given, list):
        raise ConfigError("spec.profiles", "must be a list")
    profiles = []
    for index, profile in enumerate(given):
        if not isinstance(profile, Mapping):
            raise ConfigError(f"spec.profiles[{index}]", "must be an object")
        profiles.append({**profile, "schedulerName": profile.get("schedulerName") or default_name})
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "leaderElection": {"leaderElect": False},
        "profiles": profiles,
    }


def in_scheduler_profile(error: ConfigError) -> ConfigError:
    """An error in the configuration read from a SchedulerProfile, pointed at its spec (the
    configuration's profiles are the spec's, index for index)."""
    if error.path.startswith("profiles"):
        return ConfigError(f"spec.{error.path}", error.reason)
    return error
