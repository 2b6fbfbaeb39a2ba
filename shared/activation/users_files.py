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
from shared.audiences.preparation import IdentifierColumns
from shared.audiences.snapshot import csv_safe_text, score_cell, snapshot_row
from shared.audiences.uploads import customer_value, invalid_rows, plainly_valid, row_problems
from shared.errors import ValidationFailed

if TYPE_CHECKING:
    from _csv import Reader as _CsvReader

USERS_CSV_COLUMNS = ("user_id", "email", "firstName", "lastName", "phone", "score", "country")
# Written only when some user carries a Limited Data Use flag (docs/platform-notes.md §3.8): a list
# with the limitedDataUse column sends the data processing options on every row.
LIMITED_DATA_USE_COLUMNS = ("limitedDataUse", "state")
# Written for a value-based segment seed: each user's predicted value (``shared.targeting.values``).
VALUE_CSV_COLUMN = "value"
# How pydantic reads a true boolean cell (an uploaded list was validated as AudienceUser already).
_TRUE_CELLS = frozenset({"true", "1", "yes", "y", "on", "t"})


def groups_csv(users: list[AudienceUser], groups: list[str]) -> bytes:
    """The holdout's groups file: ``user_id,score,group`` per segment user (no identifiers)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(("user_id", "score", "group"))
    for user, group in zip(users, groups, strict=True):
        writer.writerow((user.user_id, "" if user.score is None else repr(user.score), group))
    return buffer.getvalue().encode()


def users_csv(users: list[AudienceUser], values: Mapping[str, float] | None = None) -> bytes:
    """The users file SelectUsers stores; with ``values`` (a value-based seed), a ``value`` column."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    limited = any(u.limited_data_use is not None for u in users)
    header = USERS_CSV_COLUMNS + LIMITED_DATA_USE_COLUMNS if limited else USERS_CSV_COLUMNS
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
        if values is not None:
            value = values.get(u.user_id)
            row = (*row, "" if value is None else repr(value))
        writer.writerow(row)
    return buffer.getvalue().encode()


def _csv_rows(data: BinaryIO) -> tuple[list[str], _CsvReader]:
    # Read through a wrapper over the S3 stream: a million-user file is never held whole.
    reader = csv.reader(io.TextIOWrapper(data, encoding="utf-8-sig", newline=""))
    header = next(reader, [])
    return header, reader


def snapshot_rows_of_csv(data: BinaryIO, value_column: str | None = None) -> Iterator[tuple[str, ...]]:
    """The snapshot rows of an uploaded users CSV, checking every row as they go (the POST checked
    only the header, ``shared.audiences.uploads.check_upload``). A plainly valid row
    (``plainly_valid``) is written without building its model, with exactly what ``snapshot_row``
    would write for it; any other row goes through the model.

    With ``value_column`` (a value-based seed), each row's value is checked too
    (``uploads.customer_value``: a number of at least 0, or blank).

    Once the whole file is read, raises ``ValidationFailed`` naming the line and column of each bad
    row (never its value), or for a file that is not UTF-8; nothing is written then."""
    problems: list[str] = []
    try:
        header, rows = _csv_rows(data)
        value_at = header.index(value_column) if value_column is not None and value_column in header else None
        for row in rows:
            if not row:
                continue
            if value_at is not None and value_at < len(row):
                try:
                    customer_value(row[value_at])
                except ValueError as exc:
                    problems.append(f"line {rows.line_num}: {value_column}: {exc}")
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
                problems.extend(row_problems(error, rows.line_num))
                continue
            yield snapshot_row(user)
    except UnicodeDecodeError as exc:
        raise ValidationFailed("The uploaded file is not UTF-8 text.", field="uploadId") from exc
    if problems:
        raise invalid_rows(problems)


def column_chunks(data: BinaryIO, size: int, value_column: str | None = None) -> Iterator[IdentifierColumns]:
    """The identifier columns of a users CSV (``USERS_CSV_COLUMNS`` header, any order), ``size``
    users at a time; blank cells are missing values. With ``value_column`` (a value-based seed), each
    user's value from that column too (``uploads.customer_value``: a blank cell is no value)."""
    header, rows = _csv_rows(data)
    index = {name: i for i, name in enumerate(header)}
    wanted = ("user_id", "email", "phone", "firstName", "lastName", "country", *LIMITED_DATA_USE_COLUMNS)
    positions = [index.get(name) for name in wanted]
    value_at = index.get(value_column) if value_column is not None else None
    if value_column is not None and value_at is None:
        raise ValidationFailed(
            f"The users file has no column named {value_column!r} for the customers' values.",
            field="valueColumn",
            remedy="Name one of the uploaded CSV's columns in valueColumn.",
        )
    chunk: list[list[str]] = []
    for row in rows:
        if row:
            chunk.append(row)
        if len(chunk) == size:
            yield _columns(chunk, positions, value_at)
            chunk = []
    if chunk:
        yield _columns(chunk, positions, value_at)


def _values(rows: list[list[str]], at: int) -> list[float | None]:
    values: list[float | None] = []
    for row in rows:
        try:
            values.append(customer_value(row[at]) if at < len(row) else None)
        except ValueError as exc:
            raise ValidationFailed(
                f"A customer value {exc}.",
                field="valueColumn",
                remedy="Give each customer a value of 0 or more (blank for no value), then retry.",
            ) from exc
    return values


def _columns(
    rows: list[list[str]], positions: list[int | None], value_at: int | None = None
) -> IdentifierColumns:
    def column(at: int | None) -> list[str | None]:
        if at is None:
            return [None] * len(rows)
        return [(row[at] if at < len(row) and row[at].strip() else None) for row in rows]

    user_ids, emails, phones, first_names, last_names, countries, flags, states = (
        column(at) for at in positions
    )
    return IdentifierColumns(
        user_ids=[u or "" for u in user_ids],
        emails=emails,
        phones=phones,
        first_names=first_names,
        last_names=last_names,
        countries=countries,
        # A list with the limitedDataUse column carries the options on every row (blank: not LDU).
        limited_data_use=None
        if positions[6] is None
        else [None if v is None else v.strip().lower() in _TRUE_CELLS for v in flags],
        states=states,
        values=None if value_at is None else _values(rows, value_at),
    )
