"""Normalising and hashing in the engine (``shared.activation.hashing``): the same rows and report as
the Python path (``prepare_columns``) on every vector the tests hold, from columns and from a CSV."""

from __future__ import annotations

import csv
import io
import itertools
import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from shared.activation import hashing
from shared.activation.hashing import (
    added_counts,
    batch_documents,
    count_users,
    csv_header,
    hash_users,
    load_users_file,
    load_users_part,
    prepare_in_engine,
    quality_report,
    unsure_rows,
    users_countries,
    write_parts,
    write_snapshot,
)
from shared.activation.list_chunks import RECORD_BYTES, first_misread_quote
from shared.activation.users_files import snapshot_rows_of_csv, users_csv
from shared.audiences.identifiers import EXTRA_SCHEMA, SCHEMA, AudienceUser
from shared.audiences.preparation import IdentifierColumns, prepare_audience, prepare_columns
from shared.audiences.snapshot import SNAPSHOT_COLUMNS, SNAPSHOT_START
from shared.dataplane.runner import QueryRunner, query_runner
from shared.errors import ValidationFailed
from tests.audience_reference import PLAN_COUNTRIES, generate_corpus
from tests.unit.audiences.test_preparation import EDGE_EMAILS, EDGE_NAMES, EDGE_PHONES, extra_key_records


@pytest.fixture
def engine() -> Iterator[QueryRunner]:
    with query_runner(function_mb=512, threads=2) as runner:
        yield runner


@pytest.mark.parametrize("default_country", [None, "GB", "us"])
def test_the_engine_prepares_a_varied_corpus_as_the_python_path_does(
    engine: QueryRunner, default_country: str | None
) -> None:
    # Given messy users: Unicode names, pre-hashed values, invalid values, duplicates, many countries
    columns = IdentifierColumns.from_records(generate_corpus(5_000, seed=11))

    # When the engine and the Python path prepare them
    bulk = prepare_in_engine(engine, columns, default_country=default_country, batch_size=1_000)
    python = prepare_columns(columns, default_country=default_country)

    # Then rows and report are identical, and the corpus did exercise the drop paths
    assert bulk.rows == python.rows
    assert bulk.report == python.report
    assert bulk.report.identifiers["EMAIL"].unusable > 0
    assert bulk.report.duplicate_user_ids > 0


@pytest.mark.parametrize("default_country", [None, "GB", "US", "AU", "ES", "NZ"])
def test_the_engine_prepares_every_edge_case_as_the_python_path_does(
    engine: QueryRunner, default_country: str | None
) -> None:
    # Given every edge case under countries of every continent (each read by its own numbering plan),
    # one without a plan (AQ), an invalid one and none, plus values that need trimming of every kind
    # of white space
    countries = [None, "aq", *PLAN_COUNTRIES, "xx", " gb\u3000", "UK", "\u00a0"]
    names = [*EDGE_NAMES, "\u2003Ann\u2003", "\x1cBo\x1f", "İlker", "KELVIN\u212a", "   "]
    emails = [*EDGE_EMAILS, "\u00a0Mary@Example.com\u2029", "\tann@example.com\x0b", "a" * 250 + "@b.co"]
    records = [
        {
            "user_id": f"u{index % 97}" if index % 5 else f"id{index}@shop.example",
            "email": emails[index % len(emails)],
            "phone": phone,
            "firstName": names[index % len(names)],
            "lastName": names[-1 - index % len(names)],
            "country": country,
        }
        for index, (phone, country) in enumerate(itertools.product([*EDGE_PHONES, "+0000000"], countries))
    ]
    columns = IdentifierColumns.from_records(records)

    # When the engine and the Python path prepare them
    bulk = prepare_in_engine(engine, columns, default_country=default_country)
    python = prepare_columns(columns, default_country=default_country)

    # Then rows and report are identical, and the cases did reach every phone drop reason
    assert bulk.rows == python.rows
    assert bulk.report == python.report
    assert set(bulk.report.identifiers["PHONE"].unusable_reasons) == {
        "invalid_phone",
        "phone_too_short",
        "phone_too_long",
        "unknown_country_code",
    }


@pytest.mark.parametrize("default_country", [None, "US", "GB"])
def test_the_engine_prepares_the_other_keys_as_the_python_path_does(
    engine: QueryRunner, default_country: str | None
) -> None:
    # Given users with every edge case of city, state, postcode, date of birth, gender, external id and
    # advertising id
    columns = IdentifierColumns.from_records(extra_key_records())

    # When the engine and the Python path prepare them
    bulk = prepare_in_engine(engine, columns, default_country=default_country, batch_size=100)
    python = prepare_columns(columns, default_country=default_country)

    # Then the schemas (every other key sent), rows and reports are the same
    assert bulk.schema == python.schema
    assert bulk.schema[6:] == ("CT", "ST", "ZIP", "DOBY", "DOBM", "DOBD", "GEN", "MADID")
    assert bulk.rows == [tuple(row) for row in python.rows]
    assert bulk.report == python.report


def test_the_engine_sends_only_the_other_keys_a_user_has(engine: QueryRunner) -> None:
    # Given users with a gender and an unusable city, no other key
    users = [
        AudienceUser(user_id="a", email="a@example.com", gender="female", city="東京"),
        AudienceUser(user_id="b", email="b@example.com", gender="M"),
    ]

    # When the engine prepares them
    bulk = prepare_in_engine(engine, IdentifierColumns.from_users(users))

    # Then GEN is sent, CT is reported (someone gave one) but not sent, the others neither
    assert bulk.schema[6:] == ("GEN",)
    assert bulk.rows == [tuple(row) for row in prepare_audience(users).rows]
    assert set(bulk.report.identifiers) == {"EMAIL", "PHONE", "FN", "LN", "COUNTRY", "CT", "GEN"}


def test_limited_data_use_and_values_come_out_as_the_python_path_gives_them(engine: QueryRunner) -> None:
    # Given Californians (by code and by name, in any case and white space), others who asked for
    # Limited Data Use, people who did not or said nothing, with values and without
    users = [
        AudienceUser(user_id="ca", email="ca@example.com", country="US", state=" ca ", limitedDataUse=True),
        AudienceUser(
            user_id="cal", phone="+1 555 987 6543", country="us", state="California", limitedDataUse=True
        ),
        AudienceUser(user_id="ny", email="ny@example.com", country="US", state="NY", limitedDataUse=True),
        AudienceUser(user_id="gbca", email="gb@example.com", country="GB", state="CA", limitedDataUse=True),
        AudienceUser(user_id="no", email="no@example.com", country="US", state="CA", limitedDataUse=False),
        AudienceUser(user_id="unknown", email="un@example.com", country="US", state="CA"),
    ]
    values = [12.5, 0.0, None, 1e-05, 3.0, 1e20]

    # When the engine and the Python path prepare them
    columns = IdentifierColumns.from_users(users, values)
    bulk = prepare_in_engine(engine, columns)
    python = prepare_audience(users, values=values)

    # Then the schemas, rows (options and values included) and reports are the same
    assert bulk.schema == python.schema
    assert bulk.rows == [tuple(row) for row in python.rows]
    assert bulk.report == python.report


def test_a_segments_users_file_carries_the_other_keys_to_the_upload(
    engine: QueryRunner, tmp_path: Path
) -> None:
    # Given segment users with the other match keys (a state without Limited Data Use flags too), as
    # SelectUsers stores them
    users = [
        AudienceUser(
            user_id="a",
            email="a@example.com",
            country="US",
            state="New York",
            city="New York",
            postcode="10001",
            date_of_birth="1985-03-07",
            gender="F",
            external_id="shop-1",
            madid="6d92078a-8246-4ba4-ae5b-76104861e7dc",
        ),
        AudienceUser(user_id="b", phone="+44 7700 900123", country="GB", city="London"),
    ]
    path = tmp_path / "users.csv"
    path.write_bytes(users_csv(users))

    # When the engine reads the file and prepares it
    loaded = load_users_file(engine, path, csv_header(path), None)
    hashed = hash_users(engine, loaded, default_country=None, batch_size=10)
    rows = [
        tuple(row) for _, doc in batch_documents(engine, loaded, 1, hashed.batches) for row in json.loads(doc)
    ]

    # Then every key reaches the upload, as the Python path prepares the same users
    expected = prepare_audience(users)
    assert hashed.schema == expected.schema == (*SCHEMA, *EXTRA_SCHEMA)
    assert rows == [tuple(row) for row in expected.rows]
    assert rows[0][0] == "shop-1"


def test_a_users_csv_is_read_as_the_python_path_reads_it(engine: QueryRunner, tmp_path: Path) -> None:
    # Given a users CSV with a byte order mark, a blank line, a quoted line break, a short row, a cell
    # past the header, blank cells of white space, columns in another order and a value column
    path = tmp_path / "users.csv"
    path.write_text(
        "\ufeffemail,user_id,phone,firstName,lastName,country,spend,limitedDataUse,state\r\n"
        'ann@example.com,u1,+44 7700 900123,Ann,"Lee\nJones",GB,12.50,yes,CA\r\n'
        "\r\n"
        " ,u2,07700 900124,  ,Bo,gb,,,\r\n"
        "cy@example.com,u3\r\n"
        "dee@example.com,u4,,Dee,,US,3,TRUE,California,extra\r\n"
        "ann@example.com,u1,,,,,7,,\r\n",
        encoding="utf-8",
    )
    header = csv_header(path)

    # When the engine reads and prepares it
    users = load_users_file(engine, path, header, "spend")
    hashed = hash_users(engine, users, default_country="GB", batch_size=2)
    rows = [
        tuple(row)
        for _, doc in batch_documents(engine, hashed.users, 1, hashed.batches)
        for row in json.loads(doc)
    ]

    # Then it is what the Python path makes of the same cells
    expected = prepare_columns(
        IdentifierColumns(
            user_ids=["u1", "u2", "u3", "u4", "u1"],
            emails=["ann@example.com", None, "cy@example.com", "dee@example.com", "ann@example.com"],
            phones=["+44 7700 900123", "07700 900124", None, None, None],
            first_names=["Ann", None, None, "Dee", None],
            last_names=["Lee\nJones", "Bo", None, None, None],
            countries=["GB", "gb", None, "US", None],
            limited_data_use=[True, None, None, True, None],
            states=["CA", None, None, "California", None],
            values=[12.5, None, None, 3.0, 7.0],
        ),
        default_country="GB",
    )
    assert hashed.schema == expected.schema
    assert rows == [tuple(row) for row in expected.rows]
    assert hashed.report == expected.report
    assert (hashed.rows, hashed.batches, hashed.with_value) == (4, 2, 2)


def test_a_value_that_is_not_a_customer_value_is_refused(engine: QueryRunner, tmp_path: Path) -> None:
    # Given a list whose second user's value is negative
    path = tmp_path / "users.csv"
    path.write_text("user_id,email,value\nu1,a@example.com,1\nu2,b@example.com,-2\n", encoding="utf-8")

    # When it is prepared, then the step refuses it as the Python path does
    users = load_users_file(engine, path, csv_header(path), "value")
    with pytest.raises(ValidationFailed, match="at least 0"):
        hash_users(engine, users, default_country=None, batch_size=10)


def test_an_unknown_store_country_is_refused(engine: QueryRunner) -> None:
    columns = IdentifierColumns.from_records([{"user_id": "u1", "email": "a@example.com"}])
    with pytest.raises(ValidationFailed, match="alpha-2"):
        prepare_in_engine(engine, columns, default_country="Narnia")


def test_the_engine_strips_and_blanks_what_python_strips(engine: QueryRunner) -> None:
    # Given every character of Unicode (surrogates aside) around a letter, and alone
    characters = [chr(code) for code in range(0x110000) if not 0xD800 <= code <= 0xDFFF]
    wrapped = [f"{c}{c}a{c}" for c in characters]

    # When the engine's macros strip the one and judge the other blank
    engine.run("activation_macros")
    engine.register(
        "samples",
        {
            "position": np.arange(len(characters)),
            "wrapped": np.array(wrapped, dtype=object),
            "alone": np.array(characters, dtype=object),
        },
    )
    connection = engine.workspace.connection
    stripped, blank = zip(
        *connection.execute(
            "SELECT py_strip(wrapped), is_blank(alone) FROM samples ORDER BY position"
        ).fetchall(),
        strict=True,
    )

    # Then both agree with Python's str.strip() on every character
    assert list(stripped) == [text.strip() for text in wrapped]
    assert list(blank) == [not c.strip() for c in characters]


def test_a_plain_list_s_snapshot_from_the_engine_is_the_python_path_s(
    engine: QueryRunner, tmp_path: Path
) -> None:
    # Given a plainly valid list whose cells need quoting or a spreadsheet guard, or are inert signs
    path = tmp_path / "users.csv"
    path.write_text(
        "user_id,email,firstName,lastName,phone,score\n"
        'u1,"a,b@example.com","Ann ""Nan""","Lee\nJones",+44 7700 900123,0.5\n'
        "u2,=cmd@example.com,-Mary,@bo,-2+3,1e-05\n"
        "u3,,+A1,Zoë,+\u0661\u0662\u0663,\n"
        "-4,\tb@example.com,,,(555) 123,-0.25\n",
        encoding="utf-8",
    )
    load_users_file(engine, path, csv_header(path), None)

    # When the engine writes the snapshot, and the Python path writes it from the same file
    assert unsure_rows(engine) == 0
    written = tmp_path / "snapshot.csv"
    count = write_snapshot(engine, written)
    with path.open("rb") as stream:
        rows = list(snapshot_rows_of_csv(stream))
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\r\n").writerows([SNAPSHOT_COLUMNS, *rows])

    # Then both are the same bytes
    assert count == 4
    assert written.read_bytes() == SNAPSHOT_START + buffer.getvalue().encode()


def test_rows_the_engine_cannot_vouch_for_are_counted(engine: QueryRunner, tmp_path: Path) -> None:
    # Given a list with a row without user_id, a score in words and a negative value
    path = tmp_path / "users.csv"
    path.write_text(
        "user_id,email,score,spend\nu1,a@example.com,0.5,1\n,b@example.com,,\nu3,c@example.com,high,\n"
        "u4,d@example.com,,-1\n u5 ,e@example.com, 0.5,\n",
        encoding="utf-8",
    )

    # When it is loaded, then the three bad rows and the padded score are left to the Python path
    load_users_file(engine, path, csv_header(path), "spend")
    assert unsure_rows(engine) == 4


def test_the_engine_reads_every_list_without_a_misread_quote_as_python_s_csv_module_does(
    engine: QueryRunner, tmp_path: Path
) -> None:
    # Given 3,000 random records of letters, commas, quotes, spaces, tabs and line breaks, those in
    # which list_chunks finds no quote the engine reads otherwise (the rest are refused), one file
    rng = random.Random(20261129)
    alphabet = 'ab,"" \t\n\r'
    kept: list[str] = []
    for i in range(3_000):
        record = f"u{i}," + "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12))) + "\n"
        data = record.encode()
        if first_misread_quote(lambda start, end, data=data: data[start : end + 1], 0, len(data)) is None:
            kept.append(record)
    text = "user_id,email,phone\n" + "".join(kept)
    path = tmp_path / "users.csv"
    path.write_text(text, encoding="utf-8", newline="")

    # When the engine reads it
    load_users_file(engine, path, csv_header(path), None)
    read = engine.workspace.connection.execute("SELECT user_id, email, phone FROM users_input ORDER BY pos")

    # Then it reads what the csv module reads (a blank cell as NULL), record for record; quotes the
    # engine reads alike (literal ones, doubled ones, quoted fields) were there to read
    def cell(value: str | None) -> str | None:
        return None if value is None or not value.strip() else value

    expected = [
        tuple(cell(value) for value in (*row, None, None)[:3])
        for row in csv.reader(io.StringIO(text, newline=""))
        if row
    ][1:]
    assert read.fetchall() == expected
    assert sum('"' in record for record in kept) > 500
    assert sum('",' in record or '"\n' in record for record in kept) > 100


@pytest.mark.parametrize("line_end", [b"\n", b"\r\n"])
def test_the_engine_refuses_a_record_longer_than_a_chunk_reads_past_its_end(
    engine: QueryRunner, tmp_path: Path, line_end: bytes
) -> None:
    # Given lists whose second record (a quoted field across lines) is a byte longer than RECORD_BYTES,
    # or a line break shorter: a list read in chunks reads RECORD_BYTES (and a CRLF) past a chunk's
    # nominal end for a record's end and refuses the list without one
    # (shared.activation.list_chunks), so the whole read must refuse such a record too
    def users_file(name: str, record_bytes: int) -> Path:
        field = b"\n".join([b"a" * 999] * (RECORD_BYTES // 1000 - 1))
        record = b'u2,"' + field + b"a" * (record_bytes - 5 - len(field)) + b'"'
        path = tmp_path / name
        path.write_bytes(
            b"user_id,firstName" + line_end + b"u1,Ana" + line_end + record + line_end + b"u3,Zed"
        )
        assert len(record) == record_bytes
        return path

    longer = users_file("longer.csv", RECORD_BYTES + 1)
    shorter = users_file("shorter.csv", RECORD_BYTES - len(line_end))

    # When each is loaded, then the engine refuses the longer (the chunked read's bound refuses only
    # what the whole read does) and reads the other (the bound is the engine's own, give or take the
    # line break it counts with a record)
    with pytest.raises(ValidationFailed):
        load_users_file(engine, longer, csv_header(longer), None)
    load_users_file(engine, shorter, csv_header(shorter), None)
    assert count_users(engine) == 3


def _corpus_csv(path: Path, users: int) -> None:
    """A messy users CSV (``generate_corpus``: duplicates, bad values, many countries) with Limited
    Data Use flags and a value column."""
    records = generate_corpus(users, seed=7)
    with path.open("w", encoding="utf-8", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(
            [
                "user_id",
                "email",
                "phone",
                "firstName",
                "lastName",
                "country",
                "limitedDataUse",
                "state",
                "spend",
            ]
        )
        for at, record in enumerate(records):
            writer.writerow(
                [
                    *(
                        record.get(name) or ""
                        for name in ("user_id", "email", "phone", "firstName", "lastName")
                    ),
                    record.get("country") or "",
                    ("true", "false", "")[at % 3],
                    ("CA", "NY", "")[at % 3],
                    "" if at % 4 == 0 else f"{at % 50}.5",
                ]
            )


def _hashed_rows(
    engine: QueryRunner, users: Any, batches: tuple[int, int]
) -> dict[int, list[tuple[Any, ...]]]:
    return {
        number: [tuple(row) for row in json.loads(document)]
        for number, document in batch_documents(engine, users, *batches)
    }


def test_a_list_hashed_in_parts_uploads_what_the_whole_list_uploads(tmp_path: Path) -> None:
    # Given a messy list whose users repeat (the corpus repeats user ids), hashed whole
    path = tmp_path / "users.csv"
    _corpus_csv(path, 3_000)
    header = csv_header(path)
    with query_runner(function_mb=512, threads=2) as engine:
        users = load_users_file(engine, path, header, "spend")
        whole = hash_users(engine, users, default_country="GB", batch_size=100)
        whole_rows = _hashed_rows(engine, users, (1, whole.batches))
        parts = write_parts(engine, tmp_path / "parts", 3)

    # When each part is hashed in an engine of its own (a task each), its batches numbered after the
    # previous parts', and the parts' counts are added up
    batches: dict[int, list[tuple[Any, ...]]] = {}
    counts: list[tuple[str, str | None, int]] = []
    ids_by_part: list[set[str]] = []
    for part in parts:
        with query_runner(function_mb=512, threads=2) as engine:
            users = load_users_part(engine, part, header, "spend")
            hashed = hash_users(
                engine, users, default_country="GB", batch_size=100, first_batch=len(batches) + 1
            )
            made = _hashed_rows(engine, users, (len(batches) + 1, len(batches) + hashed.batches))
            batches |= made
            counts = added_counts(counts, hashed.counts)
            ids_by_part.append({row[0] for rows in made.values() for row in rows})

    # Then the parts hold the same rows, numbered 1..n without a gap, and the same report: every
    # record of one user_id fell in one part, so each part de-duplicated exactly
    assert sorted(batches) == list(range(1, len(batches) + 1))
    assert sorted(row for rows in batches.values() for row in rows) == sorted(
        row for rows in whole_rows.values() for row in rows
    )
    assert quality_report(counts)[0] == whole.report
    assert whole.report.duplicate_user_ids > 0
    assert all(not (a & b) for a, b in itertools.combinations(ids_by_part, 2))
    assert all(ids_by_part)


def test_every_part_of_a_list_sends_the_other_keys_the_whole_list_sends(tmp_path: Path) -> None:
    # Given a users file with the other match keys, only some users having them
    users = [
        AudienceUser(
            user_id=f"u{i}",
            email=f"u{i}@example.com",
            country="US",
            state="California" if i % 3 == 0 else None,
            city="Boston" if i % 4 == 0 else None,
            postcode="02110" if i % 5 == 0 else None,
            date_of_birth="1985-03-07" if i % 6 == 0 else None,
            gender="F" if i % 7 == 0 else None,
            madid="6d92078a-8246-4ba4-ae5b-76104861e7dc" if i % 8 == 0 else None,
        )
        for i in range(60)
    ]
    path = tmp_path / "users.csv"
    path.write_bytes(users_csv(users))
    header = csv_header(path)
    with query_runner(function_mb=512, threads=2) as engine:
        loaded = load_users_file(engine, path, header, None)
        whole = hash_users(engine, loaded, default_country=None, batch_size=10)
        whole_rows = _hashed_rows(engine, loaded, (1, whole.batches))
        parts = write_parts(engine, tmp_path / "parts", 3)

    # When each part is hashed on its own
    schemas, rows = set(), []
    for part in parts:
        with query_runner(function_mb=512, threads=2) as engine:
            loaded = load_users_part(engine, part, header, None)
            hashed = hash_users(engine, loaded, default_country=None, batch_size=10)
            schemas.add(hashed.schema)
            rows += [
                row for batch in _hashed_rows(engine, loaded, (1, hashed.batches)).values() for row in batch
            ]

    # Then every part has the whole list's schema (every other key, even in a part where no user has
    # it), and together the parts upload the whole list's rows
    assert schemas == {whole.schema} == {(*SCHEMA, *EXTRA_SCHEMA)}
    assert sorted(rows) == sorted(row for batch in whole_rows.values() for row in batch)


def test_a_list_s_countries_are_its_distinct_country_cells_trimmed_and_upper_cased(
    engine: QueryRunner, tmp_path: Path
) -> None:
    # Given a list with countries in any case and white space, blank ones and none
    path = tmp_path / "users.csv"
    path.write_text("user_id,country\nu1, gb\nu2,GB\nu3,us \nu4,  \nu5,\nu6,Fr\n", encoding="utf-8")
    load_users_file(engine, path, csv_header(path), None)

    # When, then: what publishing delivers in, as it reads the users file
    assert users_countries(engine) == ["FR", "GB", "US"]


def test_phones_read_a_chunk_at_a_time_come_out_as_the_python_path_gives_them(
    engine: QueryRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given the Python normaliser reading 7 distinct numbers at a time (100,000 in a task)
    monkeypatch.setattr(hashing, "PHONES_PER_CHUNK", 7)
    columns = IdentifierColumns.from_records(generate_corpus(500, seed=5))

    # When the engine and the Python path prepare a corpus with many more distinct numbers than that
    bulk = prepare_in_engine(engine, columns, default_country="GB", batch_size=100)
    python = prepare_columns(columns, default_country="GB")

    # Then every number was read, once: rows and report are identical
    assert len({phone for phone in columns.phones if phone}) > 50
    assert bulk.rows == python.rows
    assert bulk.report == python.report


def _numbers_of_every_plan(count: int, seed: int) -> list[dict[str, str | None]]:
    """Users with phone numbers of every plan, in the forms the engine reads itself and beside them:
    with '+' and a calling code (known or not), after an international prefix, nationally with and
    without the trunk prefix, with the country's code and no '+', cut short or too long, with spaces,
    dots, hyphens and brackets; under the plan's country, an unknown one or none."""
    import phonenumbers

    from shared.audiences.phone_plans import numbering_plans
    from shared.audiences.phones import calling_codes

    rng = random.Random(seed)
    regions = sorted(key for key in numbering_plans() if key.isalpha())
    codes = [str(code) for code in calling_codes()]

    def digits(length: int) -> str:
        return "".join(rng.choice("0123456789") for _ in range(length))

    def written(number: str) -> str:
        return "".join(ch + (rng.choice(" -.()") if rng.random() < 0.2 else "") for ch in number)

    users: list[dict[str, str | None]] = []
    for index in range(count):
        region = rng.choice([*regions, None, "xx"])
        example = phonenumbers.example_number(region) if region in regions else None
        national = phonenumbers.national_significant_number(example) if example else digits(9)
        code = str(example.country_code) if example else rng.choice(codes)
        number = rng.choice(
            [
                "+" + written(rng.choice(codes) + digits(rng.randint(1, 14))),
                "+" + written(code + national),
                "+" + written(code + "0" + national),
                written(
                    rng.choice(["00", "011", "0011", "001", "010", "810"])
                    + rng.choice([*codes, "0"])
                    + national
                ),
                written("0" + national),
                written(national),
                written(code + national),
                written(national[:-2]),
                written(national + digits(2)),
                written(rng.choice(["1", "8", "15", "9", "0"]) + national),
                written(digits(rng.randint(1, 18))),
            ]
        )
        users.append({"user_id": f"u{index}", "phone": number, "country": region})
    return users


@pytest.mark.parametrize("seed", [1, 2])
def test_numbers_of_every_plan_come_out_as_the_python_path_gives_them(
    engine: QueryRunner, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    # Given numbers of every numbering plan in many forms, and the engine reading every plan's
    # numbers itself however few
    monkeypatch.setattr(hashing, "PHONES_PER_PLAN_QUERY", 1)
    columns = IdentifierColumns.from_records(_numbers_of_every_plan(4_000, seed))

    # When the engine and the Python path prepare them
    bulk = prepare_in_engine(engine, columns, default_country=None)
    python = prepare_columns(columns)

    # Then rows and report are identical, and most numbers were read by the engine
    assert bulk.rows == python.rows
    assert bulk.report == python.report
    ((left,),) = engine.rows("activation_count_phones")
    assert left < len(columns) // 5


def test_numbers_written_with_their_code_or_nationally_are_read_by_the_engine(engine: QueryRunner) -> None:
    # Given numbers written as shops hold them: E.164, international with spaces and a trunk 0 in
    # brackets, national with its trunk prefix, under the customers' countries (many of each plan)
    forms = [
        ("+447700900{:03d}", "GB"),
        ("+44 (0)7700 900{:03d}", "GB"),
        ("07700 900{:03d}", "GB"),
        ("(415) 555-2{:03d}", "US"),
        ("+1 604 555 0{:03d}", "CA"),
        ("0412 345 {:03d}", "AU"),
        ("0011 61 412 345 {:03d}", "AU"),
        ("090-1234-5{:03d}", "JP"),
        ("+33 6 12 34 5{:03d}", None),
    ]
    records = [
        {"user_id": f"u{index}-{at}", "phone": form.format(at), "country": country}
        for index, (form, country) in enumerate(forms)
        for at in range(hashing.PHONES_PER_PLAN_QUERY)
    ]
    columns = IdentifierColumns.from_records(records)

    # When the engine prepares them
    bulk = prepare_in_engine(engine, columns)

    # Then none was left to the Python normaliser, and each came out as the Python path gives it
    ((left,),) = engine.rows("activation_count_phones")
    assert left == 0
    assert bulk.rows == prepare_columns(columns).rows
