"""What GET /payments/orders gives the dashboard (issue 22, item 4): the paid orders newest first with
their amounts as a shopper reads them, and the checkouts that ended unpaid, latest first, with the
last refused card in words."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from shared.payments.orders import Orders, refusal_in_words
from shared.records.payments import CheckoutRecord, OrderRecord

ORG = "org-1"
NOON = datetime(2026, 11, 28, 12, 0, tzinfo=UTC)


@dataclass
class Store:
    orders: list[OrderRecord] = field(default_factory=list)
    unpaid: list[CheckoutRecord] = field(default_factory=list)
    asked_limit: int | None = None

    def list_orders(self, org_id: str, limit: int) -> list[OrderRecord]:
        self.asked_limit = limit
        return sorted((o for o in self.orders if o.org_id == org_id), key=lambda o: o.paid_at, reverse=True)[
            :limit
        ]

    def unpaid_checkouts(self, org_id: str, limit: int) -> list[CheckoutRecord]:
        # As the index gives them: the latest ended first, ``limit`` at most
        return sorted(
            (c for c in self.unpaid if c.org_id == org_id), key=lambda c: c.updated_at, reverse=True
        )[:limit]


def order(session_id: str, paid_at: datetime, amount_total: int = 2500, currency: str = "usd") -> OrderRecord:
    return OrderRecord(
        org_id=ORG,
        order_id=session_id,
        checkout_id=f"chk-{session_id}",
        product_id="p-mug",
        product_name="Ada's Mug",
        quantity=2,
        amount_total=amount_total,
        currency=currency,
        paid_at=paid_at,
        event_id=f"evt-{session_id}",
    )


def unpaid(
    checkout_id: str, state: str, ended: datetime, last_failure: str | None, attempts: int
) -> CheckoutRecord:
    return CheckoutRecord.model_validate(
        {
            "org_id": ORG,
            "checkout_id": checkout_id,
            "product_id": "p-teapot",
            "product_name": "Teapot",
            "quantity": 3,
            "unit_amount": 3000,
            "amount_total": 9000,
            "currency": "gbp",
            "state": state,
            "failed_attempts": attempts,
            "last_failure": last_failure,
            "created_at": ended - timedelta(hours=24),
            "updated_at": ended,
        }
    )


def test_orders_come_newest_first_with_the_amount_in_their_currency() -> None:
    # Given: two orders paid an hour apart, one in yen
    store = Store(orders=[order("cs_old", NOON - timedelta(hours=1)), order("cs_new", NOON, 1200, "jpy")])
    # When
    view = Orders(store).view(ORG)
    # Then
    assert [(o.order_id, o.amount, o.quantity, o.product_name) for o in view.orders] == [
        ("cs_new", "¥1,200", 2, "Ada's Mug"),
        ("cs_old", "$25.00", 2, "Ada's Mug"),
    ]
    assert store.asked_limit == 100


def test_unpaid_checkouts_come_latest_first_with_the_refusal_in_words() -> None:
    # Given: an expired checkout on which a card was declined, and a later failed one with no refusal
    store = Store(
        unpaid=[
            unpaid("chk-a", "expired", NOON - timedelta(hours=2), "generic_decline", 1),
            unpaid("chk-b", "failed", NOON, None, 0),
        ]
    )
    # When
    view = Orders(store).view(ORG)
    # Then
    assert [(c.checkout_id, c.state, c.amount, c.failed_attempts) for c in view.unpaid] == [
        ("chk-b", "failed", "£90.00", 0),
        ("chk-a", "expired", "£90.00", 1),
    ]
    assert [c.last_failure_reason for c in view.unpaid] == [None, "The card was declined by its bank."]


def test_an_unknown_refusal_code_is_named_as_the_provider_gave_it() -> None:
    assert refusal_in_words("insufficient_funds") == "The card did not have enough funds."
    assert (
        refusal_in_words("velocity_exceeded")
        == "The card was refused (the provider's code: velocity_exceeded)."
    )
    assert refusal_in_words(None) is None


def test_no_order_and_no_unpaid_checkout_is_an_empty_view() -> None:
    view = Orders(Store()).view(ORG)
    assert (view.orders, view.unpaid) == ([], [])
