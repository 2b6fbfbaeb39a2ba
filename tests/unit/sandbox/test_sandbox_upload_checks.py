"""Checking one multi-key upload payload (docs/platform-notes.md §3.2, §3.7): a whole 10,000-row batch
is checked at once, and a batch with bad values still names each bad row, as a row-by-row check does."""

from __future__ import annotations

from typing import Any

import pytest

from platform_sandbox.errors import GraphError
from platform_sandbox.uploads import check_payload
from tests.unit.sandbox.samples import sha256

SCHEMA = ["EXTERN_ID", "EMAIL", "PHONE", "FN", "LN", "COUNTRY"]


def good_rows(count: int) -> list[list[Any]]:
    return [[f"u{i}", sha256(f"b{i}@example.com"), "", sha256("ana"), "", sha256("gb")] for i in range(count)]


def test_a_full_batch_of_digests_and_blanks_is_all_valid() -> None:
    # Given 10,000 rows of digests and blank cells
    rows = good_rows(10_000)
    # When
    checked = check_payload({"schema": SCHEMA, "data": rows}, max_rows=10_000)
    # Then every row is a member, in order, as text
    assert (checked.received, checked.invalid_count) == (10_000, 0)
    assert checked.valid == [tuple(row) for row in rows]


def test_each_bad_row_of_a_large_batch_is_counted_and_named_by_index() -> None:
    # Given a large batch with, here and there: an upper-case digest, 64 characters that are not hex,
    # 64 non-ASCII characters, a number where a digest goes, a 63-character value, and a row whose
    # only identifier cells are blank
    rows = good_rows(5_000)
    rows[10][1] = sha256("x@example.com").upper()
    rows[20][3] = "g" * 64
    rows[30][4] = "é" * 64
    rows[40][5] = 7
    rows[50][1] = sha256("y@example.com")[:63]
    rows[60] = ["", "", "", "", "", ""]
    # When
    checked = check_payload({"schema": SCHEMA, "data": rows}, max_rows=10_000)
    # Then exactly those rows are invalid, each with its reason and index (never its value)
    assert checked.invalid_count == 6
    assert checked.invalid_samples == {
        "10": "EMAIL is not a lowercase SHA-256 hex digest",
        "20": "FN is not a lowercase SHA-256 hex digest",
        "30": "LN is not a lowercase SHA-256 hex digest",
        "40": "COUNTRY is not a lowercase SHA-256 hex digest",
        "50": "EMAIL is not a lowercase SHA-256 hex digest",
        "60": "row has no identifier",
    }
    assert len(checked.valid) == 4_994


def test_the_first_row_of_the_wrong_length_fails_the_call_naming_it() -> None:
    # Given a batch whose row 7 has one value too few
    rows = good_rows(100)
    rows[7] = rows[7][:-1]
    # When / Then
    with pytest.raises(GraphError, match="Row 7 has 5 values but the schema has 6 keys"):
        check_payload({"schema": SCHEMA, "data": rows}, max_rows=10_000)
