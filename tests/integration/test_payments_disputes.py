"""Disputes through the local stack (docs/payments-notes.md §4.4): a shopper pays with the provider's
dispute test card, the card's bank disputes the charge, the sandbox delivers the ``charge.dispute.*``
events signed to the service's endpoint, and the order shows Disputed with what the merchant must
do; the merchant answers with the provider's SDK (the test mode's winning evidence), the dispute is
won, and a late redelivery of the opening event moves nothing back."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from local.stack import LocalStack
from shared import wiring
from tests.integration.payments_shop import PaymentsShop
from tests.integration.test_payments_refunds import provider
from tests.integration.test_payments_webhooks import (
    event_of,
    eventually,
    new_session,
    orders,
    our_attempts,
    pay,
)

pytestmark = pytest.mark.integration

DISPUTE_CARD = "4000 0000 0000 0259"  # succeeds, then is disputed as fraudulent


def disputed(api: httpx.Client, shop: PaymentsShop, session_id: str, status: str) -> dict[str, Any] | None:
    """The order of ``session_id`` once its dispute is ``status`` (None before: the webhooks come in the
    background)."""
    found = [
        o for o in orders(api, shop)["orders"] if o["orderId"] == session_id and o["disputeStatus"] == status
    ]
    return found[0] if found else None


def submit_evidence(payments: httpx.Client, stack: LocalStack, session_id: str, text: str) -> dict[str, Any]:
    """The merchant answers the dispute of ``session_id``'s payment with the provider's SDK, ``text``
    as evidence (the test mode's ``winning_evidence`` or ``losing_evidence``); the session as the
    sandbox holds it."""
    [held] = [s for s in payments.get("/state").json()["checkout_sessions"] if s["id"] == session_id]
    client = provider(stack)
    [dispute] = client.v1.disputes.list(
        {"payment_intent": held["payment_intent"]}, options={"stripe_account": held["account"]}
    ).data
    client.v1.disputes.update(
        dispute.id, {"evidence": {"uncategorized_text": text}}, options={"stripe_account": held["account"]}
    )
    return held


def test_a_chargeback_shows_on_the_order_until_the_merchant_wins_it(
    api: httpx.Client, shop: PaymentsShop, payments: httpx.Client, stack: LocalStack
) -> None:
    # Given: a shopper pays for two mugs (25.00) with the dispute test card
    session_id = new_session(api, shop)
    pay(payments, session_id, card=DISPUTE_CARD)
    # Then: the order is shown disputed: amount, reason, and the response due at the provider
    order = eventually(lambda: disputed(api, shop, session_id, "needs_response"))
    assert (order["disputedAmount"], order["amountDisputed"], order["disputeReason"]) == (
        "$25.00",
        2500,
        "fraudulent",
    )
    assert order["disputeDueBy"] > order["disputedAt"]
    assert "Respond to the dispute in your payment provider's dashboard by" in order["disputeNextStep"]
    # When: the merchant submits evidence at the provider (the test mode's winning evidence)
    held = submit_evidence(payments, stack, session_id, "winning_evidence")
    # Then: the order shows the dispute won, nothing left to do
    order = eventually(lambda: disputed(api, shop, session_id, "won"))
    assert order["disputeNextStep"] == "Won: the disputed amount stays yours. Nothing to do."
    # And the service answered each signed delivery 200; the opening event delivered again, late,
    # moves nothing back
    opened = event_of(payments, "charge.dispute.created", held["payment_intent"])
    assert [a["status"] for a in our_attempts(opened, stack)][-1:] == [200]
    resent = payments.post(f"/events/{opened['id']}/resend", json={}).json()["attempts"]
    assert 200 in [a["status"] for a in resent]
    assert disputed(api, shop, session_id, "won") is not None


def test_a_lost_chargeback_is_taken_off_what_the_next_sync_learns_from(
    api: httpx.Client, shop: PaymentsShop, payments: httpx.Client, stack: LocalStack
) -> None:
    # Given: an order paid with the dispute test card, disputed
    session_id = new_session(api, shop)
    pay(payments, session_id, card=DISPUTE_CARD)
    eventually(lambda: disputed(api, shop, session_id, "needs_response"))
    # (an open dispute leaves the purchase for the models)
    assert session_id not in wiring.payments_store().refunded_orders(shop.org.org_id)
    # When: the merchant's evidence loses (the test mode's losing evidence)
    submit_evidence(payments, stack, session_id, "losing_evidence")
    # Then: the order shows the dispute lost, and the next sync takes its 25.00 off (the whole order)
    eventually(lambda: disputed(api, shop, session_id, "lost"))
    assert wiring.payments_store().refunded_orders(shop.org.org_id)[session_id] == 2500
