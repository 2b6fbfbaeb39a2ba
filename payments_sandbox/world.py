"""What the payments sandbox holds: connected accounts, onboarding links, Checkout Sessions,
PaymentIntents, webhook endpoints and events, each with the API shape the provider answers
(docs/payments-notes.md §2-§4). Plain records; the rules live in the endpoint modules.
"""

from __future__ import annotations

import secrets
import string
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

ALPHABET = string.ascii_letters + string.digits
# Currencies without a minor unit: amounts are whole units (docs/payments-notes.md §3).
ZERO_DECIMAL = frozenset(
    {
        "bif",
        "clp",
        "djf",
        "gnf",
        "jpy",
        "kmf",
        "krw",
        "mga",
        "pyg",
        "rwf",
        "ugx",
        "vnd",
        "vuv",
        "xaf",
        "xof",
        "xpf",
    }
)
# Typical of a freshly created account; the provider's exact list is not documented
# (docs/payments-notes.md §2.1).
INITIAL_REQUIREMENTS = (
    "business_profile.mcc",
    "business_profile.url",
    "business_type",
    "external_account",
    "representative.first_name",
    "representative.last_name",
    "tos_acceptance.date",
    "tos_acceptance.ip",
)


def new_id(prefix: str, length: int = 24) -> str:
    """``<prefix>_<random letters and digits>``, as the provider's object ids."""
    return f"{prefix}_{''.join(secrets.choice(ALPHABET) for _ in range(length))}"


@dataclass
class Account:
    """A connected account of the platform (``acct_``)."""

    account_id: str
    type: str
    country: str
    email: str | None
    created: int
    default_currency: str
    business_name: str | None = None
    controller: dict[str, Any] = field(default_factory=dict)
    requested_capabilities: list[str] = field(default_factory=list)
    details_submitted: bool = False
    charges_enabled: bool = False
    payouts_enabled: bool = False
    currently_due: list[str] = field(default_factory=lambda: list(INITIAL_REQUIREMENTS))
    disabled_reason: str | None = "requirements.past_due"
    tos_accepted_at: int | None = None
    metadata: dict[str, str] = field(default_factory=dict)

    def capability_status(self) -> str:
        return "active" if self.charges_enabled else "inactive"

    def to_api(self) -> dict[str, Any]:
        return {
            "id": self.account_id,
            "object": "account",
            "business_profile": {
                "mcc": None,
                "name": self.business_name,
                "product_description": None,
                "support_email": None,
                "url": None,
            },
            "business_type": None,
            "capabilities": {name: self.capability_status() for name in self.requested_capabilities},
            "charges_enabled": self.charges_enabled,
            "controller": self.controller or {"type": "application"},
            "country": self.country,
            "created": self.created,
            "default_currency": self.default_currency,
            "details_submitted": self.details_submitted,
            "email": self.email,
            "metadata": dict(self.metadata),
            "payouts_enabled": self.payouts_enabled,
            "requirements": {
                "alternatives": [],
                "current_deadline": None,
                "currently_due": list(self.currently_due),
                "disabled_reason": self.disabled_reason,
                "errors": [],
                "eventually_due": list(self.currently_due),
                "past_due": list(self.currently_due),
                "pending_verification": [],
            },
            "tos_acceptance": {"date": self.tos_accepted_at},
            "type": self.type,
        }


@dataclass
class AccountLink:
    """A single-use onboarding link (``/setup/s/<account>/<token>``)."""

    token: str
    account_id: str
    type: str
    refresh_url: str | None
    return_url: str | None
    created: int
    expires_at: int
    url: str
    visited: bool = False
    # Set when the page is shown: its form must carry it back, so only that page can submit.
    form_nonce: str | None = None
    submitted: bool = False

    def to_api(self) -> dict[str, Any]:
        return {
            "object": "account_link",
            "created": self.created,
            "expires_at": self.expires_at,
            "url": self.url,
        }


class SessionStatus(StrEnum):
    OPEN = "open"
    COMPLETE = "complete"
    EXPIRED = "expired"


@dataclass
class LineItem:
    item_id: str
    name: str
    currency: str
    unit_amount: int
    quantity: int
    price_id: str
    product_id: str
    created: int

    @property
    def amount(self) -> int:
        return self.unit_amount * self.quantity

    def to_api(self) -> dict[str, Any]:
        return {
            "id": self.item_id,
            "object": "item",
            "amount_discount": 0,
            "amount_subtotal": self.amount,
            "amount_tax": 0,
            "amount_total": self.amount,
            "currency": self.currency,
            "description": self.name,
            "price": {
                "id": self.price_id,
                "object": "price",
                "active": False,
                "billing_scheme": "per_unit",
                "created": self.created,
                "currency": self.currency,
                "livemode": False,
                "product": self.product_id,
                "type": "one_time",
                "unit_amount": self.unit_amount,
                "unit_amount_decimal": str(self.unit_amount),
            },
            "quantity": self.quantity,
        }


@dataclass
class PaymentIntent:
    intent_id: str
    account_id: str | None
    amount: int
    currency: str
    created: int
    status: str = "requires_payment_method"
    metadata: dict[str, str] = field(default_factory=dict)
    application_fee_amount: int | None = None
    last_payment_error: dict[str, Any] | None = None
    card_last4: str | None = None
    latest_charge: str | None = None

    def to_api(self) -> dict[str, Any]:
        return {
            "id": self.intent_id,
            "object": "payment_intent",
            "amount": self.amount,
            "amount_received": self.amount if self.status == "succeeded" else 0,
            "application_fee_amount": self.application_fee_amount,
            "created": self.created,
            "currency": self.currency,
            "last_payment_error": self.last_payment_error,
            "latest_charge": self.latest_charge,
            "livemode": False,
            "metadata": dict(self.metadata),
            "payment_method_types": ["card"],
            "status": self.status,
        }


@dataclass
class Charge:
    """A succeeded card payment of a PaymentIntent (docs/payments-notes.md §4.4). Its metadata is the
    intent's, copied once when the intent is confirmed, as the provider copies it."""

    charge_id: str
    account_id: str | None
    intent_id: str
    amount: int
    currency: str
    created: int
    metadata: dict[str, str] = field(default_factory=dict)
    amount_refunded: int = 0
    card_last4: str | None = None
    disputed: bool = False

    def to_api(self) -> dict[str, Any]:
        return {
            "id": self.charge_id,
            "object": "charge",
            "amount": self.amount,
            "amount_captured": self.amount,
            "amount_refunded": self.amount_refunded,
            "captured": True,
            "created": self.created,
            "currency": self.currency,
            "disputed": self.disputed,
            "livemode": False,
            "metadata": dict(self.metadata),
            "paid": True,
            "payment_intent": self.intent_id,
            "payment_method_details": {"type": "card", "card": {"last4": self.card_last4}},
            # Whether the charge is refunded in full; a partial refund leaves it false.
            "refunded": self.amount_refunded >= self.amount,
            "status": "succeeded",
        }


@dataclass
class Refund:
    refund_id: str
    account_id: str | None
    charge_id: str
    intent_id: str
    amount: int
    currency: str
    created: int
    reason: str | None = None
    metadata: dict[str, str] = field(default_factory=dict)

    def to_api(self) -> dict[str, Any]:
        return {
            "id": self.refund_id,
            "object": "refund",
            "amount": self.amount,
            "charge": self.charge_id,
            "created": self.created,
            "currency": self.currency,
            "metadata": dict(self.metadata),
            "payment_intent": self.intent_id,
            "reason": self.reason,
            "status": "succeeded",
        }


# How long a merchant has to respond to a dispute in the sandbox (the provider's due date is the card
# network's; docs/payments-notes.md §4.4).
DISPUTE_RESPONSE_SECONDS = 7 * 24 * 3600
DISPUTE_CLOSED = frozenset({"warning_closed", "won", "lost", "prevented"})


@dataclass
class Dispute:
    """A chargeback of a charge (docs/payments-notes.md §4.4): its metadata is its own, not the
    charge's."""

    dispute_id: str
    account_id: str | None
    charge_id: str
    intent_id: str
    amount: int
    currency: str
    created: int
    reason: str
    status: str
    due_by: int
    evidence: dict[str, str] = field(default_factory=dict)
    submission_count: int = 0
    metadata: dict[str, str] = field(default_factory=dict)
    balance_transactions: list[dict[str, Any]] = field(default_factory=list)

    @property
    def closed(self) -> bool:
        return self.status in DISPUTE_CLOSED

    def to_api(self) -> dict[str, Any]:
        return {
            "id": self.dispute_id,
            "object": "dispute",
            "amount": self.amount,
            "balance_transactions": [dict(item) for item in self.balance_transactions],
            "charge": self.charge_id,
            "created": self.created,
            "currency": self.currency,
            "evidence": dict(self.evidence),
            "evidence_details": {
                "due_by": self.due_by,
                "has_evidence": bool(self.evidence),
                "past_due": False,
                "submission_count": self.submission_count,
            },
            "is_charge_refundable": False,
            "livemode": False,
            "metadata": dict(self.metadata),
            "payment_intent": self.intent_id,
            "reason": self.reason,
            "status": self.status,
        }


@dataclass
class CheckoutSession:
    session_id: str
    account_id: str | None
    created: int
    expires_at: int
    mode: str
    currency: str
    line_items: list[LineItem]
    page_url: str
    success_url: str | None
    cancel_url: str | None
    client_reference_id: str | None
    customer_email: str | None
    metadata: dict[str, str]
    ui_mode: str
    intent_metadata: dict[str, str] = field(default_factory=dict)
    application_fee_amount: int | None = None
    status: SessionStatus = SessionStatus.OPEN
    payment_status: str = "unpaid"
    payment_intent_id: str | None = None
    customer_details: dict[str, Any] | None = None
    # Card attempts made on the hosted page: last four digits and outcome, never the number.
    attempts: list[dict[str, Any]] = field(default_factory=list)

    @property
    def amount_total(self) -> int:
        return sum(item.amount for item in self.line_items)

    def to_api(self) -> dict[str, Any]:
        return {
            "id": self.session_id,
            "object": "checkout.session",
            "after_expiration": None,
            "allow_promotion_codes": None,
            "amount_subtotal": self.amount_total,
            "amount_total": self.amount_total,
            "automatic_tax": {"enabled": False, "liability": None, "status": None},
            "billing_address_collection": None,
            "cancel_url": self.cancel_url,
            "client_reference_id": self.client_reference_id,
            "created": self.created,
            "currency": self.currency,
            "customer": None,
            "customer_creation": "if_required",
            "customer_details": self.customer_details,
            "customer_email": self.customer_email,
            "expires_at": self.expires_at,
            "livemode": False,
            "locale": None,
            "metadata": dict(self.metadata),
            "mode": self.mode,
            "payment_intent": self.payment_intent_id,
            "payment_method_types": ["card"],
            "payment_status": self.payment_status,
            "status": self.status.value,
            "success_url": self.success_url,
            "ui_mode": self.ui_mode,
            # The hosted page's address exists only while the session is open (docs/payments-notes.md §3.2).
            "url": self.page_url if self.status is SessionStatus.OPEN else None,
        }


@dataclass
class WebhookEndpoint:
    endpoint_id: str
    owner: str | None  # None: the platform's own endpoint; else the connected account it was made on
    url: str
    enabled_events: list[str]
    connect: bool
    secret: str
    created: int
    api_version: str | None
    description: str | None = None
    metadata: dict[str, str] = field(default_factory=dict)
    status: str = "enabled"

    def wants(self, event: Event) -> bool:
        """Whether this endpoint receives ``event`` (docs/payments-notes.md §4.1): a Connect endpoint
        the events of connected accounts, any other one the events of the account it belongs to."""
        if self.status != "enabled":
            return False
        if "*" not in self.enabled_events and event.type not in self.enabled_events:
            return False
        if self.owner is None:
            return (event.account is not None) if self.connect else (event.account is None)
        return event.account == self.owner and not self.connect

    def to_api(self, *, with_secret: bool = False) -> dict[str, Any]:
        body: dict[str, Any] = {
            "id": self.endpoint_id,
            "object": "webhook_endpoint",
            "api_version": self.api_version,
            "application": None,
            "created": self.created,
            "description": self.description,
            "enabled_events": list(self.enabled_events),
            "livemode": False,
            "metadata": dict(self.metadata),
            "status": self.status,
            "url": self.url,
        }
        if with_secret:
            # The signing secret is shown once, in the answer to the create (docs/payments-notes.md §4.1).
            body["secret"] = self.secret
        return body


@dataclass
class Attempt:
    """One try at delivering an event to an endpoint."""

    at: float
    signed_at: int
    status: int | None
    error: str | None = None
    redelivery: bool = False

    @property
    def succeeded(self) -> bool:
        return self.status is not None and 200 <= self.status < 300

    def to_api(self) -> dict[str, Any]:
        return {
            "at": self.at,
            "signed_at": self.signed_at,
            "status": self.status,
            "error": self.error,
            "redelivery": self.redelivery,
        }


class DeliveryState(StrEnum):
    PENDING = "pending"
    SUCCEEDED = "succeeded"
    FAILED = "failed"


@dataclass
class Delivery:
    """An event on its way to one endpoint: attempts so far, and when the next is due."""

    event_id: str
    endpoint_id: str
    next_at: float | None
    state: DeliveryState = DeliveryState.PENDING
    attempts: list[Attempt] = field(default_factory=list)
    in_flight: bool = False

    def to_api(self) -> dict[str, Any]:
        return {
            "endpoint": self.endpoint_id,
            "state": self.state.value,
            "next_attempt_at": self.next_at,
            "attempts": [attempt.to_api() for attempt in self.attempts],
        }


@dataclass
class Event:
    event_id: str
    type: str
    created: int
    account: str | None
    data: dict[str, Any]
    api_version: str
    request_id: str | None
    idempotency_key: str | None
    deliveries: list[Delivery] = field(default_factory=list)

    def to_api(self) -> dict[str, Any]:
        body: dict[str, Any] = {"id": self.event_id, "object": "event"}
        if self.account is not None:
            body["account"] = self.account
        body.update(
            {
                "api_version": self.api_version,
                "created": self.created,
                "data": self.data,
                "livemode": False,
                "pending_webhooks": sum(1 for d in self.deliveries if d.state is DeliveryState.PENDING),
                "request": {"id": self.request_id, "idempotency_key": self.idempotency_key},
                "type": self.type,
            }
        )
        return body

    @property
    def delivery_success(self) -> bool | None:
        """True once every endpoint took it, False while any has not, None when none wanted it."""
        if not self.deliveries:
            return None
        return all(delivery.state is DeliveryState.SUCCEEDED for delivery in self.deliveries)


@dataclass
class World:
    accounts: dict[str, Account] = field(default_factory=dict)
    account_links: dict[str, AccountLink] = field(default_factory=dict)
    sessions: dict[str, CheckoutSession] = field(default_factory=dict)
    payment_intents: dict[str, PaymentIntent] = field(default_factory=dict)
    charges: dict[str, Charge] = field(default_factory=dict)
    refunds: dict[str, Refund] = field(default_factory=dict)
    disputes: dict[str, Dispute] = field(default_factory=dict)
    endpoints: dict[str, WebhookEndpoint] = field(default_factory=dict)
    events: dict[str, Event] = field(default_factory=dict)
