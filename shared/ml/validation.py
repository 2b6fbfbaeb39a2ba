"""A sync's validation of a shop's three files, column by column.

A 5M-line orders file validated as one pydantic model per row took most of a 108 s sync. Here a CSV is
read by the C ``csv`` reader in chunks of rows, each chunk is turned into columns, and each column is
checked at once against a pattern that only values the record models accept *unchanged* can match
(``OrderRecord``, ``CustomerRecord``, ``ProductRecord`` in ``shared.ml.datasets``): one regular
expression over the joined column, then numpy for the times. A row with any cell outside its pattern
(a blank required cell, a time with an offset, ``" 5"``, ``"0"``) is validated by its record model as
before, so it is either accepted with the model's value or rejected with the model's reason; the
fast path never accepts a value the model would refuse. JSON Lines files take the per-row path whole.

Every rejected row is named by file, line, column and reason, never by value. Duplicate keys, orders
in the future and orders for customers or products that are not (validly) in their files are
rejected rows too; a problem of a whole file (encoding, header, no records) raises ``ValidationFailed``
naming the file and the header.

What comes out is what the sync needs and no more: the row counts, the rejected rows, the customers'
identifier columns (for the coverage), the latest order time, and the line numbers to leave out when a
file's good rows are stored (:func:`good_rows`).
"""

from __future__ import annotations

import csv
import io
import itertools
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np
from numpy.typing import NDArray
from pydantic import ValidationError

from shared.errors import ValidationFailed
from shared.ml.datasets import (
    CustomerRecord,
    OrderRecord,
    ProductRecord,
    _check_header,
    _column_present,
    _decode,
    _describe,
    _error,
    _file_problem,
    _jsonl_rows,
    _Record,
    detect_format,
)

# Rows per chunk: large enough that per-chunk costs vanish, small enough that a chunk's Python lists
# (about 0.4 KB a row) stay far below the files themselves.
CHUNK_ROWS = 100_000

# Cell patterns that only values the record models accept unchanged can match. Digits are spelt
# [0-9]: \d would match other scripts' digits, which the models refuse.
_IDENTIFIER = r"\S(?:[^\n]{0,254}\S)?"  # stripped, 1-256 characters
_TEXT = rf"(?:{_IDENTIFIER})?"  # optional (empty is "not given")
_COUNTRY = r"(?:[A-Za-z]{2})?"  # upper-cased after
_QUANTITY = r"[1-9][0-9]{0,4}|100000"  # 1..100000
_AMOUNT = r"[0-9]{1,15}(?:\.[0-9]{1,15})?"  # >= 0, finite
_PRICE = rf"(?:{_AMOUNT})?"
_FLAG = r"(?:[Tt]rue|TRUE|[Ff]alse|FALSE|[Yy]es|YES|[Nn]o|NO|1|0)?"  # blank: not given
# ISO 8601 in UTC; numpy then refuses impossible dates (Feb 30, hour 24) as the model does.
_TIMESTAMP = r"[1-9][0-9]{3}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,6})?Z?"

# Per record type: each column's cell pattern (by field name).
_PATTERNS: dict[type[_Record], dict[str, str]] = {
    OrderRecord: {
        "order_id": _IDENTIFIER,
        "user_id": _IDENTIFIER,
        "product_id": _IDENTIFIER,
        "quantity": _QUANTITY,
        "amount": _AMOUNT,
        "timestamp": _TIMESTAMP,
    },
    CustomerRecord: {
        "user_id": _IDENTIFIER,
        "email": _TEXT,
        "first_name": _TEXT,
        "last_name": _TEXT,
        "phone": _TEXT,
        "country": _COUNTRY,
        "limited_data_use": _FLAG,
        "state": _TEXT,
        "marketing_consent": _FLAG,
    },
    ProductRecord: {"product_id": _IDENTIFIER, "name": _TEXT, "category": _TEXT, "price": _PRICE},
}
# Columns a sync keeps (in memory, for the checks and the coverage) per record type.
_KEPT: dict[type[_Record], tuple[str, ...]] = {
    OrderRecord: ("user_id", "product_id"),
    CustomerRecord: ("user_id", "email", "first_name", "last_name", "phone", "country"),
    ProductRecord: ("product_id",),
}
_KEY: dict[type[_Record], str] = {CustomerRecord: "user_id", ProductRecord: "product_id"}


@dataclass
class CustomerColumns:
    """The good customers' identifiers in file order ("" for a value not given; countries upper case)."""

    user_ids: list[str] = field(default_factory=list)
    emails: list[str] = field(default_factory=list)
    first_names: list[str] = field(default_factory=list)
    last_names: list[str] = field(default_factory=list)
    phones: list[str] = field(default_factory=list)
    countries: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ShopValidation:
    """A sync's verdict on a shop's three files.

    ``rejected`` holds every rejected row as ``{"file", "row", "field", "reason"}`` (never the value),
    sorted; ``rejected_lines`` the line numbers of the rejected rows per kind (to leave out when the good
    rows are stored); ``row_counts`` the good rows and ``rows_read`` all rows per kind.
    """

    customers: CustomerColumns
    row_counts: dict[str, int]
    rows_read: dict[str, int]
    rejected: list[dict[str, Any]]
    rejected_lines: dict[str, frozenset[int]]
    orders_end: datetime | None


def validate_shop_files(
    *, customers: bytes, products: bytes, orders: bytes, names: Mapping[str, str], now: datetime
) -> ShopValidation:
    """Validate all three files of a shop, keeping the good rows and naming each bad one.

    ``names`` maps ``customers``/``products``/``orders`` to file names (their suffix tells CSV from
    JSON Lines). A problem of a whole file (not UTF-8, empty, a missing or unknown column, no records)
    raises ``ValidationFailed`` naming the file and header. Rows are rejected for invalid values, a
    duplicate ``user_id``/``product_id``, an order time after ``now``, or an order for a customer or
    product that is not (validly) in its file.
    """
    customer_file = _validate_file(customers, names["customers"], CustomerRecord)
    product_file = _validate_file(products, names["products"], ProductRecord)
    users = set(customer_file.columns["user_id"])
    items = set(product_file.columns["product_id"])
    order_file = _validate_file(orders, names["orders"], OrderRecord, checks=_OrderChecks(users, items, now))
    files = {"customers": customer_file, "products": product_file, "orders": order_file}
    columns = customer_file.columns
    times = order_file.times
    return ShopValidation(
        customers=CustomerColumns(
            user_ids=columns["user_id"],
            emails=columns["email"],
            first_names=columns["first_name"],
            last_names=columns["last_name"],
            phones=columns["phone"],
            countries=columns["country"],
        ),
        row_counts={kind: f.good for kind, f in files.items()},
        rows_read={kind: f.good + len(f.rejected_lines) for kind, f in files.items()},
        rejected=sorted(
            (error for f in files.values() for error in f.errors),
            key=lambda e: (e["file"], e["row"], e["field"]),
        ),
        rejected_lines={kind: frozenset(f.rejected_lines) for kind, f in files.items()},
        orders_end=_to_datetime(times.max()) if times.size else None,
    )


def good_rows(data: bytes, name: str, rejected_lines: frozenset[int]) -> bytes:
    """The file without its rejected rows, as uploaded otherwise (the header and the good rows' cells,
    read and written by the ``csv`` module; JSON Lines line by line)."""
    text = _decode(data, name)
    if detect_format(name, text) == "jsonl":
        return "".join(
            line + "\n"
            for row, line in enumerate(text.splitlines(), start=1)
            if row not in rejected_lines and line.strip()
        ).encode()
    reader = csv.reader(io.StringIO(text))
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(next(reader))
    writer.writerows(cells for cells in reader if cells and reader.line_num not in rejected_lines)
    return buffer.getvalue().encode()


# --- one file ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _OrderChecks:
    """What an order is checked against beyond its own values."""

    users: set[str]
    items: set[str]
    now: datetime


@dataclass
class _File:
    name: str
    model: type[_Record]
    checks: _OrderChecks | None
    columns: dict[str, list[str]]
    times: NDArray[np.datetime64] = field(default_factory=lambda: np.empty(0, dtype="datetime64[us]"))
    errors: list[dict[str, Any]] = field(default_factory=list)
    rejected_lines: set[int] = field(default_factory=set)
    seen: set[str] = field(default_factory=set)
    good: int = 0
    read_any: bool = False


def _validate_file(data: bytes, name: str, model: type[_Record], checks: _OrderChecks | None = None) -> _File:
    text = _decode(data, name)
    file = _File(name, model, checks, columns={column: [] for column in _KEPT[model]})
    time_chunks: list[NDArray[np.datetime64]] = []
    if detect_format(name, text) == "jsonl":
        chunks: Iterator[_Chunk] = _jsonl_chunks(text, file)
    else:
        chunks = _csv_chunks(data, text, file)
    for chunk in chunks:
        file.read_any = True
        times = _keep(file, chunk)
        if times is not None:
            time_chunks.append(times)
    if not file.read_any:
        raise _file_problem(name, "file", "has no records", "Export the file again with its rows.")
    if time_chunks:
        file.times = np.concatenate(time_chunks)
    return file


@dataclass
class _Chunk:
    """Rows of one file in file order: their line numbers, kept columns, times (orders) and which
    rows are good so far."""

    lines: NDArray[np.int64]
    columns: dict[str, list[str]]
    good: NDArray[np.bool_]
    times: NDArray[np.datetime64] | None = None


def _csv_chunks(data: bytes, text: str, file: _File) -> Iterator[_Chunk]:
    model, name = file.model, file.name
    reader = csv.reader(io.StringIO(text))
    try:
        names = [h.strip() for h in next(reader, [])]
    except csv.Error as exc:
        raise _unreadable(name, exc, reader.line_num) from None
    header = set(names) - {""}
    missing = [
        field_name
        for field_name, info in model.model_fields.items()
        if info.is_required() and not _column_present(field_name, info.validation_alias, header)
    ]
    _check_header(name, model, header, missing)
    # The column each field is read from: its name, else its alias; the last of repeated names (as a
    # dict built from the row would). A header naming a field twice over (name and alias) is read
    # row by row, where the model chooses.
    position: dict[str, int] = {}
    for index, column in enumerate(names):
        if column:
            position[_field_of(model, column)] = index
    row_by_row = len({c for c in names if c}) != len({_field_of(model, c) for c in names if c})
    width = len(names)
    body = data.find(b"\n") + 1
    if body == 0 or width < 2 or b'"' in data or data.count(b"\r") != data.count(b"\r\n"):
        # Quoted cells may hold commas and line breaks: the csv module reads the rest.
        pieces: Iterator[_Piece] = iter([_Piece(text[text.find("\n") + 1 :], 2, regular=False)])
    else:
        pieces = _pieces(data, body, width)
    for piece in pieces:
        if piece.regular:
            flat = piece.text.replace("\n", ",").split(",")
            del flat[-1]  # after the piece's last line break
            columns = [flat[k::width] for k in range(width)]
            del flat
            n = len(columns[0])
            lines = np.arange(piece.first_line, piece.first_line + n, dtype=np.int64)
            yield _csv_chunk(file, names, position, width, lines, columns=columns, row_by_row=row_by_row)
            continue
        for rows, lines in _reader_rows(piece, name):
            yield _csv_chunk(file, names, position, width, lines, rows=rows, row_by_row=row_by_row)


@dataclass(frozen=True)
class _Piece:
    """Consecutive lines of a CSV file's body, from line ``first_line``; ``regular`` when every line
    has exactly the header's number of cells and none is quoted (so a split on commas reads it)."""

    text: str
    first_line: int
    regular: bool


def _pieces(data: bytes, body: int, width: int) -> Iterator[_Piece]:
    """The body of an unquoted CSV file in pieces of ``CHUNK_ROWS`` lines."""
    crlf = b"\r" in data
    buffer = np.frombuffer(data, dtype=np.uint8)
    breaks = np.flatnonzero(buffer[body:] == 10) + body
    first_line = 2
    for start in range(0, breaks.size, CHUNK_ROWS):
        ends = breaks[start : start + CHUNK_ROWS]
        begin = body if start == 0 else int(breaks[start - 1]) + 1
        stop = int(ends[-1]) + 1
        commas = np.flatnonzero(buffer[begin:stop] == 44)
        per_line = np.diff(np.searchsorted(commas, ends - begin), prepend=0)
        text = data[begin:stop].decode("utf-8")
        if crlf:
            text = text.replace("\r\n", "\n")
        yield _Piece(text, first_line, regular=bool((per_line == width - 1).all()))
        first_line += ends.size
    tail = int(breaks[-1]) + 1 if breaks.size else body
    if tail < len(data):  # a last line without a line break
        yield _Piece(data[tail:].decode("utf-8"), first_line, regular=False)


def _reader_rows(piece: _Piece, name: str) -> Iterator[tuple[list[list[str]], NDArray[np.int64]]]:
    """Rows of a piece read by the csv module, in chunks, with their line numbers (the line a record
    ends on); blank lines are no records."""
    reader = csv.reader(io.StringIO(piece.text))
    while True:
        rows: list[list[str]] = []
        numbers: list[int] = []
        try:
            for cells in itertools.islice(reader, CHUNK_ROWS):
                if cells:
                    rows.append(cells)
                    numbers.append(piece.first_line + reader.line_num - 1)
        except csv.Error as exc:
            raise _unreadable(name, exc, piece.first_line + reader.line_num - 1) from None
        if not rows:
            return
        yield rows, np.array(numbers, dtype=np.int64)


def _csv_chunk(
    file: _File,
    names: list[str],
    position: dict[str, int],
    width: int,
    lines: NDArray[np.int64],
    *,
    rows: list[list[str]] | None = None,
    columns: list[list[str]] | None = None,
    row_by_row: bool,
) -> _Chunk:
    """Validate a chunk of rows, given as ``rows`` of cells or (all of the header's width) as
    ``columns``."""
    n = lines.size
    if columns is not None:
        fast = np.ones(n, dtype=bool)
    elif row_by_row:
        fast = np.zeros(n, dtype=bool)
    else:
        assert rows is not None
        fast = np.fromiter((len(cells) == width for cells in rows), dtype=bool, count=n)
        # A row with too few or too many cells goes row by row; the others keep their columns.
        regular = rows if fast.all() else [cells if len(cells) == width else [""] * width for cells in rows]
        columns = [list(column) for column in zip(*regular, strict=True)]
    kept_columns: dict[str, list[str]] = {name: [""] * n for name in _KEPT[file.model]}
    good = fast
    times = np.zeros(n, dtype="datetime64[us]") if file.model is OrderRecord else None
    if columns is not None and not row_by_row:
        for field_name, pattern in _PATTERNS[file.model].items():
            index = position.get(field_name)
            column: list[str] = columns[index] if index is not None else [""] * n
            if field_name == "timestamp":
                times, parsed = _times(column)
                good &= parsed
            else:
                good &= _matches(column, pattern)
            if field_name in kept_columns:
                kept_columns[field_name] = (
                    [value.upper() for value in column] if field_name == "country" else column
                )
    chunk = _Chunk(lines=lines, columns=kept_columns, good=good, times=times)
    for i in np.flatnonzero(~good).tolist():
        cells = rows[i] if rows is not None else [column[i] for column in columns or []]
        # An empty cell means "not given" (CSV has no null), so it is left out of the record.
        raw = {k: v for k, v in zip(names, cells, strict=False) if v and not v.isspace()}
        _validate_row(file, chunk, i, raw)
    return chunk


def _jsonl_chunks(text: str, file: _File) -> Iterator[_Chunk]:
    errors: list[dict[str, Any]] = []
    rows = _jsonl_rows(text, file.name, errors, file.model)
    while True:
        batch = list(itertools.islice(rows, CHUNK_ROWS))
        file.errors.extend(errors)
        file.rejected_lines.update(error["row"] for error in errors)
        file.read_any = file.read_any or bool(errors)
        errors.clear()
        if not batch:
            return
        n = len(batch)
        chunk = _Chunk(
            lines=np.array([row for row, _ in batch], dtype=np.int64),
            columns={name: [""] * n for name in _KEPT[file.model]},
            good=np.zeros(n, dtype=bool),
            times=np.zeros(n, dtype="datetime64[us]") if file.model is OrderRecord else None,
        )
        for i, (_, raw) in enumerate(batch):
            _validate_row(file, chunk, i, raw)
        yield chunk


def _validate_row(file: _File, chunk: _Chunk, i: int, raw: dict[str, Any]) -> None:
    """One row through its record model: its values into the chunk, or its errors into the file."""
    line = int(chunk.lines[i])
    try:
        record = file.model.model_validate(raw)
    except ValidationError as exc:
        file.errors.extend(_describe(exc, file.name, line, raw))
        file.rejected_lines.add(line)
        return
    for name, column in chunk.columns.items():
        value = getattr(record, name)
        column[i] = "" if value is None else str(value)
    if isinstance(record, OrderRecord):
        assert chunk.times is not None
        chunk.times[i] = np.datetime64(_naive_utc(record.timestamp), "us")
    chunk.good[i] = True


def _keep(file: _File, chunk: _Chunk) -> NDArray[np.datetime64] | None:
    """Apply the checks across rows (keys, references, time), record the rejected rows, and append the
    good rows' kept columns to the file's. Returns the good orders' times."""
    good = chunk.good
    lines = chunk.lines
    key = _KEY.get(file.model)
    if key is not None:
        seen, add = file.seen, file.seen.add
        keys = chunk.columns[key]
        unique = good.all() and len(set(keys)) == len(keys) and seen.isdisjoint(keys)
        if unique:
            seen.update(keys)  # no key repeats: the usual case, checked in C
        for i in [] if unique else np.flatnonzero(good).tolist():
            value = keys[i]
            if value in seen:
                good[i] = False
                line = int(lines[i])
                file.errors.append(_error(file.name, line, key, f"duplicate {key}; each must appear once"))
                file.rejected_lines.add(line)
            else:
                add(value)
    checks = file.checks
    times = chunk.times
    if checks is not None and times is not None:
        users, items = checks.users, checks.items
        problems = {
            "timestamp": (good & (times > np.datetime64(_naive_utc(checks.now), "us")), "is in the future"),
            "user_id": (
                good & ~_within(chunk.columns["user_id"], users),
                "user is not in the customers file (or its row was rejected)",
            ),
            "product_id": (
                good & ~_within(chunk.columns["product_id"], items),
                "product is not in the products file (or its row was rejected)",
            ),
        }
        for column, (bad, reason) in problems.items():
            for line in lines[bad].tolist():
                file.errors.append(_error(file.name, line, column, reason))
                file.rejected_lines.add(line)
        for bad, _ in problems.values():
            good &= ~bad
    file.good += int(np.count_nonzero(good))
    if file.model is not OrderRecord:  # orders keep only their times (below)
        all_good = bool(good.all())
        for name, values in chunk.columns.items():
            file.columns[name].extend(values if all_good else itertools.compress(values, good.tolist()))
    return times[good] if times is not None else None


# --- columns -------------------------------------------------------------------------------------------


# Each pattern compiled once, for a cell and for a whole column joined with line breaks.
_ALL_PATTERNS = {pattern for patterns in _PATTERNS.values() for pattern in patterns.values()}
_CELLS = {pattern: re.compile(pattern) for pattern in _ALL_PATTERNS}
_COLUMNS = {pattern: re.compile(rf"(?:{pattern})(?:\n(?:{pattern}))*") for pattern in _ALL_PATTERNS}


def _matches(column: list[str], pattern: str) -> NDArray[np.bool_]:
    """Which cells match ``pattern``: one regular expression over the joined column when all do (a
    cell holding a line break counts extra separators, so it sends the column cell by cell)."""
    n = len(column)
    joined = "\n".join(column)
    if pattern == _IDENTIFIER and joined.split() == column and max(map(len, column), default=0) <= 256:
        # Split on whitespace gives the cells back only when none is empty or holds any whitespace.
        return np.ones(n, dtype=bool)
    if joined.count("\n") == n - 1 and _COLUMNS[pattern].fullmatch(joined):
        return np.ones(n, dtype=bool)
    match = _CELLS[pattern].fullmatch
    return np.fromiter((match(value) is not None for value in column), dtype=bool, count=n)


_DIGITS = np.array([0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18])
_SEPARATORS = {4: b"-", 7: b"-", 13: b":", 16: b":"}


def _times(column: list[str]) -> tuple[NDArray[np.datetime64], NDArray[np.bool_]]:
    """Each cell's time (naive UTC) and whether it was read here; a cell that was not is for the
    record model to read or refuse."""
    n = len(column)
    fixed = _fixed_times(column)
    if fixed is not None:
        return fixed
    good = _matches(column, _TIMESTAMP)
    values = np.array(column, dtype=np.str_)
    values[~good] = "1970-01-01T00:00:00"
    values = np.strings.rstrip(values, "Z")
    try:
        return values.astype("datetime64[us]"), good
    except ValueError:
        times = np.zeros(n, dtype="datetime64[us]")
        for i in np.flatnonzero(good).tolist():
            try:
                times[i] = np.datetime64(values[i], "us")
            except ValueError:
                good[i] = False
        return times, good


def _fixed_times(column: list[str]) -> tuple[NDArray[np.datetime64], NDArray[np.bool_]] | None:
    """Times written all alike as ``YYYY-MM-DDTHH:MM:SS`` (or all with a ``Z``), read as a matrix of
    ASCII digits; None when the column is not written so."""
    n = len(column)
    try:
        encoded = ("\n".join(column) + "\n").encode("ascii")
    except UnicodeEncodeError:
        return None
    stride = len(encoded) // n if n else 0
    if stride not in (20, 21) or stride * n != len(encoded):
        return None
    matrix = np.frombuffer(encoded, dtype=np.uint8).reshape(n, stride)
    if not (matrix[:, -1] == 10).all() or (stride == 21 and not (matrix[:, 19] == ord("Z")).all()):
        return None
    digits = matrix[:, _DIGITS].astype(np.int64) - ord("0")
    good = ((digits >= 0) & (digits <= 9)).all(axis=1)
    good &= (matrix[:, 10] == ord("T")) | (matrix[:, 10] == ord(" "))
    for at, separator in _SEPARATORS.items():
        good &= matrix[:, at] == separator[0]
    year = digits[:, 0] * 1000 + digits[:, 1] * 100 + digits[:, 2] * 10 + digits[:, 3]
    month, day = digits[:, 4] * 10 + digits[:, 5], digits[:, 6] * 10 + digits[:, 7]
    hour, minute = digits[:, 8] * 10 + digits[:, 9], digits[:, 10] * 10 + digits[:, 11]
    second = digits[:, 12] * 10 + digits[:, 13]
    good &= (year >= 1000) & (month >= 1) & (month <= 12) & (day >= 1)
    good &= (hour <= 23) & (minute <= 59) & (second <= 59)
    months = np.where(good, (year - 1970) * 12 + month - 1, 0).astype("datetime64[M]")
    first_days = months.astype("datetime64[D]")
    good &= day <= ((months + np.timedelta64(1, "M")).astype("datetime64[D]") - first_days).astype(np.int64)
    seconds = ((np.where(good, day, 1) - 1) * 86_400 + hour * 3_600 + minute * 60 + second) * 1_000_000
    times = first_days.astype("datetime64[us]") + np.where(good, seconds, 0).astype("timedelta64[us]")
    return times, good


def _within(values: list[str], known: set[str]) -> NDArray[np.bool_]:
    """Which ``values`` are in ``known`` (all of them, checked in C, in the usual case)."""
    if known.issuperset(values):
        return np.ones(len(values), dtype=bool)
    return np.fromiter(map(known.__contains__, values), dtype=bool, count=len(values))


def _field_of(model: type[_Record], column: str) -> str:
    """The field a column feeds: its own name, or the field whose alias it is."""
    for field_name, info in model.model_fields.items():
        alias = info.validation_alias
        if column == field_name or column in getattr(alias, "choices", ()):
            return field_name
    return column


def _naive_utc(moment: datetime) -> datetime:
    return moment.astimezone(UTC).replace(tzinfo=None) if moment.tzinfo else moment


def _to_datetime(value: np.datetime64) -> datetime:
    return datetime.fromisoformat(str(value.astype("datetime64[us]"))).replace(tzinfo=UTC)


def _unreadable(name: str, exc: csv.Error, line: int) -> ValidationFailed:
    return ValidationFailed(
        f"{name} is not readable CSV at line {line} ({exc}).",
        field="file",
        remedy="Export the file again as CSV (quote cells holding commas, quotes or line breaks).",
        details={"file": name, "errors": [_error(name, line, "file", f"not readable CSV ({exc})")]},
    )
