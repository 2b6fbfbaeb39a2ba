"""The hosted quick-pay checkout's records: the organization's card-payment connection, each
checkout a shopper started, the orders paid through it, and the provider's events already handled.

What names a person (the buyer's e-mail and name) is never in these records: it stays with the
provider and, for the sync, in the data bucket (``shared.payments.orders``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from shared.records.connections import EncryptedSecret

PaymentsStatus = Literal["onboarding", "active", "inactive"]
CheckoutState = Literal["creating", "open", "paid", "expired", "failed"]
EventClaimState = Literal["processing", "done"]


class PaymentsConnection(BaseModel):
    """One organization's connected card-payment account.

    ``account`` is the provider's account id, encrypted like a platform token: with it and the
    platform's key anyone can take payments for the merchant, so it is only ever decrypted to make
    a call for this organization (the encryption context names it). ``connection_id`` is chosen and
    saved before the account is created, so a retried create reuses its idempotency key.
    """

    org_id: str
    connection_id: str
    status: PaymentsStatus
    account: EncryptedSecret | None = Field(default=None, repr=False)
    account_hint: str | None = Field(default=None, description="The account id's last four characters.")
    charges_enabled: bool = False
    payouts_enabled: bool = False
    details_submitted: bool = False
    currently_due: list[str] = Field(default_factory=list)
    disabled_reason: str | None = None
    business_name: str | None = None
    country: str | None = None
    default_currency: str | None = None
    started_by: str | None = None
    started_at: datetime | None = None
    connected_at: datetime | None = Field(default=None, description="When charges were first enabled.")
    checked_at: datetime | None = Field(default=None, description="When the account was last read.")
    disconnected_at: datetime | None = None
    checkout_base_url: str | None = Field(
        default=None,
        description="The service's address as the dashboard reached it when connecting: the hosted "
        "checkout's pages are under it.",
    )

    def account_context(self) -> dict[str, str]:
        """The encryption context the account id is bound to."""
        return {"org_id": self.org_id, "connection": "payments"}


class CheckoutRecord(BaseModel):
    """One checkout a shopper started: saved before the provider's session is created (its id makes
    the session's idempotency key), then the session's outcome."""

    org_id: str
    checkout_id: str
    product_id: str
    product_name: str
    quantity: int
    unit_amount: int = Field(description="Price in the currency's smallest unit.")
    amount_total: int
    currency: str = Field(description="ISO 4217, lower case, as the provider writes it.")
    state: CheckoutState = "creating"
    session_id: str | None = None
    failed_attempts: int = 0
    last_failure: str | None = Field(default=None, description="The provider's code for the last refusal.")
    created_at: datetime
    updated_at: datetime
    session_expires_at: datetime | None = Field(
        default=None, description="When the provider expires the session."
    )
    client_user_agent: str | None = Field(
        default=None,
        description="The shopper's browser (never their address), for the pixel's website purchase.",
    )


DisputeStatus = Literal[
    "warning_needs_response",
    "warning_under_review",
    "warning_closed",
    "needs_response",
    "under_review",
    "won",
    "lost",
    "prevented",
]
# How far along its life each status is (docs/payments-notes.md §4.4): an inquiry (warning_*) comes
# before a dispute's response, a response before its outcome, and an outcome is final.
DISPUTE_STATUS_STAGE: dict[str, int] = {
    "warning_needs_response": 0,
    "warning_under_review": 1,
    "needs_response": 2,
    "under_review": 3,
    "warning_closed": 4,
    "won": 5,
    "lost": 5,
    "prevented": 5,
}


class DisputeRecord(BaseModel):
    """A chargeback of an order's payment as the provider's latest Dispute said it
    (``charge.dispute.*``)."""

    dispute_id: str = Field(description="The provider's Dispute id (du_...).")
    status: DisputeStatus
    amount: int = Field(description="Disputed, in the currency's smallest unit (usually the whole charge).")
    currency: str
    reason: str = Field(description="The cardholder's reason as the provider names it, e.g. fraudulent.")
    opened_at: datetime = Field(description="When the dispute was opened (its created).")
    due_by: datetime | None = Field(
        default=None,
        description="When evidence is due (evidence_details.due_by); None when the bank allows no response.",
    )
    recorded_at: datetime = Field(description="When the service recorded this status.")

    def position(self) -> int:
        """Where this state of the dispute stands: a later dispute, or a later stage of the same one,
        stands higher. A state recorded is only ever replaced by one standing higher."""
        return int(self.opened_at.timestamp()) * 10 + DISPUTE_STATUS_STAGE[self.status]


class OrderRecord(BaseModel):
    """A paid checkout: an order of the organization (one per provider session)."""

    org_id: str
    order_id: str = Field(description="The provider's session id: one order per session.")
    checkout_id: str
    product_id: str
    product_name: str
    quantity: int
    amount_total: int
    currency: str
    paid_at: datetime
    payment_intent: str | None = None
    event_id: str = Field(description="The provider's event that recorded it.")
    buyer_key: str | None = Field(
        default=None, description="The data-bucket object holding the buyer's details for the sync."
    )
    amount_refunded: int = Field(
        default=0,
        description="How much the provider has refunded of it, in the currency's smallest unit (its "
        "charge's amount_refunded, cumulative).",
    )
    refunded_at: datetime | None = Field(default=None, description="When the latest refund was recorded.")
    dispute: DisputeRecord | None = Field(default=None, description="A chargeback of its payment, if any.")
    pixel_counted_by: str | None = Field(
        default=None,
        description="The source the Events page counts its Purchase under: checkout (the webhook sent it "
        "first) or sync (a sync did); the platform keeps one event per id, so the page counts it once.",
    )

    def refund_state(self) -> Literal["partial", "full"] | None:
        """Whether the order is refunded in part or in whole (None: not refunded)."""
        if self.amount_refunded <= 0:
            return None
        return "full" if self.amount_refunded >= self.amount_total else "partial"


def checkout_orders_prefix(org_id: str) -> str:
    """Where the hosted checkout keeps each paid order's line and buyer in the data bucket: one JSON
    object per order as ``shared.payments.webhooks`` writes it, until a sync compacts it into its
    day's Parquet part under ``days/`` (``shared.payments.order_files``)."""
    return f"checkout-orders/{org_id}/"
