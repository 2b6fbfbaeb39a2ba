"""A segment's customers come out of customers.parquet through the engine: only the chosen users that
have a row, by user_id, with None for a value not given."""

from __future__ import annotations

from pathlib import Path

import duckdb
import numpy as np

from shared.dataplane.customers import COLUMNS, segment_customers


def customers_parquet(path: Path) -> bytes:
    connection = duckdb.connect()
    connection.sql(
        """SELECT * FROM (VALUES
                ('u1', 'a@example.com', 'Ann', 'Lee', NULL, 'US', NULL, 'CA'),
                ('u2', NULL, NULL, NULL, '+1 202 555 0100', 'GB', true, NULL),
                ('u3', 'c@example.com', 'Cy', 'Ng', NULL, NULL, false, NULL)
            ) AS t(user_id, email, first_name, last_name, phone, country, limited_data_use, state)"""
    ).write_parquet(str(path))
    return path.read_bytes()


def test_only_the_chosen_users_with_a_row_come_out_by_user_id(tmp_path: Path) -> None:
    # Given a customers.parquet of three customers / When a segment chose u3, u1 and a user without a row
    found = segment_customers(customers_parquet(tmp_path / "c.parquet"), np.array(["u3", "u9", "u1"]))

    # Then u1 and u3 come out, by user_id, each column as the file has it
    assert list(found) == list(COLUMNS)
    assert found["user_id"] == ["u1", "u3"]
    assert found["email"] == ["a@example.com", "c@example.com"]
    assert found["phone"] == [None, None]
    assert found["limited_data_use"] == [None, False]
    assert found["state"] == ["CA", None]


def test_a_segment_of_no_users_finds_no_customer(tmp_path: Path) -> None:
    found = segment_customers(customers_parquet(tmp_path / "c.parquet"), np.array([], dtype=np.str_))
    assert found["user_id"] == []


def test_the_other_match_keys_come_out_and_a_version_without_them_reads_none(tmp_path: Path) -> None:
    # Given a version stored with the other match keys (the date of birth a DATE), and one before them
    path = tmp_path / "keys.parquet"
    duckdb.connect().sql(
        """SELECT 'u1' AS user_id, 'a@example.com' AS email, 'US' AS country, 'Boston' AS city,
                  '02110' AS postcode, DATE '1985-03-07' AS date_of_birth, 'F' AS gender,
                  'shop-1' AS external_id, '6d92078a-8246-4ba4-ae5b-76104861e7dc' AS madid,
                  NULL::VARCHAR AS first_name, NULL::VARCHAR AS last_name, NULL::VARCHAR AS phone,
                  NULL::BOOLEAN AS limited_data_use, NULL::VARCHAR AS state"""
    ).write_parquet(str(path))

    # When a segment's customers are read from each
    found = segment_customers(path.read_bytes(), np.array(["u1"]))
    before = segment_customers(customers_parquet(tmp_path / "c.parquet"), np.array(["u1"]))

    # Then the keys come out as stored, the date of birth as YYYY-MM-DD; the older version has none
    assert (found["city"], found["postcode"], found["date_of_birth"]) == (
        ["Boston"],
        ["02110"],
        ["1985-03-07"],
    )
    assert (found["gender"], found["external_id"]) == (["F"], ["shop-1"])
    assert before["city"] == before["date_of_birth"] == before["madid"] == [None]
