"""CSV snapshot of an audience."""

import csv
import io

import pytest

from shared.audiences.identifiers import AudienceUser
from shared.audiences.snapshot import SNAPSHOT_COLUMNS, csv_safe_text, iter_snapshot_csv, snapshot_csv


def _read(data: bytes) -> list[list[str]]:
    assert data.startswith(b"\xef\xbb\xbf")  # the byte order mark spreadsheets need for UTF-8
    return list(csv.reader(io.StringIO(data.decode("utf-8-sig"))))


def test_snapshot_has_the_spec_columns_and_raw_values() -> None:
    # Given
    user = AudienceUser(
        user_id="u1",
        email=" Mary@Example.com",
        firstName="José",
        lastName="O'Brien",
        phone="07700 900123",
        score=0.9,
    )

    # When
    rows = _read(snapshot_csv([user]))

    # Then values are as given, not normalised
    assert rows == [
        list(SNAPSHOT_COLUMNS),
        ["u1", " Mary@Example.com", "José", "O'Brien", "07700 900123", "0.9"],
    ]
    assert SNAPSHOT_COLUMNS == ("user_id", "email", "firstName", "lastName", "phone", "score")


@pytest.mark.parametrize(
    "cell", ['=HYPERLINK("http://x")', "-2+3", "+A1", "@SUM(A1)", "-Mary", "+1 555 0100)*SUM(1", "\tx", "\rx"]
)
def test_cells_a_spreadsheet_would_evaluate_are_prefixed(cell: str) -> None:
    assert csv_safe_text(cell) == "'" + cell


@pytest.mark.parametrize(
    "cell", ["+44 7700 900123", "+1 (555) 010-0199", "-12", "+33.1.23.45.67.89", "Mary", "0.5"]
)
def test_signed_digits_and_phone_punctuation_stay_as_written(cell: str) -> None:
    assert csv_safe_text(cell) == cell


def test_negative_score_stays_numeric() -> None:
    # Given
    user = AudienceUser(user_id="u1", firstName="-Mary", score=-0.5)

    # When
    row = _read(snapshot_csv([user]))[1]

    # Then the text cell is guarded, the number is not
    assert row[2] == "'-Mary"
    assert row[5] == "-0.5"


def test_missing_values_are_empty_cells() -> None:
    rows = _read(snapshot_csv([AudienceUser(user_id="u1")]))
    assert rows[1] == ["u1", "", "", "", "", ""]


def test_snapshot_streams_in_chunks_of_whole_rows() -> None:
    # Given
    users = (AudienceUser(user_id=f"u{index}", score=index) for index in range(5))

    # When
    chunks = list(iter_snapshot_csv(users, rows_per_chunk=2))

    # Then every chunk ends at a row boundary and together they are the whole file
    assert len(chunks) == 3
    assert all(chunk.endswith(b"\r\n") for chunk in chunks)
    assert len(_read(b"".join(chunks))) == 6
