"""The sync's engine gives every row the verdict its record model gives it: the same rows accepted, the
same rows rejected with the same column and reason, at the same line, however the file is written
(quoted or not, CRLF, blank lines, a quoted line break, a last line without a line break, JSON Lines),
and the same cross-file checks (duplicates, references, the clock)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from shared.dataplane import queries
from shared.dataplane.engine import Workspace, session
from shared.dataplane.reader import FileOptions
from shared.datasources.sync import KINDS, ShopCheck, SyncFile, check_shop
from shared.errors import ValidationFailed
from shared.ml.datasets import CustomerRecord, OrderRecord, ProductRecord, _parse_rows
from tests.unit.ml.test_columnar_validation import (
    CUSTOMER_HEADER,
    FLAGS,
    ORDER_HEADER,
    PRODUCTS,
    csv_text,
    customer_lines,
    order_lines,
)

NOW = datetime(2030, 1, 1, tzinfo=UTC)
NAMES = {"customers": "customers.csv", "products": "products.csv", "orders": "orders.csv"}
MODELS = {"customers": CustomerRecord, "products": ProductRecord, "orders": OrderRecord}


@pytest.fixture
def workspace() -> Iterator[Workspace]:
    with session(function_mb=512, threads=2) as opened:
        yield opened


def engine_check(
    workspace: Workspace,
    files: dict[str, bytes],
    names: dict[str, str] = NAMES,
    columns: dict[str, dict[str, str]] | None = None,
) -> tuple[ShopCheck, list[dict[str, Any]]]:
    """Run the sync's check on the files (read with the merchant's matching of their ``columns``,
    where given); its verdict and every problem it found."""
    synced = {}
    for kind in KINDS:
        path = workspace.path(names[kind])
        path.write_bytes(files[kind])
        options = FileOptions(columns=(columns or {}).get(kind, {}))
        synced[kind] = SyncFile(path=path, name=names[kind], options=options)
    check = check_shop(workspace, synced, NOW, shown=10_000)
    rows = queries.run(workspace.connection, "rejected_rows", names).fetchall()
    return check, [{"file": f, "row": r, "field": c, "reason": why} for f, r, c, why in rows]


def model_verdict(data: bytes, name: str, model: type[Any]) -> tuple[int, list[dict[str, Any]]]:
    """The record model's verdict, row by row (the loader training uses)."""
    records, errors = _parse_rows(data, name, model, None, strict=True)
    return len(records), errors


def _sorted(errors: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(errors, key=lambda e: (e["file"], e["row"], e["field"], e["reason"]))


@pytest.mark.parametrize(
    ("quoted", "newline"), [(False, "\n"), (True, "\n"), (False, "\r\n")], ids=["plain", "quoted", "crlf"]
)
def test_every_row_gets_its_record_models_verdict(workspace: Workspace, quoted: bool, newline: str) -> None:
    # Given files with a row for each tricky cell, written plainly, quoted or with CRLF line breaks
    orders = csv_text(ORDER_HEADER, order_lines(), quoted=quoted, newline=newline)
    customers = csv_text(CUSTOMER_HEADER, customer_lines(), quoted=quoted, newline=newline)

    # When the engine checks them (with every customer and product known to the orders)
    check, problems = engine_check(
        workspace, {"customers": customers, "products": PRODUCTS, "orders": orders}
    )

    # Then each file's good rows and rejected rows are those of the record model, row by row
    for kind, data in (("orders", orders), ("customers", customers), ("products", PRODUCTS)):
        good, errors = model_verdict(data, NAMES[kind], MODELS[kind])
        assert [e for e in problems if e["file"] == NAMES[kind]] == _sorted(errors), kind
        assert check.row_counts[kind] == good, kind


def test_limited_data_use_and_state_get_the_record_models_verdict(workspace: Workspace) -> None:
    # Given customers with a Limited Data Use flag and a state, some written oddly
    header = [*CUSTOMER_HEADER, "limited_data_use", "state"]
    rows = [[f"f{i}", "", "", "", "", "US", flag, "CA"] for i, flag in enumerate(FLAGS)]
    rows += [["s1", "", "", "", "", "US", "true", " ca "], ["s2", "", "", "", "", "US", "true", "x" * 257]]
    customers = csv_text(header, rows)

    # When checked
    check, problems = engine_check(
        workspace,
        {"customers": customers, "products": PRODUCTS, "orders": csv_text(ORDER_HEADER, order_lines()[:1])},
    )

    # Then the rows accepted and rejected are the model's
    good, errors = model_verdict(customers, "customers.csv", CustomerRecord)
    assert [e for e in problems if e["file"] == "customers.csv"] == _sorted(errors)
    assert check.row_counts["customers"] == good


def test_marketing_consent_gets_the_record_models_verdict_and_reaches_the_version(
    workspace: Workspace,
) -> None:
    # Given customers with a marketing consent flag, some written oddly
    header = [*CUSTOMER_HEADER, "marketing_consent"]
    rows = [[f"f{i}", "", "", "", "", "US", flag] for i, flag in enumerate(FLAGS)]
    customers = csv_text(header, rows)

    # When checked
    check, problems = engine_check(
        workspace,
        {"customers": customers, "products": PRODUCTS, "orders": csv_text(ORDER_HEADER, order_lines()[:1])},
    )

    # Then the rows accepted and rejected are the model's, and the accepted flags are booleans
    good, errors = model_verdict(customers, "customers.csv", CustomerRecord)
    assert [e for e in problems if e["file"] == "customers.csv"] == _sorted(errors)
    assert check.row_counts["customers"] == good
    kept = dict(workspace.connection.sql("SELECT user_id, marketing_consent FROM customers").fetchall())
    assert kept[f"f{FLAGS.index('no')}"] is False
    assert kept[f"f{FLAGS.index('TRUE')}"] is True
    assert kept[f"f{FLAGS.index('')}"] is None


def test_the_other_match_keys_get_the_record_models_verdict_and_reach_the_version(
    workspace: Workspace,
) -> None:
    # Given customers with a city, postcode, date of birth, gender, external id and advertising id,
    # some dates of birth that are no dates of birth (malformed, impossible, before 1900, after the sync)
    header = [*CUSTOMER_HEADER, "city", "postcode", "date_of_birth", "gender", "external_id", "madid"]
    births = ["1985-03-07", "", "07/03/1985", "1985-02-30", "1899-12-31", "2031-01-01", " 1990-12-31 "]
    rows = [
        [
            f"b{i}",
            "",
            "",
            "",
            "",
            "US",
            "San Francisco",
            "94105",
            born,
            "F",
            f"shop-{i}",
            "6d92078a-8246-4ba4-ae5b-76104861e7dc",
        ]
        for i, born in enumerate(births)
    ]
    customers = csv_text(header, rows)

    # When checked
    check, problems = engine_check(
        workspace,
        {"customers": customers, "products": PRODUCTS, "orders": csv_text(ORDER_HEADER, order_lines()[:1])},
    )

    # Then the rows accepted and rejected are the model's, and the accepted keys are kept as given
    good, errors = model_verdict(customers, "customers.csv", CustomerRecord)
    assert [e for e in problems if e["file"] == "customers.csv"] == _sorted(errors)
    assert check.row_counts["customers"] == good
    assert {e["row"] for e in problems if e["field"] == "date_of_birth"} == {4, 5, 6, 7}
    kept = {
        row[0]: row[1:]
        for row in workspace.connection.sql(
            "SELECT user_id, city, postcode, date_of_birth, gender, external_id FROM customers"
        ).fetchall()
    }
    assert kept["b0"] == ("San Francisco", "94105", "1985-03-07", "F", "shop-0")
    assert kept["b1"][2] is None


def test_lines_are_counted_across_blank_lines_quoted_breaks_and_a_last_line_without_a_break(
    workspace: Workspace,
) -> None:
    # Given orders with blank lines, a quoted line break, and a last line with no line break
    orders = (
        b"order_id,user_id,product_id,quantity,amount,timestamp\n"
        b'"o\n1",u1,p1,1,2,2026-10-01T10:00:00\n\n\n'
        b"o2,u1,p1,0,2,2026-10-01T10:00:00\n"
        b"o3,u1,p1,1,2,2026-10-02T10:00:00"
    )

    # When checked
    check, problems = engine_check(
        workspace,
        {
            "customers": csv_text(CUSTOMER_HEADER, customer_lines()[:1]),
            "products": PRODUCTS,
            "orders": orders,
        },
    )

    # Then the bad row is named by its line, as an editor numbers it, and both good rows are kept
    assert [(e["row"], e["field"]) for e in problems if e["file"] == "orders.csv"] == [(6, "quantity")]
    assert check.row_counts["orders"] == 2
    assert check.orders_end == datetime(2026, 10, 2, 10, tzinfo=UTC)


def test_orders_are_checked_against_the_good_customers_and_products_and_the_clock(
    workspace: Workspace,
) -> None:
    # Given an order for an unknown customer, one for a rejected product (" u9" is customer u9), one in
    # the future, and one with an offset
    orders = csv_text(
        ORDER_HEADER,
        [
            ["o1", "nobody", "p1", "1", "2", "2026-10-01T10:00:00"],
            ["o2", "u9", "p3", "1", "2", "2026-10-01T10:00:00"],
            ["o3", "u1", "p2", "1", "2", "2031-01-01T00:00:00"],
            ["o4", "u1", "p1", "1", "2", "2026-10-01T10:00:00+02:00"],
        ],
    )

    # When checked
    check, problems = engine_check(
        workspace,
        {"customers": csv_text(CUSTOMER_HEADER, customer_lines()), "products": PRODUCTS, "orders": orders},
    )

    # Then each is named by line, column and reason; the order with an offset is kept, in UTC
    assert [(e["row"], e["field"], e["reason"]) for e in problems if e["file"] == "orders.csv"] == [
        (2, "user_id", "user is not in the customers file (or its row was rejected)"),
        (3, "product_id", "product is not in the products file (or its row was rejected)"),
        (4, "timestamp", "is in the future"),
    ]
    assert check.row_counts["orders"] == 1
    assert check.orders_end == datetime(2026, 10, 1, 8, tzinfo=UTC)


def test_duplicates_are_rejected_after_the_first_good_row(workspace: Workspace) -> None:
    # Given customers naming u1 three times, the first of them invalid
    customers = b"user_id,country\nu1,Narnia\nu1,GB\nu1,US\nu2,GB\n"
    orders = csv_text(ORDER_HEADER, [["o1", "u1", "p1", "1", "2", "2026-10-01T10:00:00"]])

    # When checked
    check, problems = engine_check(
        workspace, {"customers": customers, "products": PRODUCTS, "orders": orders}
    )

    # Then the invalid row is rejected for its country, the first good u1 kept, the later one a duplicate
    customer_problems = [
        (e["row"], e["field"], e["reason"]) for e in problems if e["file"] == "customers.csv"
    ]
    assert customer_problems == [
        (2, "country", "String should match pattern '^[A-Za-z]{2}$'"),
        (4, "user_id", "duplicate user_id; each must appear once"),
    ]
    assert check.row_counts["customers"] == 2


def test_countries_written_as_names_are_stored_as_their_iso_codes(workspace: Workspace) -> None:
    # Given customers whose countries are written as shops' customers type them, and one that names
    # no country
    customers = (
        b"user_id,country\nu1,United States\nu2,USA\nu3,U.K.\nu4,gbr\nu5,United Kingdom\n"
        b"u6,the Netherlands\nu7,de\nu8,Narnia\n"
    )
    orders = csv_text(ORDER_HEADER, [["o1", "u1", "p1", "1", "2", "2026-10-01T10:00:00"]])

    # When the sync's engine checks them
    check, problems = engine_check(
        workspace, {"customers": customers, "products": PRODUCTS, "orders": orders}
    )

    # Then each country is stored as its upper-case alpha-2 code; the one naming none is rejected
    stored = workspace.connection.execute(
        "SELECT user_id, country FROM customers ORDER BY user_id"
    ).fetchall()
    assert stored == [
        ("u1", "US"),
        ("u2", "US"),
        ("u3", "GB"),
        ("u4", "GB"),
        ("u5", "GB"),
        ("u6", "NL"),
        ("u7", "DE"),
    ]
    assert [(e["row"], e["field"]) for e in problems if e["file"] == "customers.csv"] == [(9, "country")]
    # And the record model (JSON Lines, training's loader) gives the same verdict
    assert model_verdict(customers, "customers.csv", CustomerRecord) == (7, [problems[0]])
    assert check.row_counts["customers"] == 7


def test_json_lines_get_the_record_models_verdict(workspace: Workspace) -> None:
    # Given JSON Lines files with a blank line, a broken line, an unknown key and a bad quantity
    customers = b'{"user_id": "u1"}\n\n{"user_id": "u2", "loyalty": "gold"}\nnot json\n'
    orders = (
        b'{"order_id": "o1", "user_id": "u1", "product_id": "p1", "quantity": 1, "amount": 2.5, '
        b'"timestamp": "2026-10-01T10:00:00"}\n'
        b'{"order_id": "o2", "user_id": "u1", "product_id": "p1", "quantity": 0, "amount": 2.5, '
        b'"timestamp": "2026-10-01T10:00:00"}\n'
    )
    names = {"customers": "customers.jsonl", "products": "products.csv", "orders": "orders.jsonl"}

    # When checked
    check, problems = engine_check(
        workspace, {"customers": customers, "products": PRODUCTS, "orders": orders}, names
    )

    # Then the problems are the JSON reader's and the model's, by line
    expected = []
    for kind, data in (("customers", customers), ("orders", orders)):
        expected += model_verdict(data, names[kind], MODELS[kind])[1]
    assert [e for e in problems if e["file"].endswith(".jsonl")] == _sorted(expected)
    assert check.row_counts["orders"] == 1
    assert check.row_counts["customers"] == 1


@pytest.mark.parametrize(
    ("customers", "field", "words"),
    [
        (b"email,country\nann@example.com,GB\n", "user_id", "has no user_id column in its header row"),
        (
            b"user_id,email,loyalty_tier\nu1,a@example.com,gold\n",
            "loyalty_tier",
            "unknown column(s) loyalty_tier",
        ),
        (b"user_id,email\n", "file", "has no records"),
        (b"", "file", "is empty (no header row)"),
        ("user_id,first_name\nu1,Zoë\n".encode("latin-1"), "file", "is not UTF-8 text"),
        (
            b"user_id,firstName,email,first_name\nu1,Ann,a@example.com,Anne\n",
            "first_name",
            "names the first_name column more than once",
        ),
    ],
    ids=["missing column", "unknown column", "no records", "empty", "wrong encoding", "column twice"],
)
def test_a_file_level_problem_names_the_file(
    workspace: Workspace, customers: bytes, field: str, words: str
) -> None:
    orders = csv_text(ORDER_HEADER, order_lines()[:1])
    with pytest.raises(ValidationFailed) as raised:
        engine_check(workspace, {"customers": customers, "products": PRODUCTS, "orders": orders})
    assert raised.value.field == field
    assert words in raised.value.message
    assert "customers.csv" in raised.value.message


def test_a_semicolon_file_is_read_by_its_detected_delimiter(workspace: Workspace) -> None:
    # Given a customers file saved by a spreadsheet program with semicolons (and a byte order mark)
    customers = "\ufeffuser_id;email;country\nu1;ann@example.com;gb\nu2;;US\n".encode()
    orders = csv_text(ORDER_HEADER, [["o1", "u1", "p1", "1", "2", "2026-10-01T10:00:00"]])

    # When checked
    check, problems = engine_check(
        workspace, {"customers": customers, "products": PRODUCTS, "orders": orders}
    )

    # Then both customers are read, and only the products file's own bad rows are reported
    assert check.row_counts["customers"] == 2
    assert {e["file"] for e in problems} == {"products.csv"}


def test_the_rejected_rows_report_holds_no_value(workspace: Workspace, tmp_path: Path) -> None:
    customers = csv_text(CUSTOMER_HEADER, [["u1", "zed@example.com", "", "", "", "Narnia"]])
    orders = csv_text(ORDER_HEADER, [["o1", "u1", "p1", "1", "2", "2026-10-01T10:00:00"]])
    _, problems = engine_check(workspace, {"customers": customers, "products": PRODUCTS, "orders": orders})
    assert "Narnia" not in json.dumps(problems)
    assert "zed@" not in json.dumps(problems)
