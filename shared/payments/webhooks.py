"""The card-payment provider's webhook deliveries: verified, handled once each, turned into orders
(docs/payments-notes.md §4).

As dj-stripe's webhook processing does: the signature is verified on the raw body first (a forged,
changed or replayed delivery is refused, 401, and logged without its body); the event id is then
claimed before anything is acted on, so a redelivery is acknowledged and ignored (200) and a
failure gives the claim back and answers 500, for the provider to deliver again.

An event is the service's only if it names one of its checkouts (or accounts) in its metadata and
comes from the very account the organization's record holds: the connected accounts' endpoint also
receives the merchant's own sessions, which are none of the service's business (200, ignored).

- ``checkout.session.completed`` paid, or ``checkout.session.async_payment_succeeded``: the order,
  once per session, in one transaction with the checkout moving to paid (``record_paid``); the buyer's
  details (e-mail, name) go to the data bucket for the next sync, never to the table; then the
  purchase to the pixel (``PurchaseSender``), with the session id as ``event_id``.
- ``checkout.session.expired`` and ``checkout.session.async_payment_failed``: the checkout recorded
  as expired or failed; ``payment_intent.payment_failed``: a refused card counted on its checkout (the
  session stays open for another card).
- ``account.updated``: the connection's status read again from the event's account.
- ``charge.refunded`` (a refund, in part or in whole, made on the provider's dashboard or API): the
  order paid by the charge's PaymentIntent records the charge's cumulative ``amount_refunded`` (only
  a larger amount replaces the one recorded, so a late or repeated event takes nothing back); the
  charge carries the metadata its PaymentIntent had, so it names the organization like the session.
  Acted on also after a disconnect, from the account the record still holds: the refund is a fact
  about an order the service lists. Nothing is sent to the ad platform: the Conversions API has no
  refund event (docs/payments-notes.md §4.4).
- ``charge.dispute.created``, ``.updated``, ``.closed``, ``.funds_withdrawn``, ``.funds_reinstated`` (a
  chargeback): the Dispute names its charge and PaymentIntent but carries no metadata of the
  service's, so its charge is read from the provider (on the event's account; a charge carries its
  intent's metadata) to learn the organization; the order paid by the intent then records the
  dispute's status, amount, reason, opening and evidence due date. Only a later stage of the dispute
  (or a later dispute) replaces the one recorded (``DisputeRecord.position``), so a late or repeated
  event never moves it back. Acted on after a disconnect too, like a refund. A provider that cannot
  say whose charge it is answers 500: the event is delivered again.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from shared.clock import Clock
from shared.errors import ServiceError
from shared.observability import logger
from shared.payments.checkout import checkout_path
from shared.payments.money import minor_unit_factor
from shared.payments.provider import (
    PaymentsAccountRefused,
    ProviderAccount,
    ProviderCharge,
    SignatureRefused,
    verify_delivery,
)
from shared.records.payments import (
    CheckoutRecord,
    DisputeRecord,
    OrderRecord,
    PaymentsConnection,
    checkout_orders_prefix,
)

# A delivery holding an event's claim longer than this is taken to have died: the next may act.
CLAIM_LEASE = timedelta(minutes=2)
PAID_EVENTS = frozenset({"checkout.session.completed", "checkout.session.async_payment_succeeded"})
REFUND_EVENTS = frozenset({"charge.refunded"})
DISPUTE_EVENTS = frozenset(
    {
        "charge.dispute.created",
        "charge.dispute.updated",
        "charge.dispute.closed",
        "charge.dispute.funds_withdrawn",
        "charge.dispute.funds_reinstated",
    }
)
# Facts about orders already taken: acted on after a disconnect too (from the account still held).
ORDER_FACT_EVENTS = REFUND_EVENTS | DISPUTE_EVENTS
# Every event the webhook acts on: what the provider's endpoint must be subscribed to (README,
# "Registering the webhook endpoint"; local/stack.py's PAYMENTS_WEBHOOK_EVENTS).
HANDLED_EVENTS = (
    PAID_EVENTS
    | ORDER_FACT_EVENTS
    | {
        "checkout.session.expired",
        "checkout.session.async_payment_failed",
        "payment_intent.payment_failed",
        "account.updated",
    }
)


class EventData(BaseModel):
    """An event's ``data``: the object it is about."""

    model_config = ConfigDict(extra="allow")

    object: dict[str, Any] = Field(
        description="The object the event is about (a Checkout Session, a PaymentIntent, an Account); "
        "its metadata's org_id and checkout_id name the service's organization and checkout."
    )


class ProviderEvent(BaseModel):
    """A webhook delivery's body: the provider's event (its Event object, snake_case), signed in
    ``Stripe-Signature`` over these very bytes. What the service reads of it; the provider's other
    fields (``object``, ``api_version``, ``livemode``, ...) are taken and ignored. A signed body of
    another shape is no event the service handles: acknowledged and ignored (200)."""

    model_config = ConfigDict(extra="allow")

    id: str = Field(min_length=1, description="The event's id: each is handled once.")
    type: str = Field(description="checkout.session.completed, account.updated, ...")
    account: str | None = Field(default=None, description="The connected account it comes from.")
    created: int | None = Field(
        default=None, ge=0, le=253_402_300_799, description="When it happened (Unix seconds)."
    )
    data: EventData


class ProviderDispute(BaseModel):
    """What the service reads of a Dispute (docs/payments-notes.md §4.4)."""

    model_config = ConfigDict(extra="allow")

    id: str = Field(min_length=1)
    status: str
    amount: int = Field(ge=0)
    currency: str
    reason: str = "general"
    created: int = Field(ge=0, le=253_402_300_799)
    evidence_details: dict[str, Any] = Field(default_factory=dict)

    def record(self, now: datetime) -> DisputeRecord:
        due_by = self.evidence_details.get("due_by")
        # 0 (or none): the card's bank allows no response to this dispute.
        due = datetime.fromtimestamp(due_by, UTC) if isinstance(due_by, int) and due_by > 0 else None
        return DisputeRecord.model_validate(
            {
                "dispute_id": self.id,
                "status": self.status,
                "amount": self.amount,
                "currency": self.currency,
                "reason": self.reason,
                "opened_at": datetime.fromtimestamp(self.created, UTC),
                "due_by": due,
                "recorded_at": now,
            }
        )


@dataclass(frozen=True)
class Subject:
    """Whose an event is: the metadata naming the organization and checkout, and for an event about
    a payment's charge (a refund, a dispute) the PaymentIntent that paid the order."""

    metadata: dict[str, Any]
    payment_intent: str | None = None


class Store(Protocol):
    """``shared.repositories.payments.DynamoPaymentsStore``."""

    def get_connection(self, org_id: str) -> PaymentsConnection | None: ...
    def get_checkout(self, org_id: str, checkout_id: str) -> CheckoutRecord | None: ...
    def end_checkout(
        self, org_id: str, checkout_id: str, state: Literal["expired", "failed"], now: datetime
    ) -> bool: ...
    def record_refusal(self, org_id: str, checkout_id: str, code: str, now: datetime) -> bool: ...
    def record_paid(self, order: OrderRecord, connection_id: str, now: datetime) -> str: ...
    def record_refund(self, org_id: str, payment_intent: str, amount_refunded: int, now: datetime) -> str: ...
    def record_dispute(self, org_id: str, payment_intent: str, dispute: DisputeRecord) -> str: ...
    def claim_event(self, org_id: str, event_id: str, now: datetime, lease: timedelta) -> str: ...
    def complete_event(self, org_id: str, event_id: str, now: datetime) -> None: ...
    def release_event(self, org_id: str, event_id: str) -> None: ...


class AccountIds(Protocol):
    """The connection's account id, decrypted (``PaymentsConnectionService.account_id``)."""

    def account_id(self, connection: PaymentsConnection) -> str: ...
    def record_account(self, connection: PaymentsConnection, account: ProviderAccount) -> None: ...


class Charges(Protocol):
    """The provider's charges (``PaymentsProvider.retrieve_charge``): a Dispute names its charge only."""

    def retrieve_charge(self, account_id: str, charge_id: str) -> ProviderCharge | None: ...


class BuyerFiles(Protocol):
    """The data bucket (``S3BlobStore``)."""

    def put(self, key: str, data: bytes, content_type: str = "application/octet-stream") -> None: ...
    def delete(self, key: str) -> None: ...


class PurchaseSender(Protocol):
    """Sends a paid order to the ad account's pixel as a ``Purchase`` (``shared.payments.pixel``)."""

    def send(
        self,
        order: OrderRecord,
        email: str | None,
        name: str | None,
        checkout: CheckoutRecord,
        page: str,
    ) -> bool: ...


@dataclass(frozen=True)
class Buyer:
    """Who paid, as the provider's page collected it (never stored in the table)."""

    email: str | None
    name: str | None


@dataclass(frozen=True)
class WebhookAnswer:
    """What to answer the provider: 200 (handled or ignored, with what became of it), 401 (refused),
    409 (another delivery holds the event) or 500 (failed: deliver again)."""

    status: int
    outcome: str


def buyer_key(org_id: str, session_id: str) -> str:
    """Where a paid order's buyer details are kept in the data bucket (the next sync reads them)."""
    return f"{checkout_orders_prefix(org_id)}{session_id}.json"


@dataclass
class WebhookHandler:
    store: Store
    accounts: AccountIds
    charges: Charges
    buyers: BuyerFiles
    purchases: PurchaseSender | None
    secret: str
    clock: Clock

    def handle(self, payload: bytes, signature: str | None) -> WebhookAnswer:
        """Verify and handle one delivery (see the module docstring); what to answer the provider."""
        try:
            event = verify_delivery(payload, signature, self.secret)
        except SignatureRefused as refused:
            # Never the body: it may hold a buyer's details, and a forger's is no one's business.
            logger.warning(
                "payments webhook refused", extra={"reason": refused.reason, "bytes": len(payload)}
            )
            return WebhookAnswer(401, "signature_refused")
        try:
            parsed = ProviderEvent.model_validate(event)
        except ValidationError:
            return self._ignored(
                str(event.get("id", ""))[:100], str(event.get("type", ""))[:100], "not an event"
            )
        event_id, kind, obj = parsed.id, parsed.type, parsed.data.object
        try:
            subject = self._subject(parsed)
        except PaymentsAccountRefused:
            return self._ignored(event_id, kind, "account refuses the service")
        except ServiceError as error:
            # The provider could not say whose disputed charge it is: deliver again.
            logger.warning(
                "payments event's charge not read", extra={"event_id": event_id, "code": error.code}
            )
            return WebhookAnswer(500, "failed")
        org_id = subject.metadata.get("org_id")
        if not isinstance(org_id, str) or not org_id:
            return self._ignored(event_id, kind, "not the service's")
        connection = self.store.get_connection(org_id)
        if connection is None or connection.account is None:
            return self._ignored(event_id, kind, "no payments connection")
        if connection.status == "inactive" and kind not in ORDER_FACT_EVENTS:
            return self._ignored(event_id, kind, "payments disconnected")
        if parsed.account != self.accounts.account_id(connection):
            logger.warning(
                "payments event from another account", extra={"event_id": event_id, "org_id": org_id}
            )
            return self._ignored(event_id, kind, "another account")
        claim = self.store.claim_event(org_id, event_id, self.clock(), CLAIM_LEASE)
        if claim == "done":
            logger.info("payments event already handled", extra={"event_id": event_id, "type": kind})
            return WebhookAnswer(200, "duplicate")
        if claim == "busy":
            return WebhookAnswer(409, "in_progress")
        try:
            outcome = self._act(org_id, connection, kind, obj, parsed, subject)
        except Exception:
            self.store.release_event(org_id, event_id)
            logger.exception("payments event failed", extra={"event_id": event_id, "type": kind})
            return WebhookAnswer(500, "failed")
        self.store.complete_event(org_id, event_id, self.clock())
        logger.info("payments event handled", extra={"event_id": event_id, "type": kind, "outcome": outcome})
        return WebhookAnswer(200, outcome)

    def _act(
        self,
        org_id: str,
        connection: PaymentsConnection,
        kind: str,
        obj: dict[str, Any],
        event: ProviderEvent,
        subject: Subject,
    ) -> str:
        now = self.clock()
        checkout_id = str((obj.get("metadata") or {}).get("checkout_id") or "")
        if kind == "account.updated":
            self.accounts.record_account(connection, _account(obj))
            return "account_updated"
        if kind in PAID_EVENTS:
            if obj.get("payment_status") != "paid":
                return "awaiting_payment"  # a delayed method: async_payment_succeeded follows
            paid_at = datetime.fromtimestamp(event.created or now.timestamp(), UTC)
            return self._paid(org_id, connection, checkout_id, obj, event.id, paid_at, now)
        if kind in REFUND_EVENTS:
            intent, refunded = obj.get("payment_intent"), obj.get("amount_refunded")
            if not isinstance(intent, str) or not intent or not isinstance(refunded, int):
                return "unknown_order"
            return self.store.record_refund(org_id, intent, refunded, now)
        if kind in DISPUTE_EVENTS:
            try:
                dispute = ProviderDispute.model_validate(obj).record(now)
            except ValidationError:
                return "not_a_dispute"
            if subject.payment_intent is None:
                return "unknown_order"
            return self.store.record_dispute(org_id, subject.payment_intent, dispute)
        if kind == "checkout.session.expired":
            return (
                "expired" if self.store.end_checkout(org_id, checkout_id, "expired", now) else "already_paid"
            )
        if kind == "checkout.session.async_payment_failed":
            return "failed" if self.store.end_checkout(org_id, checkout_id, "failed", now) else "already_paid"
        if kind == "payment_intent.payment_failed":
            error = obj.get("last_payment_error") or {}
            code = str(error.get("decline_code") or error.get("code") or "payment_failed")
            return (
                "refusal_recorded"
                if self.store.record_refusal(org_id, checkout_id, code, now)
                else "already_paid"
            )
        return "ignored_type"

    def _paid(
        self,
        org_id: str,
        connection: PaymentsConnection,
        checkout_id: str,
        session: dict[str, Any],
        event_id: str,
        paid_at: datetime,
        now: datetime,
    ) -> str:
        checkout = self.store.get_checkout(org_id, checkout_id)
        if checkout is None:
            return "unknown_checkout"
        session_id = str(session["id"])
        details = session.get("customer_details") or {}
        buyer = Buyer(email=details.get("email"), name=details.get("name"))
        key = buyer_key(org_id, session_id)
        order = OrderRecord(
            org_id=org_id,
            order_id=session_id,
            checkout_id=checkout_id,
            product_id=checkout.product_id,
            product_name=checkout.product_name,
            quantity=checkout.quantity,
            amount_total=int(session.get("amount_total") or checkout.amount_total),
            currency=str(session.get("currency") or checkout.currency),
            # The event's time: the same order every time this event is delivered.
            paid_at=paid_at,
            payment_intent=session.get("payment_intent"),
            event_id=event_id,
            buyer_key=key,
        )
        # The buyer's details first: an order is never recorded without them (a repeat rewrites the
        # same object), and taken back when no order is.
        self.buyers.put(key, _buyer_file(order, buyer), "application/json")
        recorded = self.store.record_paid(order, connection.connection_id, now)
        if recorded in ("connection_gone", "unknown_checkout"):
            # No order: nor may the next sync find one.
            self.buyers.delete(key)
            return recorded
        if self.purchases is not None and connection.checkout_base_url:
            # Sent for a first recording and again for a repeat (whose first sending may have failed, or
            # whose handler died before its count): the pixel keeps one event per event_id (the session
            # id), and the Events page counts the order once, whichever delivery gets there.
            page = connection.checkout_base_url.rstrip("/") + checkout_path(org_id, checkout.product_id)
            self.purchases.send(order, buyer.email, buyer.name, checkout, page)
        return "order_recorded" if recorded == "recorded" else "already_paid"

    def _subject(self, event: ProviderEvent) -> Subject:
        """Whose ``event`` is. A Dispute's metadata is its own (empty), not the payment's: its charge,
        read from the provider on the event's account, carries the intent's metadata."""
        obj = event.data.object
        metadata = obj.get("metadata")
        metadata = metadata if isinstance(metadata, dict) else {}
        if event.type not in DISPUTE_EVENTS:
            intent = obj.get("payment_intent")
            return Subject(metadata, intent if isinstance(intent, str) and intent else None)
        charge_id = _id_of(obj.get("charge"))
        if charge_id is None or not event.account:
            return Subject({})
        charge = self.charges.retrieve_charge(event.account, charge_id)
        if charge is None:
            return Subject({})
        return Subject(charge.metadata, _id_of(obj.get("payment_intent")) or charge.payment_intent)

    def _ignored(self, event_id: str, kind: str, why: str) -> WebhookAnswer:
        logger.info("payments event ignored", extra={"event_id": event_id, "type": kind, "why": why})
        return WebhookAnswer(200, "ignored")


def _id_of(value: Any) -> str | None:
    """An expandable field's id: the id itself, or the expanded object's."""
    if isinstance(value, dict):
        value = value.get("id")
    return value if isinstance(value, str) and value else None


def _buyer_file(order: OrderRecord, buyer: Buyer) -> bytes:
    """What each sync reads of a paid order (``shared.datasources.sync.add_checkout_orders``): the
    order line, its amount as the merchant's files give one (in the currency's unit), and who paid."""
    return json.dumps(
        {
            "order_id": order.order_id,
            "product_id": order.product_id,
            "quantity": order.quantity,
            "amount_total": order.amount_total,
            "amount": order.amount_total / minor_unit_factor(order.currency),
            "currency": order.currency,
            "paid_at": order.paid_at.isoformat(),
            "paid_at_epoch": int(order.paid_at.timestamp()),
            "email": buyer.email,
            "name": buyer.name,
        }
    ).encode()


def _account(obj: dict[str, Any]) -> ProviderAccount:
    requirements = obj.get("requirements") or {}
    profile = obj.get("business_profile") or {}
    return ProviderAccount(
        account_id=str(obj.get("id", "")),
        charges_enabled=bool(obj.get("charges_enabled")),
        payouts_enabled=bool(obj.get("payouts_enabled")),
        details_submitted=bool(obj.get("details_submitted")),
        currently_due=[str(item) for item in (requirements.get("currently_due") or [])],
        disabled_reason=requirements.get("disabled_reason"),
        business_name=profile.get("name"),
        country=obj.get("country"),
        default_currency=obj.get("default_currency"),
    )
