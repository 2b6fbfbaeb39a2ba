"""The payments sandbox's hosted pages walked in Chromium (docs/payments-notes.md §2.2, §3.4): the
onboarding consent page an Account Link opens, back to the platform's return_url, and the hosted
payment page with the documented success, declined and authentication cards. The sandbox is the one
the local stack runs; the SDK sets the scene as the service will."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest
import stripe
from playwright.sync_api import Page, expect

from local.stack import LocalStack
from tests.integration.browser.conftest import axe_violations, dump
from tests.integration.payments_receiver import WebhookReceiver

pytestmark = pytest.mark.integration


@pytest.fixture
def client(stack: LocalStack) -> stripe.StripeClient:
    url = stack.payments.url
    return stripe.StripeClient(stack.payments.config.secret_key, base_addresses={"api": url, "connect": url})


@pytest.fixture
def receiver(client: stripe.StripeClient) -> Iterator[tuple[WebhookReceiver, str]]:
    """A webhook endpoint for completed sessions, registered through the API; removed afterwards."""
    with WebhookReceiver() as running:
        endpoint = client.v1.webhook_endpoints.create(
            {"url": running.url, "enabled_events": ["checkout.session.completed"], "connect": True}
        )
        yield running, endpoint.secret or ""
        client.v1.webhook_endpoints.delete(endpoint.id)


@pytest.fixture
def account(client: stripe.StripeClient, stack: LocalStack) -> str:
    created = client.v1.accounts.create(
        {"type": "express", "capabilities": {"card_payments": {"requested": True}}}
    )
    onboarded = httpx.post(
        f"{stack.payments.url}/_admin/accounts/{created.id}/onboard", json={"business_name": "Ada's Mugs"}
    )
    onboarded.raise_for_status()
    return created.id


def new_session(client: stripe.StripeClient, account: str, dashboard: str) -> stripe.checkout.Session:
    return client.v1.checkout.sessions.create(
        {
            "mode": "payment",
            "line_items": [
                {
                    "price_data": {"currency": "usd", "unit_amount": 1250, "product_data": {"name": "Mug"}},
                    "quantity": 2,
                }
            ],
            "success_url": f"{dashboard}/index.html?paid={{CHECKOUT_SESSION_ID}}",
            "cancel_url": f"{dashboard}/index.html?cancelled=1",
        },
        options={"stripe_account": account},
    )


def fill_card(page: Page, number: str) -> None:
    page.get_by_label("Email").fill("buyer@example.com")
    page.get_by_label("Card number").fill(number)
    page.get_by_label("Expiration (MM / YY)").fill("12 / 34")
    page.get_by_label("CVC").fill("123")
    page.get_by_label("Cardholder name").fill("Ada Buyer")


def test_the_onboarding_page_is_walked_back_to_the_return_url(
    page: Page, client: stripe.StripeClient, dashboard: str
) -> None:
    # Given a new account and its onboarding link, returning to a page of the platform
    created = client.v1.accounts.create(
        {"type": "express", "capabilities": {"card_payments": {"requested": True}}}
    )
    return_url = f"{dashboard}/index.html?payments=returned"
    link = client.v1.account_links.create(
        {
            "account": created.id,
            "type": "account_onboarding",
            "refresh_url": f"{dashboard}/index.html?payments=refresh",
            "return_url": return_url,
        }
    )
    # When the account holder opens it, fills it in and agrees
    page.goto(link.url)
    expect(page.get_by_role("heading", name="Set up payments")).to_be_visible()
    assert axe_violations(page) == [], dump(axe_violations(page))
    page.get_by_label("Business name").fill("Ada's Mugs")
    page.get_by_label("I agree to the connected account services agreement").check()
    page.get_by_role("button", name="Agree and submit").click()
    # Then the browser is back on the platform, and the account can take payments
    page.wait_for_url(return_url)
    read = client.v1.accounts.retrieve(created.id)
    assert (read.charges_enabled, read.details_submitted, read.business_profile.name) == (
        True,
        True,
        "Ada's Mugs",
    )
    # And the link was single-use: opened again, it goes to the refresh_url
    page.goto(link.url)
    page.wait_for_url(f"{dashboard}/index.html?payments=refresh")


def test_the_success_card_pays_and_the_signed_webhook_arrives(
    page: Page,
    client: stripe.StripeClient,
    account: str,
    dashboard: str,
    receiver: tuple[WebhookReceiver, str],
) -> None:
    listener, secret = receiver
    session = new_session(client, account, dashboard)
    # When the customer pays 25.00 with the success card on the hosted page
    page.goto(session.url or "")
    expect(page.get_by_role("heading", name="Pay Ada's Mugs")).to_be_visible()
    assert axe_violations(page) == [], dump(axe_violations(page))
    fill_card(page, "4242 4242 4242 4242")
    page.get_by_role("button", name="Pay $25.00").click()
    # Then the browser lands on the success URL with the session's id, and the session is paid
    page.wait_for_url(f"{dashboard}/index.html?paid={session.id}")
    read = client.v1.checkout.sessions.retrieve(session.id, options={"stripe_account": account})
    assert (read.status, read.payment_status) == ("complete", "paid")
    # And the completed event reaches the endpoint, signed so the SDK verifies it
    deliveries = listener.wait_for(lambda found: any(session.id.encode() in d.body for d in found))
    [delivery] = [d for d in deliveries if session.id.encode() in d.body]
    event = stripe.Webhook.construct_event(delivery.body, delivery.signature, secret)
    assert (event.type, event.account, event.data.object.id) == (
        "checkout.session.completed",
        account,
        session.id,
    )


def test_a_declined_card_is_refused_on_the_page_and_another_card_pays(
    page: Page, client: stripe.StripeClient, account: str, dashboard: str
) -> None:
    session = new_session(client, account, dashboard)
    # When the customer tries the declined card
    page.goto(session.url or "")
    fill_card(page, "4000 0000 0000 0002")
    page.get_by_role("button", name="Pay $25.00").click()
    # Then the page says so and the session is still open and unpaid
    expect(page.get_by_role("alert")).to_have_text("Your card was declined.")
    read = client.v1.checkout.sessions.retrieve(session.id, options={"stripe_account": account})
    assert (read.status, read.payment_status) == ("open", "unpaid")
    # And the success card then pays the same session
    page.get_by_label("Card number").fill("4242 4242 4242 4242")
    page.get_by_label("Expiration (MM / YY)").fill("12 / 34")
    page.get_by_label("CVC").fill("123")
    page.get_by_role("button", name="Pay $25.00").click()
    page.wait_for_url(f"{dashboard}/index.html?paid={session.id}")


def test_a_card_that_requires_authentication_pays_after_the_challenge(
    page: Page, client: stripe.StripeClient, account: str, dashboard: str, stack: LocalStack
) -> None:
    session = new_session(client, account, dashboard)
    page.goto(session.url or "")
    fill_card(page, "4000 0025 0000 3155")
    page.get_by_role("button", name="Pay $25.00").click()
    # When the test 3D Secure page is completed
    page.get_by_role("button", name="Complete authentication").click()
    # Then the payment went through
    page.wait_for_url(f"{dashboard}/index.html?paid={session.id}")
    held = httpx.get(f"{stack.payments.url}/_admin/state").json()["checkout_sessions"]
    [mine] = [s for s in held if s["id"] == session.id]
    assert [attempt["outcome"] for attempt in mine["attempts"]] == ["requires_authentication", "succeeds"]
    assert json.dumps(mine).count("4000002500003155") == 0
