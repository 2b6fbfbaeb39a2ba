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


def write_csv(header: list[str], rows: list[dict[str, str]]) -> bytes:
    """A CSV file as shop systems write one: a header, cells quoted where they must be."""
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
        "customers": write_csv(SHOPIFY_CUSTOMERS, exported_customers),
        "products": write_csv(SHOPIFY_PRODUCTS, exported_products),
        "orders": write_csv(SHOPIFY_ORDERS, exported_orders),
    }


# --- WooCommerce: the Customer/Order/Coupon Export extension's default CSV formats, and WooCommerce's own
# product exporter (docs/shop-exports.md) ---------------------------------------------------------------

WOOCOMMERCE_CUSTOMERS = _header(
    "customer_id,first_name,last_name,user_login,email,date_registered,billing_first_name,billing_last_name,"
    "billing_full_name,billing_company,billing_email,billing_phone,billing_address_1,billing_address_2,"
    "billing_postcode,billing_city,billing_state,billing_state_code,billing_country,shipping_first_name,"
    "shipping_last_name,shipping_full_name,shipping_company,shipping_address_1,shipping_address_2,"
    "shipping_postcode,shipping_city,shipping_state,"
    "shipping_state_code,shipping_country,total_spent,order_count"
)
WOOCOMMERCE_ORDERS = _header(
    "order_id,order_number,order_number_formatted,order_date,status,"
    "shipping_total,shipping_tax_total,fee_total,"
    "fee_tax_total,tax_total,cart_discount,order_discount,discount_total,order_total,refunded_total,"
    "order_currency,payment_method,shipping_method,customer_id,billing_first_name,billing_last_name,"
    "billing_full_name,billing_company,billing_email,billing_phone,billing_address_1,billing_address_2,"
    "billing_postcode,billing_city,billing_state,billing_state_code,billing_country,shipping_first_name,"
    "shipping_last_name,shipping_full_name,shipping_address_1,"
    "shipping_address_2,shipping_postcode,shipping_city,"
    "shipping_state,shipping_state_code,shipping_country,"
    "shipping_company,customer_note,item_id,item_product_id,"
    "item_name,item_sku,item_quantity,item_subtotal,"
    "item_subtotal_tax,item_total,item_total_tax,item_refunded,"
    "item_refunded_qty,item_meta,shipping_items,fee_items,tax_items,coupon_items,order_notes,"
    "download_permissions_granted"
)
WOOCOMMERCE_PRODUCTS = _header(
    "ID,Type,SKU,Name,Published,Is featured?,Visibility in catalog,Short description,Description,"
    "Date sale price starts,Date sale price ends,Tax status,Tax class,In stock?,Stock,Low stock amount,"
    "Backorders allowed?,Sold individually?,Weight (kg),Length (cm),Width (cm),Height (cm),"
    "Allow customer reviews?,Purchase note,Sale price,Regular price,Categories,Tags,Shipping class,Images,"
    "Download limit,Download expiry days,Parent,Grouped products,"
    "Upsells,Cross-sells,External URL,Button text,"
    "Position,Attribute 1 name,Attribute 1 value(s),Attribute 1 visible,Attribute 1 global"
)


def _service(files: dict[str, bytes]) -> tuple[list[dict[str, str]], dict[str, str], list[dict[str, str]]]:
    """The customers with an e-mail, their e-mails by user id, and the products."""
    customers = [c for c in _rows(files["customers"]) if c["email"]]
    return customers, {c["user_id"]: c["email"] for c in customers}, _rows(files["products"])


def woocommerce_exports(files: dict[str, bytes]) -> dict[str, bytes]:
    """The service-format files as WooCommerce exports them: customers keyed by e-mail (guests have
    customer id 0), one orders row per line item with the order's fields on every row, times in the
    shop's time without an offset, products with a variable product (no SKU, no price) above its
    variations, and categories as paths."""
    customers, email_of, products = _service(files)
    exported_customers = [
        {
            "customer_id": str(100 + i) if i % 4 else "0",
            "first_name": c["first_name"],
            "last_name": c["last_name"],
            "email": c["email"].upper() if i % 5 == 0 else c["email"],
            "billing_email": c["email"],
            "billing_phone": c["phone"],
            "billing_country": c["country"],
            "billing_state": c["state"],
            "billing_postcode": c["postcode"],
            "billing_city": c["city"],
            "order_count": "1",
        }
        for i, c in enumerate(customers)
    ]
    exported_products = [
        {
            "ID": str(10 + i),
            "Type": "simple" if i else "variation",
            "SKU": p["product_id"],
            "Name": p["name"],
            "Published": "1",
            "Regular price": p["price"],
            "Categories": f"Shop > {p['category']}, Sale",
            "Parent": "" if i else "id:9",
        }
        for i, p in enumerate(products)
    ]
    exported_products.insert(
        0, {"ID": "9", "Type": "variable", "Name": "A product with variations", "Published": "1"}
    )
    exported_orders = []
    for n, line in enumerate(_rows(files["orders"])):
        if line["user_id"] not in email_of:
            continue
        when = datetime.fromisoformat(line["timestamp"].replace("Z", "+00:00")).astimezone(UTC)
        exported_orders.append(
            {
                "order_id": line["order_id"],
                "order_number": str(1000 + n),
                "order_date": when.strftime("%Y-%m-%d %H:%M:%S"),
                "status": "completed",
                "customer_id": "0",
                "billing_email": email_of[line["user_id"]],
                "item_id": str(n),
                "item_name": line["product_id"],
                "item_sku": line["product_id"],
                "item_quantity": line["quantity"],
                "item_total": line["amount"],
            }
        )
    return {
        "customers": write_csv(WOOCOMMERCE_CUSTOMERS, exported_customers),
        "products": write_csv(WOOCOMMERCE_PRODUCTS, exported_products),
        "orders": write_csv(WOOCOMMERCE_ORDERS, exported_orders),
    }


# --- Magento: System > Data Transfer > Export (Customers Main File, Products) and the orders grid's
# Export ---------------------------------------------------------------------------------------------

MAGENTO_CUSTOMERS = _header(
    "email,_website,_store,confirmation,created_at,created_in,disable_auto_group_change,dob,firstname,gender,"
    "group_id,lastname,middlename,password_hash,prefix,rp_token,rp_token_created_at,store_id,suffix,taxvat,"
    "website_id,password"
)
MAGENTO_PRODUCTS = _header(
    "sku,store_view_code,attribute_set_code,product_type,categories,product_websites,name,description,"
    "short_description,weight,product_online,tax_class_name,visibility,price,special_price,"
    "special_price_from_date,special_price_to_date,url_key,meta_title,meta_keywords,meta_description,"
    "base_image,base_image_label,small_image,small_image_label,thumbnail_image,thumbnail_image_label,"
    "created_at,updated_at,new_from_date,new_to_date,display_product_options_in,map_price,msrp_price,"
    "map_enabled,gift_message_available,custom_design,"
    "custom_design_from,custom_design_to,custom_layout_update,"
    "page_layout,product_options_container,msrp_display_actual_price_type,country_of_manufacture,"
    "additional_attributes,qty,out_of_stock_qty,use_config_min_qty,is_qty_decimal,allow_backorders,"
    "use_config_backorders,min_cart_qty,use_config_min_sale_qty,max_cart_qty,use_config_max_sale_qty,"
    "is_in_stock,notify_on_stock_below,use_config_notify_stock_qty,manage_stock,use_config_manage_stock,"
    "use_config_qty_increments,qty_increments,"
    "use_config_enable_qty_inc,enable_qty_increments,is_decimal_divided,"
    "website_id,related_skus,related_position,crosssell_skus,crosssell_position,upsell_skus,upsell_position,"
    "additional_images,additional_image_labels,hide_from_product_page,custom_options,bundle_price_type,"
    "bundle_sku_type,bundle_price_view,bundle_weight_type,bundle_values,bundle_shipment_type,"
    "associated_skus,downloadable_links,downloadable_samples,configurable_variations,"
    "configurable_variation_labels"
)
MAGENTO_ORDERS_GRID = _header(
    "ID,Purchase Point,Purchase Date,Bill-to Name,Ship-to Name,Grand Total (Base),Grand Total (Purchased),"
    "Status,Billing Address,Shipping Address,Shipping Information,Customer Email,Customer Group,Subtotal,"
    "Shipping and Handling,Customer Name,Payment Method,Total Refunded"
)


def magento_exports(files: dict[str, bytes]) -> dict[str, bytes]:
    """The service-format customers and products as Magento exports them (customers keyed by e-mail,
    no id; a product's store-view row repeating it), and its orders grid export, which lists each
    order's total and customer but no product."""
    customers, email_of, products = _service(files)
    exported_customers = [
        {
            "email": c["email"],
            "_website": "base",
            "_store": "default",
            "created_in": "Default Store View",
            "firstname": c["first_name"],
            "lastname": c["last_name"],
            "gender": "Female" if i % 2 else "Male",
            "dob": "1980-02-29" if i % 3 == 0 else "",
            "group_id": "1",
            "store_id": "1",
            "website_id": "1",
        }
        for i, c in enumerate(customers)
    ]
    exported_products: list[dict[str, str]] = []
    for i, p in enumerate(products):
        exported_products.append(
            {
                "sku": p["product_id"],
                "attribute_set_code": "Default",
                "product_type": "simple",
                "categories": f"Default Category/Shop/{p['category']},Default Category/Sale",
                "product_websites": "base",
                "name": p["name"],
                "price": p["price"],
                "visibility": "Catalog, Search",
            }
        )
        if i == 0:  # a store view's own name for it
            exported_products.append(
                {"sku": p["product_id"], "store_view_code": "fr", "name": f"{p['name']} (fr)"}
            )
    orders: dict[str, dict[str, str]] = {}
    for line in _rows(files["orders"]):
        if line["user_id"] in email_of and line["order_id"] not in orders:
            orders[line["order_id"]] = {
                "ID": line["order_id"],
                "Purchase Point": "Main Website",
                "Purchase Date": line["timestamp"],
                "Grand Total (Purchased)": line["amount"],
                "Customer Email": email_of[line["user_id"]],
                "Status": "complete",
            }
    return {
        "customers": write_csv(MAGENTO_CUSTOMERS, exported_customers),
        "products": write_csv(MAGENTO_PRODUCTS, exported_products),
        "orders": write_csv(MAGENTO_ORDERS_GRID, list(orders.values())),
    }


# --- BigCommerce: Customers, Orders and Products > Export, default templates -----------------------------

BIGCOMMERCE_CUSTOMERS = _header(
    "Customer ID,First Name,Last Name,Company,Email,Phone,Notes,Store Credit,Customer Group,Date Joined"
)
BIGCOMMERCE_ORDERS = _header(
    "Order ID,Customer ID,Customer Name,Customer Email,Customer Phone,Order Date,Order Status,"
    "Subtotal (inc tax),Subtotal (ex tax),Tax Total,"
    "Shipping Cost (inc tax),Shipping Cost (ex tax),Ship Method,"
    "Handling Cost (inc tax),Handling Cost (ex tax),Store Credit Redeemed,Gift Certificate Amount Redeemed,"
    "Gift Certificate Code,Gift Certificate Expiration Date,Coupon Details,Order Total (inc tax),"
    "Order Total (ex tax),Payment Method,Total Quantity,Total Shipped,Date Shipped,Order Currency Code,"
    "Exchange Rate,Order Notes,Customer Message,Billing First Name,Billing Last Name,Billing Company,"
    "Billing Street 1,Billing Street 2,Billing Suburb,"
    "Billing State,Billing Zip,Billing Country,Billing Phone,"
    "Billing Email,Shipping First Name,Shipping Last Name,"
    "Shipping Company,Shipping Street 1,Shipping Street 2,"
    "Shipping Suburb,Shipping State,Shipping Zip,Shipping Country,"
    "Shipping Phone,Shipping Email,Product Details"
)
BIGCOMMERCE_PRODUCTS = _header(
    "Item Type,Product ID,Product Name,Product Type,"
    "Product Code/SKU,Bin Picking Number,Brand Name,Option Set,"
    "Option Set Align,Product Description,Price,Cost Price,Retail Price,Sale Price,Fixed Shipping Cost,"
    "Free Shipping,Product Warranty,Product Weight,Product Width,"
    "Product Height,Product Depth,Allow Purchases?,"
    "Product Visible?,Product Availability,Track Inventory,Current Stock Level,Low Stock Level,Category,"
    "Product Image ID - 1,Product Image File - 1,"
    "Product Image Description - 1,Product Image Is Thumbnail - 1,"
    "Product Image Sort - 1"
)


def _bigcommerce_item(product_id: str, sku: str, quantity: int, total: float) -> str:
    return (
        f"Product ID: {product_id}, Product Qty: {quantity}, Product SKU: {sku}, Product Name: {sku}, "
        f"Product Weight: 1.0000, Product Variation Details: , Product Unit Price: {total / quantity:.4f}, "
        f"Product Total Price: {total:.4f}"
    )


def bigcommerce_exports(files: dict[str, bytes]) -> dict[str, bytes]:
    """The service-format files as BigCommerce exports them: customers keyed by e-mail, one orders row
    per order with its items packed in Product Details ("|" between items) and the Order Date as
    dd/mm/yyyy, products as "Product" rows with one product's variants as "SKU" rows under it (the
    product itself without a SKU)."""
    customers, email_of, products = _service(files)
    exported_customers = [
        {
            "Customer ID": str(1 + i),
            "First Name": c["first_name"],
            "Last Name": c["last_name"],
            "Email": c["email"],
            "Phone": c["phone"],
            "Customer Group": "Retail",
            "Date Joined": "01/01/2024",
        }
        for i, c in enumerate(customers)
    ]
    exported_products: list[dict[str, str]] = []
    for i, p in enumerate(products):
        row = {
            "Item Type": "Product",
            "Product ID": str(100 + i),
            "Product Name": p["name"],
            "Product Type": "P",
            "Product Code/SKU": p["product_id"],
            "Price": p["price"],
            "Category": f"Shop All/{p['category']};Sale",
            "Product Visible?": "Y",
        }
        if i == 0:  # a product with variants: the variants carry the SKUs
            exported_products.append({**row, "Product Code/SKU": ""})
            exported_products.append(
                {"Item Type": "SKU", "Product Name": "[S]Size=Small", "Product Code/SKU": p["product_id"]}
            )
        else:
            exported_products.append(row)
    exported_products.append({"Item Type": "Rule", "Product Name": "Bulk discount"})
    orders: dict[str, dict[str, str]] = {}
    items: dict[str, list[str]] = {}
    for line in _rows(files["orders"]):
        if line["user_id"] not in email_of:
            continue
        when = datetime.fromisoformat(line["timestamp"].replace("Z", "+00:00")).astimezone(UTC)
        orders.setdefault(
            line["order_id"],
            {
                "Order ID": line["order_id"],
                "Customer ID": "0",
                "Customer Email": email_of[line["user_id"]],
                "Order Date": when.strftime("%d/%m/%Y"),
                "Order Status": "Completed",
            },
        )
        items.setdefault(line["order_id"], []).append(
            _bigcommerce_item("1", line["product_id"], int(line["quantity"]), float(line["amount"]))
        )
    for order_id, order in orders.items():
        order["Product Details"] = "|".join(items[order_id])
    return {
        "customers": write_csv(BIGCOMMERCE_CUSTOMERS, exported_customers),
        "products": write_csv(BIGCOMMERCE_PRODUCTS, exported_products),
        "orders": write_csv(BIGCOMMERCE_ORDERS, list(orders.values())),
    }


# An order items file with one row per item, as a Magento report or export extension gives one (Magento's
# Admin has no such export): its columns are matched on the wizard's mapping step.
MAGENTO_ORDER_ITEMS = _header("Order #,Customer Email,SKU,Qty Ordered,Row Total,Purchase Date")


def magento_order_items(files: dict[str, bytes]) -> bytes:
    """The service-format orders as such an order items file, customers named by e-mail."""
    _, email_of, _ = _service(files)
    rows = [
        {
            "Order #": line["order_id"],
            "Customer Email": email_of[line["user_id"]],
            "SKU": line["product_id"],
            "Qty Ordered": line["quantity"],
            "Row Total": line["amount"],
            "Purchase Date": line["timestamp"],
        }
        for line in _rows(files["orders"])
        if line["user_id"] in email_of
    ]
    return write_csv(MAGENTO_ORDER_ITEMS, rows)
