"""The payments sandbox driven by the provider's official Python SDK (`stripe`, a test dependency
only), unpatched, over real HTTP: every call the service will make (docs/payments-notes.md §1-§6).

Accounts create and retrieve, Account Links create, Checkout Sessions create / retrieve / expire on a
connected account (the SDK's `stripe_account` option sends the account header), webhook endpoints
create, and `stripe.Webhook.construct_event` verifying the sandbox's signed deliveries. The SDK sends
an idempotency key with every POST and retries 409s and 5xx with the same key, so its retries are
safe against the sandbox exactly as against the provider.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import stripe

from local.stack import LocalStack
from payments_sandbox import PaymentsSandboxServer
from tests.integration.payments_receiver import Delivery, WebhookReceiver

pytestmark = pytest.mark.integration

REFRESH = "http://127.0.0.1:9/payments/refresh"
RETURN = "http://127.0.0.1:9/payments/return"
MUG = {
    "mode": "payment",
    "line_items": [
        {
            "price_data": {"currency": "usd", "unit_amount": 1250, "product_data": {"name": "Mug"}},
            "quantity": 2,
        }
    ],
    "success_url": "http://127.0.0.1:9/checkout/paid?session={CHECKOUT_SESSION_ID}",
    "cancel_url": "http://127.0.0.1:9/checkout/cancelled",
    "client_reference_id": "org-1/p-mug",
    "metadata": {"organization": "org-1", "product": "p-mug"},
}


@pytest.fixture(scope="module")
def sandbox() -> Iterator[PaymentsSandboxServer]:
    with PaymentsSandboxServer() as server:
        yield server


@pytest.fixture(scope="module")
def receiver() -> Iterator[WebhookReceiver]:
    with WebhookReceiver() as running:
        yield running


@pytest.fixture
def admin(sandbox: PaymentsSandboxServer, receiver: WebhookReceiver) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=f"{sandbox.url}/_admin", timeout=10) as client:
        client.post("/reset").raise_for_status()
        receiver.deliveries.clear()
        yield client


def sdk(sandbox: PaymentsSandboxServer, api_key: str | None = None, **options: Any) -> stripe.StripeClient:
    """The SDK's client as its documentation builds it, with the sandbox as its API and Connect base."""
    return stripe.StripeClient(
        api_key or sandbox.config.secret_key,
        base_addresses={"api": sandbox.url, "connect": sandbox.url},
        **options,
    )


@pytest.fixture
def client(sandbox: PaymentsSandboxServer, admin: httpx.Client) -> stripe.StripeClient:
    return sdk(sandbox)


@pytest.fixture
def endpoint(client: stripe.StripeClient, receiver: WebhookReceiver) -> stripe.WebhookEndpoint:
    """The receiver registered through the provider's own API for connected accounts' events."""
    return client.v1.webhook_endpoints.create(
        {
            "url": receiver.url,
            "enabled_events": ["checkout.session.completed", "checkout.session.expired", "account.updated"],
            "connect": True,
        }
    )


@pytest.fixture
def account(client: stripe.StripeClient, admin: httpx.Client) -> str:
    """A connected account, onboarded (what its hosted page's submit does)."""
    created = client.v1.accounts.create(
        {"type": "express", "country": "US", "capabilities": {"card_payments": {"requested": True}}}
    )
    admin.post(f"/accounts/{created.id}/onboard", json={"business_name": "Ada's Mugs"}).raise_for_status()
    return created.id


def verified(delivery: Delivery, secret: str) -> stripe.Event:
    return stripe.Webhook.construct_event(delivery.body, delivery.signature, secret)


def of_type(type_: str) -> Any:
    return lambda deliveries: any(json.loads(d.body)["type"] == type_ for d in deliveries)


def test_the_sdk_creates_and_retrieves_a_connected_account(client: stripe.StripeClient) -> None:
    # When the SDK creates an express account asking for card payments
    created = client.v1.accounts.create(
        {
            "type": "express",
            "country": "GB",
            "email": "owner@example.com",
            "capabilities": {"card_payments": {"requested": True}, "transfers": {"requested": True}},
        }
    )
    # Then it is a new account that cannot take payments yet, and reads back the same
    assert created.id.startswith("acct_")
    assert (created.charges_enabled, created.details_submitted, created.country) == (False, False, "GB")
    assert created.requirements.currently_due
    read = client.v1.accounts.retrieve(created.id)
    assert (read.id, read.email, read.capabilities.card_payments) == (
        created.id,
        "owner@example.com",
        "inactive",
    )


def test_the_sdk_creates_an_onboarding_link_that_opens_once(
    client: stripe.StripeClient, sandbox: PaymentsSandboxServer
) -> None:
    created = client.v1.accounts.create({"type": "express"})
    # When the SDK creates an onboarding link
    link = client.v1.account_links.create(
        {"account": created.id, "type": "account_onboarding", "refresh_url": REFRESH, "return_url": RETURN}
    )
    # Then it is on the sandbox, lives 300 s, opens the consent page once, then goes to refresh_url
    assert link.url.startswith(f"{sandbox.url}/setup/s/{created.id}/")
    assert link.expires_at - link.created == 300
    first, second = httpx.get(link.url), httpx.get(link.url)
    assert first.status_code == 200
    assert "Agree and submit" in first.text
    assert (second.status_code, second.headers["location"]) == (302, REFRESH)


def test_the_sdk_creates_and_retrieves_a_session_on_the_connected_account(
    client: stripe.StripeClient, account: str, sandbox: PaymentsSandboxServer, admin: httpx.Client
) -> None:
    # When the SDK creates a session with the account option, then reads it with its line items
    session = client.v1.checkout.sessions.create(MUG, options={"stripe_account": account})
    read = client.v1.checkout.sessions.retrieve(
        session.id, {"expand": ["line_items"]}, options={"stripe_account": account}
    )
    # Then the session is open on the account, with its hosted page and totals in cents
    assert session.id.startswith("cs_test_")
    assert session.url.startswith(f"{sandbox.url}/c/pay/")
    assert (read.status, read.payment_status, read.amount_total, read.currency) == (
        "open",
        "unpaid",
        2500,
        "usd",
    )
    assert (read.client_reference_id, read.metadata.to_dict()) == ("org-1/p-mug", MUG["metadata"])
    assert [(item.description, item.quantity) for item in read.line_items.data] == [("Mug", 2)]
    # And the SDK sent the account header and an idempotency key of its own
    [logged] = admin.get("/requests", params={"path": "^/v1/checkout/sessions$"}).json()["requests"]
    assert logged["account"] == account
    assert logged["idempotency_key"]
    assert logged["stripe_version"] == stripe.api_version


def test_a_session_is_not_found_without_the_account_header(client: stripe.StripeClient, account: str) -> None:
    session = client.v1.checkout.sessions.create(MUG, options={"stripe_account": account})
    with pytest.raises(stripe.InvalidRequestError) as raised:
        client.v1.checkout.sessions.retrieve(session.id)
    assert (raised.value.http_status, raised.value.code) == (404, "resource_missing")


def test_the_sdk_expires_a_session_and_verifies_the_webhook(
    client: stripe.StripeClient,
    account: str,
    endpoint: stripe.WebhookEndpoint,
    receiver: WebhookReceiver,
) -> None:
    session = client.v1.checkout.sessions.create(MUG, options={"stripe_account": account})
    # When the SDK expires it
    expired = client.v1.checkout.sessions.expire(session.id, options={"stripe_account": account})
    assert (expired.status, expired.url) == ("expired", None)
    # Then the receiver gets checkout.session.expired, which the SDK verifies with the endpoint's secret
    deliveries = receiver.wait_for(of_type("checkout.session.expired"))
    [delivery] = [d for d in deliveries if json.loads(d.body)["type"] == "checkout.session.expired"]
    event = verified(delivery, endpoint.secret)
    assert (event.account, event.data.object.id, event.data.object.status) == (account, session.id, "expired")


def test_a_paid_session_delivers_a_completed_event_the_sdk_verifies(
    client: stripe.StripeClient,
    account: str,
    endpoint: stripe.WebhookEndpoint,
    receiver: WebhookReceiver,
    admin: httpx.Client,
) -> None:
    session = client.v1.checkout.sessions.create(MUG, options={"stripe_account": account})
    # When the customer pays with the success card on the hosted page
    paid = admin.post(f"/checkout/sessions/{session.id}/pay", json={"card": "4242 4242 4242 4242"}).json()
    assert paid["location"] == f"http://127.0.0.1:9/checkout/paid?session={session.id}"
    # Then checkout.session.completed arrives signed, and the SDK's verified event is the paid session
    deliveries = receiver.wait_for(of_type("checkout.session.completed"))
    [delivery] = [d for d in deliveries if json.loads(d.body)["type"] == "checkout.session.completed"]
    event = verified(delivery, endpoint.secret)
    assert event.account == account
    assert (event.data.object.id, event.data.object.payment_status) == (session.id, "paid")
    assert event.data.object.client_reference_id == "org-1/p-mug"
    assert event.data.object.amount_total == 2500


def test_a_forged_delivery_fails_the_sdks_verification(
    endpoint: stripe.WebhookEndpoint, client: stripe.StripeClient, account: str, receiver: WebhookReceiver
) -> None:
    session = client.v1.checkout.sessions.create(MUG, options={"stripe_account": account})
    client.v1.checkout.sessions.expire(session.id, options={"stripe_account": account})
    delivery = receiver.wait_for(of_type("checkout.session.expired"))[-1]
    with pytest.raises(stripe.SignatureVerificationError):
        stripe.Webhook.construct_event(
            delivery.body.replace(b"expired", b"complete"), delivery.signature, endpoint.secret
        )
    with pytest.raises(stripe.SignatureVerificationError):
        stripe.Webhook.construct_event(delivery.body, delivery.signature, "whsec_not_the_secret")


def test_the_sdks_retry_after_a_lost_answer_makes_one_session(
    sandbox: PaymentsSandboxServer, account: str, admin: httpx.Client
) -> None:
    # Given the create runs but its answer is lost to a 500, and the SDK retries on its own
    admin.post("/faults", json={"kind": "lost_answer", "path": "^/v1/checkout/sessions$"}).raise_for_status()
    retrying = sdk(sandbox, max_network_retries=2)
    # When the SDK creates the session
    session = retrying.v1.checkout.sessions.create(MUG, options={"stripe_account": account})
    # Then its retry carried the same key and got the saved answer: one session exists
    logged = admin.get("/requests", params={"path": "^/v1/checkout/sessions$"}).json()["requests"]
    assert [(entry["status"], entry["replayed"]) for entry in logged] == [(500, False), (200, True)]
    assert logged[0]["idempotency_key"] == logged[1]["idempotency_key"]
    held = admin.get("/state").json()["checkout_sessions"]
    assert [s["id"] for s in held] == [session.id]


def test_an_explicit_idempotency_key_replays_and_refuses_other_parameters(
    client: stripe.StripeClient, account: str
) -> None:
    options: Any = {"stripe_account": account, "idempotency_key": "checkout-org-1-p-mug-1"}
    first = client.v1.checkout.sessions.create(MUG, options=options)
    again = client.v1.checkout.sessions.create(MUG, options=options)
    assert again.id == first.id
    with pytest.raises(stripe.IdempotencyError):
        client.v1.checkout.sessions.create({**MUG, "client_reference_id": "org-1/p-cup"}, options=options)


def test_the_providers_errors_are_the_sdks_exceptions(
    sandbox: PaymentsSandboxServer, client: stripe.StripeClient, account: str, admin: httpx.Client
) -> None:
    with pytest.raises(stripe.AuthenticationError):
        sdk(sandbox, "sk_test_not_the_platform").v1.accounts.retrieve(account)
    with pytest.raises(stripe.PermissionError):
        client.v1.checkout.sessions.create(MUG, options={"stripe_account": "acct_not_connected"})
    with pytest.raises(stripe.InvalidRequestError) as missing:
        client.v1.checkout.sessions.create({**MUG, "mode": None}, options={"stripe_account": account})
    assert (missing.value.code, missing.value.param) == ("parameter_missing", "mode")
    admin.post("/faults", json={"kind": "rate_limit", "path": "^/v1/accounts"}).raise_for_status()
    with pytest.raises(stripe.RateLimitError):
        client.v1.accounts.retrieve(account)


def test_the_local_stack_runs_the_sandbox_for_the_functions(stack: LocalStack) -> None:
    # Given the environment the local stack gives the functions, and the key it put in the payments secret
    url = os.environ["PAYMENTS_API_URL"]
    secret = stack.client("secretsmanager").get_secret_value(SecretId=stack.physical["PaymentsSecrets"].ref)
    key = json.loads(secret["SecretString"])["secret_key"]
    # When the SDK is pointed at it
    created = stripe.StripeClient(key, base_addresses={"api": url, "connect": url}).v1.accounts.create(
        {"type": "express"}
    )
    # Then it is the stack's payments sandbox that holds the account
    assert url == stack.payments.url
    held = httpx.get(f"{url}/_admin/state").json()["accounts"]
    assert created.id in [held_account["id"] for held_account in held]
