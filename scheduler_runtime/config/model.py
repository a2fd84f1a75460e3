"""The base of every API model, the configuration's and a plugin's args: camelCase keys,
unknown fields rejected (as upstream's strict decoding does), immutable once loaded."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class ApiModel(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True
    )
