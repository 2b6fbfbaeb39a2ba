"""A merchant's file into the engine: the dialect detected (or given), the header read, every cell
loaded as text under its service column, each record with its position and a way to its line.

How a mapping plugs in (issue 23): :class:`FileOptions` carries what a merchant or a shop-export
layout says about a file, namely the format, the delimiter, quote and escape, the encoding, and
``columns`` (file header -> service column). :func:`detect` fills in what is not given;
:func:`read_header` gives the header as the file has it; the caller resolves each header cell to a
service column (the saved mapping first, then the service's own names) and passes that list to
:func:`load`. Nothing here knows a shop system: a layout is a :class:`FileOptions`.
"""

from __future__ import annotations

import csv
from array import array
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import duckdb
import numpy as np
from numpy.typing import NDArray

from shared.dataplane import queries
from shared.dataplane.engine import Workspace
from shared.filekinds import HEAD_BYTES, NotText, not_text

FileFormat = Literal["csv", "jsonl", "parquet"]
_LINE_CHUNK = 64 << 20
# A CSV file's lines: at most this many bytes each (the engine's own max_line_size), and a header of
# at most this many columns (a shop's exports have a few dozen). A file of one enormous line, or a
# header of a million columns, is refused at once rather than handed to the sniffer, which took 77 s
# over a 100 MB line (at load 20) before failing with the whole line in its message.
MAX_LINE_BYTES = 2 << 20
MAX_COLUMNS = 1_000
_DELIMITERS = (b",", b";", b"\t", b"|")


@dataclass(frozen=True)
class FileOptions:
    """What is known about a file before reading it; ``None`` is "detect it"."""

    format: FileFormat | None = None
    delimiter: str | None = None
    quote: str | None = None
    escape: str | None = None
    encoding: str | None = None
    # File header -> service column (a saved mapping, or a shop export's layout).
    columns: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Dialect:
    format: FileFormat
    delimiter: str = ","
    quote: str = '"'
    escape: str = '"'
    encoding: str = "utf-8"


class Unreadable(Exception):
    """The file cannot be read as its format: ``reason`` says why, ``line``/``byte`` where."""

    def __init__(self, reason: str, line: int = 0, byte: int | None = None) -> None:
        super().__init__(reason)
        self.reason, self.line, self.byte = reason, line, byte


class NotTextFile(Unreadable):
    """The file is not text at all (``found`` says what it is: a compressed file, a workbook,
    UTF-16, binary data), seen from its first bytes before anything parses it."""

    def __init__(self, found: NotText) -> None:
        super().__init__(found.what, 1)
        self.found = found


def format_of(name: str, head: bytes, options: FileOptions) -> FileFormat:
    """CSV, JSON Lines or Parquet: as given, else by the file name's suffix, else by its first bytes."""
    if options.format is not None:
        return options.format
    lowered = name.lower()
    if lowered.endswith((".jsonl", ".ndjson", ".json")):
        return "jsonl"
    if lowered.endswith(".parquet") or head.startswith(b"PAR1"):
        return "parquet"
    if lowered.endswith(".csv"):
        return "csv"
    return "jsonl" if head.decode("utf-8-sig", errors="ignore").lstrip().startswith("{") else "csv"


def detect(workspace: Workspace, path: Path, name: str, options: FileOptions) -> Dialect:
    """The file's dialect: what ``options`` give, the engine's sniffer for the rest (CSV). Raises
    :class:`NotTextFile` for a file whose first bytes show it is not text (a compressed file, a
    workbook: never opened), :class:`Unreadable` for a CSV header over ``MAX_HEADER_BYTES`` or
    ``MAX_COLUMNS``."""
    with path.open("rb") as file:
        head = file.read(HEAD_BYTES)
    fmt = format_of(name, head, options)
    if fmt != "parquet" and (found := not_text(head, expected="CSV or JSON Lines")) is not None:
        raise NotTextFile(found)
    if fmt != "csv" or not head.strip():
        return Dialect(format=fmt)  # (an empty file has no header: the caller says so)
    check_header_size(path, options.delimiter)
    check_line_lengths(path)
    try:
        [sniffed] = queries.run(workspace.connection, "read_sniff_csv", {"path": str(path)}).fetchall()
    except duckdb.Error as exc:
        raise _unreadable(exc) from None
    delimiter, quote, escape = (_sniffed(value) for value in sniffed[:3])
    return Dialect(
        format="csv",
        delimiter=options.delimiter or delimiter or ",",
        quote=options.quote if options.quote is not None else quote or '"',
        escape=options.escape if options.escape is not None else escape or quote or '"',
        encoding=options.encoding or "utf-8",
    )


def check_header_size(path: Path, delimiter: str | None = None) -> None:
    """Refuse (:class:`Unreadable`, line 1) a CSV whose first line is longer than ``MAX_LINE_BYTES``
    or holds more than ``MAX_COLUMNS`` cells, reading at most the limit. Cells are counted by the
    delimiter given, else the likeliest of the usual ones (a quoted delimiter counts too: a header
    has none)."""
    with path.open("rb") as file:
        first = file.readline(MAX_LINE_BYTES + 1)
    if len(first) > MAX_LINE_BYTES:
        raise Unreadable(f"line 1 is longer than {MAX_LINE_BYTES:,} bytes, the limit for one line", 1)
    candidates = (delimiter.encode(),) if delimiter else _DELIMITERS
    columns = max(first.count(candidate) for candidate in candidates) + 1
    if columns > MAX_COLUMNS:
        raise Unreadable(f"its header has {columns:,} columns; the limit is {MAX_COLUMNS:,}", 1)


def check_line_lengths(path: Path, limit: int = MAX_LINE_BYTES) -> None:
    """Refuse (:class:`Unreadable`, naming the line) a file with a line longer than ``limit`` bytes.
    Read in chunks, the line breaks found by numpy: no line is ever held whole."""
    line, run = 1, 0  # the current line's number, and its bytes seen so far
    with path.open("rb") as file:
        while chunk := file.read(_LINE_CHUNK):
            breaks = np.flatnonzero(np.frombuffer(chunk, dtype=np.uint8) == 10)
            starts = np.concatenate(([0], breaks + 1))
            ends = np.concatenate((breaks, [len(chunk)]))
            lengths = ends - starts
            lengths[0] += run
            longest = int(np.argmax(lengths))
            if lengths[longest] > limit:
                raise Unreadable(
                    f"line {line + longest:,} is longer than {limit:,} bytes, the limit for one line",
                    line + longest,
                )
            line, run = line + len(breaks), int(lengths[-1])


def read_header(path: Path, dialect: Dialect) -> list[str]:
    """The first record's cells as the file has them (CSV), read with the dialect; [] when empty. A
    cell quoted after spaces (``"user_id", "email"``) is its name, as the engine reads such a cell in
    the rows below (the csv module keeps the spaces and the quotes: `` "email"``)."""
    try:
        with path.open(encoding=_text_encoding(dialect), newline="") as file:
            cells = next(csv.reader(file, **_csv_dialect(dialect)), [])  # type: ignore[arg-type]
    except UnicodeDecodeError as exc:
        raise Unreadable("not UTF-8 text", 1, exc.start) from None
    except csv.Error as exc:
        raise Unreadable(f"not readable CSV ({exc})", 1) from None
    return [_spaced_quotes_off(cell, dialect.quote) for cell in cells]


def _spaced_quotes_off(cell: str, quote: str) -> str:
    """`` "email" `` -> ``email`` (doubled quotes inside made single); any other cell as it is."""
    name = cell.strip(" ")
    if name == cell or len(name) < 2 or not quote or name[0] != quote or name[-1] != quote:
        return cell
    return name[1:-1].replace(quote * 2, quote)


@dataclass(frozen=True)
class Loaded:
    """A file in the engine's ``raw`` table: its records, and how to number their lines."""

    records: int
    lines: LineNumbers


def load(
    workspace: Workspace, kind: str, path: Path, dialect: Dialect, columns: Sequence[str | None]
) -> Loaded:
    """Load a CSV file into ``raw``: ``columns[i]`` is the service column of the file's column ``i``
    (None: not read). Raises :class:`Unreadable` for a file the parser cannot read (not in its
    encoding, a quote never closed): no row of such a file is trusted."""
    connection = workspace.connection
    named = {(name or f"ignored_{i}"): "VARCHAR" for i, name in enumerate(columns)}
    parameters = {
        "path": str(path),
        "delimiter": dialect.delimiter,
        "quote": dialect.quote,
        "escape": dialect.escape,
        "encoding": dialect.encoding,
        "columns": named,
    }
    try:
        queries.run(connection, f"read_csv_{kind}", parameters)
    except duckdb.Error as exc:
        raise _unreadable(exc) from None
    for line, error_type, byte, _ in queries.run(connection, "read_parser_rejects").fetchall():
        if error_type == "INVALID ENCODING":
            raise Unreadable("not UTF-8 text", int(line), int(byte) if byte is not None else None)
        raise Unreadable(f"not readable CSV ({str(error_type).lower()})", int(line))
    [(records,)] = queries.run(connection, "count_raw").fetchall()
    return Loaded(records=int(records), lines=line_numbers(path, dialect, int(records)))


def load_lines(workspace: Workspace, path: Path) -> int:
    """Load a JSON Lines file into ``raw_lines``, one row per physical line (``record`` is the line
    number, a blank line is NULL). Returns the number of lines."""
    try:
        queries.run(workspace.connection, "read_jsonl_lines", {"path": str(path), "delimiter": "\x01"})
    except duckdb.Error as exc:
        raise _unreadable(exc) from None
    [(lines,)] = queries.run(workspace.connection, "count_raw_lines").fetchall()
    return int(lines)


# --- line numbers ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LineNumbers:
    """The line each record (1-based position among the file's records) ends on, as an editor
    numbers lines (the header is line 1): the line after the header's plus the position when every
    record is one line and no line is blank; else ``ends``, every record's last line counted once by
    the csv module (blank lines, quoted line breaks)."""

    ends: NDArray[np.int64] | None = None

    def of(self, records: NDArray[np.int64]) -> NDArray[np.int64]:
        return records + 1 if self.ends is None else self.ends[records - 1]


def line_numbers(path: Path, dialect: Dialect, records: int) -> LineNumbers:
    """How to number a loaded file's lines (see :class:`LineNumbers`)."""
    if _count_lines(path) == 1 + records:
        return LineNumbers()
    ends = array("q")
    with path.open(encoding=_text_encoding(dialect), newline="") as file:
        reader = csv.reader(file, **_csv_dialect(dialect))  # type: ignore[arg-type]
        next(reader, None)  # the header
        ends.extend(reader.line_num for cells in reader if cells)  # a blank line is no record
    return LineNumbers(ends=np.frombuffer(ends, dtype=np.int64).copy())


def _count_lines(path: Path) -> int:
    """Lines in the file: line breaks, plus a last line without one (read in chunks)."""
    count, last = 0, b""
    with path.open("rb") as file:
        while chunk := file.read(_LINE_CHUNK):
            count += chunk.count(b"\n")
            last = chunk[-1:]
    return count + (1 if last not in (b"", b"\n") else 0)


def chunks(relation: duckdb.DuckDBPyConnection, size: int) -> Iterator[list[tuple[object, ...]]]:
    """The rows of the connection's current result in lists of at most ``size``."""
    while rows := relation.fetchmany(size):
        yield rows


def _csv_dialect(dialect: Dialect) -> dict[str, object]:
    quote = dialect.quote or None
    return {
        "delimiter": dialect.delimiter,
        "quotechar": quote,
        "quoting": csv.QUOTE_MINIMAL if quote else csv.QUOTE_NONE,
        "doublequote": dialect.escape == dialect.quote,
        "escapechar": None if dialect.escape in ("", dialect.quote) else dialect.escape,
    }


def _sniffed(value: object) -> str:
    text = str(value or "")
    return "" if text == "(empty)" else text.encode().decode("unicode_escape")


def _unreadable(exc: duckdb.Error) -> Unreadable:
    message = str(exc)
    if "not utf-8" in message.lower() or "invalid unicode" in message.lower():
        return Unreadable("not UTF-8 text")
    return Unreadable("not readable CSV")


def _text_encoding(dialect: Dialect) -> str:
    # The byte order mark spreadsheet programs write is not part of the first header cell.
    return (
        "utf-8-sig" if dialect.encoding.lower().replace("_", "-") in ("utf-8", "utf8") else dialect.encoding
    )
