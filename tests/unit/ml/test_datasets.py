from __future__ import annotations

from datetime import UTC, datetime

import pytest

from shared.errors import ValidationFailed
from shared.ml.datasets import (
    CustomerRecord,
    OrderRecord,
    ProductRecord,
    dump_records,
    load_records,
    load_shop_data,
)

ORDERS_HEADER = b"order_id,user_id,product_id,quantity,amount,timestamp\n"


def test_csv_orders_load_with_utc_timestamps() -> None:
    # Given a CSV with one offset-less and one offset timestamp
    data = ORDERS_HEADER + b"o1,u1,p1,2,19.90,2024-03-01T10:00:00\no2,u1,p2,1,5,2024-03-01T12:00:00+02:00\n"

    # When it is loaded
    orders = load_records(data, OrderRecord, file_name="orders.csv")

    # Then both are in UTC
    assert [o.timestamp for o in orders] == [
        datetime(2024, 3, 1, 10, tzinfo=UTC),
        datetime(2024, 3, 1, 10, tzinfo=UTC),
    ]


def test_every_bad_record_is_reported_in_one_error() -> None:
    # Given a file with problems on two rows
    data = ORDERS_HEADER + b"o1,u1,p1,1,1.0,2024-01-01\no2,,p1,0,1.0,2024-01-01\no3,u2,p1,1,-3,yesterday\n"

    # When it is loaded
    with pytest.raises(ValidationFailed) as raised:
        load_records(data, OrderRecord, file_name="orders.csv")

    # Then one error names file, row and field of each problem
    problems = {(e["row"], e["field"]) for e in raised.value.details["errors"]}
    assert problems == {(3, "user_id"), (3, "quantity"), (4, "amount"), (4, "timestamp")}
    assert raised.value.details["file"] == "orders.csv"
    assert "row 3 user_id: is required" in raised.value.message


def test_error_reasons_never_echo_customer_values() -> None:
    # Given a customer row with an invalid country next to an e-mail
    data = b'{"user_id": "u1", "email": "jane@example.com", "country": "Narnia"}\n'

    # When it is loaded
    with pytest.raises(ValidationFailed) as raised:
        load_records(data, CustomerRecord, file_name="customers.jsonl")

    # Then the error points at the field without repeating the value
    assert raised.value.details["errors"][0]["field"] == "country"
    assert "Narnia" not in str(raised.value.details)
    assert "jane@" not in raised.value.message


def test_camel_case_customer_names_are_accepted() -> None:
    # Given JSON Lines using firstName / lastName
    data = b'{"user_id": "u1", "firstName": "Ann", "lastName": "Lee", "country": "gb"}\n'

    # When loaded
    [customer] = load_records(data, CustomerRecord)

    # Then the names and the upper-cased country are read
    assert (customer.first_name, customer.last_name, customer.country) == ("Ann", "Lee", "GB")


def test_missing_required_column_is_reported_on_the_header_row() -> None:
    # Given a products CSV without product_id
    data = b"name,price\nShoe,10\n"

    # When loaded
    with pytest.raises(ValidationFailed) as raised:
        load_records(data, ProductRecord, file_name="products.csv")

    # Then the header row is blamed
    assert raised.value.details["errors"] == [
        {
            "file": "products.csv",
            "row": 1,
            "field": "product_id",
            "reason": "required column is missing from the header",
        }
    ]


def test_duplicate_customer_ids_are_rejected() -> None:
    # Given the same user twice
    data = b"user_id,email\nu1,a@example.com\nu1,b@example.com\n"

    # When loaded
    with pytest.raises(ValidationFailed) as raised:
        load_records(data, CustomerRecord, file_name="customers.csv")

    # Then the second occurrence is reported
    assert raised.value.details["errors"][0]["row"] == 3


def test_orders_naming_unknown_products_are_rejected() -> None:
    # Given an order for a product missing from the products file
    orders = ORDERS_HEADER + b"o1,u1,p1,1,1.0,2024-01-01\no2,u1,p9,1,1.0,2024-01-02\n"
    products = b"product_id,category\np1,Shoes\n"

    # When the shop is loaded
    with pytest.raises(ValidationFailed) as raised:
        load_shop_data(orders=orders, products=products)

    # Then the offending order row and field are named
    assert raised.value.details["errors"] == [
        {"file": "orders", "row": 3, "field": "product_id", "reason": "product is not in the products file"}
    ]


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_dumped_records_load_back_unchanged(fmt: str) -> None:
    # Given customers with optional fields missing
    customers = [
        CustomerRecord(user_id="u1", email="a@example.com"),
        CustomerRecord(user_id="u2", country="US"),
    ]

    # When dumped and loaded again
    loaded = load_records(dump_records(customers, fmt), CustomerRecord, file_format=fmt)  # type: ignore[arg-type]

    # Then nothing changed
    assert loaded == customers
