"""GET /payments/orders reads a bounded page, however many checkouts the organization's 30 days hold
(``shared/repositories/payments.py`` on moto's DynamoDB): the checkouts that ended unpaid come from
one query of a sparse index, the latest ended first, ``limit`` items read; an open or paid checkout
is never read for it."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest

from shared.payments.orders import UNPAID_SHOWN, Orders
from shared.records.payments import CheckoutRecord, OrderRecord, PaymentsConnection
from shared.repositories.payments import DynamoPaymentsStore
from tests.unit.moto_aws import REGION, offline_aws, table

ORG = "org-1"
START = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)


class CountingTable:
    """The table, with the items each query read (DynamoDB's ``ScannedCount``)."""

    def __init__(self, wrapped: Any) -> None:
        self._wrapped = wrapped
        self.read: list[int] = []

    def query(self, **kwargs: Any) -> Any:
        answer = self._wrapped.query(**kwargs)
        self.read.append(int(answer["ScannedCount"]))
        return answer

    def __getattr__(self, name: str) -> Any:
        return getattr(self._wrapped, name)


@pytest.fixture
def world(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[DynamoPaymentsStore, CountingTable]]:
    with offline_aws(monkeypatch):
        counting = CountingTable(table("main"))
        yield DynamoPaymentsStore(counting, boto3.client("dynamodb", region_name=REGION)), counting  # type: ignore[arg-type]


def checkout(number: int, org_id: str = ORG, state: str = "open") -> CheckoutRecord:
    created = START + timedelta(minutes=number)
    return CheckoutRecord.model_validate(
        {
            "org_id": org_id,
            "checkout_id": f"chk-{number:04d}",
            "product_id": "p-mug",
            "product_name": "Mug",
            "quantity": 1,
            "unit_amount": 1250,
            "amount_total": 1250,
            "currency": "usd",
            "state": state,
            "created_at": created,
            "updated_at": created,
        }
    )


def test_the_latest_unpaid_checkouts_are_one_bounded_read_of_the_index(
    world: tuple[DynamoPaymentsStore, CountingTable],
) -> None:
    store, counting = world
    # Given: 240 checkouts in the month: 80 expired or failed (each a minute after the one before),
    # 80 paid, 80 still open; and another organization's ended checkout, later than all of them
    ended = []
    for number in range(240):
        store.put_checkout(checkout(number, state="paid" if number % 3 == 1 else "open"))
        if number % 3 == 0:
            state = "expired" if number % 2 else "failed"
            assert store.end_checkout(
                ORG, f"chk-{number:04d}", state, START + timedelta(hours=5, minutes=number)
            )
            ended.append(f"chk-{number:04d}")
    store.put_checkout(checkout(999, "org-2"))
    assert store.end_checkout("org-2", "chk-0999", "expired", START + timedelta(days=2))
    counting.read.clear()

    # When: the dashboard's orders view is read
    view = Orders(store).view(ORG)

    # Then: the latest 50 ended checkouts, the latest ended first, another organization's not among them
    assert [c.checkout_id for c in view.unpaid] == list(reversed(ended))[:UNPAID_SHOWN]
    assert {c.state for c in view.unpaid} == {"expired", "failed"}
    # And the reads were those 50 (no order was paid: the orders query read none), not the 240
    assert sum(counting.read) == UNPAID_SHOWN


def test_a_checkout_paid_after_it_ended_leaves_the_unpaid_list(
    world: tuple[DynamoPaymentsStore, CountingTable],
) -> None:
    store, _ = world
    # Given: a checkout reported failed, then paid (a provider's events out of order)
    store.put_connection(PaymentsConnection(org_id=ORG, connection_id="conn-1", status="active"))
    store.put_checkout(checkout(1))
    assert store.end_checkout(ORG, "chk-0001", "failed", START + timedelta(hours=1))
    assert [c.checkout_id for c in store.unpaid_checkouts(ORG, 50)] == ["chk-0001"]
    paid = OrderRecord(
        org_id=ORG,
        order_id="cs_1",
        checkout_id="chk-0001",
        product_id="p-mug",
        product_name="Mug",
        quantity=1,
        amount_total=1250,
        currency="usd",
        paid_at=START + timedelta(hours=2),
        event_id="evt_1",
    )
    # When: the payment is recorded
    assert store.record_paid(paid, "conn-1", START + timedelta(hours=2)) == "recorded"
    # Then: it is an order, and no longer listed as ended unpaid
    assert store.unpaid_checkouts(ORG, 50) == []
    assert [o.order_id for o in store.list_orders(ORG, 100)] == ["cs_1"]
