"""The orders the hosted checkout took, and the checkouts that ended unpaid, for the dashboard.

Orders come from the provider's webhook (``shared.payments.webhooks``), newest first, each with what
the provider has refunded of it (in part or in whole) and any chargeback of it with what the
merchant must do about it; a checkout whose session expired or whose delayed payment failed is
listed too, latest ended first, with the cards refused on it, so nothing a shopper started is lost
from view. Each list is one bounded query (the newest ``ORDERS_SHOWN`` orders, the latest
``UNPAID_SHOWN`` ended checkouts), however many checkouts the organization's 30 days hold.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, Protocol

from pydantic import Field

from shared.payments.money import format_amount
from shared.records.payments import CheckoutRecord, CheckoutState, DisputeRecord, DisputeStatus, OrderRecord
from shared.wire_models import CamelModel

ORDERS_SHOWN = 100
UNPAID_SHOWN = 50

# The provider's refusal codes (its decline_code, else its error code; the webhook keeps the last one)
# as a merchant reads them.
REFUSALS = {
    "generic_decline": "The card was declined by its bank.",
    "card_declined": "The card was declined by its bank.",
    "do_not_honor": "The card was declined by its bank.",
    "insufficient_funds": "The card did not have enough funds.",
    "lost_card": "The card was reported lost.",
    "stolen_card": "The card was reported stolen.",
    "expired_card": "The card has expired.",
    "incorrect_cvc": "The card's security code was wrong.",
    "invalid_cvc": "The card's security code was wrong.",
    "incorrect_number": "The card number was wrong.",
    "processing_error": "The payment provider could not process the card; the shopper may try again.",
    "authentication_required": "The card's bank asked for authentication, which was not completed.",
    "payment_intent_authentication_failure": "The card's bank authentication failed or was abandoned.",
    "test_mode_live_card": "A real card was used while payments are in test mode.",
    "payment_failed": "The payment failed.",
}


def refusal_in_words(code: str | None) -> str | None:
    """What a refusal code means, for the dashboard; an unknown code is named as the provider gave it."""
    if code is None:
        return None
    return REFUSALS.get(code, f"The card was refused (the provider's code: {code}).")


class OrderStore(Protocol):
    def list_orders(self, org_id: str, limit: int) -> list[OrderRecord]: ...
    def unpaid_checkouts(self, org_id: str, limit: int) -> list[CheckoutRecord]: ...


class OrderView(CamelModel):
    order_id: str = Field(description="The provider's Checkout Session id (one order per session).")
    product_id: str
    product_name: str
    quantity: int
    amount_total: int = Field(description="In the currency's smallest unit.")
    currency: str
    amount: str = Field(description="The amount as a shopper reads it, e.g. $25.00.")
    paid_at: datetime
    refunded: Literal["partial", "full"] | None = Field(
        default=None, description="Refunded by the provider in part or in whole (None: not refunded)."
    )
    amount_refunded: int = Field(default=0, description="How much was refunded, in the smallest unit.")
    refunded_amount: str | None = Field(
        default=None, description="How much was refunded as a shopper reads it, e.g. $10.00."
    )
    refunded_at: datetime | None = None
    dispute_status: DisputeStatus | None = Field(
        default=None,
        description="A chargeback's status at the provider (None: not disputed): an inquiry's "
        "warning_needs_response, warning_under_review, warning_closed; a dispute's needs_response, "
        "under_review, won, lost, prevented.",
    )
    amount_disputed: int = Field(default=0, description="How much is disputed, in the smallest unit.")
    disputed_amount: str | None = Field(
        default=None, description="How much is disputed as a shopper reads it, e.g. $25.00."
    )
    dispute_reason: str | None = Field(
        default=None, description="The cardholder's reason as the provider names it, e.g. fraudulent."
    )
    disputed_at: datetime | None = Field(default=None, description="When the dispute was opened.")
    dispute_due_by: datetime | None = Field(
        default=None,
        description="When the merchant's response is due at the provider (None: no response is possible).",
    )
    dispute_next_step: str | None = Field(
        default=None, description="What the merchant must do about the dispute, in words."
    )


class UnpaidCheckoutView(CamelModel):
    checkout_id: str
    product_id: str
    product_name: str
    quantity: int
    amount: str
    state: CheckoutState = Field(
        description="expired (nobody paid in time) or failed (a delayed payment failed)."
    )
    failed_attempts: int = Field(description="Cards the provider refused on it.")
    last_failure: str | None = Field(
        description="The provider's code for the last refusal, e.g. card_declined."
    )
    last_failure_reason: str | None = Field(
        description="The last refusal in words, e.g. The card was declined by its bank."
    )
    created_at: datetime
    updated_at: datetime


class OrdersView(CamelModel):
    """``GET /payments/orders``."""

    orders: list[OrderView] = Field(description=f"The newest {ORDERS_SHOWN} orders, newest first.")
    unpaid: list[UnpaidCheckoutView] = Field(
        description=f"The latest {UNPAID_SHOWN} checkouts that ended unpaid (kept 30 days)."
    )


@dataclass
class Orders:
    store: OrderStore

    def view(self, org_id: str) -> OrdersView:
        orders = self.store.list_orders(org_id, ORDERS_SHOWN)
        unpaid = self.store.unpaid_checkouts(org_id, UNPAID_SHOWN)
        return OrdersView(
            orders=[
                OrderView(
                    order_id=order.order_id,
                    product_id=order.product_id,
                    product_name=order.product_name,
                    quantity=order.quantity,
                    amount_total=order.amount_total,
                    currency=order.currency,
                    amount=format_amount(order.amount_total, order.currency),
                    paid_at=order.paid_at,
                    refunded=order.refund_state(),
                    amount_refunded=order.amount_refunded,
                    refunded_amount=(
                        format_amount(order.amount_refunded, order.currency)
                        if order.amount_refunded
                        else None
                    ),
                    refunded_at=order.refunded_at,
                    **_dispute_fields(order.dispute),
                )
                for order in orders
            ],
            unpaid=[
                UnpaidCheckoutView(
                    checkout_id=checkout.checkout_id,
                    product_id=checkout.product_id,
                    product_name=checkout.product_name,
                    quantity=checkout.quantity,
                    amount=format_amount(checkout.amount_total, checkout.currency),
                    state=checkout.state,
                    failed_attempts=checkout.failed_attempts,
                    last_failure=checkout.last_failure,
                    last_failure_reason=refusal_in_words(checkout.last_failure),
                    created_at=checkout.created_at,
                    updated_at=checkout.updated_at,
                )
                for checkout in unpaid
            ],
        )


def dispute_next_step(dispute: DisputeRecord) -> str:
    """What the merchant must do about ``dispute`` now, in words (docs/payments-notes.md §4.4)."""
    due = f"by {dispute.due_by:%Y-%m-%d %H:%M} UTC" if dispute.due_by else "before it is due"
    if dispute.status in ("needs_response", "warning_needs_response"):
        if dispute.status == "needs_response" and dispute.due_by is None:
            return "The card's bank allows no response to this dispute: nothing to do."
        kind = "inquiry" if dispute.status == "warning_needs_response" else "dispute"
        return (
            f"Respond to the {kind} in your payment provider's dashboard {due}: submit evidence that the "
            "payment was genuine, or accept it. Without a response it is lost."
        )
    return {
        "warning_under_review": "Your response is with the card's bank: nothing to do until it decides.",
        "under_review": "Your evidence is with the card's bank: nothing to do until it decides.",
        "warning_closed": "The inquiry closed without becoming a dispute: nothing to do.",
        "won": "Won: the disputed amount stays yours. Nothing to do.",
        "lost": "Lost: the disputed amount went back to the buyer's card. Nothing to do.",
        "prevented": "Prevented before it became a dispute: nothing to do.",
    }[dispute.status]


def _dispute_fields(dispute: DisputeRecord | None) -> dict[str, Any]:
    if dispute is None:
        return {}
    return {
        "dispute_status": dispute.status,
        "amount_disputed": dispute.amount,
        "disputed_amount": format_amount(dispute.amount, dispute.currency),
        "dispute_reason": dispute.reason,
        "disputed_at": dispute.opened_at,
        "dispute_due_by": dispute.due_by,
        "dispute_next_step": dispute_next_step(dispute),
    }
