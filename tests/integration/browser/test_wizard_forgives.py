"""A wizard that forgives (issue 23, item 3), in Chromium: each step has its own address, so Back,
Forward and reload return to a step with what was typed; the draft survives a closed tab for the
same user (and only for them); a failed sync says what to do and leads back to the files in one
place."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext, Page, expect

from local.seed import create_user
from local.stack import LocalStack
from tests.integration.browser.conftest import DESKTOP, PHONE, ShopUser, axe_violations, dump, sign_in
from tests.integration.patience import BACKGROUND_JOB_MS
from tests.integration.test_data_source import shop_files

pytestmark = pytest.mark.integration


def photograph(page: Page, screenshots: Path, name: str) -> None:
    for label, size in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size(size)
        page.screenshot(path=screenshots / f"{name}-{label}.png", full_page=True)
    page.set_viewport_size(DESKTOP)


def test_back_forward_reload_and_a_closed_tab_return_to_the_step_with_what_was_typed(
    page: Page, context: BrowserContext, stack: LocalStack, synced_user: ShopUser, screenshots: Path
) -> None:
    # Given: a user whose shop is synced walks the wizard to targeting, choosing Generate campaign
    sign_in(page, synced_user.email, synced_user.password)
    page.goto("/wizard.html")
    expect(page).to_have_url(re.compile("wizard.html#data$"))
    page.get_by_role("button", name="Use the current data").click()
    expect(page).to_have_url(re.compile("#sync$"))
    page.get_by_role("button", name="Continue to readiness").click()
    page.get_by_role("button", name="Continue", exact=True).click()
    expect(page).to_have_url(re.compile("#destination$"))
    page.get_by_role("radio", name=re.compile("^Generate campaign")).check()
    page.get_by_role("button", name="Continue to targeting").click()
    page.get_by_label("Product ID").fill("p00002")
    page.get_by_label("Percent of users").fill("30")
    summary = page.locator("#preview-summary")
    expect(summary).to_contain_text("will be uploaded")
    # (the preview counts the holdout kept out to measure lift)
    expect(summary).to_contain_text("are held out, so the advert's lift can be measured")

    # When: the browser goes Back
    page.go_back()
    # Then: the destination step, as it was chosen, its heading focused
    expect(page).to_have_url(re.compile("#destination$"))
    expect(page.get_by_role("heading", name="4. Where should the audience go?")).to_be_focused()
    expect(page.get_by_role("radio", name=re.compile("^Generate campaign"))).to_be_checked()

    # When: Forward, then a reload
    page.go_forward()
    expect(page).to_have_url(re.compile("#targeting$"))
    expect(page.get_by_label("Product ID")).to_have_value("p00002")
    page.reload()
    # Then: the same step with what was typed, and its preview again
    expect(page.get_by_role("heading", name="5. Who should see it?")).to_be_visible()
    expect(page.get_by_label("Product ID")).to_have_value("p00002")
    expect(page.get_by_label("Percent of users")).to_have_value("30")
    expect(summary).to_contain_text("will be uploaded")
    violations = axe_violations(page)
    photograph(page, screenshots, "wizard-5-targeting-restored")
    assert not violations, dump(violations)

    # When: the tab is closed (its session with it), and the user signs in again in a new one and opens
    # the wizard from the navigation
    page.close()
    again = context.new_page()
    sign_in(again, synced_user.email, synced_user.password)
    again.get_by_role("link", name="Launch wizard").click()
    # Then: the draft is back at its step, with what was typed and chosen
    expect(again).to_have_url(re.compile("#targeting$"))
    expect(again.get_by_label("Product ID")).to_have_value("p00002")
    expect(again.get_by_label("Percent of users")).to_have_value("30")
    again.get_by_role("link", name="4. Destination").click()
    expect(again.get_by_role("radio", name=re.compile("^Generate campaign"))).to_be_checked()

    # When: another user signs in in the same browser
    again.get_by_role("button", name="Sign out").click()
    org_id = f"org-{uuid.uuid4().hex[:8]}"
    _, password = create_user(stack, org_id, f"{org_id}@example.com")
    sign_in(again, f"{org_id}@example.com", password)
    again.goto("/wizard.html")
    # Then: they start at the beginning: the draft was the other user's
    expect(again).to_have_url(re.compile("#data$"))
    expect(again.get_by_role("heading", name="1. Your shop's data")).to_be_visible()
    again.goto("/wizard.html#targeting")  # a later step they have not reached is not opened
    expect(again).to_have_url(re.compile("#data$"))
    expect(again.get_by_label("Product ID")).to_have_value("")


def test_a_failed_sync_says_what_to_do_and_leads_back_to_the_files(
    page: Page, stack: LocalStack, screenshots: Path
) -> None:
    # Given: a new user who chose the customers file in the orders slot and the orders in the customers one
    org_id = f"org-{uuid.uuid4().hex[:8]}"
    _, password = create_user(stack, org_id, f"{org_id}@example.com")
    sign_in(page, f"{org_id}@example.com", password)
    page.goto("/wizard.html")
    files = shop_files(n_users=30, seed=5)
    swapped = {"customers": files["orders"], "products": files["products"], "orders": files["customers"]}
    for kind, data in swapped.items():
        page.get_by_label(f"{kind.capitalize()} file").set_input_files(
            files=[{"name": f"{kind}.csv", "mimeType": "text/csv", "buffer": data}]
        )

    # When: they are uploaded and synced
    page.get_by_role("button", name="Upload and sync").click()

    # Then: the sync step says it stopped, what went wrong and what to do, once, in one place, with the
    # way back to the files focused; no API path or README is named, and nothing offers to go on
    failed = page.locator("#sync-failed")
    expect(failed).to_be_visible(timeout=BACKGROUND_JOB_MS)
    expect(page.locator("#sync-state")).to_have_text("The sync stopped: nothing of these files was stored.")
    expect(page.locator("#sync-failed-what")).to_have_text(
        "customers.csv looks like an orders file, not a customers file: its first row has amount, order_id, "
        "product_id, quantity, timestamp, user_id."
    )
    expect(page.locator("#sync-failed-remedy")).to_have_text(
        "What to do: Choose this file as the orders file, and your customers file here."
    )
    expect(failed).not_to_contain_text("README")
    expect(failed).not_to_contain_text("/platform-ads")
    expect(page.get_by_role("button", name="Choose other files")).to_be_focused()
    expect(page.get_by_role("button", name="Continue to readiness")).to_be_hidden()
    expect(page.get_by_role("status")).to_be_empty()
    violations = axe_violations(page)
    photograph(page, screenshots, "wizard-2-sync-failed")
    assert not violations, dump(violations)

    # When: they choose other files
    page.get_by_role("button", name="Choose other files").click()
    # Then: back on the first step, the file fields empty for the right files
    expect(page).to_have_url(re.compile("#data$"))
    expect(page.get_by_role("heading", name="1. Your shop's data")).to_be_focused()
    assert page.get_by_label("Orders file").evaluate("input => input.files.length") == 0
