"""The provider's webhook through the local stack (issue 22, item 4): the payments sandbox delivers
signed events to the endpoint the stack registered, as the provider would to a deployed service; a paid
session becomes one order of its organization, a redelivery is acknowledged and ignored, a forged or
replayed delivery is refused, declined cards and expired sessions are recorded."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import httpx
import pytest
import stripe

from local.connected import connected_org
from local.payments_browser import connect_payments
from local.stack import LocalStack
from platform_sandbox.scenarios import PIXEL_ID
from shared import wiring
from tests.integration.patience import BACKGROUND_JOB_SECONDS, REQUEST_SECONDS
from tests.integration.payments_shop import PaymentsShop, shop_taking_payments, sync_products
from tests.integration.test_purchase_events import purchases_of

pytestmark = pytest.mark.integration

SUCCESS_CARD = "4242 4242 4242 4242"
DECLINED_CARD = "4000 0000 0000 0002"


def new_session(api: httpx.Client, shop: PaymentsShop, product: str = "p-mug", quantity: int = 2) -> str:
    """A shopper's checkout started on the product page; the provider's session id."""
    answered = api.post(
        f"/checkout/{shop.org.org_id}/{product}",
        content=f"quantity={quantity}",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert answered.status_code == 303, answered.text
    return str(answered.headers["location"]).rsplit("/", 1)[1]


def pay(payments: httpx.Client, session_id: str, card: str = SUCCESS_CARD) -> dict[str, Any]:
    answered = payments.post(
        f"/checkout/sessions/{session_id}/pay",
        json={"card": card, "email": "ada@example.com", "name": "Ada Lovelace"},
    )
    assert answered.status_code == 200, answered.text
    paid: dict[str, Any] = answered.json()
    return paid


def orders(api: httpx.Client, shop: PaymentsShop) -> dict[str, Any]:
    listed = api.get("/payments/orders", headers=shop.org.headers)
    assert listed.status_code == 200, listed.text
    body: dict[str, Any] = listed.json()
    return body


def eventually(found: Callable[[], Any], timeout: float = BACKGROUND_JOB_SECONDS) -> Any:
    """``found()`` once it is truthy (the sandbox delivers in the background)."""
    deadline = time.monotonic() + timeout
    while not (value := found()):
        assert time.monotonic() < deadline, "not within the time"
        time.sleep(0.2)
    return value


def event_of(payments: httpx.Client, kind: str, session_id: str) -> dict[str, Any]:
    """The provider's event of ``kind`` about ``session_id``, once every delivery of it was answered."""

    def delivered() -> dict[str, Any] | None:
        for event in payments.get("/events", params={"type": kind}).json()["events"]:
            if session_id in json.dumps(event["data"]["object"]) and all(
                d["attempts"] for d in event["deliveries"]
            ):
                return dict(event)
        return None

    return dict(eventually(delivered))


def our_attempts(event: dict[str, Any], stack: LocalStack) -> list[dict[str, Any]]:
    """The attempts to deliver ``event`` to the service's own endpoint (tests register others)."""
    ours = {
        e["id"]
        for e in httpx.get(f"{stack.payments.url}/_admin/state", timeout=REQUEST_SECONDS).json()[
            "webhook_endpoints"
        ]
        if e["url"] == f"{stack.api_url}/payments/webhook"
    }
    return [a for d in event["deliveries"] if d["endpoint"] in ours for a in d["attempts"]]


def test_a_paid_session_becomes_one_order_of_its_organization(
    api: httpx.Client, shop: PaymentsShop, payments: httpx.Client, stack: LocalStack
) -> None:
    # Given: a shopper's session for two mugs
    session_id = new_session(api, shop)
    # When: the shopper pays with the success card on the provider's page
    paid = pay(payments, session_id)
    assert paid["outcome"] == "succeeds"
    # Then: the completed event reaches the service, which answers 200, and the order is listed
    event = event_of(payments, "checkout.session.completed", session_id)
    assert [a["status"] for a in our_attempts(event, stack)] == [200]
    listed = eventually(lambda: [o for o in orders(api, shop)["orders"] if o["orderId"] == session_id])
    [order] = listed
    assert (order["productId"], order["quantity"], order["amountTotal"], order["amount"]) == (
        "p-mug",
        2,
        2500,
        "$25.00",
    )
    # And the checkout is paid, and the buyer's details are in the data bucket for the next sync,
    # never in the table
    checkout_id = session_of(payments, session_id)["client_reference_id"]
    record = wiring.payments_store().get_checkout(shop.org.org_id, checkout_id)
    assert record is not None
    assert record.state == "paid"
    buyer = json.loads(wiring.data_blobs().get(f"checkout-orders/{shop.org.org_id}/{session_id}.json"))
    assert (buyer["email"], buyer["name"], buyer["amount_total"]) == ("ada@example.com", "Ada Lovelace", 2500)
    table = wiring.table(stack.physical["MainTable"].ref)
    items = table.query(
        KeyConditionExpression="pk = :pk", ExpressionAttributeValues={":pk": f"ORG#{shop.org.org_id}"}
    )
    assert "ada@example.com" not in json.dumps(items["Items"], default=str)
    # And with no ad account connected, its Purchase is counted not sent, under the hosted checkout
    report = api.get("/platform-ads/events", params={"days": 14}, headers=shop.org.headers).json()
    [checkout] = [row for row in report["bySource"] if row["source"] == "checkout"]
    assert (checkout["eventName"], checkout["sent"], checkout["notSent"] >= 1) == ("Purchase", 0, True)


def session_of(payments: httpx.Client, session_id: str) -> dict[str, Any]:
    [held] = [s for s in payments.get("/state").json()["checkout_sessions"] if s["id"] == session_id]
    return dict(held)


def test_a_redelivered_event_is_acknowledged_and_makes_no_second_order(
    api: httpx.Client, shop: PaymentsShop, payments: httpx.Client, stack: LocalStack
) -> None:
    # Given: a paid session whose order exists
    session_id = new_session(api, shop, quantity=1)
    pay(payments, session_id)
    event = event_of(payments, "checkout.session.completed", session_id)
    eventually(lambda: [o for o in orders(api, shop)["orders"] if o["orderId"] == session_id])
    # When: the provider delivers the same event again, twice
    for _ in range(2):
        resent = payments.post(f"/events/{event['id']}/resend", json={}).json()["attempts"]
        # Then: each redelivery is acknowledged
        assert 200 in [a["status"] for a in resent]
    # And the order exists once
    assert [o["orderId"] for o in orders(api, shop)["orders"]].count(session_id) == 1


def signed(payload: str, secret: str, timestamp: int | None = None) -> str:
    return stripe.WebhookSignature.generate_signature_header(payload, secret, timestamp=timestamp)


def webhook_secret(stack: LocalStack) -> str:
    value = stack.client("secretsmanager").get_secret_value(SecretId=stack.physical["PaymentsSecrets"].ref)
    secret: str = json.loads(value["SecretString"])["webhook_secret"]
    return secret


def test_a_forged_delivery_is_refused_and_records_nothing(
    api: httpx.Client, shop: PaymentsShop, payments: httpx.Client, stack: LocalStack
) -> None:
    # Given: a genuine completed event's body, for a session nobody paid
    session_id = new_session(api, shop)
    pay(payments, session_id)
    genuine = event_of(payments, "checkout.session.completed", session_id)
    body = json.dumps({**genuine, "id": "evt_forged"} | {"deliveries": None})
    # When: it arrives signed with another secret, or with its genuine signature over a changed body
    other_secret = api.post(
        "/payments/webhook", content=body, headers={"Stripe-Signature": signed(body, "whsec_not_ours")}
    )
    changed = body.replace('"amount_total": 2500', '"amount_total": 1')
    tampered = api.post(
        "/payments/webhook",
        content=changed,
        headers={"Stripe-Signature": signed(body, webhook_secret(stack))},
    )
    unsigned = api.post("/payments/webhook", content=body)
    # Then: each is refused as unauthenticated, and nothing of it is recorded
    for refused in (other_secret, tampered, unsigned):
        assert refused.status_code == 401, refused.text
        assert refused.json()["error"]["code"] == "unauthorized"
    claim = wiring.table(stack.physical["MainTable"].ref).get_item(
        Key={"pk": f"ORG#{shop.org.org_id}", "sk": "PAYEVENT#evt_forged"}
    )
    assert "Item" not in claim


def test_a_replayed_delivery_older_than_the_tolerance_is_refused(
    api: httpx.Client, shop: PaymentsShop, payments: httpx.Client, stack: LocalStack
) -> None:
    # Given: an event the service has received
    session_id = new_session(api, shop, quantity=1)
    pay(payments, session_id)
    event = event_of(payments, "checkout.session.completed", session_id)
    # When: it is delivered again signed ten minutes ago (a captured delivery replayed)
    replayed = payments.post(f"/events/{event['id']}/resend", json={"timestamp": int(time.time()) - 600})
    # Then: the service refuses it
    ours = {a["endpoint"] for a in replayed.json()["attempts"] if a["status"] == 401}
    assert ours, replayed.text
    # And a delivery signed now is still acknowledged (the tolerance is on the time, not the event)
    again = payments.post(f"/events/{event['id']}/resend", json={})
    assert 200 in [a["status"] for a in again.json()["attempts"]]


def test_a_declined_card_is_recorded_on_its_checkout_and_makes_no_order(
    api: httpx.Client, shop: PaymentsShop, payments: httpx.Client
) -> None:
    # Given: a shopper's session
    session_id = new_session(api, shop, product="p-teapot", quantity=1)
    # When: the card is declined
    declined = pay(payments, session_id, DECLINED_CARD)
    assert declined["outcome"] != "succeeds"
    # Then: the refusal is recorded on the checkout, which is still open for another card
    checkout_id = session_of(payments, session_id)["client_reference_id"]

    def refused() -> Any:
        record = wiring.payments_store().get_checkout(shop.org.org_id, checkout_id)
        return record if record and record.failed_attempts else None

    record = eventually(refused)
    assert (record.state, record.failed_attempts, record.last_failure) == ("open", 1, "generic_decline")
    assert session_id not in [o["orderId"] for o in orders(api, shop)["orders"]]


def test_an_expired_session_is_listed_unpaid_with_its_refused_cards(
    api: httpx.Client, shop: PaymentsShop, payments: httpx.Client, stack: LocalStack
) -> None:
    # Given: a session on which a card was declined, then left
    session_id = new_session(api, shop, product="p-teapot", quantity=3)
    pay(payments, session_id, DECLINED_CARD)
    checkout_id = session_of(payments, session_id)["client_reference_id"]
    # When: the provider expires it (as it does when its time runs out)
    connection = wiring.payments_store().get_connection(shop.org.org_id)
    assert connection is not None
    account = wiring.payments_connection_status().account_id(connection)
    expired = httpx.post(
        f"{stack.payments.url}/v1/checkout/sessions/{session_id}/expire",
        headers={"Authorization": f"Bearer {stack.payments.config.secret_key}", "Stripe-Account": account},
        timeout=REQUEST_SECONDS,
    )
    assert expired.status_code == 200, expired.text
    # Then: the dashboard lists it unpaid, expired, with the refusal
    unpaid = eventually(lambda: [c for c in orders(api, shop)["unpaid"] if c["checkoutId"] == checkout_id])
    [shown] = unpaid
    assert (shown["state"], shown["failedAttempts"], shown["lastFailure"], shown["amount"]) == (
        "expired",
        1,
        "generic_decline",
        "$90.00",
    )


def test_an_event_of_a_session_the_service_did_not_start_is_acknowledged_and_ignored(
    api: httpx.Client, shop: PaymentsShop, payments: httpx.Client, stack: LocalStack
) -> None:
    # Given: the merchant's own session on their account (another integration of theirs)
    connection = wiring.payments_store().get_connection(shop.org.org_id)
    assert connection is not None
    account = wiring.payments_connection_status().account_id(connection)
    client = stripe.StripeClient(stack.payments.config.secret_key, base_addresses={"api": stack.payments.url})
    theirs = client.v1.checkout.sessions.create(
        {
            "mode": "payment",
            "line_items": [
                {
                    "price_data": {"currency": "usd", "unit_amount": 500, "product_data": {"name": "Tea"}},
                    "quantity": 1,
                }
            ],
            "success_url": "https://shop.example.com/thanks",
        },
        options={"stripe_account": account},
    )
    before = len(orders(api, shop)["orders"])
    # When: it is paid
    pay(payments, theirs.id)
    event = event_of(payments, "checkout.session.completed", theirs.id)
    # Then: the service acknowledged it and made no order of it
    assert [a["status"] for a in our_attempts(event, stack)] == [200]
    assert len(orders(api, shop)["orders"]) == before


def test_account_updated_changes_the_connection_status(
    api: httpx.Client, stack: LocalStack, payments: httpx.Client
) -> None:
    # Given: a shop of its own taking payments
    own = shop_taking_payments(stack, business_name="Changing Shop")
    connection = wiring.payments_store().get_connection(own.org.org_id)
    assert connection is not None
    account = wiring.payments_connection_status().account_id(connection)
    # When: the provider disables its charges (a new requirement)
    changed = payments.patch(
        f"/accounts/{account}", json={"charges_enabled": False, "currently_due": ["external_account"]}
    )
    assert changed.status_code == 200, changed.text
    # Then: the status says so, with what is missing, and the checkout is no longer offered
    status = eventually(
        lambda: (
            (s := api.get("/payments/status", headers=own.org.headers).json())["chargesEnabled"] is False
            and s
        )
    )
    assert (status["status"], status["checkoutAvailable"], status["missing"]) == (
        "onboarding",
        False,
        ["a bank account for payouts"],
    )
    assert api.get(f"/checkout/{own.org.org_id}/p-mug").status_code == 404


def test_a_paid_order_reaches_the_pixel_as_a_purchase_with_the_session_as_event_id(
    api: httpx.Client, stack: LocalStack, payments: httpx.Client
) -> None:
    # Given: a shop whose ad account (with its pixel) is connected, taking payments
    org = connected_org(stack, api)
    assert connect_payments(stack.api_url, org.headers["Authorization"]).json()["checkoutAvailable"] is True
    sync_products(api, org)
    shop = PaymentsShop(org, "", "")
    # When: a shopper pays two mugs
    session_id = new_session(api, shop)
    pay(payments, session_id)
    event = event_of(payments, "checkout.session.completed", session_id)

    # Then: the pixel received one Purchase, its event id the session's, for the order's value
    def purchase() -> dict[str, Any] | None:
        received = httpx.get(
            f"{stack.sandbox.url}/_admin/pixels/{PIXEL_ID}/events",
            params={"event_name": "Purchase"},
            timeout=REQUEST_SECONDS,
        ).json()["events"]
        found = [entry["event"] for entry in received if entry["event"].get("event_id") == session_id]
        return found[0] if found else None

    sent = eventually(purchase)
    assert sent["custom_data"]["value"] == 25.0
    assert sent["custom_data"]["currency"] == "USD"
    assert sent["custom_data"]["contents"] == [{"id": "p-mug", "quantity": 2, "item_price": 12.5}]
    assert sent["action_source"] == "website"
    assert sent["event_source_url"] == f"{stack.api_url}/checkout/{org.org_id}/p-mug"
    assert sent["user_data"]["em"]
    assert "ada@example.com" not in json.dumps(sent)
    # And a redelivery of the event is kept once by the pixel
    payments.post(f"/events/{event['id']}/resend", json={})
    pixel = httpx.get(
        f"{stack.sandbox.url}/_admin/pixels/{PIXEL_ID}/events",
        params={"event_name": "Purchase"},
        timeout=REQUEST_SECONDS,
    )
    assert [e["event"]["event_id"] for e in pixel.json()["events"]].count(session_id) == 1


def test_a_paid_order_joins_the_next_sync_whose_purchase_of_it_the_pixel_keeps_once(
    api: httpx.Client, stack: LocalStack, payments: httpx.Client, tmp_path: Path
) -> None:
    # Given: a shop whose ad account is connected, taking payments, whose shopper paid two mugs, the
    # webhook's Purchase at the pixel
    org = connected_org(stack, api)
    assert connect_payments(stack.api_url, org.headers["Authorization"]).json()["checkoutAvailable"] is True
    sync_products(api, org)
    session_id = new_session(api, PaymentsShop(org, "", ""))
    pay(payments, session_id)
    eventually(lambda: pixel_purchases(stack, session_id))
    # When: the shop syncs its files again
    sync_products(api, org)
    # Then: the new version holds the order under the session id, the buyer a customer by e-mail
    version = wiring.dataset_store().latest(org.org_id)
    assert version is not None
    [order] = [o for o in parquet_rows(version.keys["orders"], tmp_path) if o["order_id"] == session_id]
    assert (order["product_id"], order["quantity"], order["amount"]) == ("p-mug", 2, 25.0)
    [buyer] = [
        c for c in parquet_rows(version.keys["customers"], tmp_path) if c["user_id"] == order["user_id"]
    ]
    assert (buyer["email"], buyer["first_name"], buyer["last_name"]) == ("ada@example.com", "Ada", "Lovelace")
    # And the sync sent its purchase with the webhook's event id, which the pixel kept once
    sent = purchases_of(org, version.version)
    assert (sent.state, sent.new_orders, sent.sent) == ("sent", 1, 1)
    assert [entry["deduplicated"] for entry in pixel_purchases(stack, session_id)] == [False, True]


def pixel_purchases(stack: LocalStack, event_id: str) -> list[dict[str, Any]]:
    """What the pixel received of ``event_id`` as a Purchase, oldest first, each marked deduplicated
    or not."""
    received = httpx.get(
        f"{stack.sandbox.url}/_admin/pixels/{PIXEL_ID}/events",
        params={"event_name": "Purchase"},
        timeout=REQUEST_SECONDS,
    ).json()["events"]
    return [entry for entry in received if entry["event"].get("event_id") == event_id]


def parquet_rows(key: str, tmp_path: Path) -> list[dict[str, Any]]:
    path = tmp_path / key.rsplit("/", 1)[-1]
    path.write_bytes(wiring.data_blobs().get(key))
    found = duckdb.connect().execute("SELECT * FROM read_parquet($path)", {"path": str(path)})
    names = [column[0] for column in found.description]
    return [dict(zip(names, row, strict=True)) for row in found.fetchall()]
