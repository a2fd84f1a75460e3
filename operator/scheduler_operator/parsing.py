"""A SchedulerProfile object as the operator reads it: the guards, then the spec's model, then
what the model alone cannot check (the API's bounds on the runtime's models, unique names)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from scheduler_runtime.config import field_path

from .errors import SpecError
from .guards import check_sizes, check_value
from .model import LONE_REPLICAS, REFINED_FIELDS, SchedulerProfile, SchedulerProfileSpec
from .patterns import DNS_SUBDOMAIN


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
    check_value(body.get("spec"), "spec")
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
