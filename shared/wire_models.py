"""Base for JSON bodies the dashboard exchanges in camelCase, with snake_case names in Python."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class CamelModel(BaseModel):
    """Serialized (and validated) by camelCase alias; built in Python by field name."""

    model_config = ConfigDict(alias_generator=to_camel, validate_by_name=True, validate_by_alias=True)


def documented_rules(*rules: dict[str, Any], examples: list[dict[str, Any]] | None = None) -> ConfigDict:
    """Model config that writes a model's cross-field rules into its JSON Schema (``allOf``).

    pydantic's schema has each field's own limits but not what a ``model_validator`` checks ("users,
    an uploadId or a segment"); each rule here is the JSON Schema of one such check, so
    ``openapi.json`` says what the model accepts and a schema-driven client (or fuzzer) sends bodies
    the service takes. ``tests/unit/test_openapi_bodies.py`` checks that bodies valid by the
    document are valid by the model.
    """
    extra: dict[str, Any] = {"allOf": list(rules)}
    if examples:
        extra["examples"] = examples  # what a client (and the fuzzer's examples phase) can start from
    return ConfigDict(json_schema_extra=extra)


def when(condition: dict[str, Any], then: dict[str, Any]) -> dict[str, Any]:
    """The JSON Schema rule "if ``condition`` holds, ``then`` must too"."""
    return {"if": condition, "then": then}


def has(**properties: dict[str, Any]) -> dict[str, Any]:
    """The JSON Schema of an object that has each of ``properties`` (camelCase), each matching its schema."""
    return {"required": sorted(properties), "properties": properties}
