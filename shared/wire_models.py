"""Base for JSON bodies the dashboard exchanges in camelCase, with snake_case names in Python."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class CamelModel(BaseModel):
    """Serialized (and validated) by camelCase alias; built in Python by field name."""

    model_config = ConfigDict(alias_generator=to_camel, validate_by_name=True, validate_by_alias=True)
