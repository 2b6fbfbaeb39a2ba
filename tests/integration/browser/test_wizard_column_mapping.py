"""The mapping step (issue 23, item 1), in Chromium: an orders file from some other system (its own
column names, semicolons, a column the service does not use) is shown as its columns beside the
service's, guessed from their names, with its first rows; the marketer changes the one not guessed and
confirms; the sync reads the file with that matching; the next sync of the organization starts from it."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from local.seed import create_user
from local.stack import LocalStack
from tests.integration.browser.conftest import DESKTOP, PHONE, axe_violations, dump, sign_in
from tests.integration.patience import BACKGROUND_JOB_MS
from tests.integration.test_data_source import shop_files

pytestmark = pytest.mark.integration

# The service's order columns, as another system names them (Bought is guessed as nothing).
HEADER = ["Order No.", "Client", "Article", "Qty", "Line total", "Bought", "Warehouse"]
GUESSED = ["order_id", "user_id", "product_id", "quantity", "amount", "", ""]


def order_items(orders: bytes) -> bytes:
    """The service-format orders as an order items report: other names, semicolons, one more column."""
    lines = orders.decode().splitlines()[1:]
    rows = [";".join([*line.split(","), "North"]) for line in lines]
    return ("\n".join([";".join(HEADER), *rows]) + "\n").encode()


def spaced_order_items(orders: bytes) -> bytes:
    """The same report with commas, its header's names quoted after a space (``"Order No.", "Client"``),
    as some tools write it."""
    lines = orders.decode().splitlines()[1:]
    header = ", ".join(f'"{cell}"' for cell in HEADER)
    return ("\n".join([header, *[",".join([*line.split(","), "North"]) for line in lines]]) + "\n").encode()


def new_shop_choosing(page: Page, stack: LocalStack, files: dict[str, bytes]) -> None:
    """A new organization's user signed in, on the wizard's first step with ``files`` chosen."""
    org_id = f"org-{uuid.uuid4().hex[:8]}"
    _, password = create_user(stack, org_id, f"{org_id}@example.com")
    sign_in(page, f"{org_id}@example.com", password)
    page.goto("/wizard.html")
    choose_files(page, files)


def choose_files(page: Page, files: dict[str, bytes]) -> None:
    names = {"customers": "customers.csv", "products": "products.csv", "orders": "order-items.csv"}
    for kind, data in files.items():
        page.get_by_label(f"{kind.capitalize()} file").set_input_files(
            files=[{"name": names[kind], "mimeType": "text/csv", "buffer": data}]
        )


def test_an_unknown_orders_file_is_matched_column_by_column_and_the_matching_is_kept(
    page: Page, stack: LocalStack, screenshots: Path
) -> None:
    # Given: a shop whose orders file has another system's columns
    files = shop_files(n_users=40, seed=11)
    first_order = files["orders"].decode().splitlines()[1].split(",")
    files["orders"] = order_items(files["orders"])
    new_shop_choosing(page, stack, files)

    # When: the files are uploaded
    page.get_by_role("button", name="Upload and sync").click()

    # Then: nothing is sent yet; the orders file's columns are shown beside the service's, guessed
    # from their names, each with its first rows
    question = page.get_by_role("group", name="Match the columns of the orders file (order-items.csv)")
    expect(question).to_be_visible(timeout=30_000)
    selects = question.get_by_role("combobox")
    expect(selects).to_have_count(len(HEADER))
    for cell, column in zip(HEADER, GUESSED, strict=True):
        expect(question.get_by_label(cell, exact=True)).to_have_value(column)
    expect(question.get_by_role("row").filter(has_text="Article")).to_contain_text(first_order[2])
    expect(page.locator("#upload-error")).to_have_text(
        "Match the columns of the orders file (above), then press Upload and sync again."
    )
    violations = axe_violations(page)
    for label, size in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size(size)
        page.screenshot(path=screenshots / f"wizard-1-match-columns-{label}.png", full_page=True)
    page.set_viewport_size(DESKTOP)
    assert not violations, dump(violations)

    # When: the marketer confirms without choosing the order time
    page.get_by_role("button", name="Upload and sync").click()

    # Then: the page says which column is still needed
    expect(page.locator("#upload-error")).to_have_text(
        "In the orders file, choose the column that holds timestamp: the sync needs it.", timeout=30_000
    )

    # When: they choose it, and upload again
    question.get_by_label("Bought", exact=True).select_option("timestamp")
    page.get_by_role("button", name="Upload and sync").click()

    # Then: the files sync, every order line kept, the orders file read as matched
    expect(page.locator("#sync-state")).to_contain_text(
        "Synced: every row was kept", timeout=BACKGROUND_JOB_MS
    )
    expect(page.locator("#sync-state")).to_contain_text("Read the orders file as you matched its columns.")
    lines = f"{len(files['orders'].decode().splitlines()) - 1:,}"
    orders = page.locator("#sync-counts tr").filter(has_text="orders").locator("td")
    expect(orders).to_have_text(["orders", lines, lines])
    expect(page.get_by_role("button", name="Continue to readiness")).to_be_enabled(timeout=BACKGROUND_JOB_MS)

    # When: the organization's next sync starts from the same kind of file
    page.goto("/wizard.html#data")
    page.reload()
    choose_files(page, files)
    page.get_by_role("button", name="Upload and sync").click()

    # Then: the question comes back with last time's matching, the order time included
    question = page.get_by_role("group", name="Match the columns of the orders file (order-items.csv)")
    expect(question).to_contain_text("This is how you matched this file's columns last time.", timeout=30_000)
    expect(question.get_by_label("Bought", exact=True)).to_have_value("timestamp")
    expect(question.get_by_label("Warehouse", exact=True)).to_have_value("")


def test_a_header_whose_names_are_quoted_after_spaces_is_matched_by_its_names(
    page: Page, stack: LocalStack
) -> None:
    # Given: an orders file whose header a tool wrote "Order No.", "Client", ... (a space after each comma)
    files = shop_files(n_users=40, seed=12)
    files["orders"] = spaced_order_items(files["orders"])
    new_shop_choosing(page, stack, files)

    # When: the files are uploaded
    page.get_by_role("button", name="Upload and sync").click()

    # Then: its columns are asked by their names, without the quotes, and guessed from them
    question = page.get_by_role("group", name="Match the columns of the orders file (order-items.csv)")
    expect(question).to_be_visible(timeout=30_000)
    for cell, column in zip(HEADER, GUESSED, strict=True):
        expect(question.get_by_label(cell, exact=True)).to_have_value(column)

    # When: the order time is chosen and the files sent again
    question.get_by_label("Bought", exact=True).select_option("timestamp")
    page.get_by_role("button", name="Upload and sync").click()

    # Then: every order line syncs, read as matched
    expect(page.locator("#sync-state")).to_contain_text(
        "Synced: every row was kept", timeout=BACKGROUND_JOB_MS
    )
    lines = f"{len(files['orders'].decode().splitlines()) - 1:,}"
    orders = page.locator("#sync-counts tr").filter(has_text="orders").locator("td")
    expect(orders).to_have_text(["orders", lines, lines])
