"""The files shop systems export, recognised by their header and read as the service's columns.

A merchant uploads what their shop system gives them, not a file laid out for this service. Each
layout here names the header cells that identify an export (its ``signature``), the service column
each of its columns is read as (every other column is ignored), and, where renaming is not enough,
the named query that reshapes the loaded rows (``shared/dataplane/queries/shape_*.sql``). A layout is
therefore only a ``FileOptions.columns`` for the reader and a query after it
(docs/data-plane.md, "Reading a file, and how a mapping plugs in"); docs/shop-exports.md documents
each layout with its public source.

Shopify exports are keyed by e-mail: its orders export names the customer by ``Email`` only, so the
customers are keyed by their lower-cased e-mail too (``shape_email_keyed_customers``), and the orders'
``Email`` is read the same way (``shape_shopify_orders``). Its orders export has one row per line item,
the order's own fields (its time) on the first row only.
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
)


def recognise(header: Sequence[str]) -> ExportLayout | None:
    """The shop export whose signature the header has, or None."""
    cells = {cell.strip() for cell in header}
    return next((layout for layout in LAYOUTS if layout.signature <= cells), None)


def one_file(kind: str) -> str:
    """ "a customers file", "an orders file"."""
    return f"{'an' if kind[0] in 'aeiou' else 'a'} {kind} file"
