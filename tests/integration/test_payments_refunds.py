"""Refunds through the local stack (docs/payments-notes.md §4.4): the merchant refunds a paid order at
the payment provider (here with the provider's SDK against the payments sandbox, as the provider's
dashboard or API would), the sandbox delivers ``charge.refunded`` signed to the service's endpoint,
and the order is shown refunded in part, then in whole; a redelivery changes nothing. The next sync
(the sync job under its own role) leaves an order refunded in full out of the data the models learn
from, and lists one refunded in part at the amount kept."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
import stripe

from local.stack import LocalStack
from shared import wiring
from tests.integration.payments_shop import PaymentsShop, sync_products
from tests.integration.test_payments_webhooks import (
    event_of,
    eventually,
    new_session,
    orders,
    our_attempts,
    parquet_rows,
    pay,
)

pytestmark = pytest.mark.integration


def provider(stack: LocalStack) -> stripe.StripeClient:
    """The provider's SDK as the merchant's platform key would use it."""
    return stripe.StripeClient(
        stack.payments.config.secret_key,
        base_addresses={"api": stack.payments.url, "connect": stack.payments.url},
        max_network_retries=0,
    )


def refund_state(api: httpx.Client, shop: PaymentsShop, session_id: str, wanted: str) -> dict | None:
    [order] = [o for o in orders(api, shop)["orders"] if o["orderId"] == session_id]
    return order if order["refunded"] == wanted else None


def test_a_refund_at_the_provider_shows_on_the_order_partial_then_full(
    api: httpx.Client, shop: PaymentsShop, payments: httpx.Client, stack: LocalStack
) -> None:
    # Given: a paid order of two mugs (25.00)
    session_id = new_session(api, shop)
    pay(payments, session_id)
    eventually(lambda: [o for o in orders(api, shop)["orders"] if o["orderId"] == session_id])
    [held] = [s for s in payments.get("/state").json()["checkout_sessions"] if s["id"] == session_id]
    client = provider(stack)
    # When: the merchant refunds 10.00 of it at the provider
    client.v1.refunds.create(
        {"payment_intent": held["payment_intent"], "amount": 1000},
        options={"stripe_account": held["account"]},
    )
    # Then: the order shows a partial refund of $10.00
    order = eventually(lambda: refund_state(api, shop, session_id, "partial"))
    assert (order["amountRefunded"], order["refundedAmount"], order["amount"]) == (1000, "$10.00", "$25.00")
    # When: the rest is refunded
    client.v1.refunds.create(
        {"payment_intent": held["payment_intent"]}, options={"stripe_account": held["account"]}
    )
    # Then: the order is refunded in full
    order = eventually(lambda: refund_state(api, shop, session_id, "full"))
    assert order["refundedAmount"] == "$25.00"
    # And the service answered each signed delivery 200; a redelivery changes nothing
    delivered = event_of(payments, "charge.refunded", held["payment_intent"])
    assert [a["status"] for a in our_attempts(delivered, stack)][-1:] == [200]
    resent = payments.post(f"/events/{delivered['id']}/resend", json={}).json()["attempts"]
    assert 200 in [a["status"] for a in resent]
    [order] = [o for o in orders(api, shop)["orders"] if o["orderId"] == session_id]
    assert (order["refunded"], order["amountRefunded"]) == ("full", 2500)


def test_the_next_sync_learns_from_what_the_merchant_kept(
    api: httpx.Client, shop: PaymentsShop, payments: httpx.Client, stack: LocalStack, tmp_path: Path
) -> None:
    # Given: two paid orders of two mugs (25.00 each), one refunded in full at the provider, the other
    # 10.00 of it
    returned, kept = new_session(api, shop), new_session(api, shop)
    pay(payments, returned)
    pay(payments, kept)
    held = {s["id"]: s for s in payments.get("/state").json()["checkout_sessions"]}
    eventually(lambda: {returned, kept} <= {o["orderId"] for o in orders(api, shop)["orders"]})
    client = provider(stack)
    for session_id, amount in ((returned, {}), (kept, {"amount": 1000})):
        client.v1.refunds.create(
            {"payment_intent": held[session_id]["payment_intent"], **amount},
            options={"stripe_account": held[session_id]["account"]},
        )
    eventually(lambda: refund_state(api, shop, returned, "full") and refund_state(api, shop, kept, "partial"))
    # When: the shop syncs its files again
    sync_products(api, shop.org)
    # Then: the version's orders leave the returned one out, and hold the other at the 15.00 kept
    version = wiring.dataset_store().latest(shop.org.org_id)
    assert version is not None
    synced = {o["order_id"]: o for o in parquet_rows(version.keys["orders"], tmp_path)}
    assert returned not in synced
    assert (synced[kept]["quantity"], synced[kept]["amount"]) == (2, 15.0)
