"""A synthetic shop's three files rewritten as shop systems export them, for the tests of
``shared.datasources.shop_exports`` (the layouts and their sources: docs/shop-exports.md)."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime, timedelta, timezone


def _header(text: str) -> list[str]:
    return text.split(",")


SHOPIFY_CUSTOMERS = _header(
    "Customer ID,First Name,Last Name,Email,Accepts Email Marketing,Default Address Company,"
    "Default Address Address1,Default Address Address2,Default Address City,Default Address Province Code,"
    "Default Address Country Code,Default Address Zip,Default Address Phone,Phone,Accepts SMS Marketing,"
    "Total Spent,Total Orders,Note,Tax Exempt,Tags"
)
SHOPIFY_ORDERS = _header(
    "Name,Email,Financial Status,Paid at,Fulfillment Status,Fulfilled at,Accepts Marketing,Currency,Subtotal,"
    "Shipping,Taxes,Total,Discount Code,Discount Amount,Shipping Method,Created at,Lineitem quantity,"
    "Lineitem name,Lineitem price,Lineitem compare at price,Lineitem sku,Lineitem requires shipping,"
    "Lineitem taxable,Lineitem fulfillment status,Billing Name,Billing Country,Shipping Country,Id,Tags"
)
SHOPIFY_PRODUCTS = _header(
    "Handle,Title,Body (HTML),Vendor,Product Category,Type,Tags,Published,Option1 Name,Option1 Value,"
    "Variant SKU,Variant Grams,Variant Inventory Qty,Variant Price,Variant Compare At Price,Image Src,Status"
)
# Shopify writes times in the shop's zone with its offset.
SHOP_ZONE = timezone(timedelta(hours=1))


def _rows(data: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(data.decode("utf-8-sig"))))


def _csv(header: list[str], rows: list[dict[str, str]]) -> bytes:
    out = io.StringIO()
    writer = csv.DictWriter(out, header, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue().encode()


def shopify_exports(files: dict[str, bytes]) -> dict[str, bytes]:
    """The service-format files as Shopify exports them: customers keyed by e-mail (a customer
    without one is not exported, nor are their orders), one orders row per line item with the
    order's fields on its first row only, one products row per variant plus an image-only row."""
    customers = [c for c in _rows(files["customers"]) if c["email"]]
    email_of = {c["user_id"]: c["email"] for c in customers}
    exported_customers = [
        {
            "Customer ID": f"'{7210448301000 + i}",  # as Shopify writes it, so a spreadsheet keeps it whole
            "First Name": c["first_name"],
            "Last Name": c["last_name"],
            "Email": c["email"].upper() if i % 5 == 0 else c["email"],  # case differs from the orders'
            "Accepts Email Marketing": "yes" if i % 2 else "no",
            "Default Address Country Code": c["country"],
            "Default Address Province Code": c["state"],
            "Phone": f"'{c['phone']}" if c["phone"] else "",
            "Total Orders": "1",
        }
        for i, c in enumerate(customers)
    ]
    products = _rows(files["products"])
    exported_products = [
        {
            "Handle": p["product_id"].lower(),
            "Title": p["name"],
            "Type": p["category"],
            "Variant SKU": p["product_id"],
            "Variant Price": p["price"],
            "Published": "true",
            "Status": "active",
        }
        for p in products
    ]
    exported_products.insert(
        1, {"Handle": products[0]["product_id"].lower(), "Image Src": "https://cdn.example/2.jpg"}
    )
    exported_orders: list[dict[str, str]] = []
    seen: set[str] = set()
    for line in _rows(files["orders"]):
        if line["user_id"] not in email_of:
            continue
        quantity = int(line["quantity"])
        first = line["order_id"] not in seen
        seen.add(line["order_id"])
        when = datetime.fromisoformat(line["timestamp"].replace("Z", "+00:00")).astimezone(UTC)
        exported_orders.append(
            {
                "Name": f"#{line['order_id']}",
                "Email": email_of[line["user_id"]],
                "Financial Status": "paid" if first else "",
                "Created at": when.astimezone(SHOP_ZONE).strftime("%Y-%m-%d %H:%M:%S %z") if first else "",
                "Lineitem quantity": str(quantity),
                "Lineitem name": line["product_id"],
                "Lineitem price": f"{float(line['amount']) / quantity:.2f}",
                "Lineitem sku": line["product_id"],
                "Currency": "GBP" if first else "",
            }
        )
    return {
        "customers": _csv(SHOPIFY_CUSTOMERS, exported_customers),
        "products": _csv(SHOPIFY_PRODUCTS, exported_products),
        "orders": _csv(SHOPIFY_ORDERS, exported_orders),
    }
