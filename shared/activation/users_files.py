"""The activation's users files: the users CSV SelectUsers stores, the holdout's groups file, and
reading an uploaded or stored users CSV back as snapshot rows or as identifier columns in chunks.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, BinaryIO

from pydantic import ValidationError

from shared.audiences.identifiers import AudienceUser
from shared.audiences.snapshot import csv_safe_text, score_cell, snapshot_row
from shared.audiences.uploads import (
    bounded_lines,
    customer_value,
    invalid_rows,
    plainly_valid,
    row_problems,
    unreadable_record,
)
from shared.errors import ValidationFailed

if TYPE_CHECKING:
    from _csv import Reader as _CsvReader

USERS_CSV_COLUMNS = ("user_id", "email", "firstName", "lastName", "phone", "score", "country")
# Written only when some user carries a Limited Data Use flag (docs/platform-notes.md §3.8): a list
# with the limitedDataUse column sends the data processing options on every row.
LIMITED_DATA_USE_COLUMNS = ("limitedDataUse", "state")
# The other match keys (docs/platform-notes.md §3.7), each written when some user has it, under the
# users CSV's names (shared.activation.hashing.CSV_COLUMNS).
EXTRA_CSV_COLUMNS: tuple[tuple[str, str], ...] = (
    ("city", "city"),
    ("postcode", "postcode"),
    ("dateOfBirth", "date_of_birth"),
    ("gender", "gender"),
    ("externalId", "external_id"),
    ("madid", "madid"),
)
# Written for a value-based segment seed: each user's predicted value (``shared.targeting.values``).
VALUE_CSV_COLUMN = "value"


def groups_csv(users: list[AudienceUser], groups: list[str]) -> bytes:
    """The holdout's groups file: ``user_id,score,group`` per segment user (no identifiers)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(("user_id", "score", "group"))
    for user, group in zip(users, groups, strict=True):
        writer.writerow((user.user_id, "" if user.score is None else repr(user.score), group))
    return buffer.getvalue().encode()


def users_csv_header(present: Mapping[str, bool]) -> tuple[tuple[str, ...], list[tuple[str, str]]]:
    """The users file's header (without the value column) and its other keys' ``(column, field)``,
    given which fields some user has a value in (``present``: ``limited_data_use``, ``state`` and the
    fields of ``EXTRA_CSV_COLUMNS``): the Limited Data Use pair when some user has a flag, each other
    key when some user has it."""
    limited = present.get("limited_data_use", False)
    header = USERS_CSV_COLUMNS + LIMITED_DATA_USE_COLUMNS if limited else USERS_CSV_COLUMNS
    # The state is also the ST key: written for it when the Limited Data Use columns do not carry it.
    others = EXTRA_CSV_COLUMNS if limited else (("state", "state"), *EXTRA_CSV_COLUMNS)
    extras = [(name, field) for name, field in others if present.get(field, False)]
    return (*header, *(name for name, _ in extras)), extras


def users_csv(users: list[AudienceUser], values: Mapping[str, float] | None = None) -> bytes:
    """The users file SelectUsers stores; with ``values`` (a value-based seed), a ``value`` column."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    fields = ("limited_data_use", "state", *(field for _, field in EXTRA_CSV_COLUMNS))
    header, extras = users_csv_header(
        {field: any(getattr(u, field) is not None for u in users) for field in fields}
    )
    limited = "limitedDataUse" in header
    writer.writerow(header if values is None else (*header, VALUE_CSV_COLUMN))
    for u in users:
        row: tuple[object, ...] = (
            u.user_id,
            u.email or "",
            u.first_name or "",
            u.last_name or "",
            u.phone or "",
            u.score or "",
            u.country or "",
        )
        if limited:
            flag = "" if u.limited_data_use is None else str(u.limited_data_use).lower()
            row = (*row, flag, u.state or "")
        row = (*row, *(getattr(u, field) or "" for _, field in extras))
        if values is not None:
            value = values.get(u.user_id)
            row = (*row, "" if value is None else repr(value))
        writer.writerow(row)
    return buffer.getvalue().encode()


def _csv_reader(data: BinaryIO) -> _CsvReader:
    # Read through a wrapper over the S3 stream: a million-user file is never held whole.
    # Lines are bounded (uploads.bounded_lines): a file of one enormous line is refused, not read.
    return csv.reader(bounded_lines(io.TextIOWrapper(data, encoding="utf-8-sig", newline="")))


def snapshot_rows_of_csv(
    data: BinaryIO, value_column: str | None = None, *, line_offset: int = 0, more_after: bool = False
) -> Iterator[tuple[str, ...]]:
    """The snapshot rows of an uploaded users CSV, checking every row as they go (the POST checked
    only the header, ``shared.audiences.uploads.check_upload``). A plainly valid row
    (``plainly_valid``) is written without building its model, with exactly what ``snapshot_row``
    would write for it; any other row goes through the model.

    With ``value_column`` (a value-based seed), each row's value is checked too
    (``uploads.customer_value``: a number of at least 0, or blank).

    Once the whole file is read, raises ``ValidationFailed`` naming the line and column of each bad
    row (never its value), for a file that is not UTF-8, or at the line of a record the csv module
    refuses (a field over its limit, which the engine reads); nothing is written then. A chunk of a list
    read in chunks (its header, then its records) names lines ``line_offset`` further on, and, when
    ``more_after`` (a chunk but the last), the line where its checking stopped."""
    problems: list[str] = []
    rows = _csv_reader(data)
    try:
        header = next(rows, [])
        value_at = header.index(value_column) if value_column is not None and value_column in header else None
        for row in rows:
            if not row:
                continue
            if value_at is not None and value_at < len(row):
                try:
                    customer_value(row[value_at])
                except ValueError as exc:
                    problems.append(f"line {rows.line_num + line_offset}: {value_column}: {exc}")
            cells = {name: value for name, value in zip(header, row, strict=False) if name and value.strip()}
            if plainly_valid(cells):
                score = cells.get("score")
                yield (
                    csv_safe_text(cells["user_id"]),
                    csv_safe_text(cells.get("email")),
                    csv_safe_text(cells.get("firstName")),
                    csv_safe_text(cells.get("lastName")),
                    csv_safe_text(cells.get("phone")),
                    score_cell(float(score) if score is not None else None),
                )
                continue
            try:
                user = AudienceUser.model_validate(cells)
            except ValidationError as error:
                problems.extend(row_problems(error, rows.line_num + line_offset))
                continue
            yield snapshot_row(user)
    except UnicodeDecodeError as exc:
        raise ValidationFailed("The uploaded file is not UTF-8 text.", field="uploadId") from exc
    except csv.Error as exc:
        # A record the engine reads (up to list_chunks.RECORD_BYTES) may hold a field over the csv
        # module's limit (131,072 characters): named by its line as the upload's other errors are.
        raise unreadable_record("The uploaded CSV", rows.line_num + line_offset, exc) from exc
    if problems:
        raise invalid_rows(problems, rows.line_num + line_offset if more_after else None)
