"""The files shop systems export, recognised by their header and read as the service's columns.

A merchant uploads what their shop system gives them, not a file laid out for this service. Each
layout here names the header cells that identify an export (its ``signature``), the service column
each of its columns is read as (every other column is ignored), and, where renaming is not enough,
the named query that reshapes the loaded rows (``shared/dataplane/queries/shape_*.sql``). A layout is
therefore only a ``FileOptions.columns`` for the reader and a query after it
(docs/data-plane.md, "Reading a file, and how a mapping plugs in"); docs/shop-exports.md documents
each layout with its public source.

Every layout is keyed by e-mail: Shopify's orders export names the customer by ``Email`` only,
Magento's customers export has no customer id, and WooCommerce's and BigCommerce's orders give a guest
customer id 0, so the customers are keyed by their lower-cased e-mail (``shape_email_keyed_customers``)
and the orders' e-mail is read the same way. Orders come one row per line item (Shopify, WooCommerce)
or one row per order with its items packed in one cell (BigCommerce, ``shape_bigcommerce_orders``).

A layout may read a column the service does not have under a name starting with ``_`` (Magento's
``store_view_code``, BigCommerce's ``Item Type``): only its shape query sees it. A layout whose export
cannot be read as order lines (Magento's orders grid lists no products) says why (``unreadable``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class ExportLayout:
    system: str
    kind: str  # customers, products or orders
    title: str  # how the page names it: "a Shopify customers export"
    signature: frozenset[str]  # header cells that are all present in the export
    columns: Mapping[str, str]  # file header -> service column (the first listed of a column wins)
    shape: str | None  # the named query that reshapes the loaded rows, if renaming is not enough
    source: str  # where the layout is documented
    # Why the export cannot be read (None: it can), and what to do instead.
    unreadable: tuple[str, str] | None = None
    # The shape makes several order lines of one record (``_source_record`` says whose): its lines are
    # renumbered and each problem is named by its record's line.
    splits_records: bool = False
    # Service columns the shape makes from other cells (not in the header under any name).
    derived: frozenset[str] = frozenset()

    def columns_for(self, header: Sequence[str]) -> dict[str, str]:
        """``FileOptions.columns`` for this header: each cell read as its service column, every other
        one ignored (mapped to ""); of two cells naming one service column, the one listed first in
        ``columns`` is read (a customer's own phone before their address's)."""
        cells = [cell.strip() for cell in header]
        chosen: dict[str, str] = {}  # service column -> the cell read as it
        for cell, column in self.columns.items():
            if cell in cells and column not in chosen:
                chosen[column] = cell
        read = {cell: column for column, cell in chosen.items()}
        return {cell: read.get(cell, "") for cell in cells}


SHOPIFY_HELP = "https://help.shopify.com/en/manual"
WOOCOMMERCE_EXPORT = "https://woocommerce.com/document/ordercustomer-csv-exporter/"
ADOBE_DATA_TRANSFER = "https://experienceleague.adobe.com/en/docs/commerce-admin/systems/data-transfer"
BIGCOMMERCE_HELP = "https://support.bigcommerce.com/s/article"
LAYOUTS: tuple[ExportLayout, ...] = (
    ExportLayout(
        system="Shopify",
        kind="customers",
        title="a Shopify customers export",
        signature=frozenset({"First Name", "Last Name", "Email", "Accepts Email Marketing"}),
        columns={
            "Email": "user_id",  # and the e-mail: shape_email_keyed_customers
            "First Name": "first_name",
            "Last Name": "last_name",
            "Phone": "phone",
            "Default Address Phone": "phone",
            "Default Address Country Code": "country",
            "Country Code": "country",
            "Default Address Province Code": "state",
            "Province Code": "state",
            "Default Address City": "city",
            "City": "city",
            "Default Address Zip": "postcode",
            "Zip": "postcode",
            "Customer ID": "external_id",  # the id Shopify's pixel and server events carry
        },
        shape="shape_email_keyed_customers",
        source=f"{SHOPIFY_HELP}/customers/import-export-customers",
    ),
    ExportLayout(
        system="Shopify",
        kind="orders",
        title="a Shopify orders export",
        signature=frozenset({"Name", "Email", "Financial Status", "Lineitem quantity", "Lineitem price"}),
        columns={
            "Name": "order_id",
            "Email": "user_id",
            "Lineitem sku": "product_id",
            "Lineitem quantity": "quantity",
            "Lineitem price": "amount",
            "Created at": "timestamp",
        },
        shape="shape_shopify_orders",
        source=f"{SHOPIFY_HELP}/fulfillment/managing-orders/exporting-orders",
    ),
    ExportLayout(
        system="Shopify",
        kind="products",
        title="a Shopify products export",
        signature=frozenset({"Handle", "Title", "Variant SKU", "Variant Price"}),
        columns={"Variant SKU": "product_id", "Title": "name", "Type": "category", "Variant Price": "price"},
        shape="shape_shopify_products",
        source=f"{SHOPIFY_HELP}/products/import-export/using-csv",
    ),
    # WooCommerce: orders and customers as the Customer/Order/Coupon Export extension's default CSV
    # formats write them ("Default - One Row per Item" for orders), products as WooCommerce's own
    # product exporter does.
    ExportLayout(
        system="WooCommerce",
        kind="customers",
        title="a WooCommerce customers export",
        signature=frozenset({"customer_id", "email", "billing_email", "billing_country", "billing_postcode"}),
        columns={
            "email": "user_id",  # and the e-mail: shape_email_keyed_customers
            "first_name": "first_name",
            "last_name": "last_name",
            "billing_phone": "phone",
            "billing_country": "country",
            "billing_state": "state",
            "billing_city": "city",
            "billing_postcode": "postcode",
        },
        shape="shape_email_keyed_customers",
        source=WOOCOMMERCE_EXPORT,
    ),
    ExportLayout(
        system="WooCommerce",
        kind="orders",
        title="a WooCommerce orders export",
        signature=frozenset(
            {"order_id", "order_date", "billing_email", "item_sku", "item_quantity", "item_total"}
        ),
        columns={
            "order_id": "order_id",
            "billing_email": "user_id",
            "item_sku": "product_id",
            "item_quantity": "quantity",
            "item_total": "amount",
            "order_date": "timestamp",
        },
        shape="shape_email_keyed_orders",
        source=WOOCOMMERCE_EXPORT,
    ),
    ExportLayout(
        system="WooCommerce",
        kind="products",
        title="a WooCommerce products export",
        signature=frozenset({"ID", "Type", "SKU", "Name", "Regular price", "Categories"}),
        columns={
            "SKU": "product_id",
            "Name": "name",
            "Categories": "category",
            "Regular price": "price",
            "Type": "_type",
        },
        shape="shape_woocommerce_products",
        source="https://github.com/woocommerce/woocommerce/wiki/Product-CSV-Import-Schema",
    ),
    # Magento Open Source / Adobe Commerce: System > Data Transfer > Export (Customers Main File,
    # Products), and the Sales > Orders grid's Export.
    ExportLayout(
        system="Magento",
        kind="customers",
        title="a Magento customers export",
        signature=frozenset({"email", "_website", "firstname", "lastname", "group_id"}),
        columns={
            "email": "user_id",  # and the e-mail: shape_email_keyed_customers
            "firstname": "first_name",
            "lastname": "last_name",
            "dob": "date_of_birth",
            "gender": "gender",
        },
        shape="shape_email_keyed_customers",
        source=f"{ADOBE_DATA_TRANSFER}/data-attributes-customer",
    ),
    ExportLayout(
        system="Magento",
        kind="products",
        title="a Magento products export",
        signature=frozenset({"sku", "store_view_code", "attribute_set_code", "product_type", "price"}),
        columns={
            "sku": "product_id",
            "name": "name",
            "categories": "category",
            "price": "price",
            "store_view_code": "_store_view",
        },
        shape="shape_magento_products",
        source=f"{ADOBE_DATA_TRANSFER}/data-attributes-product",
    ),
    ExportLayout(
        system="Magento",
        kind="orders",
        title="a Magento orders grid export",
        signature=frozenset(
            {"ID", "Purchase Point", "Purchase Date", "Bill-to Name", "Grand Total (Purchased)"}
        ),
        columns={},
        shape=None,
        source="https://experienceleague.adobe.com/en/docs/commerce-admin/stores-sales/order-management/orders/orders",
        unreadable=(
            "lists each order's total but not the products in it",
            "Export the order items instead (one row per item with the order, the customer's e-mail, the "
            "SKU, quantity, price and date: a Magento report or export extension gives them), and "
            "choose that file as the orders file.",
        ),
    ),
    # BigCommerce: Customers, Orders and Products > Export with the default templates.
    ExportLayout(
        system="BigCommerce",
        kind="customers",
        title="a BigCommerce customers export",
        signature=frozenset(
            {"Customer ID", "First Name", "Last Name", "Email", "Customer Group", "Date Joined"}
        ),
        columns={
            "Email": "user_id",  # and the e-mail: shape_email_keyed_customers
            "First Name": "first_name",
            "Last Name": "last_name",
            "Phone": "phone",
        },
        shape="shape_email_keyed_customers",
        source=f"{BIGCOMMERCE_HELP}/Importing-Exporting-Customers",
    ),
    ExportLayout(
        system="BigCommerce",
        kind="orders",
        title="a BigCommerce orders export",
        signature=frozenset({"Order ID", "Customer Email", "Order Date", "Order Status", "Product Details"}),
        columns={
            "Order ID": "order_id",
            "Customer Email": "user_id",
            "Order Date": "timestamp",
            "Product Details": "_items",
        },
        shape="shape_bigcommerce_orders",
        source=f"{BIGCOMMERCE_HELP}/Exporting-Orders",
        splits_records=True,
        derived=frozenset({"product_id", "quantity", "amount"}),
    ),
    ExportLayout(
        system="BigCommerce",
        kind="products",
        title="a BigCommerce products export",
        signature=frozenset({"Item Type", "Product Name", "Product Code/SKU", "Price", "Category"}),
        columns={
            "Product Code/SKU": "product_id",
            "Product Name": "name",
            "Category": "category",
            "Price": "price",
            "Item Type": "_item_type",
        },
        shape="shape_bigcommerce_products",
        source=f"{BIGCOMMERCE_HELP}/Importing-Exporting-Products",
    ),
)


def recognise(header: Sequence[str]) -> ExportLayout | None:
    """The shop export whose signature the header has, or None."""
    cells = {cell.strip() for cell in header}
    return next((layout for layout in LAYOUTS if layout.signature <= cells), None)


def one_file(kind: str) -> str:
    """ "a customers file", "an orders file"."""
    return f"{'an' if kind[0] in 'aeiou' else 'a'} {kind} file"
