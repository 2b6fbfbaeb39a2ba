"""Checking and counting one ``/users`` or ``/usersreplace`` payload (docs/platform-notes.md §3.2-§3.5,
§3.7, and §3.8 for the data processing options).

Pure functions over plain values: the audience endpoints decide what to do with the result.
"""

from __future__ import annotations

import json
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
MAX_SAMPLES = 100


@dataclass
class CheckedBatch:
    """The outcome of one payload: its schema, the valid rows, and what was wrong with the others."""

    schema: tuple[str, ...]
    received: int
    valid: list[Row] = field(default_factory=list)
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
    batch = CheckedBatch(schema=schema, received=len(data))
    for index, raw_row in enumerate(data):
        row = _row_values(raw_row, schema, index)
        _check_data_processing(schema, raw_row, index)
        problem = _row_problem(schema, row)
        if problem is None:
            batch.valid.append(row)
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
