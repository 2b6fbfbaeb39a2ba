"""The dashboard's Payments page in Chromium (issue 22, item 2): connecting the card-payment account
through the payments sandbox's onboarding page and back, what is missing after "Finish later", and
disconnecting, as a merchant does it."""

from __future__ import annotations

import uuid

import pytest
from playwright.sync_api import Page, expect

from local.seed import create_user
from local.stack import LocalStack
from tests.integration.browser.conftest import axe_violations, dump, sign_in

pytestmark = pytest.mark.integration


def new_user(stack: LocalStack) -> tuple[str, str]:
    org_id = f"org-{uuid.uuid4().hex[:8]}"
    email = f"{org_id}@example.com"
    _, password = create_user(stack, org_id, email)
    return email, password


def test_connecting_payments_through_the_providers_page_and_back(page: Page, stack: LocalStack) -> None:
    # Given: a signed-in merchant on the Payments page, nothing connected
    email, password = new_user(stack)
    sign_in(page, email, password)
    page.goto("/payments.html")
    expect(page.get_by_text("Not connected")).to_be_visible()
    assert axe_violations(page) == [], dump(axe_violations(page))
    # When: Connect, the provider's page filled in and agreed, back through payments-callback.html
    page.get_by_role("button", name="Connect a payments account").click()
    expect(page.get_by_role("heading", name="Set up payments")).to_be_visible()
    page.get_by_label("Business name").fill("Ada's Mugs")
    page.get_by_label("I agree to the connected account services agreement").check()
    page.get_by_role("button", name="Agree and submit").click()
    page.wait_for_url("**/payments.html?returned=1")
    # Then: the page says the account takes card payments, for that business
    expect(page.get_by_text("Taking card payments")).to_be_visible()
    expect(page.get_by_role("status")).to_contain_text("back from the payment provider")
    expect(page.get_by_text("Ada's Mugs")).to_be_visible()
    expect(page.get_by_role("button", name="Disconnect")).to_be_visible()
    expect(page.get_by_role("button", name="Connect a payments account")).to_be_hidden()
    assert axe_violations(page) == [], dump(axe_violations(page))
    # And the state left the address bar on the way (it was single-use)
    assert "state=" not in page.url


def test_finishing_later_lists_what_is_missing_and_continue_setup_finishes(
    page: Page, stack: LocalStack
) -> None:
    # Given: the merchant leaves the provider's page with Finish later
    email, password = new_user(stack)
    sign_in(page, email, password)
    page.goto("/payments.html")
    page.get_by_role("button", name="Connect a payments account").click()
    page.get_by_role("button", name="Finish later").click()
    page.wait_for_url("**/payments.html?returned=1")
    # Then: what the provider still needs is listed, and the button continues the set-up
    expect(page.get_by_text("Set-up not finished")).to_be_visible()
    needed = page.get_by_role("list", name="Still needed by the payment provider")
    expect(needed).to_contain_text("a bank account for payouts")
    # When: Continue setup, and this time agree
    page.get_by_role("button", name="Continue setup").click()
    page.get_by_label("Business name").fill("Ada's Mugs")
    page.get_by_label("I agree to the connected account services agreement").check()
    page.get_by_role("button", name="Agree and submit").click()
    page.wait_for_url("**/payments.html?returned=1")
    expect(page.get_by_text("Taking card payments")).to_be_visible()


def test_disconnecting_asks_first_and_then_offers_to_connect_again(page: Page, stack: LocalStack) -> None:
    # Given: a connected payments account
    email, password = new_user(stack)
    sign_in(page, email, password)
    page.goto("/payments.html")
    page.get_by_role("button", name="Connect a payments account").click()
    page.get_by_label("Business name").fill("Ada's Mugs")
    page.get_by_label("I agree to the connected account services agreement").check()
    page.get_by_role("button", name="Agree and submit").click()
    page.wait_for_url("**/payments.html?returned=1")
    # When: Disconnect, confirmed in the dialog that says what stops
    asked: list[str] = []

    def accept(dialog: object) -> None:
        asked.append(dialog.message)  # type: ignore[attr-defined]
        dialog.accept()  # type: ignore[attr-defined]

    page.once("dialog", accept)
    page.get_by_role("button", name="Disconnect").click()
    # Then
    expect(page.get_by_role("status")).to_have_text("The payments account is disconnected.")
    expect(page.locator(".badge")).to_have_text("Disconnected")
    expect(page.get_by_role("button", name="Connect a payments account")).to_be_visible()
    assert "can no longer take payments" in asked[0]
