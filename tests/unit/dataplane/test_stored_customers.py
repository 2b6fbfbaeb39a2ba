"""The readers of stored versions read a stored customers file through ``stored_customers(path)``
(read_stored_customers.sql), defined on a connection for the queries that call it, not on every one:
the columns added after the first versions (marketing_consent, the other match keys) are NULL in a
version stored before them, and read as text in one that has them."""

from __future__ import annotations

from pathlib import Path

from shared.dataplane import queries
from shared.dataplane.engine import Workspace, session

LATER = ("marketing_consent", "city", "postcode", "date_of_birth", "gender", "external_id", "madid")


def first_version(workspace: Workspace) -> Path:
    """A customers.parquet as the first versions stored it: none of the later columns."""
    path = workspace.path("first.parquet")
    workspace.connection.sql(
        """SELECT 'u1' AS user_id, 'a@example.com' AS email, 'Ann' AS first_name, 'Lee' AS last_name,
                  NULL::VARCHAR AS phone, 'GB' AS country, NULL::VARCHAR AS state, true AS limited_data_use"""
    ).write_parquet(str(path))
    return path


def current_version(workspace: Workspace) -> Path:
    path = workspace.path("current.parquet")
    workspace.connection.sql(
        """SELECT 'u1' AS user_id, 'a@example.com' AS email, 'GB' AS country, true AS limited_data_use,
                  false AS marketing_consent, 'Leeds' AS city, 'LS1 4AP' AS postcode,
                  DATE '1985-03-07' AS date_of_birth, 'f' AS gender, 'shop-1' AS external_id,
                  '6d92078a-8246-4ba4-ae5b-76104861e7dc' AS madid"""
    ).write_parquet(str(path))
    return path


def read(workspace: Workspace, path: Path) -> dict[str, object]:
    queries.define_macros(workspace.connection, "read_segment_customers")  # a reader of stored versions
    cursor = workspace.connection.execute("SELECT * FROM stored_customers($path)", {"path": str(path)})
    [row] = cursor.fetchall()
    return dict(zip((column[0] for column in cursor.description), row, strict=True))


def test_a_version_stored_before_the_later_columns_reads_them_as_null() -> None:
    with session(function_mb=512, threads=1) as workspace:
        found = read(workspace, first_version(workspace))
    assert {name: found[name] for name in LATER} == dict.fromkeys(LATER)
    assert (found["user_id"], found["email"], found["limited_data_use"]) == ("u1", "a@example.com", True)


def test_a_version_with_the_later_columns_reads_them_as_text() -> None:
    with session(function_mb=512, threads=1) as workspace:
        found = read(workspace, current_version(workspace))
    assert (found["marketing_consent"], found["date_of_birth"], found["madid"]) == (
        "false",
        "1985-03-07",
        "6d92078a-8246-4ba4-ae5b-76104861e7dc",
    )
    assert found["limited_data_use"] is True  # a column every version has keeps its type


def test_a_first_version_synced_again_loads_the_later_columns_as_not_given() -> None:
    with session(function_mb=512, threads=1) as workspace:
        queries.run(workspace.connection, "read_parquet_customers", {"path": str(first_version(workspace))})
        [row] = workspace.connection.execute(
            "SELECT record, user_id, limited_data_use, marketing_consent, date_of_birth, madid FROM raw"
        ).fetchall()
    assert row == (1, "u1", "true", None, None, None)


def _has_macro(workspace: Workspace) -> bool:
    found = workspace.connection.execute(
        "SELECT count(*) FROM duckdb_functions() WHERE function_name = 'stored_customers'"
    ).fetchone()
    return bool(found and found[0])


def test_the_macro_is_defined_for_the_readers_of_stored_versions_alone() -> None:
    # Given each named query, on a connection of its own
    defines = []
    for name in queries.names():
        with session(function_mb=512, threads=1) as workspace:
            # Then a connection starts without the macro
            assert not _has_macro(workspace)
            # When the macros the query needs are defined
            queries.define_macros(workspace.connection, name)
            if _has_macro(workspace):
                defines.append(name)

    # Then they are defined for the four readers of stored versions, and for no other query
    assert defines == [
        "activation_segment_users",
        "read_event_customers",
        "read_parquet_customers",
        "read_segment_customers",
    ]
