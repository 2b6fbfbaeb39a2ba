"""A segment activation's files written from the engine (``shared.activation.segment_files``): byte for
byte what the Python writers wrote from one object per user (``users_csv``, ``groups_csv``, the
snapshot), and the same users held out for the same seed as ``split_holdout``."""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import duckdb
import numpy as np
import pytest

from shared.activation import segment_files
from shared.activation.users_files import groups_csv, users_csv
from shared.audiences.holdout import GROUP_HOLDOUT, GROUP_UPLOADED, held_ranks, split_holdout
from shared.audiences.identifiers import AudienceUser
from shared.audiences.snapshot import iter_snapshot_csv
from shared.dataplane.customers import segment_customers
from shared.dataplane.runner import QueryRunner, query_runner

# (user_id, email, first_name, last_name, phone, country, limited_data_use, state, city, postcode,
#  date_of_birth, gender, external_id, madid): text a CSV must quote, formulas a spreadsheet would run,
# inert signs, non-ASCII ids and names, blanks and missing cells.
EDGE_CUSTOMERS: list[tuple[object, ...]] = [
    (
        "u01",
        "a@example.com",
        "Ann",
        "Lee",
        "+44 7700 900123",
        "GB",
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
    ),
    (
        "u02",
        "b,c@example.com",
        'Bo "B"',
        "O'Neil",
        None,
        "US",
        True,
        "CA",
        "Boston",
        "02110",
        date(1985, 3, 7),
        "F",
        "shop-2",
        None,
    ),
    ("u03", None, "=SUM(A1)", "-Mary", "-12", None, False, None, None, None, None, None, None, None),
    (
        "u04",
        "line\nbreak@example.com",
        "Zoë",
        "Ørsted",
        "+1 (202) 555-0100",
        "gb",
        None,
        "NY",
        None,
        None,
        None,
        None,
        None,
        "6d92078a-8246-4ba4-ae5b-76104861e7dc",
    ),
    ("ü05", "", "", "", "", "", None, None, None, None, None, None, None, None),
    ("u06", "@handle", "\tTab", "\rCr", "+A1", "FR", None, None, "Paris", "75001", None, "m", None, None),
    (
        "u07",
        "g@example.com",
        "Gus",
        "Ng",
        None,
        "DE",
        None,
        None,
        None,
        None,
        date(2001, 12, 31),
        None,
        "x,y",
        None,
    ),
    (
        "U08",
        "h@example.com",
        "Hal",
        "Ito",
        "07700 900456",
        "GB",
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
    ),
]
# Scores: ties (broken by user_id, the non-ASCII id after the ASCII ones), zero, tiny and long reprs.
EDGE_SCORES = {
    "u01": 0.9,
    "u02": 0.5,
    "u03": 0.5,
    "u04": 0.0,
    "ü05": 0.5,
    "u06": 1e-07,
    "u07": 0.1 + 0.2,
    "U08": 0.123456789012345,
    "u99": 0.99,  # chosen, but without a customer row
}


@pytest.fixture
def engine() -> Iterator[QueryRunner]:
    with query_runner(function_mb=512, threads=2) as runner:
        yield runner


def write_customers(path: Path, rows: list[tuple[object, ...]]) -> Path:
    connection = duckdb.connect()
    connection.execute(
        "CREATE TABLE customers (user_id VARCHAR, email VARCHAR, first_name VARCHAR, last_name VARCHAR, "
        "phone VARCHAR, country VARCHAR, limited_data_use BOOLEAN, state VARCHAR, city VARCHAR, "
        "postcode VARCHAR, date_of_birth DATE, gender VARCHAR, external_id VARCHAR, madid VARCHAR)"
    )
    connection.executemany("INSERT INTO customers VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    connection.sql("SELECT * FROM customers ORDER BY user_id").write_parquet(str(path))
    connection.close()
    return path


def python_files(
    parquet: Path, scores: dict[str, float], values: dict[str, float] | None, percent: float, seed: int
) -> tuple[bytes, bytes | None, bytes]:
    """The files as SelectUsers wrote them before: users from ``segment_customers`` (as
    ``TargetingService.users_for`` built them), sorted by score, split by ``split_holdout``."""
    ids = np.array(sorted(scores), dtype=np.str_)
    found = segment_customers(parquet.read_bytes(), ids)
    users = [
        AudienceUser(**dict(zip(found, row, strict=True)), score=scores[row[0]])
        for row in zip(*found.values(), strict=True)
    ]
    users.sort(key=lambda user: -(user.score or 0.0))
    kept = None if values is None else {user.user_id: values[user.user_id] for user in users}
    if percent == 0:
        return users_csv(users, kept), None, b"".join(iter_snapshot_csv(users))
    split = split_holdout(
        [u.user_id for u in users], [u.score if u.score is not None else 0.0 for u in users], percent, seed
    )
    groups = [GROUP_HOLDOUT if held else GROUP_UPLOADED for held in split.held_out]
    uploaded = [u for u, held in zip(users, split.held_out, strict=True) if not held]
    return (
        users_csv(uploaded, kept),
        groups_csv(users, groups),
        b"".join(iter_snapshot_csv(users, groups=groups)),
    )


def engine_files(
    engine: QueryRunner,
    parquet: Path,
    scores: dict[str, float],
    values: dict[str, float] | None,
    percent: float,
    seed: int,
    per_insert: int = 3,
    as_bytes: bool = False,
) -> tuple[bytes, bytes | None, bytes, segment_files.SegmentInEngine]:
    ids = np.array(sorted(scores), dtype=np.str_)
    segment = segment_files.load_segment(
        engine,
        parquet,
        np.char.encode(ids, "utf-8") if as_bytes else ids,
        np.array([scores[i] for i in ids.tolist()]),
        None if values is None else np.array([values[i] for i in ids.tolist()]),
        per_insert=per_insert,
    )
    if percent:
        segment = segment_files.hold_out(engine, segment, held_ranks(segment.users, percent, seed))
    segment_files.write_users_file(engine, segment, engine.path("users.csv"))
    groups = None
    if percent:
        segment_files.write_groups_file(engine, engine.path("groups.csv"))
        groups = engine.path("groups.csv").read_bytes()
    segment_files.write_snapshot_file(engine, segment, engine.path("snapshot.csv"), with_group=percent > 0)
    return engine.path("users.csv").read_bytes(), groups, engine.path("snapshot.csv").read_bytes(), segment


@pytest.mark.parametrize("percent", [0.0, 10.0, 25.0, 33.0, 50.0])
@pytest.mark.parametrize("with_values", [False, True])
def test_the_engine_writes_the_files_the_python_writers_wrote(
    engine: QueryRunner, tmp_path: Path, percent: float, with_values: bool
) -> None:
    # Given a segment of edge customers (one chosen user without a customer row), with values or not
    parquet = write_customers(tmp_path / "customers.parquet", EDGE_CUSTOMERS)
    values = {user: round(score * 37.5, 4) for user, score in EDGE_SCORES.items()} if with_values else None

    # When the engine writes the users, groups and snapshot files, and the Python writers do
    users, groups, snapshot, segment = engine_files(engine, parquet, EDGE_SCORES, values, percent, seed=2026)
    expected = python_files(parquet, EDGE_SCORES, values, percent, seed=2026)

    # Then every file is the same, byte for byte, and the counts are the files'
    assert (users, groups, snapshot) == expected
    assert segment.users == len(EDGE_CUSTOMERS)
    assert segment.uploaded == users.count(b"\r\n") - 1  # the header (a quoted cell breaks with LF)


def test_without_limited_data_use_or_other_keys_the_users_file_has_the_plain_columns(
    engine: QueryRunner, tmp_path: Path
) -> None:
    # Given customers with no flag and no other match key
    plain = [(*row[:6], None, None, None, None, None, None, None, None) for row in EDGE_CUSTOMERS]
    parquet = write_customers(tmp_path / "customers.parquet", plain)

    # When both write the files
    users, _, _, _ = engine_files(engine, parquet, EDGE_SCORES, None, 0.0, seed=1)

    # Then the header is the plain one, and the file is the Python writer's
    assert users.split(b"\r\n")[0] == b"user_id,email,firstName,lastName,phone,score,country"
    assert users == python_files(parquet, EDGE_SCORES, None, 0.0, seed=1)[0]


def test_the_users_file_keys_follow_the_uploaded_users_only(engine: QueryRunner, tmp_path: Path) -> None:
    # Given: the only user with a city and a flag is the best, and a 50 % holdout of two users
    rows = [
        ("a", "a@example.com", None, None, None, "GB", True, None, "Leeds", None, None, None, None, None),
        ("b", "b@example.com", None, None, None, "GB", None, None, None, None, None, None, None, None),
    ]
    parquet = write_customers(tmp_path / "customers.parquet", rows)
    scores = {"a": 0.9, "b": 0.1}

    # When it is split with each seed until the best user is held out
    seed = next(s for s in range(100) if 0 in held_ranks(2, 50.0, s))
    users, _, _, _ = engine_files(engine, parquet, scores, None, 50.0, seed=seed)

    # Then the users file, of the other user only, has neither the flag nor the city column
    assert users.split(b"\r\n")[0] == b"user_id,email,firstName,lastName,phone,score,country"
    assert users == python_files(parquet, scores, None, 50.0, seed=seed)[0]


def test_a_large_segment_is_written_in_chunks_as_a_whole(engine: QueryRunner, tmp_path: Path) -> None:
    # Given 5,000 customers with many tied scores, inserted 700 at a time and written 999 lines at a time
    rng = random.Random(5)
    rows = [
        (
            f"c{i:05d}",
            f"c{i}@example.com",
            "N",
            "M",
            None,
            "GB",
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
        )
        for i in range(5_000)
    ]
    parquet = write_customers(tmp_path / "customers.parquet", rows)
    scores = {
        row[0]: rng.choice([0.1, 0.2, 0.3]) + rng.random() / 1e3 * (i % 2) for i, row in enumerate(rows)
    }

    # When the engine writes the files
    users, groups, snapshot, segment = engine_files(
        engine, parquet, scores, None, 10.0, seed=77, per_insert=700
    )

    # Then they are the Python writers', and a tenth of the segment is held out
    assert (users, groups, snapshot) == python_files(parquet, scores, None, 10.0, seed=77)
    assert (segment.users, segment.held) == (5_000, 500)
    # and ids given as bytes (as the serving shards keep them) write the same files
    in_bytes = engine_files(engine, parquet, scores, None, 10.0, seed=77, per_insert=700, as_bytes=True)
    assert in_bytes[:3] == (users, groups, snapshot)


@pytest.mark.parametrize(
    ("n", "percent"), [(1, 10.0), (7, 10.0), (1003, 10.0), (999, 33.0), (640, 0.4), (51, 50.0)]
)
def test_the_held_ranks_are_the_users_split_holdout_keeps_out(n: int, percent: float) -> None:
    # Given users with tied and distinct scores
    rng = random.Random(n)
    ids = [f"u{rng.randrange(10**6):06d}-{i}" for i in range(n)]
    scores = [rng.choice([0.5, rng.random()]) for _ in range(n)]

    # When the holdout is drawn by ranks and by split_holdout with one seed
    split = split_holdout(ids, scores, percent, seed=2**62 + 1)
    order = sorted(range(n), key=lambda i: (-scores[i], ids[i]))

    # Then the same users are held out
    held = {ids[order[rank]] for rank in held_ranks(n, percent, seed=2**62 + 1)}
    assert held == {user for user, out in zip(ids, split.held_out, strict=True) if out}
