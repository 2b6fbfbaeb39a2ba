"""A sync's three files through the columnar engine: read once, validated by column, the dataset
version's objects written (docs/data-plane.md).

**Reading.** Each file is read by the engine (``shared.dataplane.reader``): the dialect detected or
given, the header resolved to service columns (a saved mapping first, then the record models' own
names and aliases), every cell loaded as text with its record's position.

**Validating, with today's verdicts.** The rules are the record models' (``OrderRecord``,
``CustomerRecord``, ``ProductRecord`` in ``shared.ml.datasets``). SQL decides a cell when it can: a
value the model accepts unchanged, or one whose reason is known (blank, a quantity below 1, a negative
amount, ...; ``tests/unit/datasources/test_engine_verdicts.py`` holds every such reason to the model's).
Any other row is read back from the engine in bounded chunks and validated by its record model,
which accepts it with its values or rejects it with its reasons; only those rows ever become Python
objects. JSON Lines rows all take that path. Duplicate keys, orders in the future and orders for
customers or products that are not (validly) in their files are rejected in SQL. Every problem is
named by file, line, column and reason, never by value.

**Writing.** ``customers.parquet``, ``products.parquet``, ``orders.parquet``; ``training.npz``
(the arrays training reads); ``catalog.npz`` (the products' ids and names, searched by the wizard);
``aggregates.npz`` and ``order-lines.bin`` (per user, and the order
lines by product, for the lift report); ``identifiers.npz`` (identifier coverage); the full
``rejected-rows.json``; and the coverage per match key, recorded on the version. Files are written
under the invocation's work directory and uploaded by the caller, which then publishes the version.
"""

from __future__ import annotations

import csv
import zipfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from pydantic import ValidationError

from shared.activation.hashing import UsersInEngine, hash_users
from shared.activation.list_chunks import first_misread_quote
from shared.dataplane import queries
from shared.dataplane.engine import Workspace
from shared.dataplane.reader import (
    Dialect,
    FileOptions,
    LineNumbers,
    NotTextFile,
    Unreadable,
    detect,
    load,
    load_lines,
    read_header,
)
from shared.dataplane.runner import QueryRunner
from shared.datasources.coverage import FLAGS
from shared.datasources.shop_exports import ExportLayout, one_file, recognise
from shared.errors import ValidationFailed
from shared.ml.datasets import (
    CustomerRecord,
    OrderRecord,
    ProductRecord,
    _check_header,
    _describe,
    _error,
    _file_problem,
    _Record,
    columns_of,
    jsonl_record,
)
from shared.records.datasources import MATCH_KEYS, MatchKeyCoverage

KINDS = ("customers", "products", "orders")
MODELS: dict[str, type[_Record]] = {
    "customers": CustomerRecord,
    "products": ProductRecord,
    "orders": OrderRecord,
}
# Rows the record model reads at a time (their cells are Python objects only this long).
MODEL_CHUNK = 50_000
# The activation's batch size, which the coverage's pass through its normalisation numbers by.
COVERAGE_BATCH = 10_000
# The quality report's keys (shared.audiences.quality) as the customers file's columns.
REPORT_KEY_COLUMNS = {
    "EMAIL": "email",
    "PHONE": "phone",
    "FN": "first_name",
    "LN": "last_name",
    "CT": "city",
    "ST": "state",
    "ZIP": "postcode",
    "COUNTRY": "country",
    "DOB": "date_of_birth",
    "GEN": "gender",
    "MADID": "madid",
}
# Distinct country cells that are not a two-letter code looked up at a time.
COUNTRY_CHUNK = 100_000
# What a file read with the merchant's own mapping was read as ("Read the orders file as ...").
MATCHED = "you matched its columns"
UNCATEGORISED = "Uncategorised"  # as shared.ml.shop_arrays names a product without a category

# Cell patterns of values the record models accept unchanged (shared/ml/validation.py has the same
# rules). First and last character: none of Python's white space, which the models strip.
_EDGE = (
    r"[^\t\n\x0b\x0c\r\x1c-\x1f \x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}"
    r"\x{205f}\x{3000}]"
)
IDENTIFIER = rf"^(?:{_EDGE}(?:[^\n]{{0,254}}{_EDGE})?)$"
TIMESTAMP = (
    r"^(?:[1-9][0-9]{3}-[0-9]{2}-[0-9]{2}[T ](?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]{1,6})?Z?)$"
)
PATTERNS = {"identifier": IDENTIFIER, "timestamp": TIMESTAMP}


@dataclass(frozen=True)
class SyncFile:
    """One file of a sync: where it is locally, the name it is reported by, and what is known of it."""

    path: Path
    name: str
    options: FileOptions = field(default_factory=FileOptions)


@dataclass(frozen=True)
class ShopCheck:
    """A sync's verdict: good rows and rows read per file, problems (first ``shown`` of them sorted,
    and their count), and the latest order."""

    row_counts: dict[str, int]
    rows_read: dict[str, int]
    rejected_count: int
    rejected_rows: list[dict[str, Any]]
    orders_end: datetime | None
    # The files read as a shop system's export: kind -> what they were read as ("a Shopify ... export").
    recognised: dict[str, str] = field(default_factory=dict)
    # The rows the hosted checkout's paid orders added to ``row_counts`` (``add_checkout_orders``):
    # buyers not in the customers file, and orders.
    from_checkout: dict[str, int] = field(default_factory=dict)


def check_shop(workspace: Workspace, files: Mapping[str, SyncFile], now: datetime, shown: int) -> ShopCheck:
    """Read and validate the three files into the engine's ``customers``, ``products`` and ``orders``
    tables (good rows only) and its ``errors`` table. A problem of a whole file (not readable, a
    missing or unknown column, no records) raises ``ValidationFailed`` naming the file."""
    connection = workspace.connection
    queries.run(connection, "create_errors")
    numbering: dict[str, int | NDArray[np.int64]] = {}
    recognised: dict[str, str] = {}
    for kind in KINDS:
        numbering[kind] = _check_file(workspace, kind, files[kind], recognised)
        if kind != "orders":
            queries.run(connection, f"duplicate_{kind}")
            queries.run(connection, f"drop_rejected_{kind}")
    queries.run(connection, "reference_orders", {"now": now.astimezone(UTC).replace(tzinfo=None)})
    queries.run(connection, "drop_rejected_orders")
    for kind, lines in numbering.items():  # now that every problem is found
        if isinstance(lines, int):
            queries.run(connection, "number_lines_by_record", {"kind": kind, "offset": lines})
        else:
            _number_lines(workspace, kind, lines)
    [(customers, products, orders, orders_end)] = queries.run(connection, "good_counts").fetchall()
    good = {"customers": int(customers), "products": int(products), "orders": int(orders)}
    rejected_rows = dict.fromkeys(KINDS, 0)
    problems = 0
    for kind, count, rows in queries.run(connection, "rejected_counts").fetchall():
        rejected_rows[str(kind)] = int(rows)
        problems += int(count)
    names = {kind: files[kind].name for kind in KINDS}
    first = queries.run(connection, "rejected_rows", names).fetchmany(shown)
    return ShopCheck(
        row_counts=good,
        rows_read={kind: good[kind] + rejected_rows[kind] for kind in KINDS},
        rejected_count=problems,
        rejected_rows=[
            {"file": str(f), "row": int(row), "field": str(col), "reason": str(why)}
            for f, row, col, why in first
        ],
        orders_end=orders_end.replace(tzinfo=UTC) if orders_end is not None else None,
        recognised=recognised,
    )


def _check_file(
    workspace: Workspace, kind: str, file: SyncFile, recognised: dict[str, str]
) -> int | NDArray[np.int64]:
    """One file's good rows into its table and its rows' problems into ``errors`` (and into
    ``recognised``, the shop export it was read as). Returns how its records are numbered as lines:
    an offset, or the line each record ends on."""
    connection = workspace.connection
    model = MODELS[kind]
    try:
        dialect = detect(workspace, file.path, file.name, file.options)
        if dialect.format == "jsonl":
            _check_jsonl(workspace, kind, file)
            return 0  # JSON Lines records are numbered by line already
        lines: int | NDArray[np.int64] = 1  # the header
        if dialect.format == "parquet":
            queries.run(connection, f"read_parquet_{kind}", {"path": str(file.path)})
        else:
            header = read_header(file.path, dialect)
            file, layout = _as_exported(kind, file, header)
            columns = _resolve_header(file, model, header, layout.derived if layout else frozenset())
            loaded = load(workspace, kind, file.path, dialect, columns)
            _check_quotes(file, dialect)
            if loaded.records == 0:
                raise _file_problem(
                    file.name, "file", "has no records", "Export the file again with its rows."
                )
            if loaded.lines.ends is not None:
                lines = loaded.lines.ends
            if layout is None and file.options.columns:
                recognised[kind] = MATCHED  # the merchant's mapping
                if kind != "products":  # keyed by e-mail in any case, as the shop exports are
                    queries.run(connection, f"shape_matched_{kind}")
            if layout is not None:
                recognised[kind] = layout.title
                if layout.shape is not None:
                    queries.run(connection, layout.shape)
                if layout.splits_records:
                    lines = _split_record_lines(workspace, loaded.lines)
    except Unreadable as exc:
        raise _unreadable(file.name, exc) from None
    if kind == "customers":
        _country_codes(workspace)
    # Today as the record model sees it (a date of birth after it is not one).
    queries.run(connection, f"classify_{kind}", {**PATTERNS, "today": datetime.now(UTC).date().isoformat()})
    queries.run(connection, f"errors_{kind}")
    cells = _cell_columns(model)
    fixed, model_errors = _model_verdicts(
        workspace,
        kind,
        file.name,
        model,
        ((row[0], _given(cells, row[1:])) for row in _rows(workspace, kind)),
    )
    queries.run(connection, f"read_fixed_{kind}", {"path": str(fixed)})
    queries.run(connection, f"keep_{kind}")
    queries.run(connection, "read_model_errors", {"path": str(model_errors)})
    queries.run(connection, "append_errors")
    queries.run(connection, "drop_raw")
    queries.run(connection, "drop_checked")
    return lines


def _country_codes(workspace: Workspace) -> None:
    """Countries written as names or common forms ("United States", "USA", "U.K.") rewritten in the
    loaded customers as their ISO 3166 alpha-2 codes (``shared.countries``), each distinct
    cell looked up once, a chunk at a time; a cell that names no country is left for the checks."""
    from shared.countries import country_code  # pycountry's tables: loaded only for a sync

    connection = workspace.connection
    distinct = queries.run(connection, "country_names")
    found: list[tuple[str, str]] = []
    while chunk := distinct.fetchmany(COUNTRY_CHUNK):
        found.extend((raw, code.upper()) for (raw,) in chunk if (code := country_code(raw)))
    if found:
        names = {
            "raw": np.array([raw for raw, _ in found], dtype=object),
            "code": np.array([code for _, code in found], dtype=object),
        }
        connection.register("country_codes_found", names)
        try:
            queries.run(connection, "country_codes")
        finally:
            connection.unregister("country_codes_found")


def _check_jsonl(workspace: Workspace, kind: str, file: SyncFile) -> None:
    """A JSON Lines file: every line read by the record model (as ``shared.ml.datasets`` reads one)."""
    connection = workspace.connection
    model = MODELS[kind]
    if load_lines(workspace, file.path) == 0:
        raise _file_problem(file.name, "file", "has no records", "Export the file again with its rows.")
    known = columns_of(model)
    lines = queries.run(connection, "undecided_lines")
    fixed, model_errors = _model_verdicts(
        workspace, kind, file.name, model, _jsonl_rows(lines, file.name, known), per_line=True
    )
    queries.run(connection, f"read_fixed_{kind}", {"path": str(fixed)})
    queries.run(connection, f"keep_fixed_{kind}")
    queries.run(connection, "read_model_errors", {"path": str(model_errors)})
    queries.run(connection, "append_errors")
    [(records,)] = queries.run(connection, f"count_{kind}").fetchall()
    [(bad,)] = queries.run(connection, "count_errors", {"kind": kind}).fetchall()
    if records == 0 and bad == 0:
        raise _file_problem(file.name, "file", "has no records", "Export the file again with its rows.")


def _jsonl_rows(
    lines: Any, name: str, known: set[str]
) -> Iterator[tuple[int, dict[str, Any] | list[dict[str, Any]]]]:
    while chunk := lines.fetchmany(MODEL_CHUNK):
        for record, text in chunk:
            raw, problems = jsonl_record(str(text), int(record), name, known)
            if problems:
                yield int(record), problems
            elif raw is not None:
                yield int(record), raw


def _rows(workspace: Workspace, kind: str) -> Iterator[tuple[Any, ...]]:
    result = queries.run(workspace.connection, f"undecided_{kind}")
    while chunk := result.fetchmany(MODEL_CHUNK):
        yield from chunk


def _given(cells: list[str], values: tuple[Any, ...]) -> dict[str, Any]:
    """A row's cells as the record model reads a CSV row: an empty or blank cell is not given."""
    return {name: value for name, value in zip(cells, values, strict=True) if value and not value.isspace()}


def _model_verdicts(
    workspace: Workspace,
    kind: str,
    name: str,
    model: type[_Record],
    rows: Iterator[tuple[int, dict[str, Any] | list[dict[str, Any]]]],
    per_line: bool = False,
) -> tuple[Path, Path]:
    """Each row through its record model: accepted rows' values to one CSV, problems to another (both
    for the engine to read); rows are taken a chunk at a time from ``rows``."""
    fixed = workspace.path(f"fixed-{kind}.csv")
    problems = workspace.path(f"model-errors-{kind}.csv")
    cells = _cell_columns(model)
    with fixed.open("w", newline="") as good_file, problems.open("w", newline="") as bad_file:
        good = csv.writer(good_file, lineterminator="\n")
        bad = csv.writer(bad_file, lineterminator="\n")
        good.writerow(["record", *cells])
        bad.writerow(["kind", "record", "field", "reason"])
        for record, raw in rows:
            if isinstance(raw, list):  # a line the JSON reader refused
                bad.writerows((kind, record, e["field"], e["reason"]) for e in raw)
                continue
            try:
                parsed = model.model_validate(raw)
            except ValidationError as exc:
                bad.writerows(
                    (kind, record, e["field"], e["reason"]) for e in _describe(exc, name, record, raw)
                )
                continue
            good.writerow([record, *(_cell(getattr(parsed, column)) for column in cells)])
    del per_line
    return fixed, problems


def _cell(value: object) -> object:
    if value is None:
        return ""
    if isinstance(value, datetime):
        return value.astimezone(UTC).replace(tzinfo=None).isoformat(sep=" ")
    if isinstance(value, bool):
        return "true" if value else "false"
    return value


def _cell_columns(model: type[_Record]) -> list[str]:
    return list(model.model_fields)


def _as_exported(kind: str, file: SyncFile, header: list[str]) -> tuple[SyncFile, ExportLayout | None]:
    """The file read as the shop export its header is (its columns, unless a mapping was given), or
    as it is. An export of another kind is a file in the wrong slot, named for what it is."""
    layout = recognise(header) if not file.options.columns else None
    if layout is None:
        return file, None
    if layout.kind != kind:
        raise _file_problem(
            file.name,
            "file",
            f"looks like {layout.title}, not {one_file(kind)}",
            f"Choose this file as the {layout.kind} file, and your {kind} file here.",
        )
    if layout.unreadable is not None:
        reason, remedy = layout.unreadable
        raise _file_problem(file.name, "file", f"looks like {layout.title}, which {reason}", remedy)
    options = replace(file.options, columns=layout.columns_for(header))
    return replace(file, options=options), layout


def _resolve_header(
    file: SyncFile, model: type[_Record], header: list[str], derived: frozenset[str] = frozenset()
) -> list[str | None]:
    """The service column of each of the file's columns (None: ignored), or the file problem of a
    header that lacks a required column or has one the file type does not define. The saved mapping
    (``file.options.columns``) is applied first; a column it does not name keeps its own name.
    ``derived`` columns are made by a shop export's shape query from other cells."""
    names = [cell.strip() for cell in header]
    mapped = [file.options.columns.get(cell, cell) if cell else "" for cell in names]
    # A layout's own columns (``_item_type``) reach its shape query only, never the checks.
    helpers = {column for column in file.options.columns.values() if column.startswith("_")}
    present = {cell for cell in mapped if cell and cell not in helpers} | derived
    missing = [
        field_name
        for field_name, info in model.model_fields.items()
        if info.is_required() and not _present(field_name, info.validation_alias, present)
    ]
    _check_header(file.name, model, present, missing)
    resolved = [(cell if cell in helpers else _field_of(model, cell)) if cell else None for cell in mapped]
    twice = sorted({column for column in resolved if column and resolved.count(column) > 1})
    if twice:
        # Which of two cells is the customer's value is anyone's guess: refuse rather than pick one.
        raise _file_problem(
            file.name,
            twice[0],
            f"names the {', '.join(twice)} column more than once in its header row",
            "Keep one column of each name (firstName and first_name are the same column), then sync again.",
        )
    return resolved


def _split_record_lines(workspace: Workspace, lines: LineNumbers) -> NDArray[np.int64]:
    """The line each of ``raw``'s rows ends on after a shape made several rows of one record (each
    row's ``_source_record``): a row's problem is named by its record's line."""
    source = queries.run(workspace.connection, "split_sources").fetchnumpy()["_source_record"]
    return np.asarray(lines.of(np.asarray(source, dtype=np.int64)), dtype=np.int64)


def _present(field_name: str, alias: object, header: set[str]) -> bool:
    choices = getattr(alias, "choices", None) or []
    return field_name in header or any(choice in header for choice in choices)


def _field_of(model: type[_Record], column: str) -> str:
    for field_name, info in model.model_fields.items():
        if column == field_name or column in getattr(info.validation_alias, "choices", ()):
            return field_name
    return column


def _number_lines(workspace: Workspace, kind: str, ends: NDArray[np.int64]) -> None:
    """Number a file's problems by the lines its records end on (blank lines, quoted line breaks)."""
    path = workspace.path(f"line-ends-{kind}.csv")
    records = np.arange(1, ends.size + 1, dtype=np.int64)
    with path.open("w") as file:
        file.write("record,line\n")
        np.savetxt(file, np.column_stack([records, ends]), fmt="%d", delimiter=",")
    queries.run(workspace.connection, "read_line_ends", {"path": str(path)})
    queries.run(workspace.connection, "number_lines_by_table", {"kind": kind})


def _check_quotes(file: SyncFile, dialect: Dialect) -> None:
    """Refuse a CSV file holding a quote the engine reads otherwise than Python's csv module and a
    spreadsheet (``list_chunks.first_misread_quote``: ``"ab"c@x.com`` loaded as ``abc@x.co``, ``"ab"c"d``
    running on into the next record, `` "ab`` opening a quoted field after a space): that row's cells,
    or the next record, would be loaded wrong without a word. The engine cannot tell which record it
    misread, so the whole file fails naming the line and byte of the first such quote. Two spaced
    shapes DuckDB reads as the writer meant pass (`` "a@x.com"`` with no quote, delimiter or line
    break inside, and spaces between a closing quote and the delimiter or the line's end): the sync
    reads values from the engine only, and the csv module, which numbers the lines, ends those records
    where the engine does. Read 8 MiB at a time. A file quoting otherwise than with doubled ``"`` (or a
    delimiter of more than one byte) is not scanned."""
    if dialect.quote != '"' or dialect.escape != '"' or len(dialect.delimiter.encode()) != 1:
        return
    with file.path.open("rb") as opened:

        def read(start: int, end: int) -> bytes:
            opened.seek(start)
            return opened.read(end - start + 1)

        misread = first_misread_quote(
            read, 0, file.path.stat().st_size, delimiter=dialect.delimiter, spaced_as_meant=True
        )
    if misread is not None:
        line = misread.lines + 1
        raise ValidationFailed(
            f"{file.name} has a quote at line {line} (byte {misread.at + 1:,}) that CSV readers read "
            f"differently: {misread.reason}.",
            field="file",
            remedy=f"Fix the quoting on that line: {misread.fix}. Then upload the file and sync again.",
            details={
                "file": file.name,
                "errors": [
                    _error(
                        file.name,
                        line,
                        "file",
                        f"a quote that CSV readers read differently: {misread.reason}",
                    )
                ],
            },
        )


def _unreadable(name: str, exc: Unreadable) -> ValidationFailed:
    if isinstance(exc, NotTextFile):
        return ValidationFailed(
            f"{name} is {exc.found.what}: the service reads UTF-8 CSV, JSON Lines or Parquet files only.",
            field="file",
            remedy=exc.found.remedy,
            details={"file": name, "errors": [_error(name, 0, "file", f"not text: {exc.found.what}")]},
        )
    if exc.reason == "not UTF-8 text":
        where = f" (byte {exc.byte})" if exc.byte is not None else f" (line {exc.line})" if exc.line else ""
        return ValidationFailed(
            f"{name} is not UTF-8 text{where}",
            field="file",
            remedy="Export the file as UTF-8 CSV or JSON Lines.",
            details={"file": name, "errors": [_error(name, 0, "file", "not UTF-8 text")]},
        )
    where = f" at line {exc.line}" if exc.line else ""
    return ValidationFailed(
        f"{name} is not readable CSV{where} ({exc.reason}).",
        field="file",
        remedy="Export the file again as CSV (quote cells holding commas, quotes or line breaks).",
        details={"file": name, "errors": [_error(name, exc.line, "file", exc.reason)]},
    )


# --- the hosted checkout's orders ------------------------------------------------------------------


SINGLES_PER_READ = 2_000


def read_checkout_orders(
    workspace: Workspace, parts: Sequence[Path], singles: Sequence[Path], refunds: Mapping[str, int]
) -> list[str]:
    """The hosted checkout's paid orders into the engine: ``parts`` (the compacted days, Parquet) and
    ``singles`` (the orders paid since: files of JSON objects one after another, one object per order;
    the sync fetches them all into one), less what the provider refunded (``refunds``: order id ->
    amount refunded, cumulative, in the smallest unit): an order refunded in full is no purchase, one
    refunded in part counts at the amount kept. The files keep the amounts paid. Returns the days
    (UTC, ``YYYY-MM-DD``) that gained an order, which ``write_checkout_order_days`` writes again whole."""
    connection = workspace.connection
    queries.run(connection, "checkout_order_files")
    if parts:
        queries.run(connection, "read_checkout_order_days", {"parts": [str(path) for path in parts]})
    # A few thousand files a read: the engine holds buffers per file it reads, and 100,000 files read
    # at once ran it out of its memory (benchmarks/checkout_orders.py). One file of 50,000 orders is
    # read in half a second.
    for start in range(0, len(singles), SINGLES_PER_READ):
        chunk = [str(path) for path in singles[start : start + SINGLES_PER_READ]]
        queries.run(connection, "read_checkout_order_singles", {"singles": chunk})
    queries.run(
        connection,
        "read_checkout_refunds",
        {"order_ids": list(refunds), "amounts_refunded": list(refunds.values())},
    )
    queries.run(connection, "read_checkout_orders")
    return [str(day) for (day,) in queries.run(connection, "checkout_order_new_days").fetchall()]


def write_checkout_order_days(workspace: Workspace, days: Sequence[str]) -> dict[str, Path]:
    """Each of ``days`` whole, one row per order, as a Parquet file (the day's new part)."""
    written = {}
    for day in days:
        path = workspace.path(f"checkout-orders-{day}.parquet")
        workspace.connection.sql(queries.text("checkout_order_day"), params={"day": day}).write_parquet(
            str(path)
        )
        written[day] = path
    return written


def add_checkout_orders(workspace: Workspace, check: ShopCheck) -> ShopCheck:
    """The hosted checkout's paid orders (``read_checkout_orders``) joined to the checked files'
    tables: each buyer is the customers file's customer with the same e-mail, or a new customer; an
    order already in the orders file or for a product not in the products file is left out. Returns
    ``check`` with the tables' new counts and latest order, and the customers and orders added."""
    connection = workspace.connection
    queries.run(connection, "checkout_buyers")
    queries.run(connection, "add_checkout_customers")
    queries.run(connection, "add_checkout_orders")
    [(customers, products, orders, orders_end)] = queries.run(connection, "good_counts").fetchall()
    counts = {"customers": int(customers), "products": int(products), "orders": int(orders)}
    # The files' rows read stay as read: the version's counts say what it holds.
    latest = orders_end.replace(tzinfo=UTC) if orders_end is not None else None
    added = {kind: counts[kind] - check.row_counts[kind] for kind in ("customers", "orders")}
    return replace(check, row_counts=counts, orders_end=latest, from_checkout=added)


# --- the dataset version's objects ------------------------------------------------------------------


@dataclass(frozen=True)
class VersionObjects:
    """What a sync writes for a dataset version: its objects, by their key in ``DatasetVersion.keys``,
    and the coverage per match key it records."""

    paths: dict[str, Path]
    match_keys: dict[str, MatchKeyCoverage]
    matchable_customers: int


def write_version(workspace: Workspace, files: Mapping[str, SyncFile], check: ShopCheck) -> VersionObjects:
    """Every object of a dataset version (docs/data-plane.md), and its coverage per match key."""
    objects: dict[str, Path] = dict(write_tables(workspace))
    objects["catalog"] = write_catalog(workspace)
    objects["training"] = write_training(workspace)  # encodes the order lines
    queries.run(workspace.connection, "drop_orders")  # every later step reads the encoded lines
    objects["aggregates"], objects["order_lines"] = write_aggregates(workspace, check.orders_end)
    objects["identifiers"], match_keys, matchable = write_coverage(workspace)
    objects["report"] = write_rejected_rows(workspace, files)
    return VersionObjects(paths=objects, match_keys=match_keys, matchable_customers=matchable)


def write_rejected_rows(workspace: Workspace, files: Mapping[str, SyncFile]) -> Path:
    """``rejected-rows.json``: every problem as file, row, field, reason, sorted (never a value)."""
    path = workspace.path("rejected-rows.json")
    names = {kind: files[kind].name for kind in KINDS}
    query = queries.text("rejected_rows")
    workspace.connection.execute(
        f"COPY ({query}) TO $path (FORMAT json, ARRAY true)", {**names, "path": str(path)}
    )
    return path


def write_tables(workspace: Workspace) -> dict[str, Path]:
    """``customers.parquet``, ``products.parquet``, ``orders.parquet`` (docs/data-plane.md)."""
    written = {}
    for kind in KINDS:
        path = workspace.path(f"{kind}.parquet")
        workspace.connection.sql(queries.text(f"dataset_{kind}")).write_parquet(str(path))
        written[kind] = path
    return written


def write_catalog(workspace: Workspace) -> Path:
    """``catalog.npz``: the products' ids, names and categories as text arrays by product id, which the
    catalog search reads, and their prices (NaN: none), which the hosted checkout's publishing reads
    (``shared.datasources.catalog``)."""
    products = queries.run(workspace.connection, "catalog_products").fetchnumpy()
    path = workspace.path("catalog.npz")
    # Compressed: names are fixed-width UCS-4 arrays (20k products: 5.8 MB plain, 0.3 MB compressed,
    # read in 7 ms of CPU against 3), and each search reads the file from S3.
    np.savez_compressed(
        path,
        allow_pickle=False,
        product_ids=_strings(products["product_id"]),
        names=_strings(products["name"]),
        categories=_strings(products["category"]),
        prices=_floats(products["price"], np.float64),
    )
    return path


def write_training(workspace: Workspace) -> Path:
    """``training.npz``: ``shared.ml.shop_arrays.EncodedShop`` as arrays (docs/data-plane.md), each array
    fetched from the engine and written on its own (never all at once in memory). Leaves the order
    lines encoded and sorted in the engine's ``encoded_lines`` for the version's other objects."""
    connection = workspace.connection
    queries.run(connection, "encode_order_lines")
    path = workspace.path("training.npz")
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as archive:
        user_ids = _strings(queries.run(connection, "training_user_ids").fetchnumpy()["user_id"])
        _add(archive, "user_ids", user_ids)
        del user_ids
        products = queries.run(connection, "training_products").fetchnumpy()
        product_ids = _strings(products["product_id"])
        named = [str(c) if c is not None and c == c else UNCATEGORISED for c in products["category"].tolist()]
        categories = sorted({*named, UNCATEGORISED})
        position = {name: k for k, name in enumerate(categories)}
        _add(archive, "product_ids", product_ids)
        _add(archive, "categories", np.array(categories, dtype=np.str_))
        _add(archive, "product_category", np.array([position[c] for c in named], dtype=np.int32))
        _add(archive, "product_price", _floats(products["price"], np.float64))
        for name, dtype in (
            ("order_user", np.int32),
            ("order_product", np.int32),
            ("order_day", np.float64),
            ("order_units", np.float32),
            ("order_amount", np.float64),
            ("order_key", np.int32),
        ):
            column = queries.run(connection, f"training_{name}").fetchnumpy()[name]
            _add(archive, name, np.asarray(column, dtype=dtype))
            del column
    return path


def write_aggregates(workspace: Workspace, orders_end: datetime | None) -> tuple[Path, Path]:
    """``aggregates.npz`` (per user: orders, revenue, last order; the product ids and where each
    product's lines start in ``order-lines.bin``) and ``order-lines.bin`` (the order lines by product
    then time: user positions int32, times int64 microseconds, amounts float64, one array after the
    other). A lift report reads the small file and one product's slice of the large one."""
    connection = workspace.connection
    lines_path = workspace.path("order-lines.bin")
    lines = queries.run(connection, "product_lines").fetchnumpy()
    product = np.asarray(lines["order_product"], dtype=np.int64)
    with lines_path.open("wb") as out:
        for name, dtype in (("order_user", "<i4"), ("order_time", "<i8"), ("order_amount", "<f8")):
            out.write(np.asarray(lines[name], dtype=dtype).tobytes())
    n_lines = int(product.size)
    del lines
    products = _strings(queries.run(connection, "training_products").fetchnumpy()["product_id"])
    offsets = np.zeros(products.size + 1, dtype=np.int64)
    offsets[1:] = np.cumsum(np.bincount(product, minlength=products.size))
    del product
    user_ids = _strings(queries.run(connection, "training_user_ids").fetchnumpy()["user_id"])
    per_user = queries.run(connection, "user_aggregates").fetchnumpy()
    at = np.asarray(per_user["order_user"], dtype=np.int64)
    user_orders = np.zeros(user_ids.size, dtype=np.int32)
    user_revenue = np.zeros(user_ids.size, dtype=np.float64)
    user_last_order = np.full(user_ids.size, -1, dtype=np.int64)  # no order
    user_orders[at] = per_user["orders"]
    user_revenue[at] = per_user["revenue"]
    user_last_order[at] = per_user["last_order"]
    del per_user, at
    path = workspace.path("aggregates.npz")
    np.savez(
        path,
        allow_pickle=False,
        user_ids=user_ids,
        user_orders=user_orders,
        user_revenue=user_revenue,
        user_last_order=user_last_order,
        product_ids=products,
        line_offsets=offsets,
        lines=np.array([n_lines], dtype=np.int64),
        orders_end=np.array(
            [-1 if orders_end is None else int(orders_end.timestamp() * 1_000_000)], dtype=np.int64
        ),
    )
    return path, lines_path


def write_coverage(workspace: Workspace) -> tuple[Path, dict[str, MatchKeyCoverage], int]:
    """``identifiers.npz`` (identifier flags by sorted user id, ``shared.datasources.coverage``), the
    coverage per match key and how many customers an audience could upload, all from one pass of the
    activation's own normalisation over the good customers (``shared.activation.hashing``: SQL for the
    common cases, Python for each distinct value it cannot decide, a phone number read once with its
    country's numbering plan). No store country is assumed: a national phone number counts when the
    customer's own country reads it."""
    engine = QueryRunner(workspace)
    engine.run("activation_macros")
    engine.run("coverage_users")
    users = UsersInEngine(limited_data_use=False, values=False)
    hashed = hash_users(engine, users, default_country=None, batch_size=COVERAGE_BATCH)
    found = hashed.report.identifiers
    match_keys = {
        column: MatchKeyCoverage(
            given=found[key].present if key in found else 0, usable=found[key].usable if key in found else 0
        )
        for key, column in REPORT_KEY_COLUMNS.items()
    }
    ((external_ids,),) = engine.rows("coverage_external_ids")
    match_keys["external_id"] = MatchKeyCoverage(given=int(external_ids), usable=int(external_ids))
    columns = engine.columns("coverage_flags")
    path = workspace.path("identifiers.npz")
    np.savez(
        path,
        allow_pickle=False,
        user_ids=_strings(columns["user_id"]),
        countries=np.asarray(columns["country"], dtype="<U2")
        if len(columns["country"])
        else np.array([], "<U2"),
        **{name: np.asarray(columns[name], dtype=bool) for name in FLAGS},
    )
    return path, {column: match_keys[column] for column in MATCH_KEYS}, hashed.rows


def _add(archive: zipfile.ZipFile, name: str, array: NDArray[Any]) -> None:
    with archive.open(f"{name}.npy", "w", force_zip64=True) as member:
        np.lib.format.write_array(member, np.ascontiguousarray(array), allow_pickle=False)


def _strings(values: Any) -> NDArray[np.str_]:
    if isinstance(values, np.ma.MaskedArray):
        values = np.ma.filled(values, "")
    return np.asarray(values, dtype=np.str_) if len(values) else np.array([], dtype="<U1")


def _floats(values: Any, dtype: type[np.floating[Any]]) -> NDArray[Any]:
    if isinstance(values, np.ma.MaskedArray):
        return np.asarray(np.ma.filled(values.astype(dtype), np.nan), dtype=dtype)
    return np.asarray(values, dtype=dtype)
