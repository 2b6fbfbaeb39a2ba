"""The webhook's handling of the events the payments sandbox does not send (issue 22, item 4): a
delayed payment method's session, completed unpaid and then paid or failed later
(``checkout.session.async_payment_succeeded`` / ``async_payment_failed``), and a forged delivery's
log line, which never holds the body. On moto's DynamoDB (the repository the function uses); the
deliveries are signed as the provider signs them, with its SDK."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
import stripe

from shared.payments.orders import Orders
from shared.payments.provider import ProviderAccount
from shared.payments.webhooks import WebhookHandler, buyer_key
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
class World:
    store: DynamoPaymentsStore
    buyers: Bucket
    handler: WebhookHandler


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
        buyers = Bucket()
        handler = WebhookHandler(
            store=store, accounts=Accounts(), buyers=buyers, purchases=None, secret=SECRET, clock=lambda: NOW
        )
        yield World(store, buyers, handler)


def event(event_id: str, kind: str, payment_status: str) -> dict[str, Any]:
    return {
        "id": event_id,
        "object": "event",
        "type": kind,
        "account": ACCOUNT,
        "created": int(NOW.timestamp()),
        "data": {
            "object": {
                "id": "cs_test_delayed",
                "object": "checkout.session",
                "payment_status": payment_status,
                "amount_total": 2500,
                "currency": "usd",
                "customer_details": {"email": "ada@example.com", "name": "Ada Lovelace"},
                "metadata": {"org_id": ORG, "checkout_id": "chk-1"},
            }
        },
    }


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
    return {
        "id": event_id,
        "object": "event",
        "type": "charge.refunded",
        "account": ACCOUNT,
        "created": int(NOW.timestamp()),
        "data": {
            "object": {
                "id": "ch_1",
                "object": "charge",
                "amount": 2500,
                "amount_refunded": amount_refunded,
                "refunded": amount_refunded >= 2500,
                "currency": "usd",
                "payment_intent": intent,
                "metadata": {"org_id": ORG, "checkout_id": "chk-1"},
            },
            "previous_attributes": {"amount_refunded": 0},
        },
    }


def test_a_partial_then_a_full_refund_are_recorded_on_the_order(world: World) -> None:
    # Given: a paid order
    paid_with_intent(world)
    # When: the provider says 10.00 of it was refunded
    assert deliver(world, refunded("evt_r1", 1000)) == (200, "refund_recorded")
    # Then: the order is refunded in part, with the amount
    [order] = Orders(world.store).view(ORG).orders
    assert (order.refunded, order.amount_refunded, order.refunded_amount) == ("partial", 1000, "$10.00")
    assert order.refunded_at == NOW
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
    # Then: the order stays refunded in full
    [order] = Orders(world.store).view(ORG).orders
    assert (order.refunded, order.amount_refunded) == ("full", 2500)


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
