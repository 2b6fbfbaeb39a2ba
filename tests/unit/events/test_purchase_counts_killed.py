"""The Events page's count of a sync's purchases when the sending step is killed (issue 25, item 6):
the step claims each hosted-checkout order it sent (so the page counts it once), saves its progress
and adds the batch to the day's count. A kill between two of those writes must leave the count exact
once the state machine's retry has run: never short, never twice.

The stores are the service's own on moto's DynamoDB; the kill is a ``BaseException`` raised as the
step sends the chosen write (before DynamoDB sees it), so no ``except`` or saving code of the step runs,
as when the process dies. The step's other collaborators are ``test_purchases_from_orders``'s shop.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest

from shared.clock import iso
from shared.dataplane.engine import session
from shared.events.purchases import PurchaseEvents
from shared.payments.pixel import PixelPurchases
from shared.records.payments import CheckoutRecord, OrderRecord
from shared.repositories.events import DynamoEventSiteStore, DynamoEventStore
from shared.repositories.items import to_item
from shared.repositories.payments import DynamoPaymentsStore
from tests.unit.events.test_purchases_from_orders import FIRST, NOW, One, Shop, ago
from tests.unit.moto_aws import REGION, offline_aws, table
from tests.unit.sandbox_platform import SandboxPlatform

ORG = "org-1"
TODAY = NOW.date().isoformat()
WRITES = {"PutItem", "UpdateItem", "TransactWriteItems"}


class Killed(BaseException):
    """The process died: nothing after this point of the step runs."""


class World:
    """The shop of ``test_purchases_from_orders`` with the event and payments stores on moto, and a
    kill planted at a chosen write."""

    def __init__(self, tmp: Path) -> None:
        self.shop = Shop(tmp, SandboxPlatform())
        self.table = table()
        # The table's own client (items as Python values) and a plain one (transactions), as wired.
        self.client: Any = boto3.client("dynamodb", region_name=REGION)
        self.events = DynamoEventStore(self.table, self.client)
        self.payments = DynamoPaymentsStore(self.table, self.client)
        self.kill_at: Callable[[str, str], bool] | None = None
        self.killed: list[str] = []
        for client in (self.client, self.table.meta.client):
            client.meta.events.register("before-call.dynamodb", self._before_call)

    def _before_call(self, model: Any, params: dict[str, Any], **_: Any) -> None:
        if model.name not in WRITES or self.kill_at is None or self.killed:
            return
        if self.kill_at(model.name, repr(params)):
            self.killed.append(model.name)
            raise Killed(model.name)

    def checkout_order(self, order_id: str) -> OrderRecord:
        """A hosted checkout's paid order with the id of one of the shop's orders (its webhook's
        Purchase not counted yet)."""
        order = OrderRecord(
            org_id=ORG,
            order_id=order_id,
            checkout_id="chk-1",
            product_id="sku-2",
            product_name="Sku 2",
            quantity=1,
            amount_total=1200,
            currency="GBP",
            paid_at=ago(hours=5),
            event_id="evt-1",
        )
        item = {"pk": f"ORG#{ORG}", "sk": f"ORDER#{iso(order.paid_at)}#{order_id}"}
        self.table.put_item(Item={**item, **to_item(order.model_dump())})
        return order

    def deliver(self, order: OrderRecord) -> bool:
        """The checkout webhook's send of ``order``'s Purchase (its checkout paid five hours ago), as
        wired: the Events page's counts and the payments store's claims on moto."""
        pixel = PixelPurchases(
            self.shop, lambda: NOW, tally=DynamoEventSiteStore(self.table, self.client), claims=self.payments
        )
        checkout = CheckoutRecord(
            org_id=ORG,
            checkout_id="chk-1",
            product_id=order.product_id,
            product_name=order.product_name,
            quantity=order.quantity,
            unit_amount=order.amount_total // order.quantity,
            amount_total=order.amount_total,
            currency=order.currency,
            state="paid",
            created_at=ago(hours=6),
            updated_at=ago(hours=5),
        )
        return pixel.send(order, "buyer@example.com", "Ann Buyer", checkout, "https://shop.example/checkout")

    def step(self, version: str, batch_size: int = 1000) -> Any:
        service = PurchaseEvents(
            events=self.events,
            datasets=self.shop,
            blobs=self.shop,
            connections=self.shop,
            session=session,
            clock=lambda: NOW,
            batch_size=batch_size,
            models=One(None),
            bundles=One(None),
            counted=True,
            checkout_orders=self.payments,
        )
        return service.step(ORG, version, lambda: 600.0)

    def step_until_done(self, version: str) -> None:
        """The state machine: the step, retried after a kill (``Runtime.ExitError``)."""
        for _ in range(5):
            try:
                if self.step(version).status == "done":
                    return
            except Killed:
                continue
        raise AssertionError("the step never finished")

    def sync_counts(self) -> dict[str, int]:
        [day] = DynamoEventSiteStore(self.table, self.client).days(ORG, TODAY, TODAY)
        return day.counts["sync"]["Purchase"]

    def counted_by(self, order_id: str) -> str | None:
        [order] = [o for o in self.payments.list_orders(ORG, 10) if o.order_id == order_id]
        return order.pixel_counted_by


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    with offline_aws(monkeypatch):
        yield World(tmp_path)


def after_the_claim(world: World) -> Callable[[str, str], bool]:
    """The first write after the step claimed a checkout order (its progress, or progress and count)."""
    claimed: list[bool] = []

    def kill(name: str, params: str) -> bool:
        if name == "UpdateItem" and "ORDER#" in params:
            claimed.append(True)
            return False
        return bool(claimed)

    return kill


def at_the_count(name: str, params: str) -> bool:
    """The write that adds the batch to the day's count (not the one of the orders already too old)."""
    return "EVENTSDAY#" in params and "Purchase.sent" in params


def after_the_count(world: World) -> Callable[[str, str], bool]:
    """The first write after the day's count was added (the part-sent pointer)."""
    counted: list[bool] = []

    def kill(name: str, params: str) -> bool:
        if "EVENTSDAY#" in params and "Purchase.sent" in params:
            counted.append(True)
            return False
        return bool(counted)

    return kill


@pytest.mark.parametrize(
    "kill_point",
    [after_the_claim, lambda world: at_the_count, after_the_count],
    ids=["after-the-claim", "at-the-count", "after-the-count"],
)
def test_a_send_killed_around_its_claim_and_count_ends_with_each_purchase_counted_once(
    world: World, kill_point: Callable[[World], Callable[[str, str], bool]]
) -> None:
    # Given three orders in the window, one of them paid through the hosted checkout (not yet counted),
    # and the sending step killed at the given write of its batch
    world.shop.sync("v1", FIRST)
    world.checkout_order("o-2")
    world.kill_at = kill_point(world)
    # When the state machine runs the step, and again after the kill
    world.step_until_done("v1")
    # Then the kill happened, and the day counts the three purchases once each, the checkout's under
    # the sync, and the order older than the window skipped once
    assert world.killed
    assert world.sync_counts() == {"sent": 3, "skipped": 1}
    assert world.counted_by("o-2") == "sync"


def test_a_checkout_order_counted_by_its_webhook_is_not_counted_again_by_a_killed_and_retried_sync(
    world: World,
) -> None:
    # Given the webhook counted the checkout's order first, and the sync's step killed after its claim
    world.shop.sync("v1", FIRST)
    order = world.checkout_order("o-2")
    assert world.payments.claim_pixel_count(order, "checkout")
    world.kill_at = at_the_count
    # When the step runs, is killed, and runs again
    world.step_until_done("v1")
    # Then the sync counts the two others only: the checkout's stays the webhook's
    assert world.killed
    assert world.sync_counts() == {"sent": 2, "skipped": 1}
    assert world.counted_by("o-2") == "checkout"


def test_a_send_killed_after_its_first_batch_was_written_leaves_the_version_marked_part_sent(
    world: World,
) -> None:
    # Given three orders sent one a batch, and the step killed at the first write after the first
    # batch's progress and count
    world.shop.sync("v1", FIRST)
    writes: list[str] = []

    def after_the_first_count(name: str, params: str) -> bool:
        writes.append(params)
        return any("EVENTSDAY#" in write and "Purchase.sent" in write for write in writes[:-1])

    world.kill_at = after_the_first_count
    # When the step runs and is killed
    with pytest.raises(Killed):
        world.step("v1", batch_size=1)
    # Then the platform holds the first batch and the version is part-sent (a later version's step
    # finishes it first), not left looking untouched
    assert world.sync_counts() == {"sent": 1, "skipped": 1}
    assert world.events.pointers(ORG) == (None, "v1")


@pytest.mark.parametrize("kill_at", [at_the_count, None], ids=["killed-at-the-count", "delivered-twice"])
def test_a_checkout_purchase_whose_webhook_is_handled_again_is_counted_once(
    world: World, kill_at: Callable[[str, str], bool] | None
) -> None:
    # Given a paid checkout order whose webhook sends its Purchase, the handler killed as it adds the
    # order to the day's count (or not killed: the provider delivers the event twice)
    world.shop.sync("v1", FIRST)
    order = world.checkout_order("o-2")
    world.kill_at = kill_at
    # When the provider delivers the event again (after the kill, the handler answered nothing)
    for _ in range(2):
        try:
            world.deliver(order)
        except Killed:
            continue
    # Then the Events page counts the order's Purchase once, under the checkout
    [day] = DynamoEventSiteStore(world.table, world.client).days(ORG, TODAY, TODAY)
    assert day.counts == {"checkout": {"Purchase": {"sent": 1}}}
    assert world.counted_by("o-2") == "checkout"
    assert world.killed == (["TransactWriteItems"] if kill_at else [])
