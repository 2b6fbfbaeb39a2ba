"""The webhook's handling of the events the payments sandbox does not send (issue 22, item 4): a
delayed payment method's session, completed unpaid and then paid or failed later
(``checkout.session.async_payment_succeeded`` / ``async_payment_failed``), and a forged delivery's
log line, which never holds the body; refunds (``charge.refunded``) and disputes
(``charge.dispute.*``, whose Dispute names only the payment: its charge says whose it is) of the
orders. On moto's DynamoDB (the repository the function uses); the
deliveries are signed as the provider signs them, with its SDK."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import boto3
import pytest
import stripe

from local.stack import PAYMENTS_WEBHOOK_EVENTS
from shared.payments.orders import Orders
from shared.payments.provider import PaymentsUnavailable, ProviderAccount, ProviderCharge
from shared.payments.webhooks import DISPUTE_EVENTS, HANDLED_EVENTS, WebhookHandler, buyer_key
from shared.records.connections import EncryptedSecret
from shared.records.payments import CheckoutRecord, PaymentsConnection
from shared.repositories.payments import DynamoPaymentsStore
from tests.unit.moto_aws import REGION, offline_aws, table

ORG = "org-1"
ACCOUNT = "acct_1Shop"
SECRET = "whsec_test_secret"
NOW = datetime(2026, 11, 28, 12, 0, tzinfo=UTC)


class Accounts:
    """The connection's account id, as decrypting it gives it."""

    def account_id(self, connection: PaymentsConnection) -> str:
        return ACCOUNT

    def record_account(self, connection: PaymentsConnection, account: ProviderAccount) -> None:
        raise AssertionError("no account.updated in these tests")


@dataclass
class Bucket:
    objects: dict[str, bytes] = field(default_factory=dict)

    def put(self, key: str, data: bytes, content_type: str = "application/octet-stream") -> None:
        self.objects[key] = data

    def delete(self, key: str) -> None:
        self.objects.pop(key, None)


@dataclass
class Charges:
    """The provider's charges of the shop's account: ``ch_1`` paid the checkout's order (``pi_1``) and
    carries its intent's metadata, as the provider copies it."""

    charges: dict[str, ProviderCharge] = field(
        default_factory=lambda: {
            "ch_1": ProviderCharge("ch_1", "pi_1", {"org_id": ORG, "checkout_id": "chk-1"}),
            "ch_own": ProviderCharge("ch_own", "pi_own", {}),
        }
    )
    down: bool = False
    asked: list[tuple[str, str]] = field(default_factory=list)

    def retrieve_charge(self, account_id: str, charge_id: str) -> ProviderCharge | None:
        self.asked.append((account_id, charge_id))
        if self.down:
            raise PaymentsUnavailable("The payment provider is not answering right now.")
        return self.charges.get(charge_id) if account_id == ACCOUNT else None


@dataclass
class World:
    store: DynamoPaymentsStore
    buyers: Bucket
    handler: WebhookHandler
    charges: Charges


@pytest.fixture
def world(monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    with offline_aws(monkeypatch):
        store = DynamoPaymentsStore(table("main"), boto3.client("dynamodb", region_name=REGION))
        store.put_connection(
            PaymentsConnection(
                org_id=ORG,
                connection_id="conn-1",
                status="active",
                account=EncryptedSecret(ciphertext="c", encrypted_key="k", nonce="n"),
                charges_enabled=True,
            )
        )
        store.put_checkout(
            CheckoutRecord(
                org_id=ORG,
                checkout_id="chk-1",
                product_id="p-mug",
                product_name="Ada's Mug",
                quantity=2,
                unit_amount=1250,
                amount_total=2500,
                currency="usd",
                state="open",
                session_id="cs_test_delayed",
                created_at=NOW - timedelta(hours=1),
                updated_at=NOW - timedelta(hours=1),
            )
        )
        buyers, charges = Bucket(), Charges()
        handler = WebhookHandler(
            store=store,
            accounts=Accounts(),
            charges=charges,
            buyers=buyers,
            purchases=None,
            secret=SECRET,
            clock=lambda: NOW,
        )
        yield World(store, buyers, handler, charges)


def sent(event_id: str, kind: str, obj: dict[str, Any], **data: Any) -> dict[str, Any]:
    """An event of the shop's account about ``obj`` as the provider sends it."""
    return {
        "id": event_id,
        "object": "event",
        "type": kind,
        "account": ACCOUNT,
        "created": int(NOW.timestamp()),
        "data": {"object": obj, **data},
    }


def event(event_id: str, kind: str, payment_status: str) -> dict[str, Any]:
    return sent(
        event_id,
        kind,
        {
            "id": "cs_test_delayed",
            "object": "checkout.session",
            "payment_status": payment_status,
            "amount_total": 2500,
            "currency": "usd",
            "customer_details": {"email": "ada@example.com", "name": "Ada Lovelace"},
            "metadata": {"org_id": ORG, "checkout_id": "chk-1"},
        },
    )


def deliver(world: World, body: dict[str, Any], secret: str = SECRET) -> tuple[int, str]:
    payload = json.dumps(body)
    header = stripe.WebhookSignature.generate_signature_header(payload, secret)  # type: ignore[attr-defined]
    answer = world.handler.handle(payload.encode(), header)
    return answer.status, answer.outcome


def test_a_delayed_payment_makes_its_order_when_it_succeeds_not_when_the_session_completes(
    world: World,
) -> None:
    # Given: the session completes with its payment still processing (a delayed method)
    assert deliver(world, event("evt_1", "checkout.session.completed", "unpaid")) == (200, "awaiting_payment")
    assert Orders(world.store).view(ORG).orders == []
    # When: the payment succeeds later
    answered = deliver(world, event("evt_2", "checkout.session.async_payment_succeeded", "paid"))
    # Then: one order, the checkout paid, the buyer's file for the next sync
    assert answered == (200, "order_recorded")
    [order] = Orders(world.store).view(ORG).orders
    assert (order.order_id, order.quantity, order.amount) == ("cs_test_delayed", 2, "$25.00")
    checkout = world.store.get_checkout(ORG, "chk-1")
    assert checkout is not None
    assert checkout.state == "paid"
    assert json.loads(world.buyers.objects[buyer_key(ORG, "cs_test_delayed")])["email"] == "ada@example.com"


def test_a_delayed_payment_that_fails_is_recorded_and_listed_unpaid(world: World) -> None:
    # Given: the session completed, its payment processing
    deliver(world, event("evt_1", "checkout.session.completed", "unpaid"))
    # When: the payment fails later
    answered = deliver(world, event("evt_2", "checkout.session.async_payment_failed", "unpaid"))
    # Then: the checkout is recorded failed and listed among the checkouts not paid; no order
    assert answered == (200, "failed")
    view = Orders(world.store).view(ORG)
    assert view.orders == []
    assert [(c.checkout_id, c.state, c.amount) for c in view.unpaid] == [("chk-1", "failed", "$25.00")]
    assert world.buyers.objects == {}
    # And a redelivery of the failure is acknowledged and changes nothing
    assert deliver(world, event("evt_2", "checkout.session.async_payment_failed", "unpaid")) == (
        200,
        "duplicate",
    )


def test_a_failure_after_the_payment_succeeded_does_not_unpay_the_order(world: World) -> None:
    deliver(world, event("evt_1", "checkout.session.async_payment_succeeded", "paid"))
    assert deliver(world, event("evt_2", "checkout.session.async_payment_failed", "unpaid")) == (
        200,
        "already_paid",
    )
    view = Orders(world.store).view(ORG)
    assert ([o.order_id for o in view.orders], view.unpaid) == (["cs_test_delayed"], [])


def test_a_forged_delivery_is_refused_and_logged_without_its_body(
    world: World, caplog: pytest.LogCaptureFixture
) -> None:
    # When: a paid event arrives signed with another secret
    with caplog.at_level(logging.INFO):
        answered = deliver(
            world, event("evt_forged", "checkout.session.async_payment_succeeded", "paid"), "whsec_x"
        )
    # Then: refused, nothing recorded
    assert answered == (401, "signature_refused")
    assert Orders(world.store).view(ORG).orders == []
    # And the log says so, with the reason and the size, never the body (a buyer's details)
    [refused] = [r for r in caplog.records if r.getMessage() == "payments webhook refused"]
    assert refused.__dict__["bytes"] > 0
    assert refused.__dict__["reason"]
    logged = json.dumps([{**r.__dict__, "msg": r.getMessage()} for r in caplog.records], default=str)
    for detail in ("ada@example.com", "Ada Lovelace", "cs_test_delayed", "evt_forged"):
        assert detail not in logged


def test_a_body_that_is_not_utf8_is_refused_as_unsigned(world: World) -> None:
    # Given a delivery whose bytes are not UTF-8 (the provider sends JSON; the SDK decoded the body
    # first and its UnicodeDecodeError was a 500, found by the fuzzer), signed as the fuzzer signs
    payload = b"\x1eO=xp\xbd"
    header = stripe.WebhookSignature.generate_signature_header(  # type: ignore[attr-defined]
        payload.decode("latin-1"), SECRET
    )
    # When it arrives, then it is refused as a delivery that does not verify, and nothing is recorded
    answer = world.handler.handle(payload, header)
    assert (answer.status, answer.outcome) == (401, "signature_refused")
    assert Orders(world.store).view(ORG).orders == []


@pytest.mark.parametrize(
    "body",
    [
        {"id": "evt_1", "type": "checkout.session.completed", "data": "not an object"},
        {"id": "evt_1", "type": "checkout.session.completed", "data": {"object": ["a", "list"]}},
        {"id": "evt_1", "type": "checkout.session.completed", "data": {"object": {"metadata": "org-1"}}},
        {"id": "", "type": "account.updated", "data": {"object": {}}},
        {"type": "account.updated"},
        {**event("evt_1", "checkout.session.completed", "paid"), "created": 10**20},
    ],
)
def test_a_signed_body_of_another_shape_is_acknowledged_and_ignored(
    world: World, body: dict[str, Any]
) -> None:
    # Given a delivery signed with the endpoint's secret whose body is no event the service reads (the
    # fuzzer signs what openapi.json allows and what it does not; data as a string raised
    # AttributeError, a 500 the provider would deliver again for days)
    # When it arrives, then it is acknowledged and ignored, and nothing is recorded
    assert deliver(world, body) == (200, "ignored")
    assert Orders(world.store).view(ORG).orders == []


def paid_with_intent(world: World) -> None:
    """The order of the checkout, paid by the PaymentIntent ``pi_1``."""
    paid = event("evt_paid", "checkout.session.completed", "paid")
    paid["data"]["object"]["payment_intent"] = "pi_1"
    assert deliver(world, paid) == (200, "order_recorded")


def refunded(event_id: str, amount_refunded: int, *, intent: str = "pi_1") -> dict[str, Any]:
    """``charge.refunded`` as the provider sends it: the charge, with its intent's metadata."""
    return sent(
        event_id,
        "charge.refunded",
        {
            "id": "ch_1",
            "object": "charge",
            "amount": 2500,
            "amount_refunded": amount_refunded,
            "refunded": amount_refunded >= 2500,
            "currency": "usd",
            "payment_intent": intent,
            "metadata": {"org_id": ORG, "checkout_id": "chk-1"},
        },
        previous_attributes={"amount_refunded": 0},
    )


def test_a_partial_then_a_full_refund_are_recorded_on_the_order(world: World) -> None:
    # Given: a paid order
    paid_with_intent(world)
    # When: the provider says 10.00 of it was refunded
    assert deliver(world, refunded("evt_r1", 1000)) == (200, "refund_recorded")
    # Then: the order is refunded in part, with the amount
    [order] = Orders(world.store).view(ORG).orders
    assert (order.refunded, order.amount_refunded, order.refunded_amount) == ("partial", 1000, "$10.00")
    assert order.refunded_at == NOW
    # And the next sync finds what was refunded of it
    assert world.store.refunded_orders(ORG) == {"cs_test_delayed": 1000}
    # When: the rest is refunded
    assert deliver(world, refunded("evt_r2", 2500)) == (200, "refund_recorded")
    # Then: the order is refunded in full
    [order] = Orders(world.store).view(ORG).orders
    assert (order.refunded, order.refunded_amount) == ("full", "$25.00")


def test_a_refund_delivered_twice_or_late_takes_nothing_back(world: World) -> None:
    # Given: an order refunded in full
    paid_with_intent(world)
    assert deliver(world, refunded("evt_r2", 2500)) == (200, "refund_recorded")
    # When: the same event is delivered again, and the earlier partial one arrives late
    assert deliver(world, refunded("evt_r2", 2500)) == (200, "duplicate")
    assert deliver(world, refunded("evt_r1", 1000)) == (200, "refund_unchanged")
    # Then: the order stays refunded in full, for the page and for the next sync
    [order] = Orders(world.store).view(ORG).orders
    assert (order.refunded, order.amount_refunded) == ("full", 2500)
    assert world.store.refunded_orders(ORG) == {"cs_test_delayed": 2500}


def test_a_refund_after_a_disconnect_is_still_recorded(world: World) -> None:
    # Given: a paid order, then the payments disconnected (the account id kept)
    paid_with_intent(world)
    connection = world.store.get_connection(ORG)
    assert connection is not None
    connection.status = "inactive"
    world.store.put_connection(connection)
    # When: the merchant refunds it at the provider
    assert deliver(world, refunded("evt_r1", 2500)) == (200, "refund_recorded")
    # Then: the order shows it
    [order] = Orders(world.store).view(ORG).orders
    assert order.refunded == "full"
    # But a session event of the disconnected account is still ignored
    assert deliver(world, event("evt_x", "checkout.session.expired", "unpaid")) == (200, "ignored")


def test_a_refund_of_a_payment_the_service_did_not_take_changes_nothing(world: World) -> None:
    paid_with_intent(world)
    assert deliver(world, refunded("evt_r1", 2500, intent="pi_other")) == (200, "unknown_order")
    [order] = Orders(world.store).view(ORG).orders
    assert order.refunded is None


OPENED = NOW + timedelta(days=3)
DUE = OPENED + timedelta(days=10)


def disputed(
    event_id: str, kind: str, status: str, *, charge: str = "ch_1", opened: datetime = OPENED
) -> dict[str, Any]:
    """A ``charge.dispute.*`` event as the provider sends it: the Dispute, which names the charge and
    its PaymentIntent and carries only its own (empty) metadata."""
    return sent(
        event_id,
        kind,
        {
            "id": "du_1",
            "object": "dispute",
            "amount": 2500,
            "currency": "usd",
            "charge": charge,
            "payment_intent": intent_of(charge),
            "reason": "fraudulent",
            "status": status,
            "created": int(opened.timestamp()),
            "evidence_details": {
                "due_by": int(DUE.timestamp()),
                "has_evidence": False,
                "past_due": False,
            },
            "is_charge_refundable": False,
            "metadata": {},
        },
    )


def intent_of(charge: str) -> str:
    return {"ch_1": "pi_1", "ch_own": "pi_own"}.get(charge, "pi_unknown")


def test_a_chargeback_marks_its_order_disputed_with_what_the_merchant_must_do(world: World) -> None:
    # Given: a paid order
    paid_with_intent(world)
    # When: the buyer's bank opens a dispute of its charge (the Dispute names no organization)
    assert deliver(world, disputed("evt_d1", "charge.dispute.created", "needs_response")) == (
        200,
        "dispute_recorded",
    )
    # Then: its charge was read on the event's account to learn whose it is
    assert world.charges.asked == [(ACCOUNT, "ch_1")]
    # And the order shows the dispute: status, amount, reason, when, and the response due at the provider
    [order] = Orders(world.store).view(ORG).orders
    assert (order.dispute_status, order.amount_disputed, order.disputed_amount, order.dispute_reason) == (
        "needs_response",
        2500,
        "$25.00",
        "fraudulent",
    )
    assert (order.disputed_at, order.dispute_due_by) == (OPENED, DUE)
    assert order.dispute_next_step is not None
    assert "payment provider's dashboard by 2026-12-11 12:00 UTC" in order.dispute_next_step
    # And the funds withdrawn with it change nothing more
    assert deliver(world, disputed("evt_d2", "charge.dispute.funds_withdrawn", "needs_response")) == (
        200,
        "dispute_unchanged",
    )


def test_a_dispute_moves_only_forward_whatever_order_its_events_arrive_in(world: World) -> None:
    # Given: a disputed order whose merchant responded and won
    paid_with_intent(world)
    deliver(world, disputed("evt_d1", "charge.dispute.created", "needs_response"))
    assert deliver(world, disputed("evt_d3", "charge.dispute.closed", "won")) == (200, "dispute_recorded")
    # When: the earlier update (evidence submitted) arrives late, and the closing event again
    assert deliver(world, disputed("evt_d2", "charge.dispute.updated", "under_review")) == (
        200,
        "dispute_unchanged",
    )
    assert deliver(world, disputed("evt_d3", "charge.dispute.closed", "won")) == (200, "duplicate")
    # Then: the order stays won, with nothing left to do
    [order] = Orders(world.store).view(ORG).orders
    assert order.dispute_status == "won"
    assert order.dispute_next_step == "Won: the disputed amount stays yours. Nothing to do."


def test_a_lost_dispute_takes_its_amount_off_what_the_next_sync_learns_from(world: World) -> None:
    # Given: a paid order, 5.00 of it refunded, then disputed
    paid_with_intent(world)
    deliver(world, refunded("evt_r1", 500))
    deliver(world, disputed("evt_d1", "charge.dispute.created", "needs_response"))
    # (open or won, the purchase stands: the sync takes off only the refund)
    assert world.store.refunded_orders(ORG) == {"cs_test_delayed": 500}
    # When: the merchant loses the dispute (the bank gives the buyer the disputed 25.00 back)
    assert deliver(world, disputed("evt_d2", "charge.dispute.closed", "lost")) == (200, "dispute_recorded")
    # Then: the next sync takes off what was refunded and what the dispute took back
    assert world.store.refunded_orders(ORG) == {"cs_test_delayed": 3000}
    # And a refund's event delivered after it (late) keeps the dispute's part
    deliver(world, refunded("evt_r2", 700))
    assert world.store.refunded_orders(ORG) == {"cs_test_delayed": 3200}


def test_a_won_dispute_leaves_the_purchase_to_learn_from(world: World) -> None:
    paid_with_intent(world)
    deliver(world, disputed("evt_d1", "charge.dispute.created", "needs_response"))
    assert deliver(world, disputed("evt_d2", "charge.dispute.closed", "won")) == (200, "dispute_recorded")
    assert world.store.refunded_orders(ORG) == {}


def test_a_dispute_after_a_disconnect_is_still_recorded(world: World) -> None:
    paid_with_intent(world)
    connection = world.store.get_connection(ORG)
    assert connection is not None
    connection.status = "inactive"
    world.store.put_connection(connection)
    assert deliver(world, disputed("evt_d1", "charge.dispute.created", "needs_response")) == (
        200,
        "dispute_recorded",
    )
    [order] = Orders(world.store).view(ORG).orders
    assert order.dispute_status == "needs_response"


def test_a_dispute_of_a_payment_the_service_did_not_take_changes_nothing(world: World) -> None:
    paid_with_intent(world)
    # The merchant's own charge (no metadata of the service's), and a charge the account does not have
    assert deliver(
        world, disputed("evt_d1", "charge.dispute.created", "needs_response", charge="ch_own")
    ) == (
        200,
        "ignored",
    )
    assert deliver(world, disputed("evt_d2", "charge.dispute.created", "needs_response", charge="ch_x")) == (
        200,
        "ignored",
    )
    [order] = Orders(world.store).view(ORG).orders
    assert order.dispute_status is None


def test_a_dispute_whose_charge_the_provider_cannot_read_is_delivered_again(world: World) -> None:
    # Given: a paid order, and the provider not answering
    paid_with_intent(world)
    world.charges.down = True
    # When: a dispute arrives, then it fails (the provider delivers it again) without being claimed
    assert deliver(world, disputed("evt_d1", "charge.dispute.created", "needs_response")) == (500, "failed")
    # When: it is delivered again with the provider back, then it is recorded
    world.charges.down = False
    assert deliver(world, disputed("evt_d1", "charge.dispute.created", "needs_response")) == (
        200,
        "dispute_recorded",
    )


def test_the_endpoint_is_registered_for_every_event_the_webhook_acts_on() -> None:
    # The README's registration (an operator's) and the local stack's both subscribe to exactly the
    # events the webhook handles: one left out is never delivered (a dispute would go unseen)
    readme = (Path(__file__).parents[3] / "README.md").read_text()
    registered = set(re.findall(r'-d "enabled_events\[\]=([a-z_.]+)"', readme))
    assert registered == set(HANDLED_EVENTS)
    assert set(PAYMENTS_WEBHOOK_EVENTS) == set(HANDLED_EVENTS)
    assert DISPUTE_EVENTS <= HANDLED_EVENTS
