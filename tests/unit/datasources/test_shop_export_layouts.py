"""WooCommerce, Magento and BigCommerce exports read as they are (issue 23, item 1): each system's
customers, products and orders exports are recognised by their header (docs/shop-exports.md) and read
through the sync's engine keyed by e-mail; orders one row per line item (WooCommerce) or one row per
order with its items packed in one cell (BigCommerce); Magento's orders grid, which lists no product,
is named for what it is with what to do instead."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from shared.dataplane.engine import Workspace, session
from shared.datasources.shop_exports import LAYOUTS, recognise
from shared.errors import ValidationFailed
from tests.shop_exports import (
    BIGCOMMERCE_CUSTOMERS,
    BIGCOMMERCE_ORDERS,
    BIGCOMMERCE_PRODUCTS,
    MAGENTO_CUSTOMERS,
    MAGENTO_ORDERS_GRID,
    MAGENTO_PRODUCTS,
    SHOPIFY_CUSTOMERS,
    SHOPIFY_ORDERS,
    SHOPIFY_PRODUCTS,
    WOOCOMMERCE_CUSTOMERS,
    WOOCOMMERCE_ORDERS,
    WOOCOMMERCE_PRODUCTS,
    write_csv,
)
from tests.unit.datasources.test_engine_verdicts import engine_check

HEADERS = {
    ("Shopify", "customers"): SHOPIFY_CUSTOMERS,
    ("Shopify", "orders"): SHOPIFY_ORDERS,
    ("Shopify", "products"): SHOPIFY_PRODUCTS,
    ("WooCommerce", "customers"): WOOCOMMERCE_CUSTOMERS,
    ("WooCommerce", "orders"): WOOCOMMERCE_ORDERS,
    ("WooCommerce", "products"): WOOCOMMERCE_PRODUCTS,
    ("Magento", "customers"): MAGENTO_CUSTOMERS,
    ("Magento", "orders"): MAGENTO_ORDERS_GRID,
    ("Magento", "products"): MAGENTO_PRODUCTS,
    ("BigCommerce", "customers"): BIGCOMMERCE_CUSTOMERS,
    ("BigCommerce", "orders"): BIGCOMMERCE_ORDERS,
    ("BigCommerce", "products"): BIGCOMMERCE_PRODUCTS,
}


def csv(header: list[str], *rows: dict[str, str]) -> bytes:
    return write_csv(header, list(rows))


@pytest.fixture
def workspace() -> Iterator[Workspace]:
    with session(function_mb=512, threads=2) as opened:
        yield opened


@pytest.mark.parametrize(("system", "kind"), list(HEADERS), ids=[f"{s}-{k}" for s, k in HEADERS])
def test_each_export_is_recognised_by_its_header_and_by_no_other_layout(system: str, kind: str) -> None:
    header = HEADERS[(system, kind)]
    matching = [layout for layout in LAYOUTS if layout.signature <= set(header)]
    assert [(layout.system, layout.kind) for layout in matching] == [(system, kind)]
    assert recognise(header) is matching[0]
    assert matching[0].source.startswith("https://")


def test_every_new_layout_reads_only_cells_its_export_has() -> None:
    # (Shopify's also names the cells of its older customers export.)
    for (system, kind), header in HEADERS.items():
        if system == "Shopify":
            continue
        layout = recognise(header)
        assert layout is not None
        assert set(layout.columns) <= set(header), (system, kind)


WOO_CUSTOMERS = csv(
    WOOCOMMERCE_CUSTOMERS,
    {
        "customer_id": "12",
        "first_name": "Ann",
        "email": "Ann@Example.com",
        "billing_country": "GB",
        "billing_postcode": "SW1A 1AA",
        "billing_phone": "+44 7700 900123",
    },
    {
        "customer_id": "0",
        "first_name": "Bo",
        "email": "bo@example.com",
        "billing_country": "US",
        "billing_state": "CA",
        "billing_city": "San Jose",
    },
)
WOO_PRODUCTS = csv(
    WOOCOMMERCE_PRODUCTS,
    {"ID": "9", "Type": "variable", "Name": "Mug"},  # its variations are the products
    {
        "ID": "10",
        "Type": "variation",
        "SKU": "MUG-1",
        "Name": "Mug - Blue",
        "Regular price": "8.50",
        "Categories": "Home > Kitchen, Sale",
        "Parent": "id:9",
    },
    {
        "ID": "11",
        "Type": "simple",
        "SKU": "TEA-1",
        "Name": "Tea",
        "Regular price": "4.25",
        "Categories": "Food",
    },
)
WOO_ORDERS = csv(
    WOOCOMMERCE_ORDERS,
    {
        "order_id": "501",
        "order_date": "2026-05-01 10:00:00",
        "customer_id": "12",
        "billing_email": "ann@example.com",
        "item_sku": "MUG-1",
        "item_quantity": "2",
        "item_total": "17.00",
    },
    {
        "order_id": "501",
        "order_date": "2026-05-01 10:00:00",
        "customer_id": "12",
        "billing_email": "ann@example.com",
        "item_sku": "TEA-1",
        "item_quantity": "3",
        "item_total": "12.75",
    },
    {
        "order_id": "502",
        "order_date": "2026-05-02 23:30:00",
        "customer_id": "0",
        "billing_email": " BO@example.com",
        "item_sku": "TEA-1",
        "item_quantity": "1",
        "item_total": "4.25",
    },
)


def test_woocommerce_exports_sync_keyed_by_email_with_a_row_per_line_item(workspace: Workspace) -> None:
    # Given: WooCommerce's three exports, a guest's order (customer id 0), a variable product above its
    # variation, e-mails in different cases
    files = {"customers": WOO_CUSTOMERS, "products": WOO_PRODUCTS, "orders": WOO_ORDERS}

    # When: the sync's engine checks them
    check, problems = engine_check(workspace, files)

    # Then: every row is good, keyed by the lower-cased e-mail, the variable product not read
    assert problems == []
    assert check.row_counts == {"customers": 2, "products": 2, "orders": 3}
    assert set(check.recognised.values()) == {
        "a WooCommerce customers export",
        "a WooCommerce products export",
        "a WooCommerce orders export",
    }
    customers = workspace.connection.execute(
        "SELECT user_id, email, phone, country, state, city, postcode FROM customers ORDER BY user_id"
    ).fetchall()
    assert customers == [
        ("ann@example.com", "Ann@Example.com", "+44 7700 900123", "GB", None, None, "SW1A 1AA"),
        ("bo@example.com", "bo@example.com", None, "US", "CA", "San Jose", None),
    ]
    products = workspace.connection.execute(
        "SELECT product_id, name, category, price FROM products ORDER BY product_id"
    ).fetchall()
    assert products == [("MUG-1", "Mug - Blue", "Kitchen", 8.5), ("TEA-1", "Tea", "Food", 4.25)]
    orders = workspace.connection.execute(
        "SELECT order_id, user_id, product_id, quantity, amount,"
        " strftime(\"timestamp\", '%Y-%m-%dT%H:%M:%S') "
        "FROM orders ORDER BY order_id, product_id"
    ).fetchall()
    assert orders == [
        ("501", "ann@example.com", "MUG-1", 2, 17.0, "2026-05-01T10:00:00"),
        ("501", "ann@example.com", "TEA-1", 3, 12.75, "2026-05-01T10:00:00"),
        ("502", "bo@example.com", "TEA-1", 1, 4.25, "2026-05-02T23:30:00"),
    ]


MAGENTO_CUSTOMER_ROWS = csv(
    MAGENTO_CUSTOMERS,
    {
        "email": "Ann@Example.com",
        "_website": "base",
        "firstname": "Ann",
        "lastname": "Lee",
        "gender": "Female",
        "dob": "1980-02-29",
        "group_id": "1",
    },
    {"email": "bo@example.com", "_website": "base", "firstname": "Bo", "lastname": "Ng", "group_id": "1"},
)
MAGENTO_PRODUCT_ROWS = csv(
    MAGENTO_PRODUCTS,
    {
        "sku": "MUG-1",
        "attribute_set_code": "Default",
        "product_type": "simple",
        "name": "Mug",
        "categories": "Default Category/Home/Kitchen,Default Category/Sale",
        "price": "8.50",
    },
    {"sku": "MUG-1", "store_view_code": "fr", "name": "Tasse"},  # a store view's name: the same product
    {
        "sku": "TEA-1",
        "attribute_set_code": "Default",
        "product_type": "simple",
        "name": "Tea",
        "price": "4.25",
    },
)


def test_magento_customers_and_products_sync_keyed_by_email(workspace: Workspace) -> None:
    # Given: Magento's customers export (no customer id) and products export (a store view's row), and
    # an orders file in the service's own columns, keyed by the e-mails
    orders = (
        b"order_id,user_id,product_id,quantity,amount,timestamp\n"
        b"1,ann@example.com,MUG-1,1,8.5,2026-05-01T10:00:00Z\n"
    )
    files = {"customers": MAGENTO_CUSTOMER_ROWS, "products": MAGENTO_PRODUCT_ROWS, "orders": orders}

    # When: the sync's engine checks them
    check, problems = engine_check(workspace, files)

    # Then: the customers are keyed by e-mail with their date of birth and gender, one product per SKU
    assert problems == []
    assert check.row_counts == {"customers": 2, "products": 2, "orders": 1}
    customers = workspace.connection.execute(
        "SELECT user_id, email, first_name, date_of_birth, gender FROM customers ORDER BY user_id"
    ).fetchall()
    assert customers == [
        ("ann@example.com", "Ann@Example.com", "Ann", "1980-02-29", "Female"),
        ("bo@example.com", "bo@example.com", "Bo", None, None),
    ]
    products = workspace.connection.execute(
        "SELECT product_id, name, category, price FROM products ORDER BY product_id"
    ).fetchall()
    assert products == [("MUG-1", "Mug", "Kitchen", 8.5), ("TEA-1", "Tea", None, 4.25)]


def test_magentos_orders_grid_export_is_named_with_what_to_export_instead(workspace: Workspace) -> None:
    # Given: the orders grid's export (each order's total, no product) as the orders file
    grid = csv(
        MAGENTO_ORDERS_GRID,
        {
            "ID": "000000001",
            "Purchase Point": "Main Website",
            "Purchase Date": "May 1, 2026 10:00:00 AM",
            "Grand Total (Purchased)": "$8.50",
            "Customer Email": "ann@example.com",
        },
    )
    files = {"customers": MAGENTO_CUSTOMER_ROWS, "products": MAGENTO_PRODUCT_ROWS, "orders": grid}

    # When / Then: the sync refuses it, saying what it is, what it lacks and what to do
    with pytest.raises(ValidationFailed) as raised:
        engine_check(workspace, files)
    assert raised.value.message == (
        "orders.csv looks like a Magento orders grid export, which lists each order's total but not the "
        "products in it."
    )
    assert raised.value.remedy is not None
    assert "one row per item" in raised.value.remedy


BIG_CUSTOMERS = csv(
    BIGCOMMERCE_CUSTOMERS,
    {
        "Customer ID": "1",
        "First Name": "Ann",
        "Email": "Ann@Example.com",
        "Phone": "+44 7700 900123",
        "Customer Group": "Retail",
    },
    {"Customer ID": "2", "First Name": "Bo", "Email": "bo@example.com"},
)
BIG_PRODUCTS = csv(
    BIGCOMMERCE_PRODUCTS,
    {
        "Item Type": "Product",
        "Product ID": "77",
        "Product Name": "Mug",
        "Price": "8.50",
        "Category": "Shop All/Kitchen;Sale",
    },  # no SKU of its own: its variants have them
    {"Item Type": "SKU", "Product Name": "[S]Colour=Blue", "Product Code/SKU": "MUG-1"},
    {
        "Item Type": "Product",
        "Product ID": "78",
        "Product Name": "Tea",
        "Product Code/SKU": "TEA-1",
        "Price": "4.25",
        "Category": "Food",
    },
    {"Item Type": "Rule", "Product Name": "Bulk discount"},
)


def _items(*items: tuple[str, int, str]) -> str:
    return "|".join(
        f"Product ID: 77, Product Qty: {quantity}, Product SKU: {sku}, Product Name: A, thing, "
        f"Product Weight: 1.0000, Product Variation Details: , Product Unit Price: 1.0000, "
        f"Product Total Price: {total}"
        for sku, quantity, total in items
    )


def big_orders(*rows: dict[str, str]) -> bytes:
    out = [",".join(BIGCOMMERCE_ORDERS)]
    for row in rows:
        out.append(",".join(f'"{row.get(column, "")}"' for column in BIGCOMMERCE_ORDERS))
    return ("\n".join(out) + "\n").encode()


def test_bigcommerce_exports_sync_with_each_packed_item_an_order_line(workspace: Workspace) -> None:
    # Given: BigCommerce's exports: an order of two items packed in Product Details, a guest's order
    # (customer id 0), a product whose variant carries the SKU, a pricing rule row
    orders = big_orders(
        {
            "Order ID": "100",
            "Customer ID": "1",
            "Customer Email": "ann@example.com",
            "Order Date": "01/05/2026",
            "Order Status": "Completed",
            "Product Details": _items(("MUG-1", 2, "17.0000"), ("TEA-1", 3, "12.7500")),
        },
        {
            "Order ID": "101",
            "Customer ID": "0",
            "Customer Email": "BO@example.com",
            "Order Date": "2026-05-02",
            "Order Status": "Shipped",
            "Product Details": _items(("TEA-1", 1, "4.2500")),
        },
    )
    files = {"customers": BIG_CUSTOMERS, "products": BIG_PRODUCTS, "orders": orders}

    # When: the sync's engine checks them
    check, problems = engine_check(workspace, files)

    # Then: each item is an order line keyed by the lower-cased e-mail, on its order's day (UTC)
    assert problems == []
    assert check.row_counts == {"customers": 2, "products": 2, "orders": 3}
    orders_read = workspace.connection.execute(
        "SELECT order_id, user_id, product_id, quantity, amount, strftime(\"timestamp\", '%Y-%m-%d %H:%M') "
        "FROM orders ORDER BY order_id, product_id"
    ).fetchall()
    assert orders_read == [
        ("100", "ann@example.com", "MUG-1", 2, 17.0, "2026-05-01 00:00"),
        ("100", "ann@example.com", "TEA-1", 3, 12.75, "2026-05-01 00:00"),
        ("101", "bo@example.com", "TEA-1", 1, 4.25, "2026-05-02 00:00"),
    ]
    # And the variant is a product with its product's name, category and price; the rule is none
    products = workspace.connection.execute(
        "SELECT product_id, name, category, price FROM products ORDER BY product_id"
    ).fetchall()
    assert products == [("MUG-1", "Mug", "Kitchen", 8.5), ("TEA-1", "Tea", "Food", 4.25)]


def test_a_bigcommerce_item_without_a_sku_is_named_by_its_orders_line(workspace: Workspace) -> None:
    # Given: the second order's (line 3's) second item has no SKU
    orders = big_orders(
        {
            "Order ID": "100",
            "Customer Email": "ann@example.com",
            "Order Date": "01/05/2026",
            "Order Status": "Completed",
            "Product Details": _items(("MUG-1", 1, "8.5000")),
        },
        {
            "Order ID": "101",
            "Customer Email": "bo@example.com",
            "Order Date": "02/05/2026",
            "Order Status": "Completed",
            "Product Details": _items(("TEA-1", 1, "4.2500"), ("", 1, "1.0000")),
        },
    )
    files = {"customers": BIG_CUSTOMERS, "products": BIG_PRODUCTS, "orders": orders}

    # When: the sync's engine checks them
    check, problems = engine_check(workspace, files)

    # Then: the two good lines are kept; the third is rejected, named by the order's line in the file
    assert check.row_counts["orders"] == 2
    assert problems == [{"file": "orders.csv", "row": 3, "field": "product_id", "reason": "is required"}]


def test_magento_orders_as_an_order_items_file_matched_by_email_join_its_customers(
    workspace: Workspace,
) -> None:
    # Given: Magento's customers export (keyed by e-mail) and an order items file whose columns the
    # merchant matched, its e-mails written in another case
    items = (
        b"Order #,Customer Email,SKU,Qty Ordered,Row Total,Purchase Date\n"
        b"000000101, ANN@example.com,MUG-1,2,17.00,2026-05-01 10:00:00\n"
        b"000000102,bo@example.com,TEA-1,1,4.25,2026-05-02 11:00:00\n"
    )
    matched = {
        "Order #": "order_id",
        "Customer Email": "user_id",
        "SKU": "product_id",
        "Qty Ordered": "quantity",
        "Row Total": "amount",
        "Purchase Date": "timestamp",
    }
    files = {"customers": MAGENTO_CUSTOMER_ROWS, "products": MAGENTO_PRODUCT_ROWS, "orders": items}

    # When: the sync's engine checks them, the orders with the matching
    check, problems = engine_check(workspace, files, columns={"orders": matched})

    # Then: each order line names its customer by the lower-cased e-mail, as the customers are keyed
    assert problems == []
    assert check.recognised["orders"] == "you matched its columns"
    orders = workspace.connection.execute("SELECT order_id, user_id FROM orders ORDER BY order_id").fetchall()
    assert orders == [("000000101", "ann@example.com"), ("000000102", "bo@example.com")]


def test_a_matched_customers_file_keyed_by_email_keeps_the_email_and_other_keys_as_written(
    workspace: Workspace,
) -> None:
    # Given: a customers file keyed by e-mail and one keyed by an id with capitals, both matched
    customers = b"Mail,Vorname\nAnn@Example.com,Ann\nB-7,Bo\n"
    orders = (
        b"order_id,user_id,product_id,quantity,amount,timestamp\n"
        b"1,ann@example.com,MUG-1,1,8.5,2026-05-01T10:00:00Z\n"
        b"2,B-7,TEA-1,1,4.25,2026-05-01T10:00:00Z\n"
    )
    files = {"customers": customers, "products": MAGENTO_PRODUCT_ROWS, "orders": orders}

    # When: the sync's engine checks them with the matching
    check, problems = engine_check(
        workspace, files, columns={"customers": {"Mail": "user_id", "Vorname": "first_name"}}
    )

    # Then: the e-mail key is lower-cased and kept as the e-mail; the id is kept as written
    assert problems == []
    customers_read = workspace.connection.execute(
        "SELECT user_id, email, first_name FROM customers ORDER BY user_id"
    ).fetchall()
    assert customers_read == [("B-7", None, "Bo"), ("ann@example.com", "Ann@Example.com", "Ann")]
    assert check.row_counts["orders"] == 2
