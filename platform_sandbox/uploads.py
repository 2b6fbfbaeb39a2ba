"""Checking and counting one ``/users`` or ``/usersreplace`` payload (docs/platform-notes.md §3.2-§3.5,
§3.7, §3.8 for the data processing options, and §4.1 for the customer value column).

Pure functions over plain values: the audience endpoints decide what to do with the result.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from itertools import chain
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
    rows = _rows(data, schema)
    rules = _RowRules.of(schema)
    # One regex over the batch's hashed cells first: with every cell blank or a digest, a row can
    # only lack an identifier (a 10,000-row batch then costs a few ms rather than one regex per cell).
    digests_ok = rules.all_digests(rows)
    for index, (raw_row, row) in enumerate(zip(data, rows, strict=True)):
        problem = rules.missing_identifier(row) if digests_ok else rules.problem(row)
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


def _rows(data: list[Any], schema: tuple[str, ...]) -> list[Row]:
    """Every row's values as text; raises, at the first row in order that has them, a wrong number of
    values or data processing options not as documented."""
    if (
        DPO not in schema
        and {*map(type, data)} == _LIST_ONLY
        and {*map(len, data)} == {len(schema)}
        and {*map(type, chain.from_iterable(data))} <= _TEXT_ONLY
    ):
        return list(map(tuple, data))  # the usual batch: rows of strings, nothing to convert or refuse
    rows: list[Row] = []
    check_options = DPO in schema
    for index, raw_row in enumerate(data):
        rows.append(_row_values(raw_row, schema, index))
        if check_options:
            _check_data_processing(schema, raw_row, index)
    return rows


def _row_values(raw_row: Any, schema: tuple[str, ...], index: int) -> Row:
    # A single-key schema may send bare strings (["<hash>", ...]) or one-element rows ([["<hash>"]]).
    values = raw_row if isinstance(raw_row, list) else [raw_row]
    if len(values) != len(schema):
        raise errors.invalid_parameter(
            f"Row {index} has {len(values)} values but the schema has {len(schema)} keys", blame="payload"
        )
    return tuple(value if isinstance(value, str) else json.dumps(value) for value in values)


_LIST_ONLY, _TEXT_ONLY = frozenset({list}), frozenset({str})
_HEX_DIGITS = b"0123456789abcdef"


@dataclass(frozen=True, slots=True)
class _RowRules:
    """What makes a row of ``schema`` invalid (docs/platform-notes.md §3.7): a hashed key's value that
    is not blank nor a lowercase SHA-256 hex digest, or no identifier at all."""

    hashed: tuple[tuple[int, str], ...]
    identity: tuple[int, ...]

    @classmethod
    def of(cls, schema: tuple[str, ...]) -> _RowRules:
        return cls(
            hashed=tuple((at, key) for at, key in enumerate(schema) if key in HASHED_KEYS),
            identity=tuple(at for at, key in enumerate(schema) if key not in ATTRIBUTE_KEYS),
        )

    def all_digests(self, rows: list[Row]) -> bool:
        """Whether every hashed cell of ``rows`` is blank or a digest: 0 or 64 characters each, and
        nothing but lowercase hex digits in them all (checked in C, over the whole batch at once)."""
        cells = [row[at] for row in rows for at, _ in self.hashed]
        if not {*map(len, cells)} <= {0, 64}:
            return False
        try:
            text = "".join(cells).encode("ascii")
        except UnicodeEncodeError:
            return False
        return not text.translate(None, _HEX_DIGITS)

    def problem(self, row: Row) -> str | None:
        for at, key in self.hashed:
            value = row[at]
            if value and not SHA256_HEX.fullmatch(value):
                return f"{key} is not a lowercase SHA-256 hex digest"
        return self.missing_identifier(row)

    def missing_identifier(self, row: Row) -> str | None:
        for at in self.identity:
            if row[at]:
                return None
        return "row has no identifier"
