"""The sync's columnar validation gives every row the verdict its record model gives it: the same rows
accepted, the same rows rejected with the same column and reason, at the same line, however the file
is written (quoted or not, CRLF, blank lines, a last line without a line break, any chunk size)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from shared.errors import ValidationFailed
from shared.ml import validation
from shared.ml.datasets import CustomerRecord, OrderRecord, ProductRecord, _parse_rows, kind_it_looks_like
from shared.ml.validation import good_rows, validate_shop_files

NOW = datetime(2030, 1, 1, tzinfo=UTC)
NAMES = {"customers": "customers.csv", "products": "products.csv", "orders": "orders.csv"}

QUANTITIES = ["1", "0", "007", " 5", "5 ", "1.0", "100001", "100000", "+3", "\u0661", "", "abc", "2"]
AMOUNTS = ["19.5", "1e3", "inf", "nan", "-1", " 2", "1_000", "1.", ".5", "9" * 400, "0", "3.25"]
TIMES = [
    "2026-10-01T10:00:00",
    "2026-10-01 10:00:00",
    "2026-10-01T10:00:00Z",
    "2026-10-01T10:00:00+02:00",
    "2026-02-29T10:00:00",
    "2024-02-29T10:00:00",
    "2026-10-01",
    "2026-10-01T24:00:00",
    "2026-10-01T10:00:00.5",
    "now",
    "1700000000",
    "0999-01-01T00:00:00",
    "2026-04-31T00:00:00",
    "",
]
ORDER_IDS = ["o1", " o2", "o3 ", "", "  ", "a" * 257, "a b", "o\u00e9"]
COUNTRIES = ["GB", "gb", " us", "GBR", "", "U1", "\u00c9S"]
TEXTS = ["ann@example.com", " ann@example.com", "  ", "x" * 257, "Ann Lee", ""]


def order_lines() -> list[list[str]]:
    """One order row per tricky cell, the other cells valid."""
    rows = []
    base = {"order_id": "o", "user_id": "u1", "product_id": "p1", "quantity": "1", "amount": "2.5"}
    base["timestamp"] = "2026-10-01T10:00:00"
    for column, values in (
        ("quantity", QUANTITIES),
        ("amount", AMOUNTS),
        ("timestamp", TIMES),
        ("order_id", ORDER_IDS),
    ):
        rows.extend([*{**base, column: value}.values()] for value in values)
    return rows


def customer_lines() -> list[list[str]]:
    rows = [["u1", "a@example.com", "Ann", "Lee", "+44 7700 900123", "GB"]]
    rows += [[f"c{i}", "", "", "", "", country] for i, country in enumerate(COUNTRIES)]
    rows += [[f"t{i}", text, text, text, text, ""] for i, text in enumerate(TEXTS)]
    rows += [["u1", "dup@example.com", "", "", "", ""], [" u9", "", "", "", "", ""], ["", "", "", "", "", ""]]
    return rows


def csv_text(header: list[str], rows: list[list[str]], *, quoted: bool = False, newline: str = "\n") -> bytes:
    def cell(value: str) -> str:
        return '"' + value.replace('"', '""') + '"' if quoted else value

    lines = [",".join(header)] + [",".join(cell(value) for value in row) for row in rows]
    return (newline.join(lines) + newline).encode()


ORDER_HEADER = ["order_id", "user_id", "product_id", "quantity", "amount", "timestamp"]
CUSTOMER_HEADER = ["user_id", "email", "first_name", "last_name", "phone", "country"]
PRODUCTS = b"product_id,name,category,price\np1,Mug,Kitchen,9.5\np2,Tea,, 4\np3,Pot,,-1\np1,Again,,\n"


def model_verdict(data: bytes, name: str, model: type[Any]) -> tuple[int, list[dict[str, Any]]]:
    """The record model's verdict, row by row (the loader training uses)."""
    records, errors = _parse_rows(data, name, model, None, strict=True)
    return len(records), errors


def shop(orders: bytes, customers: bytes) -> validation.ShopValidation:
    return validate_shop_files(customers=customers, products=PRODUCTS, orders=orders, names=NAMES, now=NOW)


@pytest.mark.parametrize("chunk_rows", [100_000, 4])
@pytest.mark.parametrize(
    ("quoted", "newline"), [(False, "\n"), (True, "\n"), (False, "\r\n")], ids=["plain", "quoted", "crlf"]
)
def test_every_row_gets_its_record_models_verdict(
    monkeypatch: pytest.MonkeyPatch, chunk_rows: int, quoted: bool, newline: str
) -> None:
    # Given files with a row for each tricky cell, written plainly, quoted or with CRLF line breaks
    monkeypatch.setattr(validation, "CHUNK_ROWS", chunk_rows)
    orders = csv_text(ORDER_HEADER, order_lines(), quoted=quoted, newline=newline)
    customers = csv_text(CUSTOMER_HEADER, customer_lines(), quoted=quoted, newline=newline)

    # When the sync validates them
    result = shop(orders, customers)

    # Then each file's good rows and rejected rows are those of the record model, row by row
    for kind, data, model in (
        ("orders", orders, OrderRecord),
        ("customers", customers, CustomerRecord),
        ("products", PRODUCTS, ProductRecord),
    ):
        good, errors = model_verdict(data, NAMES[kind], model)
        rejected = [e for e in result.rejected if e["file"] == NAMES[kind]]
        assert rejected == sorted(errors, key=lambda e: (e["file"], e["row"], e["field"])), kind
        assert result.row_counts[kind] == good, kind
        assert result.rows_read[kind] == good + len({e["row"] for e in errors}), kind


def test_the_good_customers_come_out_as_the_model_reads_them() -> None:
    # Given customers with padded and lower-case values
    customers = csv_text(CUSTOMER_HEADER, customer_lines())
    records, _ = _parse_rows(customers, "customers.csv", CustomerRecord, None, strict=True)

    # When validated
    columns = shop(csv_text(ORDER_HEADER, order_lines()[:1]), customers).customers

    # Then the identifier columns hold the model's values ("" for a value not given)
    assert columns.user_ids == [r.user_id for _, r in records]
    assert columns.emails == [r.email or "" for _, r in records]
    assert columns.countries == [r.country or "" for _, r in records]
    assert columns.first_names == [r.first_name or "" for _, r in records]


def test_lines_are_counted_across_blank_lines_and_a_last_line_without_a_break() -> None:
    # Given orders with blank lines and a last line with no line break, one bad row on line 5
    orders = (
        b"order_id,user_id,product_id,quantity,amount,timestamp\n"
        b"o1,u1,p1,1,2,2026-10-01T10:00:00\n\n\n"
        b"o2,u1,p1,0,2,2026-10-01T10:00:00\n"
        b"o3,u1,p1,1,2,2026-10-02T10:00:00"
    )

    # When validated
    result = shop(orders, csv_text(CUSTOMER_HEADER, customer_lines()[:1]))

    # Then the bad row is named by its line, and both good rows are kept
    assert [(e["row"], e["field"]) for e in result.rejected if e["file"] == "orders.csv"] == [(5, "quantity")]
    assert result.row_counts["orders"] == 2
    assert result.orders_end == datetime(2026, 10, 2, 10, tzinfo=UTC)


def test_orders_are_checked_against_the_good_customers_and_products_and_the_clock() -> None:
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

    # When validated
    result = shop(orders, csv_text(CUSTOMER_HEADER, customer_lines()))

    # Then each is named by line, column and reason; the order with an offset is kept, in UTC
    assert [(e["row"], e["field"], e["reason"]) for e in result.rejected if e["file"] == "orders.csv"] == [
        (2, "user_id", "user is not in the customers file (or its row was rejected)"),
        (3, "product_id", "product is not in the products file (or its row was rejected)"),
        (4, "timestamp", "is in the future"),
    ]
    assert result.row_counts["orders"] == 1
    assert result.orders_end == datetime(2026, 10, 1, 8, tzinfo=UTC)


def test_the_stored_good_rows_leave_out_exactly_the_rejected_lines() -> None:
    # Given a quoted orders file with a rejected row
    orders = csv_text(ORDER_HEADER, order_lines()[:3], quoted=True)
    result = shop(orders, csv_text(CUSTOMER_HEADER, customer_lines()[:1]))
    assert result.rejected_lines["orders"] == {3}

    # When its good rows are stored, then they read back as the good rows alone
    stored = good_rows(orders, "orders.csv", result.rejected_lines["orders"])
    good, errors = model_verdict(stored, "orders.csv", OrderRecord)
    assert (good, errors) == (2, [])


FLAGS = ["true", "True", "TRUE", "1", "yes", "no", "0", "false", "maybe", "2", "", "  ", "on", "t", " true"]


def test_the_limited_data_use_columns_get_the_record_models_verdict() -> None:
    # Given customers with a Limited Data Use flag and a state, some written oddly
    header = [*CUSTOMER_HEADER, "limited_data_use", "state"]
    rows = [[f"f{i}", "", "", "", "", "US", flag, "CA"] for i, flag in enumerate(FLAGS)]
    rows += [["s1", "", "", "", "", "US", "true", " ca "], ["s2", "", "", "", "", "US", "true", "x" * 257]]
    customers = csv_text(header, rows)

    # When validated, then the rows accepted and rejected are the model's
    result = shop(csv_text(ORDER_HEADER, order_lines()[:1]), customers)
    good, errors = model_verdict(customers, "customers.csv", CustomerRecord)
    assert [e for e in result.rejected if e["file"] == "customers.csv"] == errors
    assert result.row_counts["customers"] == good
    assert {e["field"] for e in errors} == {"limited_data_use", "state"}


def test_a_header_missing_several_columns_names_them_all_as_columns() -> None:
    # Given an orders file that has only two of its columns
    orders = b"order_id,user_id\no1,u1\n"
    customers = b"user_id,email\nu1,a@example.com\n"

    # When the shop is validated
    with pytest.raises(ValidationFailed) as raised:
        shop(orders=orders, customers=customers)

    # Then every missing column is named, in the plural, with what to do
    assert raised.value.message == (
        "orders.csv has no product_id, quantity, amount, timestamp columns in its header row."
    )
    assert raised.value.remedy is not None
    assert raised.value.remedy.startswith("Add the product_id, quantity, amount, timestamp columns ")


def test_a_file_in_the_wrong_slot_is_named_for_what_it_looks_like() -> None:
    # Given the customers file sent as the orders file (a mistake made walking the wizard)
    customers = b"user_id,email\nu1,a@example.com\n"

    # When the shop is validated
    with pytest.raises(ValidationFailed) as raised:
        shop(orders=customers, customers=customers)

    # Then the file is named for what it looks like, with the fix
    assert raised.value.message == (
        "orders.csv looks like a customers file, not an orders file: its first row has email, user_id."
    )
    assert raised.value.remedy == "Choose this file as the customers file, and your orders file here."


@pytest.mark.parametrize(
    ("header", "kind"),
    [
        ({"order_id", "user_id", "product_id", "quantity", "amount", "timestamp"}, "orders"),
        ({"user_id", "email", "phone"}, "customers"),
        ({"product_id", "name", "price"}, "products"),
        ({"order_id", "user_id"}, None),
        ({"sku", "title"}, None),
    ],
)
def test_a_header_is_recognised_by_the_columns_of_its_kind(header: set[str], kind: str | None) -> None:
    assert kind_it_looks_like(header) == kind
