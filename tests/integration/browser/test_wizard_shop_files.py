"""Files as shops and spreadsheet programs save them (issue 23, item 1), in Chromium: Shopify's,
WooCommerce's and BigCommerce's three exports synced as they are; Magento's orders grid export named
for what it lacks; a file saved by a European spreadsheet program (semicolons, Windows-1252)
is met with a clear question about its encoding, and the answer sends it as UTF-8 with every
accented name intact."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from local.seed import create_user
from local.stack import LocalStack
from shared.ml.datasets import dump_records
from tests.integration.browser.conftest import DESKTOP, PHONE, axe_violations, dump, sign_in
from tests.integration.patience import BACKGROUND_JOB_MS
from tests.integration.test_data_source import shop_files
from tests.shop_exports import (
    bigcommerce_exports,
    magento_exports,
    magento_order_items,
    shopify_exports,
    woocommerce_exports,
)
from tools.synthetic import SyntheticConfig, generate_shop

pytestmark = pytest.mark.integration

NAMES = ("Zoë", "Müller-Lüdenscheidt")


def test_a_semicolon_windows_1252_file_asks_which_language_and_is_sent_as_utf_8(
    page: Page, stack: LocalStack, screenshots: Path
) -> None:
    # Given: a shop whose customers file was saved with semicolons in Windows-1252, accented names in it
    org_id = f"org-{uuid.uuid4().hex[:8]}"
    _, password = create_user(stack, org_id, f"{org_id}@example.com")
    sign_in(page, f"{org_id}@example.com", password)
    files = shop_files(n_users=30, seed=7)
    header = files["customers"].decode().splitlines()[0].split(",")
    zoe = {"user_id": "u-zoe", "email": "zoe@example.com", "first_name": NAMES[0], "last_name": NAMES[1]}
    row = ",".join(zoe.get(column, "") for column in header)
    files["customers"] = (files["customers"].decode() + row + "\n").replace(",", ";").encode("cp1252")
    page.goto("/wizard.html")
    for kind, data in files.items():
        page.get_by_label(f"{kind.capitalize()} file").set_input_files(
            files=[{"name": f"{kind}.csv", "mimeType": "text/csv", "buffer": data}]
        )

    # When: the files are uploaded
    page.get_by_role("button", name="Upload and sync").click()

    # Then: nothing is sent yet; the page asks which language the customers file is in, each choice
    # showing the line with the accented names as it would read
    question = page.get_by_role("group", name="Which language is the customers file (customers.csv) in?")
    expect(question).to_be_visible()
    western = question.get_by_role("radio", name=re.compile(r"^Western European \(Windows-1252\)"))
    expect(western).to_be_focused()
    expect(question.locator("label").filter(has_text="Western European")).to_contain_text(
        f"{NAMES[0]};{NAMES[1]}"
    )
    expect(page.locator("#upload-error")).to_have_text(
        "Say which language the customers file is in (above), then press Upload and sync again."
    )
    violations = axe_violations(page)
    for label, size in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size(size)
        page.screenshot(path=screenshots / f"wizard-1-encoding-question-{label}.png", full_page=True)
    page.set_viewport_size(DESKTOP)
    assert not violations, dump(violations)

    # When: the marketer picks the reading that shows the names right, and uploads again
    western.check()
    page.get_by_role("button", name="Upload and sync").click()

    # Then: the files sync, and the customers file arrived as UTF-8 with the names intact
    expect(page.locator("#sync-state")).to_contain_text("Synced", timeout=BACKGROUND_JOB_MS)
    s3 = stack.client("s3")
    bucket = stack.physical["DataBucket"].ref
    listed = s3.list_objects_v2(Bucket=bucket, Prefix=f"data-sources/{org_id}/uploads/")
    [key] = [o["Key"] for o in listed["Contents"] if o["Key"].endswith("/customers.csv")]
    stored = s3.get_object(Bucket=bucket, Key=key)["Body"].read().decode("utf-8")
    assert f"u-zoe;zoe@example.com;{NAMES[0]};{NAMES[1]}" in stored


def test_shopifys_own_exports_sync_as_they_are(page: Page, stack: LocalStack, screenshots: Path) -> None:
    # Given: a shop's customers, products and orders as Shopify exports them (customers keyed by
    # e-mail, one row per order line item, the order's time on its first row, an image-only product row)
    org_id = f"org-{uuid.uuid4().hex[:8]}"
    _, password = create_user(stack, org_id, f"{org_id}@example.com")
    sign_in(page, f"{org_id}@example.com", password)
    exports = shopify_exports(shop_files(n_users=60, seed=9))
    page.goto("/wizard.html")
    names = {
        "customers": "customers_export.csv",
        "products": "products_export_1.csv",
        "orders": "orders_export_1.csv",
    }
    for kind, data in exports.items():
        page.get_by_label(f"{kind.capitalize()} file").set_input_files(
            files=[{"name": names[kind], "mimeType": "text/csv", "buffer": data}]
        )

    # When: they are uploaded and synced
    page.get_by_role("button", name="Upload and sync").click()

    # Then: every row is kept (the image row is no product), the models train on them
    expect(page.locator("#sync-state")).to_contain_text(
        "Synced: every row was kept", timeout=BACKGROUND_JOB_MS
    )
    expect(page.locator("#sync-state")).to_contain_text(
        "Read the customers file as a Shopify customers export, the products file as a Shopify products "
        "export, the orders file as a Shopify orders export."
    )
    orders = page.locator("#sync-counts tr").filter(has_text="orders").locator("td")
    expect(orders).to_have_text(
        ["orders", f"{exports['orders'].count(b'\n') - 1:,}", f"{exports['orders'].count(b'\n') - 1:,}"]
    )
    expect(page.get_by_role("button", name="Continue to readiness")).to_be_enabled(timeout=BACKGROUND_JOB_MS)
    violations = axe_violations(page)
    for label, size in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size(size)
        page.screenshot(path=screenshots / f"wizard-2-shopify-synced-{label}.png", full_page=True)
    page.set_viewport_size(DESKTOP)
    assert not violations, dump(violations)


@pytest.mark.parametrize(
    ("system", "exporter", "names"),
    [
        (
            "WooCommerce",
            woocommerce_exports,
            {"customers": "customers.csv", "products": "wc-product-export.csv", "orders": "orders.csv"},
        ),
        (
            "BigCommerce",
            bigcommerce_exports,
            {
                "customers": "customers-2026-05-01.csv",
                "products": "products-2026-05-01.csv",
                "orders": "orders-2026-05-01.csv",
            },
        ),
    ],
)
def test_a_shop_systems_own_exports_sync_as_they_are(
    page: Page, stack: LocalStack, screenshots: Path, system: str, exporter: object, names: dict[str, str]
) -> None:
    # Given: a shop's customers, products and orders as the system exports them (keyed by e-mail;
    # WooCommerce's orders one row per line item, BigCommerce's one row per order with its items packed)
    org_id = f"org-{uuid.uuid4().hex[:8]}"
    _, password = create_user(stack, org_id, f"{org_id}@example.com")
    sign_in(page, f"{org_id}@example.com", password)
    files = shop_files(n_users=60, seed=9)
    exports = exporter(files)  # type: ignore[operator]
    page.goto("/wizard.html")
    for kind, data in exports.items():
        page.get_by_label(f"{kind.capitalize()} file").set_input_files(
            files=[{"name": names[kind], "mimeType": "text/csv", "buffer": data}]
        )

    # When: they are uploaded and synced
    page.get_by_role("button", name="Upload and sync").click()

    # Then: every row is kept and read as the system's export; every order line item is an order line
    expect(page.locator("#sync-state")).to_contain_text(
        "Synced: every row was kept", timeout=BACKGROUND_JOB_MS
    )
    expect(page.locator("#sync-state")).to_contain_text(
        f"Read the customers file as a {system} customers export, the products file as a {system} products "
        f"export, the orders file as a {system} orders export."
    )
    emails = {row.split(",")[0] for row in files["customers"].decode().splitlines()[1:] if row.split(",")[1]}
    lines = sum(1 for row in files["orders"].decode().splitlines()[1:] if row.split(",")[1] in emails)
    orders = page.locator("#sync-counts tr").filter(has_text="orders").locator("td")
    expect(orders).to_have_text(["orders", f"{lines:,}", f"{lines:,}"])
    expect(page.get_by_role("button", name="Continue to readiness")).to_be_enabled(timeout=BACKGROUND_JOB_MS)
    violations = axe_violations(page)
    for label, size in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size(size)
        page.screenshot(path=screenshots / f"wizard-2-{system.lower()}-synced-{label}.png", full_page=True)
    page.set_viewport_size(DESKTOP)
    assert not violations, dump(violations)


def test_magentos_orders_grid_export_is_named_and_an_order_items_file_is_matched_instead(
    page: Page, stack: LocalStack, screenshots: Path
) -> None:
    # Given: Magento's customers and products exports, and its orders grid export, which lists each
    # order's total but no product
    org_id = f"org-{uuid.uuid4().hex[:8]}"
    _, password = create_user(stack, org_id, f"{org_id}@example.com")
    sign_in(page, f"{org_id}@example.com", password)
    files = shop_files(n_users=30, seed=9)
    exports = magento_exports(files)
    names = {"customers": "export_customer.csv", "products": "catalog_product.csv", "orders": "export.csv"}
    page.goto("/wizard.html")
    for kind, data in exports.items():
        page.get_by_label(f"{kind.capitalize()} file").set_input_files(
            files=[{"name": names[kind], "mimeType": "text/csv", "buffer": data}]
        )

    # When: they are uploaded and synced
    page.get_by_role("button", name="Upload and sync").click()

    # Then: the sync stops naming the orders file for what it is and what to export instead
    expect(page.locator("#sync-failed-what")).to_have_text(
        "orders.csv looks like a Magento orders grid export, which lists each order's total but not the "
        "products in it.",
        timeout=BACKGROUND_JOB_MS,
    )
    expect(page.locator("#sync-failed-remedy")).to_contain_text("one row per item")
    violations = axe_violations(page)
    for label, size in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size(size)
        page.screenshot(path=screenshots / f"wizard-2-magento-orders-grid-{label}.png", full_page=True)
    page.set_viewport_size(DESKTOP)
    assert not violations, dump(violations)

    # When: the marketer chooses the files again, the orders as an order items file (one row per item)
    page.get_by_role("button", name="Choose other files").click()
    exports["orders"] = magento_order_items(files)
    names["orders"] = "sales_order_items.csv"
    for kind, data in exports.items():
        page.get_by_label(f"{kind.capitalize()} file").set_input_files(
            files=[{"name": names[kind], "mimeType": "text/csv", "buffer": data}]
        )
    page.get_by_role("button", name="Upload and sync").click()

    # Then: its columns are matched to the service's from their names, and confirming syncs every row,
    # the order lines joined to the customers by e-mail
    question = page.get_by_role("group", name="Match the columns of the orders file (sales_order_items.csv)")
    expect(question).to_be_visible(timeout=30_000)
    guessed = ["order_id", "user_id", "product_id", "quantity", "amount", "timestamp"]
    for cell, column in zip(
        ["Order #", "Customer Email", "SKU", "Qty Ordered", "Row Total", "Purchase Date"],
        guessed,
        strict=True,
    ):
        expect(question.get_by_label(cell, exact=True)).to_have_value(column)
    page.get_by_role("button", name="Upload and sync").click()
    expect(page.locator("#sync-state")).to_contain_text(
        "Synced: every row was kept", timeout=BACKGROUND_JOB_MS
    )
    expect(page.locator("#sync-state")).to_contain_text(
        "Read the customers file as a Magento customers export, the products file as a Magento products "
        "export, the orders file as you matched its columns."
    )
    lines = f"{exports['orders'].count(b'\n') - 1:,}"
    orders = page.locator("#sync-counts tr").filter(has_text="orders").locator("td")
    expect(orders).to_have_text(["orders", lines, lines])


def jsonl_shop(n_users: int, seed: int) -> dict[str, bytes]:
    """A synthetic shop's three files as JSON Lines (one object a line, the service's columns)."""
    shop = generate_shop(SyntheticConfig(n_users=n_users, n_products=40, seed=seed))
    return {
        "customers": dump_records(shop.data.customers, "jsonl"),
        "products": dump_records(shop.data.products, "jsonl"),
        "orders": dump_records(shop.data.orders, "jsonl"),
    }


def test_three_json_lines_files_sync_and_a_mix_of_formats_is_refused_before_sending(
    page: Page, stack: LocalStack
) -> None:
    # Given: a shop's three files as JSON Lines, the orders file chosen as CSV first
    org_id = f"org-{uuid.uuid4().hex[:8]}"
    _, password = create_user(stack, org_id, f"{org_id}@example.com")
    sign_in(page, f"{org_id}@example.com", password)
    files = jsonl_shop(n_users=40, seed=13)
    page.goto("/wizard.html")

    def choose(kind: str, name: str, data: bytes) -> None:
        page.get_by_label(f"{kind.capitalize()} file").set_input_files(
            files=[{"name": name, "mimeType": "application/x-ndjson", "buffer": data}]
        )

    choose("customers", "customers.jsonl", files["customers"])
    choose("products", "products.jsonl", files["products"])
    choose("orders", "orders.csv", shop_files(n_users=40, seed=13)["orders"])

    # When: they are uploaded, then: nothing is sent, and the page says which file is which
    page.get_by_role("button", name="Upload and sync").click()
    expect(page.locator("#upload-error")).to_have_text(
        "Choose three CSV files or three JSON Lines files: the customers file is JSON Lines, the products "
        "file is JSON Lines, the orders file is CSV."
    )
    expect(page.get_by_label("Orders file")).to_have_attribute("aria-invalid", "true")

    # When: the orders file is chosen as JSON Lines too, and the three are uploaded
    choose("orders", "orders.jsonl", files["orders"])
    page.get_by_role("button", name="Upload and sync").click()

    # Then: every row syncs, no column asked about (JSON Lines objects name the service's columns)
    expect(page.locator("#sync-state")).to_contain_text(
        "Synced: every row was kept", timeout=BACKGROUND_JOB_MS
    )
    lines = f"{files['orders'].count(b'\n'):,}"
    orders = page.locator("#sync-counts tr").filter(has_text="orders").locator("td")
    expect(orders).to_have_text(["orders", lines, lines])
