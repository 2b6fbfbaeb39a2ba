"""Shop exports read as they are (issue 23, item 1): Shopify's customers, products and orders exports
are recognised by their header and read through the sync's engine keyed by e-mail, one order line per
line item, times in UTC; an export in the wrong slot is named for what it is."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from shared.dataplane.engine import Workspace, session
from shared.datasources.shop_exports import recognise
from shared.errors import ValidationFailed
from tests.shop_exports import SHOPIFY_CUSTOMERS, SHOPIFY_ORDERS, SHOPIFY_PRODUCTS
from tests.unit.datasources.test_engine_verdicts import engine_check


@pytest.fixture
def workspace() -> Iterator[Workspace]:
    with session(function_mb=512, threads=2) as opened:
        yield opened


def csv(header: list[str], *rows: dict[str, str]) -> bytes:
    lines = [",".join(header)] + [",".join(row.get(column, "") for column in header) for row in rows]
    return ("\n".join(lines) + "\n").encode()


CUSTOMERS = csv(
    SHOPIFY_CUSTOMERS,
    {
        "Customer ID": "'7210448301122",
        "First Name": "Ann",
        "Last Name": "Lee",
        "Email": "Ann@Example.com",
        "Default Address Country Code": "GB",
        "Phone": "'+44 7700 900123",
    },
    {
        "Customer ID": "'7210448301123",
        "First Name": "Bo",
        "Last Name": "Ng",
        "Email": "bo@example.com",
        "Default Address Country Code": "US",
        "Default Address Province Code": "CA",
    },
)
PRODUCTS = csv(
    SHOPIFY_PRODUCTS,
    {"Handle": "mug", "Title": "Mug", "Type": "Kitchen", "Variant SKU": "MUG-1", "Variant Price": "8.50"},
    {"Handle": "mug", "Image Src": "https://cdn.example/mug-2.jpg"},  # another image: not a product
    {"Handle": "tea", "Title": "Tea", "Type": "Food", "Variant SKU": "TEA-1", "Variant Price": "4.25"},
)
ORDERS = csv(
    SHOPIFY_ORDERS,
    {
        "Name": "#1001",
        "Email": "ann@example.com",
        "Financial Status": "paid",
        "Created at": "2026-05-01 10:00:00 +0200",
        "Lineitem quantity": "2",
        "Lineitem price": "8.50",
        "Lineitem sku": "MUG-1",
        "Lineitem name": "Mug",
    },
    {
        "Name": "#1001",
        "Email": "ann@example.com",
        "Lineitem quantity": "3",
        "Lineitem price": "4.25",
        "Lineitem sku": "TEA-1",
        "Lineitem name": "Tea",
    },
    {
        "Name": "#1002",
        "Email": "BO@example.com",
        "Financial Status": "paid",
        "Created at": "2026-05-02 23:30:00 -0500",
        "Lineitem quantity": "1",
        "Lineitem price": "4.25",
        "Lineitem sku": "TEA-1",
        "Lineitem name": "Tea",
    },
)


@pytest.mark.parametrize(
    ("header", "kind"),
    [(SHOPIFY_CUSTOMERS, "customers"), (SHOPIFY_ORDERS, "orders"), (SHOPIFY_PRODUCTS, "products")],
)
def test_each_shopify_export_is_recognised_by_its_header(header: list[str], kind: str) -> None:
    layout = recognise(header)
    assert layout is not None
    assert (layout.system, layout.kind) == ("Shopify", kind)
    assert layout.source.startswith("https://help.shopify.com/")


def test_a_file_in_the_services_own_columns_is_no_export() -> None:
    assert recognise(["user_id", "email", "first_name"]) is None


def test_shopify_exports_sync_keyed_by_email_with_a_row_per_line_item(workspace: Workspace) -> None:
    # Given: Shopify's three exports, an order of two line items (its time on the first row only) and
    # e-mails written in different cases
    files = {"customers": CUSTOMERS, "products": PRODUCTS, "orders": ORDERS}

    # When: the sync's engine checks them
    check, problems = engine_check(workspace, files)

    # Then: every row is good (the image row is not a product), keyed by the lower-cased e-mail
    assert problems == []
    assert check.row_counts == {"customers": 2, "products": 2, "orders": 3}
    customers = workspace.connection.execute(
        "SELECT user_id, email, phone, country, state, external_id FROM customers ORDER BY user_id"
    ).fetchall()
    # (Shopify's Customer ID, written with an apostrophe so that a spreadsheet keeps its digits, is the
    # customer's external id, as Shopify's pixel and server events carry it)
    assert customers == [
        ("ann@example.com", "Ann@Example.com", "+44 7700 900123", "GB", None, "7210448301122"),
        ("bo@example.com", "bo@example.com", None, "US", "CA", "7210448301123"),
    ]
    # And each line item is an order line: its amount the price times the quantity, its time in UTC
    # (the second line's taken from its order's first row)
    orders = workspace.connection.execute(
        "SELECT order_id, user_id, product_id, quantity, amount, "
        "strftime(\"timestamp\", '%Y-%m-%dT%H:%M:%S') FROM orders ORDER BY order_id, product_id"
    ).fetchall()
    assert orders == [
        ("#1001", "ann@example.com", "MUG-1", 2, 17.0, "2026-05-01T08:00:00"),
        ("#1001", "ann@example.com", "TEA-1", 3, 12.75, "2026-05-01T08:00:00"),
        ("#1002", "bo@example.com", "TEA-1", 1, 4.25, "2026-05-03T04:30:00"),
    ]


def test_a_shopify_export_in_the_wrong_slot_is_named_for_what_it_is(workspace: Workspace) -> None:
    # Given: the orders export chosen as the customers file
    files = {"customers": ORDERS, "products": PRODUCTS, "orders": ORDERS}

    # When / Then: the sync refuses it, naming what it looks like and what to do
    with pytest.raises(ValidationFailed) as raised:
        engine_check(workspace, files)
    assert raised.value.message == "customers.csv looks like a Shopify orders export, not a customers file."
    assert raised.value.remedy == "Choose this file as the orders file, and your customers file here."
