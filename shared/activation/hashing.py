"""Normalise and hash an activation's users in bulk, in the engine (issue 20, item 5).

The rules of docs/platform-notes.md §3.7 run as SQL over the whole users file (lower, trim, regular
expressions, ``sha256``) for the common cases; what repeats is decided once per distinct value (every
name, country cell and phone number), and the Python normaliser (``shared.audiences.preparation``)
decides what SQL cannot: every country cell, names and e-mails that are not ASCII, and the phone
numbers the engine cannot read itself. The engine reads a number written with digits and common
punctuation (with '+', after an international prefix, or nationally) as libphonenumber's ``parse``
reads it, step by step over the library's own plans (``shared.audiences.phone_plans.numbering_plans``: its
prefixes and patterns, bound to one query per plan met); the rest (letters, extensions, other scripts'
digits, a plan's rare rewritten prefixes, the plans with few numbers) goes to the Python normaliser with
the country whose numbering plan reads it. The output is the output of
``prepare_columns``, row for row and count for count (``tests/unit/activation/test_hashing.py``
compares them on every vector the tests hold).

The users stay in the engine, on disk past its memory limit: each user's upload row is decided and
hashed once (``activation_normalised``, as JSON text); de-duplication, batch numbering and the quality
report are queries, and the upload's batches come out a few at a time (``batch_documents``), their
rows joined into one JSON document per batch. Only the rows of the batches being written are ever
Python objects.

Adding a match key: its cell in ``activation_load_users.sql``, its value and drop reason in
``activation_normalised.sql`` (and its place in the row), and a Python decision here if SQL cannot
decide every value; nothing else changes.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import io
import itertools
import json
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import numpy as np

from shared.audiences.identifiers import (
    DATA_PROCESSING_SCHEMA,
    EXTRA_REPORT_KEYS,
    EXTRA_SCHEMA,
    SCHEMA,
    VALUE_SCHEMA_KEY,
    DropReason,
)
from shared.audiences.preparation import (
    IdentifierColumns,
    PreparedAudience,
    prepared_country,
    prepared_email,
    prepared_key,
    prepared_name,
    prepared_phone,
    store_country,
)
from shared.audiences.quality import IdentifierQuality, QualityReport
from shared.audiences.snapshot import SNAPSHOT_COLUMNS, SNAPSHOT_START
from shared.errors import ValidationFailed

if TYPE_CHECKING:
    from shared.dataplane.runner import QueryRunner

# A users CSV's column -> the engine's name for it (docs/service-contract.md §2.4 names, plus the
# Limited Data Use columns of §3.8).
CSV_COLUMNS: dict[str, str] = {
    "user_id": "user_id",
    "email": "email",
    "phone": "phone",
    "firstName": "first_name",
    "lastName": "last_name",
    "country": "country",
    "limitedDataUse": "limited_data_use",
    "state": "state",
    "score": "score",
    "city": "city",
    "postcode": "postcode",
    "dateOfBirth": "date_of_birth",
    "gender": "gender",
    "externalId": "external_id",
    "madid": "madid",
}
REPORT_KEYS: tuple[str, ...] = (*SCHEMA[1:], *EXTRA_REPORT_KEYS)
# The users CSV's column of each of the other keys (identifiers.EXTRA_SCHEMA).
EXTRA_CSV_HEADER: dict[str, str] = {
    "CT": "city",
    "ST": "state",
    "ZIP": "postcode",
    "DOBY": "dateOfBirth",
    "DOBM": "dateOfBirth",
    "DOBD": "dateOfBirth",
    "GEN": "gender",
    "MADID": "madid",
}
# Distinct phone numbers the Python normaliser reads at a time (bounds the task's memory).
PHONES_PER_CHUNK = 100_000
# The fewest numbers of one numbering plan the engine reads with a query of that plan's own (a query
# costs about what libphonenumber takes for 200 numbers); a plan's fewer numbers go to Python.
PHONES_PER_PLAN_QUERY = 200


@dataclass(frozen=True)
class UsersInEngine:
    """What the users table holds: whether it carries Limited Data Use flags and customer values
    (which columns the upload sends), and for a part of a list which of the other match keys
    (identifiers.EXTRA_SCHEMA) every part sends, by the whole file's header (None: decided by the
    users' values, as ``prepare_columns`` decides)."""

    limited_data_use: bool
    values: bool
    extras: tuple[bool, ...] | None = None


@dataclass(frozen=True)
class HashedUsers:
    """The upload the engine prepared: its rows (in ``batches`` of the batch size), its schema, the
    quality report, and how many rows carry a customer value."""

    users: UsersInEngine
    rows: int
    batches: int
    schema: tuple[str, ...]
    report: QualityReport
    with_value: int
    # The report's counts as the engine gave them (``activation_report``), to add up across parts.
    counts: tuple[tuple[str, str | None, int], ...] = ()


def csv_columns(header: Sequence[str], value_column: str | None = None) -> dict[str, str]:
    """The engine's columns for a users CSV with this ``header``, in order: a column the pipeline reads
    gets its engine name (of two columns with one name, the last, as Python's csv path reads it), the
    ``value_column`` becomes ``value``; every other column a name of its own, never read."""
    wanted = {**CSV_COLUMNS, **({value_column: "value"} if value_column else {})}
    last = {name: at for at, name in enumerate(header)}
    columns: dict[str, str] = {}
    for at, name in enumerate(header):
        engine_name = wanted.get(name) if last[name] == at else None
        columns[engine_name or f"unused_{at}"] = "VARCHAR"
    return columns


def csv_header(source: Path | BinaryIO) -> list[str]:
    """The first row of a users CSV (a byte order mark skipped), as Python's csv module reads it: of a
    file, or of a stream (an S3 object), read no further than its first few kilobytes."""
    with source.open("rb") if isinstance(source, Path) else contextlib.nullcontext(source) as raw:
        text = io.TextIOWrapper(raw, encoding="utf-8-sig", newline="")
        try:
            return next(csv.reader(text), [])
        except UnicodeDecodeError as exc:
            raise ValidationFailed("The users file is not UTF-8 text.", field="uploadId") from exc
        finally:
            text.detach()  # the caller closes its stream


def users_in_file(header: Sequence[str], value_column: str | None) -> UsersInEngine:
    """What a users CSV with this ``header`` carries (Limited Data Use flags, customer values in
    ``value_column``). Raises ``ValidationFailed`` when ``value_column`` is not in the header."""
    if value_column is not None and value_column not in header:
        raise ValidationFailed(
            f"The users file has no column named {value_column!r} for the customers' values.",
            field="valueColumn",
            remedy="Name one of the uploaded CSV's columns in valueColumn.",
        )
    return UsersInEngine(limited_data_use="limitedDataUse" in header, values=value_column is not None)


def load_users_file(
    engine: QueryRunner, path: Path, header: Sequence[str], value_column: str | None
) -> UsersInEngine:
    """Read a users CSV (``header`` is its first line, read by the caller) into the engine."""
    users = users_in_file(header, value_column)
    from shared.dataplane.runner import UnreadableInput

    engine.run("activation_macros")
    try:
        engine.run("activation_load_users", {"csv": str(path), "columns": csv_columns(header, value_column)})
    except UnreadableInput as exc:
        raise ValidationFailed(
            "The users file is not UTF-8 CSV text.",
            field="uploadId",
            remedy="Save the list as CSV (UTF-8) with a header row, upload it again and retry.",
        ) from exc
    return users


def load_users_columns(engine: QueryRunner, columns: IdentifierColumns) -> UsersInEngine:
    """Put identifier columns (users already in memory: a request's list, the tests' vectors) into
    the engine."""
    n = len(columns)
    flags = columns.limited_data_use
    values = columns.values
    engine.run("activation_macros")
    engine.register(
        "users_input_columns",
        {
            "pos": np.arange(1, n + 1, dtype=np.int64),
            "user_id": _texts(columns.user_ids),
            "email": _texts(columns.emails),
            "phone": _texts(columns.phones),
            "first_name": _texts(columns.first_names),
            "last_name": _texts(columns.last_names),
            "country": _texts(columns.countries),
            "limited_data_use": _texts(
                None if flags is None else [None if f is None else str(f) for f in flags], n
            ),
            "state": _texts(columns.states, n),
            "value": _texts(None if values is None else [None if v is None else repr(v) for v in values], n),
            "city": _texts(columns.cities, n),
            "postcode": _texts(columns.postcodes, n),
            "date_of_birth": _texts(columns.dates_of_birth, n),
            "gender": _texts(columns.genders, n),
            "external_id": _texts(columns.external_ids, n),
            "madid": _texts(columns.madids, n),
        },
    )
    engine.run("activation_users_from_columns")
    return UsersInEngine(limited_data_use=flags is not None, values=values is not None)


def load_users_part(
    engine: QueryRunner, path: Path, header: Sequence[str], value_column: str | None
) -> UsersInEngine:
    """A part of a users file (a Parquet file ``write_parts`` wrote from it, or a glob of the files of
    a part of a list read in chunks) as the users to hash; ``header`` is the whole file's first line,
    which says what every part carries."""
    users = users_in_file(header, value_column)
    engine.run("activation_macros")
    engine.run("activation_users_from_part", {"path": str(path)})
    return replace(users, extras=tuple(EXTRA_CSV_HEADER[key] in header for key in EXTRA_SCHEMA))


def count_users(engine: QueryRunner) -> int:
    """How many rows the loaded users file has."""
    ((count,),) = engine.rows("activation_count_users")
    return int(count)


def write_parts(engine: QueryRunner, folder: Path, parts: int, pos_before: int = 0) -> list[Path]:
    """The loaded users as ``parts`` Parquet files in ``folder`` (``part-00000.parquet``, ...), split by
    a hash of user_id: every row of one user_id lands in one part, so each part is de-duplicated on
    its own, exactly. Rows keep their position in the file (``pos``), after ``pos_before`` (the rows
    of the chunks before, for a list read in chunks). The loaded users give way to the parted ones:
    ask for counts and countries first."""
    folder.mkdir(parents=True, exist_ok=True)
    engine.run("activation_split_parts", {"parts": parts, "pos_before": pos_before})
    paths = [folder / f"part-{part:05d}.parquet" for part in range(parts)]
    for part, path in enumerate(paths):
        engine.write_parquet("activation_write_part", {"part": part}, path)
    return paths


def users_countries(engine: QueryRunner, most: int = 250) -> list[str]:
    """The distinct countries of the loaded users as written, trimmed and upper-cased (at most
    ``most``: ISO 3166 has 249)."""
    raws = [raw for (raw,) in engine.rows("activation_input_countries") if raw is not None]
    return sorted({raw.strip().upper() for raw in raws} - {""})[:most]


def hash_users(
    engine: QueryRunner,
    users: UsersInEngine,
    *,
    default_country: str | None,
    batch_size: int,
    first_batch: int = 1,
) -> HashedUsers:
    """Decide every identifier of the users table (SQL, then Python for the rest), keep the first
    usable record of each user_id, number the batches and count the report. Raises
    ``ValidationFailed`` for an unknown ``default_country`` or a value that is not a customer value."""
    store = store_country(default_country)
    engine.run("activation_users")
    engine.run("activation_rule_tables")
    _decide_countries(engine, store)
    _decide_texts(engine)
    _decide_phones(engine)
    _decide_keys(engine)
    # The other keys some user has a usable value for are sent (the date of birth's three together);
    # for a part of a list, those its header has, so that every part sends the same columns.
    if users.extras is not None:
        extras = list(users.extras)
    else:
        sent = {key for (key,) in engine.rows("activation_sent_keys")}
        extras = [key in sent for key in EXTRA_SCHEMA]
    engine.run(
        "activation_normalised",
        {"limited_data_use": users.limited_data_use, "with_value": users.values, "extras": extras},
    )
    if users.values:
        problem = engine.rows("activation_first_value_problem")
        if problem:
            raise ValidationFailed(
                f"A customer value {problem[0][0]}.",
                field="valueColumn",
                remedy="Give each customer a value of 0 or more (blank for no value), then retry.",
            )
    engine.run("activation_keep", {"batch_size": batch_size, "first_batch": first_batch})
    counts = tuple((str(key), reason, int(users)) for key, reason, users in engine.rows("activation_report"))
    report, totals = quality_report(counts)
    schema = (*upload_schema(users), *(key for key, send in zip(EXTRA_SCHEMA, extras, strict=True) if send))
    rows = totals["kept"]
    return HashedUsers(
        users=users,
        rows=rows,
        batches=-(-rows // batch_size),
        schema=schema,
        report=report,
        with_value=totals["with_value"],
        counts=counts,
    )


def batch_documents(
    engine: QueryRunner, users: UsersInEngine, first: int, last: int
) -> Iterator[tuple[int, bytes]]:
    """Batches ``first`` to ``last`` (from 1) as ``(batch number, JSON document of its rows)``: the
    rows come out of the engine in file order and are joined here, one batch at a time."""
    ((first_pos, last_pos),) = engine.rows("activation_batch_bounds", {"first": first, "last": last})
    parameters = {"first": first, "last": last, "first_pos": first_pos, "last_pos": last_pos}
    rows = engine.columns("activation_batch_rows", parameters)
    numbers, texts = rows["batch"], rows["row"]
    starts = [0, *(np.flatnonzero(numbers[1:] != numbers[:-1]) + 1).tolist(), len(numbers)]
    for start, end in itertools.pairwise(starts):
        if end > start:
            yield int(numbers[start]), ("[" + ",".join(texts[start:end].tolist()) + "]").encode()


def prepare_in_engine(
    engine: QueryRunner,
    columns: IdentifierColumns,
    *,
    default_country: str | None = None,
    batch_size: int = 10_000,
) -> PreparedAudience:
    """``prepare_columns`` through the engine: the same rows (as tuples) and report. For the tests and
    the benchmark, which compare the two; the pipeline streams ``batch_documents`` instead."""
    users = load_users_columns(engine, columns)
    hashed = hash_users(engine, users, default_country=default_country, batch_size=batch_size)
    rows: list[tuple[Any, ...]] = []
    if hashed.batches:
        for _, document in batch_documents(engine, users, 1, hashed.batches):
            rows.extend(tuple(row) for row in json.loads(document))
    return PreparedAudience(rows=rows, report=hashed.report, schema=hashed.schema)


def unsure_rows(engine: QueryRunner) -> int:
    """How many rows of a loaded list the bulk path cannot vouch for (``activation_upload_unsure``)."""
    ((count,),) = engine.rows("activation_upload_unsure")
    return int(count)


def write_snapshot(
    engine: QueryRunner, path: Path, rows_per_write: int = 100_000, *, with_header: bool = True
) -> int:
    """The audience's CSV snapshot of the loaded users (``shared.audiences.snapshot``: byte order
    mark, ``SNAPSHOT_COLUMNS``, CRLF lines) into ``path``, streamed; the number of users. Without
    ``with_header``, the lines alone (a later chunk of a list read in chunks)."""
    count = 0
    users = count_users(engine)
    with path.open("wb") as file:
        if with_header:
            file.write(SNAPSHOT_START + (",".join(SNAPSHOT_COLUMNS) + "\r\n").encode())
        # A range of positions a query (pos runs from 1 to the number of rows).
        for first in range(1, users + 1, rows_per_write):
            lines = engine.rows(
                "activation_snapshot_lines", {"first": first, "last": first + rows_per_write - 1}
            )
            file.write(("\r\n".join(line for (line,) in lines) + "\r\n").encode())
            count += len(lines)
    return count


# --- what Python decides ---------------------------------------------------------------------------


def _decide_countries(engine: QueryRunner, store: str | None) -> None:
    raws = [raw for (raw,) in engine.rows("activation_distinct_countries")]
    decided = [prepared_country(raw, store) for raw in raws]
    engine.insert(
        "country_rules",
        {
            "raw": raws,
            "key": ["" if raw is None else raw for raw in raws],
            "value": [value for value, _, _, _ in decided],
            "reason": [_reason(reason) for _, reason, _, _ in decided],
            "code": [code for _, _, code, _ in decided],
            "plan": [plan for _, _, _, plan in decided],
        },
    )


def _decide_texts(engine: QueryRunner) -> None:
    engine.run("activation_name_rules")
    names = [raw for (raw,) in engine.rows("activation_distinct_names")]
    decided = [prepared_name(raw) for raw in names]
    engine.insert(
        "name_rules",
        {"raw": names, "value": [v for v, _ in decided], "reason": [_reason(r) for _, r in decided]},
    )
    emails = [raw for (raw,) in engine.rows("activation_distinct_emails")]
    decided = [prepared_email(raw) for raw in emails]
    engine.insert(
        "email_rules",
        {"raw": emails, "value": [v for v, _ in decided], "reason": [_reason(r) for _, r in decided]},
    )


def _decide_phones(engine: QueryRunner) -> None:
    # A number's international form depends on more of its digits than a fixed head (the plans'
    # patterns reach the whole national number), so each distinct (country, number) is read once,
    # ``chunk`` at a time: a part of 2M users has up to 2M distinct numbers, which held at once as
    # Python objects took the task to 985 MB of its 1,024 MB at 1M users.
    chunk = PHONES_PER_CHUNK
    engine.run("activation_distinct_phones")
    _read_phones_in_engine(engine)
    ((count,),) = engine.rows("activation_count_phones")
    for first in range(1, int(count) + 1, chunk):
        numbers = engine.rows("activation_phone_chunk", {"first": first, "last": first + chunk - 1})
        decided = [prepared_phone(text, plan) for _, plan, text in numbers]
        engine.insert(
            "phone_rules",
            {
                "country_key": [key for key, _, _ in numbers],
                "text": [text for _, _, text in numbers],
                "value": [
                    hashlib.sha256(value.encode()).hexdigest() if value else "" for value, _ in decided
                ],
                "reason": [_reason(reason) for _, reason in decided],
            },
        )


def _read_phones_in_engine(engine: QueryRunner) -> None:
    """Read in the engine the numbers it can read exactly as libphonenumber does (digits and common
    punctuation, written with '+' or nationally: the queries ``activation_phone_*`` follow ``parse``
    step by step over the library's own plans, one query per plan met with its patterns bound, which
    the engine compiles once); their verdicts go into ``phone_rules`` and the rest into
    ``phones_left``, for the Python normaliser."""
    from shared.audiences.phone_plans import numbering_plans
    from shared.audiences.phones import calling_codes

    plans = numbering_plans()
    codes = calling_codes()
    regions = sorted(region for region in plans if region.isalpha())
    engine.register(
        "phone_regions",
        {"region": regions, "cc": [str(plans[region].country_code) for region in regions]},
    )
    engine.register("phone_codes", {"cc": [str(code) for code in codes], "key": list(codes.values())})
    lengths = [
        (key, at, reason) for key, plan in plans.items() for at, reason in enumerate(plan.length_reasons)
    ]
    engine.register(
        "phone_lengths",
        {
            "key": [key for key, _, _ in lengths],
            "length": np.array([at for _, at, _ in lengths], dtype=np.int64),
            "reason": [reason for _, _, reason in lengths],
        },
    )
    engine.run("activation_phone_forms", {"least": PHONES_PER_PLAN_QUERY})
    for (region,) in engine.rows("activation_phone_regions"):
        plan = plans[region]
        engine.run(
            "activation_phone_idd",
            {
                "region": region,
                "idd": plan.international_prefix or "",
                "country_code": str(plan.country_code),
            },
        )
    engine.run("activation_phone_country_codes")
    for (key,) in engine.rows("activation_phone_plans", {"least": PHONES_PER_PLAN_QUERY}):
        plan = plans[key]
        engine.run(
            "activation_phone_national",
            {
                "key": key,
                "prefix": plan.national_prefix or "",
                "general": plan.general_pattern or "",
                "transforms": plan.transforms,
                "last_group": plan.last_group,
                "strip_lengths": list(plan.strip_lengths),
            },
        )
    engine.run("activation_phone_decided")


def _decide_keys(engine: QueryRunner) -> None:
    found = engine.rows("activation_distinct_keys")
    decided = [
        (country_key, raw, outcome)
        for key, country_key, plan, raw in found
        for outcome in prepared_key(key, raw, plan)
    ]
    engine.insert(
        "key_rules",
        {
            "key": [outcome[0] for _, _, outcome in decided],
            "country_key": [country_key for country_key, _, _ in decided],
            "raw": [raw for _, raw, _ in decided],
            "value": [outcome[1] for _, _, outcome in decided],
            "reason": [_reason(outcome[2]) for _, _, outcome in decided],
        },
    )


def upload_schema(users: UsersInEngine) -> tuple[str, ...]:
    """The upload's columns for these users: ``SCHEMA``, the data processing options when they carry
    Limited Data Use flags, then ``LOOKALIKE_VALUE`` for a value-based seed."""
    schema = SCHEMA + DATA_PROCESSING_SCHEMA if users.limited_data_use else SCHEMA
    return (*schema, VALUE_SCHEMA_KEY) if users.values else schema


def added_counts(
    *counts: Sequence[tuple[str, str | None, int]],
) -> list[tuple[str, str | None, int]]:
    """Report counts (``HashedUsers.counts``) of several parts of one list, added up."""
    total: Counter[tuple[str, str | None]] = Counter()
    for part in counts:
        for key, reason, users in part:
            total[(key, reason)] += users
    return [(key, reason, users) for (key, reason), users in total.items()]


def quality_report(
    counted: Sequence[tuple[str, str | None, int]],
) -> tuple[QualityReport, dict[str, int]]:
    """The quality report of the engine's counts (``activation_report``, or parts' counts added up),
    and the totals: ``total``, ``no_identifier``, ``kept``, ``with_value``."""
    by_key: dict[str, Counter[str | None]] = {key: Counter() for key in REPORT_KEYS}
    totals: dict[str, int] = {}
    for key, reason, users in counted:
        if key == "*":
            totals[str(reason)] = int(users)
        else:
            by_key[key][reason] += int(users)
    total = totals["total"]
    identifiers: dict[str, IdentifierQuality] = {}
    for key, reasons in by_key.items():
        if key in EXTRA_REPORT_KEYS and set(reasons) <= {DropReason.EMPTY.value}:
            continue  # no user gave a value for this key: it is not reported
        usable = reasons.get(None, 0)
        dropped = {
            str(reason): count
            for reason, count in reasons.items()
            if reason is not None and reason != DropReason.EMPTY.value
        }
        unusable = sum(dropped.values())
        identifiers[key] = IdentifierQuality(
            present=usable + unusable,
            usable=usable,
            unusable=unusable,
            unusable_reasons=dict(sorted(dropped.items())),
            missing=total - usable - unusable,
        )
    report = QualityReport(
        total_records=total,
        identifiers=identifiers,
        dropped_no_identifier=totals["no_identifier"],
        duplicate_user_ids=total - totals["no_identifier"] - totals["kept"],
        rows_to_upload=totals["kept"],
    )
    return report, totals


def _reason(reason: DropReason | None) -> str | None:
    return None if reason is None else reason.value


def _texts(values: Sequence[Any] | None, n: int | None = None) -> np.ndarray[Any, Any]:
    if values is None:
        return np.full(n or 0, None, dtype=object)
    return np.asarray(values, dtype=object)
