"""Audience lists too large for a request body (API Gateway takes at most 10 MB) go to S3 first:
the dashboard asks for an upload link, POSTs the CSV to it, and names the upload when creating the
audience."""

from __future__ import annotations

import csv
import io
import math
import re
import uuid
from collections.abc import Iterator
from typing import BinaryIO, Literal, NoReturn, Protocol, TextIO

from pydantic import Field, ValidationError

from shared.audiences.identifiers import AudienceUser
from shared.errors import NotFound, ValidationFailed
from shared.filekinds import HEAD_BYTES, not_text
from shared.records.uploads import UploadForm
from shared.wire_models import CamelModel

UPLOAD_LINK_SECONDS = 900
CSV_COLUMNS = "user_id,email,firstName,lastName,phone,score,country"
_PROBLEMS_SHOWN = 5
# The longest line a users CSV may have: a row of seven columns (and a value) fits in a few hundred
# characters. A file of one enormous line (no line ends, or a header of millions of columns) is
# refused at this length, before Python's csv module builds a cell per field of it.
MAX_LINE_CHARS = 65_536


class UploadLink(CamelModel):
    upload_id: str
    url: str
    method: Literal["POST"] = "POST"
    fields: dict[str, str] = Field(
        description="Send these as form fields, then the CSV as the last field, file, in one "
        "multipart/form-data POST to url. S3 refuses a file larger than maxBytes."
    )
    content_type: str = "text/csv"
    max_bytes: int
    expires_in_seconds: int = UPLOAD_LINK_SECONDS
    columns: str = CSV_COLUMNS


class InvalidFile(Exception):
    """The CSV cannot be uploaded as it is; ``problems`` say where, without quoting values."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


def read_users(lines: Iterator[str] | TextIO) -> list[AudienceUser]:
    """Audience users from CSV text with a header row; empty cells are missing values.

    Raises ``InvalidFile`` listing ``line N: field: problem`` for every row that would be rejected.
    """
    reader = csv.DictReader(lines)
    if reader.fieldnames is None or "user_id" not in reader.fieldnames:
        raise InvalidFile(["the header row must include a user_id column"])
    users: list[AudienceUser] = []
    problems: list[str] = []
    for record in reader:
        cells = {name: value for name, value in record.items() if name and value and value.strip()}
        try:
            users.append(AudienceUser.model_validate(cells))
        except ValidationError as error:
            problems.extend(row_problems(error, reader.line_num))
    if problems:
        raise InvalidFile(problems)
    return users


def bounded_lines(text: TextIO, what: str = "The uploaded CSV", limit: int = MAX_LINE_CHARS) -> Iterator[str]:
    """The lines of ``text`` for ``csv.reader``, each read at most ``limit`` characters at a time, so a
    line with no end is never read whole. Raises ``ValidationFailed`` naming ``what``, the line and
    the limit for a longer line."""
    number = 0
    while line := text.readline(limit + 1):
        number += 1
        if len(line) > limit:
            raise ValidationFailed(
                f"{what} has a line longer than {limit:,} characters (line {number}): it is not a list "
                "of users, one per line.",
                field="uploadId",
                remedy=f"Export the list again as CSV with a header row ({CSV_COLUMNS}) and one user per "
                "line, then upload it and use its new uploadId.",
            )
        yield line


def csv_rows(text: TextIO, what: str = "The uploaded CSV") -> Iterator[list[str]]:
    """``csv.reader`` over :func:`bounded_lines`; a malformed record (a field over the csv module's
    own limit, a NUL) is a ``ValidationFailed`` naming ``what`` and the line, never a crash."""
    reader = csv.reader(bounded_lines(text, what))
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise unreadable_record(what, reader.line_num, exc) from exc
        yield row


def unreadable_record(what: str, line: int, error: csv.Error) -> ValidationFailed:
    """The error for a record Python's csv module refuses (a field over its own limit, a NUL) at
    ``line`` of the file ``what`` names."""
    return ValidationFailed(
        f"{what} cannot be read as CSV at line {line}: {error}.",
        field="uploadId",
        remedy=f"Export the list again as CSV ({CSV_COLUMNS}), then upload it and use its new uploadId.",
    )


class UploadBlobs(Protocol):
    def open(self, key: str) -> BinaryIO: ...
    def size(self, key: str) -> int | None: ...
    def upload_form(
        self, key: str, content_type: str, max_bytes: int, expires_seconds: int
    ) -> UploadForm: ...


def upload_key(org_id: str, upload_id: str) -> str:
    return f"uploads/{org_id}/{upload_id}.csv"


def create_upload_link(org_id: str, blobs: UploadBlobs, max_bytes: int) -> UploadLink:
    """A new upload id and a 15-minute presigned POST for a CSV of at most ``max_bytes``."""
    upload_id = str(uuid.uuid4())
    form = blobs.upload_form(upload_key(org_id, upload_id), "text/csv", max_bytes, UPLOAD_LINK_SECONDS)
    return UploadLink(upload_id=upload_id, url=form.url, fields=form.fields, max_bytes=max_bytes)


def check_upload(
    org_id: str, upload_id: str, blobs: UploadBlobs, max_bytes: int, *, value_column: str | None = None
) -> None:
    """Check what an uploaded CSV can be refused for at once: there is one, it is within
    ``max_bytes``, its header names a ``user_id`` column (and ``value_column``, for a value-based
    seed) and a row follows. Only the start is read, so the answer does not grow with the list (a
    2M-row list would near API Gateway's 30 s); the rows themselves, values included, are checked by
    the activation's SelectUsers step, which reads them all anyway (``rows_problems``).

    Raises ``NotFound`` for no upload, and ``ValidationFailed`` for a file over ``max_bytes``, a
    header without ``user_id``, no rows, or a start that is not UTF-8; a file that is not text at all
    (a compressed file, a workbook, binary data) is refused saying what it is."""
    with open_upload(org_id, upload_id, blobs, max_bytes) as text:
        try:
            reader = csv_rows(text, f"The uploaded CSV (upload {upload_id})")
            header = next(reader, None)
            if header is None or "user_id" not in header:
                _refuse(["the header row must include a user_id column"])
            assert header is not None
            if value_column is not None and value_column not in header:
                raise ValidationFailed(
                    f"The uploaded CSV has no column named {value_column!r} for the customers' values.",
                    field="valueColumn",
                    remedy="Name one of the CSV's columns in valueColumn, or add the column to the file.",
                )
            if next((row for row in reader if row), None) is None:
                raise ValidationFailed("The uploaded CSV has no users.", field="uploadId")
        except UnicodeDecodeError as exc:
            _refuse_not_text(org_id, upload_id, blobs)
            raise ValidationFailed("The uploaded file is not UTF-8 text.", field="uploadId") from exc
        except ValidationFailed as refused:
            # (a file that is not text fails first as whatever its bytes look like: no user_id, one
            # enormous line, no users; it is refused for what it is)
            if refused.field == "uploadId":
                _refuse_not_text(org_id, upload_id, blobs)
            raise


def _refuse_not_text(org_id: str, upload_id: str, blobs: UploadBlobs) -> None:
    """Raise ``ValidationFailed`` saying what the upload is when its first bytes show it is not text
    (a compressed file, a workbook, UTF-16, binary data) and what to upload instead; read only on
    the way to refusing the file, so a good list costs no second read."""
    with blobs.open(upload_key(org_id, upload_id)) as stream:
        found = not_text(stream.read(HEAD_BYTES))
    if found is not None:
        raise ValidationFailed(
            f"The uploaded file (upload {upload_id}) is {found.what}: an audience is made from a UTF-8 CSV "
            "list of users only.",
            field="uploadId",
            remedy=f"{found.remedy} Columns: {CSV_COLUMNS}; use the new upload's uploadId.",
        )


def row_problems(error: ValidationError, line: int) -> list[str]:
    """``line N: column: problem`` for each problem of a CSV row, never its value (pydantic's own
    str() would quote it)."""
    return [
        f"line {line}: {'.'.join(map(str, issue['loc']))}: {issue['msg']}"
        for issue in error.errors(include_input=False, include_url=False)
    ]


def invalid_rows(problems: list[str], checked_to_line: int | None = None) -> ValidationFailed:
    """The error for an uploaded CSV with bad rows: the first few, by line and column. With
    ``checked_to_line`` (a list read in chunks stops at the first chunk holding a bad row), the
    problems are those up to that line, and the message says the lines after it were not checked."""
    shown = "; ".join(problems[:_PROBLEMS_SHOWN])
    extra = len(problems) - _PROBLEMS_SHOWN
    if checked_to_line is None:
        more = f" (and {extra} more)" if extra > 0 else ""
    else:
        more = (
            f" (and {extra} more up to line {checked_to_line}"
            if extra > 0
            else f" (up to line {checked_to_line}"
        )
        more += "; the lines after it were not checked)"
    return ValidationFailed(
        f"The uploaded CSV has invalid rows: {shown}{more}.",
        field="uploadId",
        remedy=f"Fix those rows (columns: {CSV_COLUMNS}), upload the file again and use its new uploadId.",
    )


def record_without_end(line: int, at: int, unbalanced: bool, most_bytes: int) -> ValidationFailed:
    """The error for an uploaded CSV where no record ends within ``most_bytes`` (the longest record the
    list is read with): a quoted field opened at byte ``at`` (from 0; named from 1, as lines are) of
    line ``line`` that never closes, or, when not ``unbalanced``, a line from there without an end.
    Names the place, never the value."""
    if unbalanced:
        return ValidationFailed(
            f"The uploaded CSV has an unbalanced quote at line {line} (byte {at + 1:,}): the quoted field it "
            f"opens does not close within {most_bytes:,} bytes, so the rows after it cannot be read.",
            field="uploadId",
            remedy="Fix the quoting on that line (a field holding a quote is quoted and its quote doubled: "
            '"ab""c"), upload the file again and use its new uploadId.',
        )
    return ValidationFailed(
        f"The uploaded CSV has a line longer than {most_bytes:,} bytes (line {line}, from byte {at + 1:,}): "
        "it is not a list of users, one per line.",
        field="uploadId",
        remedy=f"Export the list again as CSV with a header row ({CSV_COLUMNS}) and one user per line, then "
        "upload it and use its new uploadId.",
    )


def misread_quote(line: int, at: int, reason: str, fix: str) -> ValidationFailed:
    """The error for an uploaded CSV with a quote at byte ``at`` (from 0; named from 1, as lines are) of
    line ``line`` that CSV readers read differently (``list_chunks.first_misread_quote``), so the row's
    values cannot be known: ``reason`` says why and ``fix`` how to fix it (``MisreadQuote.reason`` and
    ``.fix``). Names the place, never the value."""
    return ValidationFailed(
        f"The uploaded CSV has a quote at line {line} (byte {at + 1:,}) that CSV readers read differently: "
        f"{reason}.",
        field="uploadId",
        remedy=f"Fix the quoting on that line: {fix}. Then upload the file again and use its new uploadId.",
    )


# A score written as a plain decimal number: what float() and pydantic read the same way.
_PLAIN_NUMBER = re.compile(r"-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?")


def customer_value(cell: str) -> float | None:
    """A value column's cell as a customer's value (docs/platform-notes.md §4.1): a plain decimal number
    of at least 0, or None for a blank cell. Raises ``ValueError`` saying why (never quoting the cell)."""
    text = cell.strip()
    if not text:
        return None
    if _PLAIN_NUMBER.fullmatch(text) is None:
        raise ValueError("must be a number such as 12.50")
    value = float(text)
    if not math.isfinite(value) or value < 0:
        raise ValueError("must be a number of at least 0")
    return value


def plainly_valid(cells: dict[str, str]) -> bool:
    """Whether a CSV row's non-blank cells are certainly a valid ``AudienceUser``: a user_id, and no
    score or a plain decimal one (every other field takes any text). The fast path of a million-row
    file; a row it is unsure of goes through the model, which has the last word."""
    score = cells.get("score")
    return bool(cells.get("user_id")) and (score is None or _PLAIN_NUMBER.fullmatch(score) is not None)


def open_upload(org_id: str, upload_id: str, blobs: UploadBlobs, max_bytes: int) -> TextIO:
    """An uploaded CSV as text read from S3 as it is consumed (a large list is never whole in
    memory), once its size is checked against ``max_bytes``: a presigned upload link cannot be
    trusted to have capped it (moto, the local S3, ignores the link's size range)."""
    try:
        uuid.UUID(upload_id)
    except ValueError as exc:
        raise ValidationFailed("uploadId is not an upload id.", field="uploadId") from exc
    key = upload_key(org_id, upload_id)
    size = blobs.size(key)
    if size is None:
        raise NotFound(
            f"Upload {upload_id} was not found (nothing was uploaded, or the link expired).",
            field="uploadId",
            remedy="Ask for a new upload link and send the CSV to it.",
        )
    if size > max_bytes:
        raise ValidationFailed(
            f"The uploaded file is {size:,} bytes; the limit is {max_bytes:,}.",
            field="uploadId",
            remedy="Split the list into files under the limit and create an audience from each.",
        )
    return io.TextIOWrapper(blobs.open(key), encoding="utf-8-sig", newline="")


def _refuse(problems: list[str]) -> NoReturn:
    raise invalid_rows(problems)


def users_from_upload(org_id: str, upload_id: str, blobs: UploadBlobs, max_bytes: int) -> list[AudienceUser]:
    """The users in an uploaded CSV, read as a stream; every bad row is reported by line and column,
    never by value."""
    try:
        with open_upload(org_id, upload_id, blobs, max_bytes) as text:
            users = read_users(bounded_lines(text, f"The uploaded CSV (upload {upload_id})"))
    except UnicodeDecodeError as exc:
        raise ValidationFailed("The uploaded file is not UTF-8 text.", field="uploadId") from exc
    except InvalidFile as exc:
        _refuse(exc.problems)
    if not users:
        raise ValidationFailed("The uploaded CSV has no users.", field="uploadId")
    return users
