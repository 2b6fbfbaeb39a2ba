"""A hosted checkout's purchase paid while no ad account can take it: the Events page counts it "not
sent" under the hosted checkout, once however often the provider delivers its webhook, and the next
sync (once connected) sends it inside the platform's window and counts it sent under the sync.

The stores are the service's own on moto's DynamoDB, the platform the sandbox (``World`` of
``test_purchase_counts_killed``, with no kill planted)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from shared.repositories.events import DynamoEventSiteStore
from tests.unit.events.test_purchase_counts_killed import ORG, TODAY, World
from tests.unit.events.test_purchases_from_orders import FIRST
from tests.unit.moto_aws import offline_aws


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    with offline_aws(monkeypatch):
        yield World(tmp_path)


def day_counts(world: World) -> dict[str, dict[str, dict[str, int]]]:
    [day] = DynamoEventSiteStore(world.table, world.client).days(ORG, TODAY, TODAY)
    return day.counts


def test_a_purchase_paid_while_not_connected_is_counted_not_sent_once_and_sent_by_the_next_sync(
    world: World,
) -> None:
    # Given a shop whose ad account is not connected, and an order paid through the hosted checkout
    world.shop.sync("v1", FIRST)
    order = world.checkout_order("o-2")
    world.shop.connected = False

    # When the provider delivers its webhook twice
    sent = [world.deliver(order) for _ in range(2)]

    # Then nothing was sent, and the Events page counts the Purchase not sent once, under the checkout
    assert sent == [False, False]
    assert day_counts(world) == {"checkout": {"Purchase": {"failed": 1}}}
    assert world.counted_by("o-2") is None

    # And once connected, the next sync sends it (inside the platform's window) and counts it sent
    world.shop.connected = True
    world.step_until_done("v1")
    assert day_counts(world)["checkout"] == {"Purchase": {"failed": 1}}
    assert world.sync_counts() == {"sent": 3, "skipped": 1}
    assert world.counted_by("o-2") == "sync"
