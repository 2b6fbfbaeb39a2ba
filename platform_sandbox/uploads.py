"""Checking and counting one ``/users`` or ``/usersreplace`` payload (docs/platform-notes.md §3.2-§3.5,
§3.7, §3.8 for the data processing options, and §4.1 for the customer value column).

Pure functions over plain values: the audience endpoints decide what to do with the result.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from platform_sandbox import errors
from platform_sandbox.world import Row

# Keys the platform expects as lowercase SHA-256 hex (docs/platform-notes.md §3.7).
HASHED_KEYS = frozenset(
    {"EMAIL", "PHONE", "GEN", "DOBY", "DOBM", "DOBD", "LN", "FN", "FI", "ST", "CT", "ZIP", "COUNTRY"}
    | {"EMAIL_SHA256", "PHONE_SHA256"}
)
# Identifiers sent as they are (never hashed).
PLAIN_IDENTITY_KEYS = frozenset({"EXTERN_ID", "MADID", "MOBILE_ADVERTISER_ID", "UID", "APPUID", "PAGEUID"})
# Columns that describe a row but do not identify a person.
ATTRIBUTE_KEYS = frozenset(
    {
        "LOOKALIKE_VALUE",
        "DATA_PROCESSING_OPTIONS",
        "DATA_PROCESSING_OPTIONS_COUNTRY",
        "DATA_PROCESSING_OPTIONS_STATE",
    }
)
KNOWN_KEYS = HASHED_KEYS | PLAIN_IDENTITY_KEYS | ATTRIBUTE_KEYS
# Limited Data Use (docs/platform-notes.md §3.8): the options column, and its country and state.
DPO, DPO_COUNTRY, DPO_STATE = (
    "DATA_PROCESSING_OPTIONS",
    "DATA_PROCESSING_OPTIONS_COUNTRY",
    "DATA_PROCESSING_OPTIONS_STATE",
)
DPO_COUNTRIES = frozenset({0, 1})  # 1 = USA, 0 = let the platform locate the person
SHA256_HEX = re.compile(r"[0-9a-f]{64}")
# The customer value of a value-based audience (docs/platform-notes.md §4.1): "an integer or
# floating-point arbitrary non-negative number"; the SDK's own example sends numbers and numeric strings.
VALUE_KEY = "LOOKALIKE_VALUE"
_NUMBER = re.compile(r"-?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][-+]?[0-9]+)?")
MAX_SAMPLES = 100


@dataclass
class CheckedBatch:
    """The outcome of one payload: its schema, the valid rows, and what was wrong with the others.

    With a ``LOOKALIKE_VALUE`` column, ``schema`` and the rows leave it out (a member is who the row
    identifies, whatever its value) and ``values`` holds each valid row's value (None: sent empty)."""

    schema: tuple[str, ...]
    received: int
    valid: list[Row] = field(default_factory=list)
    values: dict[Row, float | None] | None = None
    # Row index -> reason. Indexes, not values: a sample must never echo an identifier back.
    invalid_samples: dict[str, str] = field(default_factory=dict)
    invalid_count: int = 0


def check_payload(payload: dict[str, Any], max_rows: int) -> CheckedBatch:
    """Validate ``payload{schema, data}`` and split its rows into valid and invalid.

    Raises 100 for a malformed schema or a row whose length differs from the schema, and 105 for
    more than ``max_rows`` rows. Invalid values (not lowercase SHA-256 hex for a hashed key, or a
    row with no identifier at all) do not fail the call; they are counted, as the platform does.
    """
    schema = _schema(payload.get("schema"))
    data = payload.get("data")
    if not isinstance(data, list) or not data:
        raise errors.invalid_parameter("payload.data must be a non-empty array", blame="payload")
    if len(data) > max_rows:
        raise errors.too_many_parameters(len(data), max_rows)
    value_at = schema.index(VALUE_KEY) if VALUE_KEY in schema else None
    batch = CheckedBatch(
        schema=schema if value_at is None else schema[:value_at] + schema[value_at + 1 :],
        received=len(data),
        values=None if value_at is None else {},
    )
    for index, raw_row in enumerate(data):
        row = _row_values(raw_row, schema, index)
        _check_data_processing(schema, raw_row, index)
        problem = _row_problem(schema, row)
        value: float | None = None
        if problem is None and value_at is not None:
            value, problem = customer_value(raw_row[value_at] if isinstance(raw_row, list) else None)
            row = row[:value_at] + row[value_at + 1 :]
        if problem is None:
            batch.valid.append(row)
            if batch.values is not None:
                batch.values[row] = value
            continue
        batch.invalid_count += 1
        if len(batch.invalid_samples) < MAX_SAMPLES:
            batch.invalid_samples[str(index)] = problem
    return batch


def _schema(raw: Any) -> tuple[str, ...]:
    keys = [raw] if isinstance(raw, str) else raw
    if not isinstance(keys, list) or not keys or not all(isinstance(key, str) for key in keys):
        raise errors.invalid_parameter(
            "payload.schema must be a key or a non-empty array of keys", blame="payload"
        )
    unknown = [key for key in keys if key not in KNOWN_KEYS]
    if unknown:
        raise errors.invalid_parameter(f"Invalid schema key {unknown[0]}", blame="payload")
    if len(set(keys)) != len(keys):
        raise errors.invalid_parameter("payload.schema repeats a key", blame="payload")
    if (DPO_COUNTRY in keys or DPO_STATE in keys) and DPO not in keys:
        raise errors.invalid_parameter(
            f"{DPO_COUNTRY} and {DPO_STATE} need {DPO} in the schema", blame="payload"
        )
    if DPO_COUNTRY in keys and DPO_STATE not in keys:
        raise errors.invalid_parameter(f"{DPO_STATE} must be set when {DPO_COUNTRY} is", blame="payload")
    return tuple(keys)


def _check_data_processing(schema: tuple[str, ...], raw_row: Any, index: int) -> None:
    """Refuse a row whose data processing options are not as documented (§3.8): ``[]`` or
    ``["LDU"]``; a country of 1 or 0 and, when the country is given, a state (an integer, 1000 for
    California, 0 to locate)."""
    if DPO not in schema or not isinstance(raw_row, list):
        return
    values = dict(zip(schema, raw_row, strict=True))
    options = values[DPO]
    if not isinstance(options, list) or options not in ([], ["LDU"]):
        raise errors.invalid_parameter(f'Row {index}: {DPO} must be [] or ["LDU"]', blame="payload.data")
    country, state = values.get(DPO_COUNTRY, ""), values.get(DPO_STATE, "")
    if country != "" and (not _is_int(country) or country not in DPO_COUNTRIES):
        raise errors.invalid_parameter(
            f"Row {index}: {DPO_COUNTRY} must be 1 (USA) or 0 (locate)", blame="payload.data"
        )
    if country != "" and state == "":
        raise errors.invalid_parameter(
            f"Row {index}: {DPO_STATE} must be set when {DPO_COUNTRY} is", blame="payload.data"
        )
    if state != "" and (not _is_int(state) or state < 0):
        raise errors.invalid_parameter(
            f"Row {index}: {DPO_STATE} must be a state code (1000 for California) or 0 (locate)",
            blame="payload.data",
        )


def customer_value(raw: Any) -> tuple[float | None, str | None]:
    """A ``LOOKALIKE_VALUE`` cell as ``(value, problem)``: a non-negative finite number, or a string
    holding one (as the SDK's example sends it); the empty string is a member without a value (an
    unknown value is ``""``, docs/platform-notes.md §3.2). Anything else is an invalid entry."""
    if raw == "":
        return None, None
    if isinstance(raw, int | float) and not isinstance(raw, bool):
        number = float(raw)
    elif isinstance(raw, str) and _NUMBER.fullmatch(raw.strip()):
        number = float(raw.strip())
    else:
        return None, f"{VALUE_KEY} is not a number"
    if not math.isfinite(number) or number < 0:
        return None, f"{VALUE_KEY} must be a non-negative number"
    return number, None


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _row_values(raw_row: Any, schema: tuple[str, ...], index: int) -> Row:
    # A single-key schema may send bare strings (["<hash>", ...]) or one-element rows ([["<hash>"]]).
    values = raw_row if isinstance(raw_row, list) else [raw_row]
    if len(values) != len(schema):
        raise errors.invalid_parameter(
            f"Row {index} has {len(values)} values but the schema has {len(schema)} keys", blame="payload"
        )
    return tuple(value if isinstance(value, str) else json.dumps(value) for value in values)


def _row_problem(schema: tuple[str, ...], row: Row) -> str | None:
    for key, value in zip(schema, row, strict=True):
        if key in HASHED_KEYS and value and not SHA256_HEX.fullmatch(value):
            return f"{key} is not a lowercase SHA-256 hex digest"
    has_identifier = any(value for key, value in zip(schema, row, strict=True) if key not in ATTRIBUTE_KEYS)
    return None if has_identifier else "row has no identifier"
