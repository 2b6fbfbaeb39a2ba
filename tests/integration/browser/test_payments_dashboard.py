"""The dashboard's Payments page in Chromium (issue 22, item 2): connecting the card-payment account
through the payments sandbox's onboarding page and back, what is missing after "Finish later", and
disconnecting, as a merchant does it."""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from local.seed import create_user
from local.stack import LocalStack
from shared import wiring
from tests.integration.browser.conftest import DESKTOP, PHONE, axe_violations, dump, sign_in
from tests.integration.patience import BACKGROUND_JOB_SECONDS
from tests.integration.payments_shop import shop_taking_payments, sync_products
from tests.integration.test_payments_webhooks import new_session, pay

pytestmark = pytest.mark.integration

LOADED = 30_000  # ms: a function's first answer may take a cold start on a busy machine


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
    expect(page.get_by_text("Not connected")).to_be_visible(timeout=LOADED)
    # (what to do names the button on this very page, not the page)
    expect(page.locator("#message")).to_have_text(
        "No payments account is connected. "
        "Press Connect a payments account and finish the payment provider's pages."
    )
    assert axe_violations(page) == [], dump(axe_violations(page))
    # When: Connect, the provider's page filled in and agreed, back through payments-callback.html
    page.get_by_role("button", name="Connect a payments account").click()
    expect(page.get_by_role("heading", name="Set up payments")).to_be_visible(timeout=LOADED)
    page.get_by_label("Business name").fill("Ada's Mugs")
    page.get_by_label("I agree to the connected account services agreement").check()
    page.get_by_role("button", name="Agree and submit").click()
    page.wait_for_url("**/payments.html?returned=1", timeout=LOADED)
    # Then: the page says the account takes card payments, for that business
    expect(page.get_by_text("Taking card payments")).to_be_visible(timeout=LOADED)
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
    page.wait_for_url("**/payments.html?returned=1", timeout=LOADED)
    # Then: what the provider still needs is listed, and the button continues the set-up
    expect(page.get_by_text("Set-up not finished")).to_be_visible(timeout=LOADED)
    needed = page.get_by_role("list", name="Still needed by the payment provider")
    expect(needed).to_contain_text("a bank account for payouts")
    # When: Continue setup, and this time agree
    page.get_by_role("button", name="Continue setup").click()
    page.get_by_label("Business name").fill("Ada's Mugs")
    page.get_by_label("I agree to the connected account services agreement").check()
    page.get_by_role("button", name="Agree and submit").click()
    page.wait_for_url("**/payments.html?returned=1")
    expect(page.get_by_text("Taking card payments")).to_be_visible()


def test_disconnecting_asks_first_and_reconnecting_resumes_the_same_account(
    page: Page, stack: LocalStack
) -> None:
    # Given: a connected payments account
    email, password = new_user(stack)
    sign_in(page, email, password)
    page.goto("/payments.html")
    page.get_by_role("button", name="Connect a payments account").click()
    page.get_by_label("Business name").fill("Ada's Mugs")
    page.get_by_label("I agree to the connected account services agreement").check()
    page.get_by_role("button", name="Agree and submit").click()
    page.wait_for_url("**/payments.html?returned=1")
    account = page.locator("#details dd", has_text="ending in ")
    expect(account).to_be_visible(timeout=LOADED)
    ending = account.inner_text()
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
    expect(page.get_by_role("button", name="Reconnect")).to_be_visible()
    expect(page.get_by_role("button", name="Connect a different account")).to_be_visible()
    expect(page.locator("#message")).to_contain_text("Press Reconnect")
    assert "can no longer take payments" in asked[0]
    # When: Reconnect, and the merchant comes back without finishing the provider's page
    page.get_by_role("button", name="Reconnect").click()
    expect(page.get_by_role("heading", name="Set up payments")).to_be_visible(timeout=LOADED)
    page.goto("/payments.html")
    # Then: the page says what it waits for (not a review at the provider) and the button to press
    expect(page.locator(".badge")).to_have_text("Reconnecting", timeout=LOADED)
    expect(page.locator("#message")).to_have_text(
        "Reconnecting: the payments account takes card payments here again once you finish the "
        "payment provider's pages. Press Continue setup and finish the provider's pages."
    )
    assert axe_violations(page) == [], dump(axe_violations(page))
    # When: Continue setup, and the provider's page agreed again
    page.get_by_role("button", name="Continue setup").click()
    page.get_by_label("I agree to the connected account services agreement").check()
    page.get_by_role("button", name="Agree and submit").click()
    page.wait_for_url("**/payments.html?returned=1", timeout=LOADED)
    # Then: the same account takes card payments again
    expect(page.get_by_text("Taking card payments")).to_be_visible(timeout=LOADED)
    expect(page.locator("#details dd", has_text="ending in ")).to_have_text(ending)
    expect(page.get_by_role("button", name="Connect a different account")).to_be_hidden()


def fill_card(page: Page, number: str) -> None:
    """The provider's hosted payment page, as a shopper fills it in."""
    page.get_by_label("Email").fill("ada@example.com")
    page.get_by_label("Card number").fill(number)
    page.get_by_label("Expiration (MM / YY)").fill("12 / 34")
    page.get_by_label("CVC").fill("123")
    page.get_by_label("Cardholder name").fill("Ada Lovelace")


def eventually(found: Callable[[], Any], timeout: float = BACKGROUND_JOB_SECONDS) -> Any:
    """``found()`` once it is truthy (the provider delivers its webhooks in the background)."""
    deadline = time.monotonic() + timeout
    while not (value := found()):
        assert time.monotonic() < deadline, "not within the time"
        time.sleep(0.3)
    return value


def test_paid_orders_and_unpaid_checkouts_are_listed_on_the_payments_page(
    page: Page, stack: LocalStack, screenshots: Path
) -> None:
    # Given: a shop taking card payments (its products synced: a mug at 12.50, a teapot at 30), no
    # order yet: the page says so
    shop = shop_taking_payments(stack)
    org_id = shop.org.org_id
    sign_in(page, shop.email, shop.password)
    page.goto("/payments.html")
    # (a function's first answer may take a cold start on a busy machine)
    expect(page.get_by_text("Taking card payments")).to_be_visible(timeout=LOADED)
    expect(page.get_by_text("No orders yet.")).to_be_visible(timeout=LOADED)
    expect(page.get_by_text("None: no checkout has expired unpaid or failed.")).to_be_visible()
    assert axe_violations(page) == [], dump(axe_violations(page))

    # When: a shopper buys two mugs on the hosted checkout, a declined card first, then the success card
    page.goto(f"{stack.api_url}/checkout/{org_id}/p-mug")
    page.get_by_label("Quantity").fill("2")
    page.get_by_role("button", name="Continue to secure payment").click()
    expect(page.get_by_role("heading", name="Pay Ada's Mugs")).to_be_visible(timeout=LOADED)
    fill_card(page, "4000 0000 0000 0002")
    page.get_by_role("button", name="Pay $25.00").click()
    expect(page.get_by_role("alert")).to_have_text("Your card was declined.")
    fill_card(page, "4242 4242 4242 4242")
    page.get_by_role("button", name="Pay $25.00").click()
    page.wait_for_url(f"**/checkout/{org_id}/p-mug/paid**", timeout=LOADED)
    expect(page.get_by_role("heading", name="Thank you for your order")).to_be_visible()
    # And another shopper's card is declined on three teapots, and the session expires unpaid
    page.goto(f"{stack.api_url}/checkout/{org_id}/p-teapot")
    page.get_by_label("Quantity").fill("3")
    page.get_by_role("button", name="Continue to secure payment").click()
    expect(page.get_by_role("heading", name="Pay Ada's Mugs")).to_be_visible(timeout=LOADED)
    fill_card(page, "4000 0000 0000 9995")
    page.get_by_role("button", name="Pay $90.00").click()
    expect(page.get_by_role("alert")).to_have_text("Your card has insufficient funds.")
    session_id = page.url.rsplit("/", 1)[1].split("?")[0]
    connection = wiring.payments_store().get_connection(org_id)
    assert connection is not None
    account = wiring.payments_connection_status().account_id(connection)
    expired = httpx.post(
        f"{stack.payments.url}/v1/checkout/sessions/{session_id}/expire",
        headers={"Authorization": f"Bearer {stack.payments.config.secret_key}", "Stripe-Account": account},
    )
    assert expired.status_code == 200, expired.text
    # (the provider's webhooks are delivered in the background: the page is read once both arrived)
    eventually(lambda: (v := wiring.payments_orders().view(org_id)).orders and v.unpaid)

    # Then: the Payments page lists the order (product, quantity, amount in its currency, when) ...
    page.goto("/payments.html")
    orders = page.get_by_role("table", name="Orders")
    expect(orders.get_by_role("row")).to_have_count(2, timeout=LOADED)  # the header and the one order
    row = orders.get_by_role("row").nth(1)
    expect(row.get_by_role("cell")).to_have_text(["Ada's Mug", "2", "$25.00", re.compile(r"\d"), "No", "No"])
    expect(page.get_by_text("No orders yet.")).to_be_hidden()
    # ... and the checkout that expired unpaid, with the refused card in words
    unpaid = page.get_by_role("table", name="Checkouts not paid")
    expect(unpaid.get_by_role("row")).to_have_count(2)
    cells = unpaid.get_by_role("row").nth(1).get_by_role("cell")
    expect(cells.nth(0)).to_have_text("Teapot")
    expect(cells.nth(1)).to_have_text("3")
    expect(cells.nth(2)).to_have_text("$90.00")
    expect(cells.nth(3)).to_have_text("Expired unpaid")
    expect(cells.nth(4)).to_have_text("1 refused. Last: The card did not have enough funds.")
    assert axe_violations(page) == [], dump(axe_violations(page))
    for label, size in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size(size)
        page.screenshot(path=screenshots / f"payments-orders-{label}.png", full_page=True)
    # And on a phone the rows still name each value (the table stacks)
    expect(row.get_by_role("cell").nth(2)).to_be_visible()
    assert axe_violations(page) == [], dump(axe_violations(page))
    page.set_viewport_size(DESKTOP)

    # And: the Events page counts the order's Purchase not sent from the hosted checkout (no ad account
    # is connected), and says the next sync sends it
    page.goto("/events.html")
    expect(page.locator("#by-source tr")).to_have_text(
        re.compile(r"Hosted checkout\s*Purchase\s*0\s*0\s*0\s*1"), timeout=LOADED
    )
    expect(page.locator("#events-total")).to_contain_text(
        "Not sent from the hosted checkout: paid while no ad account (or its pixel) could take them; your "
        "next sync of the shop's data sends those paid in the 7 days before it."
    )
    expect(page.locator("#events-total")).not_to_contain_text("your shop's pages")
    expect(page.get_by_text("Not sent: arrived while no ad account could take them")).to_contain_text(
        "the hosted checkout's purchases go with your next sync if paid in the 7 days before it."
    )

    # When: the merchant refunds 10.00 of the order at the provider
    [order] = wiring.payments_orders().view(org_id).orders
    intent = httpx.get(
        f"{stack.payments.url}/v1/checkout/sessions/{order.order_id}",
        headers={"Authorization": f"Bearer {stack.payments.config.secret_key}", "Stripe-Account": account},
    ).json()["payment_intent"]
    refunded = httpx.post(
        f"{stack.payments.url}/v1/refunds",
        data={"payment_intent": intent, "amount": "1000"},
        headers={"Authorization": f"Bearer {stack.payments.config.secret_key}", "Stripe-Account": account},
    )
    assert refunded.status_code == 200, refunded.text
    # (the page is read once the provider's charge.refunded was handled)
    eventually(lambda: wiring.payments_orders().view(org_id).orders[0].refunded == "partial")
    # Then: the Payments page shows the order partly refunded
    page.goto("/payments.html")
    row = page.get_by_role("table", name="Orders").get_by_role("row").nth(1)
    expect(row.get_by_role("cell").nth(4)).to_have_text("Partly refunded: $10.00 of $25.00", timeout=LOADED)
    assert axe_violations(page) == [], dump(axe_violations(page))


def test_a_disputed_order_shows_disputed_with_what_the_merchant_must_do(
    page: Page, stack: LocalStack, api: httpx.Client, payments: httpx.Client
) -> None:
    # Given: a shop taking card payments whose shopper paid for two mugs with the dispute test card
    shop = shop_taking_payments(stack)
    pay(payments, new_session(api, shop), card="4000 0000 0000 0259")
    # (the page is read once the provider's charge.dispute.created was handled)
    [order] = eventually(
        lambda: [o for o in wiring.payments_orders().view(shop.org.org_id).orders if o.dispute_status]
    )
    assert order.dispute_due_by is not None
    # When: the merchant opens the Payments page
    sign_in(page, shop.email, shop.password)
    page.goto("/payments.html")
    # Then: the order is Disputed, with the amount, the status and reason, and the response due at the
    # provider by its date
    row = page.get_by_role("table", name="Orders").get_by_role("row").nth(1)
    expect(row.get_by_role("cell").nth(5)).to_have_text(
        "Disputed: $25.00, needs your response (fraudulent). Respond to the dispute in your payment "
        f"provider's dashboard by {order.dispute_due_by:%Y-%m-%d %H:%M} UTC: submit evidence that the "
        "payment was genuine, or accept it. Without a response it is lost.",
        timeout=LOADED,
    )
    assert axe_violations(page) == [], dump(axe_violations(page))


def test_the_wizard_says_what_the_hosted_checkouts_orders_added_to_the_synced_data(
    page: Page, stack: LocalStack, api: httpx.Client, payments: httpx.Client
) -> None:
    # Given: a shop taking card payments (12 customers, 3 products, 39 orders in its files) where a
    # shopper not in its customers file paid two mugs on the hosted checkout
    shop = shop_taking_payments(stack)
    pay(payments, new_session(api, shop))
    eventually(lambda: wiring.payments_orders().view(shop.org.org_id).orders)
    # When: the shop syncs the same files again, and the merchant opens the launch wizard
    sync_products(api, shop.org)
    sign_in(page, shop.email, shop.password)
    page.goto("/wizard.html")
    # Then: the data in use counts the order and its buyer, and says where they came from (it said
    # "13 customers" of a customers file of 12 rows, and nothing of why)
    expect(page.locator("#data-current")).to_contain_text(
        "Your current data: 13 customers, 3 products and 40 orders, with 1 order paid on the hosted "
        "checkout and 1 buyer there not in your customers file, synced ",
        timeout=LOADED,
    )
    assert axe_violations(page) == [], dump(axe_violations(page))
