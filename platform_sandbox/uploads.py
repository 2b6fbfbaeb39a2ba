"""Checking and counting one ``/users`` or ``/usersreplace`` payload (docs/platform-notes.md §3.2-§3.5, §3.7).

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
    return tuple(keys)


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
