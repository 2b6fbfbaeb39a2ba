"""Purchases from the shop's own orders through the local stack (issue 21, item 2): a sync's data
source state machine sends the version's new orders in the window to the sandbox's pixel, once; a
second sync sends only what is new; a batch whose answer is lost, or whose task is killed once the
platform took it, is sent again and counted once."""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from local.connected import ConnectedOrg
from local.stack import LocalStack
from platform_sandbox.scenarios import PIXEL_ID
from shared import wiring
from shared.records.events import PurchaseSend
from tests.integration.patience import BACKGROUND_JOB_SECONDS
from tests.integration.test_data_source import upload_shop, wait_for_sync

pytestmark = pytest.mark.integration


class ShopFiles:
    """A small shop whose order ids carry a prefix of their own: the sandbox's pixel is shared by every
    organization of the session, so a test reads only its own events."""

    def __init__(self) -> None:
        self.prefix = f"t{uuid.uuid4().hex[:8]}-"
        now = datetime.now(UTC).replace(microsecond=0)
        self.customers = [
            (f"u{i}", f"buyer{i}@example.com", f"+4477009{i:05}", "Ana", "Lee", "GB") for i in range(12)
        ]
        # 20 orders a day for 10 days back: the last 7 days' are in the window
        self.orders = [
            (
                f"{self.prefix}{day}-{k}",
                f"u{(day + k) % 12}",
                f"p{k % 3}",
                1 + k % 2,
                10.0 + k,
                now - timedelta(days=day, hours=k),
            )
            for day in range(10)
            for k in range(2)
        ]

    def add_orders(self, count: int) -> list[str]:
        now = datetime.now(UTC).replace(microsecond=0)
        added = [
            (f"{self.prefix}new-{k}", "u1", "p1", 1, 25.0, now - timedelta(minutes=5 + k))
            for k in range(count)
        ]
        self.orders.extend(added)
        return [order[0] for order in added]

    def files(self) -> dict[str, bytes]:
        customers = "user_id,email,phone,first_name,last_name,country\n" + "".join(
            ",".join(row) + "\n" for row in self.customers
        )
        products = "product_id,name,category,price\n" + "".join(
            f"p{k},Product {k},Cat,10\n" for k in range(3)
        )
        orders = "order_id,user_id,product_id,quantity,amount,timestamp\n" + "".join(
            f"{o},{u},{p},{q},{a},{t:%Y-%m-%dT%H:%M:%SZ}\n" for o, u, p, q, a, t in self.orders
        )
        return {"customers": customers.encode(), "products": products.encode(), "orders": orders.encode()}

    def in_window(self) -> set[str]:
        edge = datetime.now(UTC) - timedelta(days=7) + timedelta(minutes=15)
        return {order_id for order_id, *_, when in self.orders if when >= edge}


def sync(api: httpx.Client, org: ConnectedOrg, shop: ShopFiles) -> str:
    started = api.post(
        "/platform-ads/data-source/sync",
        json={"uploadId": upload_shop(api, org, shop.files())},
        headers=org.headers,
    )
    assert started.status_code == 202, started.text
    source = wait_for_sync(api, org, started.json()["syncId"], trained=False)
    [done] = [s for s in source["syncs"] if s["syncId"] == started.json()["syncId"]]
    assert done["state"] == "synced", done
    return str(done["datasetVersion"])


def purchases_of(
    org: ConnectedOrg, version: str, *, until: tuple[str, ...] = ("sent", "stopped")
) -> PurchaseSend:
    deadline = time.monotonic() + BACKGROUND_JOB_SECONDS
    while time.monotonic() < deadline:
        record = wiring.event_store().get_purchases(org.org_id, version)
        if record is not None and record.state in until:
            return record
        time.sleep(0.3)
    raise AssertionError(f"the purchases of {version} were not sent")


def pixel_events(sandbox: httpx.Client, shop: ShopFiles) -> list[dict[str, Any]]:
    held = sandbox.get(f"/pixels/{PIXEL_ID}/events", params={"event_name": "Purchase"}).json()["events"]
    return [entry for entry in held if str(entry["event"]["event_id"]).startswith(shop.prefix)]


def test_a_sync_sends_its_new_orders_once_and_a_second_sync_only_the_new_ones(
    api: httpx.Client, org: ConnectedOrg, sandbox: httpx.Client
) -> None:
    # Given a connected shop whose orders go back ten days
    shop = ShopFiles()
    # When it syncs
    first = purchases_of(org, sync(api, org, shop))
    # Then the orders of the last seven days reach the pixel as purchases, each once, the others skipped
    received = pixel_events(sandbox, shop)
    assert {entry["event"]["event_id"] for entry in received} == shop.in_window()
    assert len(received) == len(shop.in_window())
    assert (first.state, first.sent, first.rejected) == ("sent", len(shop.in_window()), 0)
    assert first.outside_window + first.skipped_too_old == len(shop.orders) - len(shop.in_window())
    # When two more orders come in and it syncs again
    added = shop.add_orders(2)
    second = purchases_of(org, sync(api, org, shop))
    # Then only those two are sent
    received_after = pixel_events(sandbox, shop)
    assert sorted(entry["event"]["event_id"] for entry in received_after[len(received) :]) == sorted(added)
    assert (second.new_orders, second.sent) == (2, 2)
    assert not any(entry["deduplicated"] for entry in received_after)


def test_a_batch_whose_answer_is_lost_is_sent_again_and_counts_each_order_once(
    api: httpx.Client, org: ConnectedOrg, sandbox: httpx.Client
) -> None:
    # Given the platform keeps the shop's events but loses its answer three times in a row (the step
    # resumed after a crash is tests/unit/events/test_purchases_from_orders.py)
    shop = ShopFiles()
    sandbox.post(
        "/faults", json={"kind": "lost_answer", "method": "POST", "path": "/events$", "count": 3}
    ).raise_for_status()
    # When the shop syncs
    record = purchases_of(org, sync(api, org, shop))
    # Then the batch went again until answered, and the pixel counts each order once
    received = pixel_events(sandbox, shop)
    assert record.state == "sent"
    kept = {entry["event"]["event_id"] for entry in received if not entry["deduplicated"]}
    assert kept == shop.in_window()
    assert len(received) > len(kept)  # the same batch arrived more than once


def test_a_send_killed_after_the_platform_took_its_batch_is_retried_and_counts_each_order_once(
    stack: LocalStack, api: httpx.Client, org: ConnectedOrg, sandbox: httpx.Client
) -> None:
    # Given the sending task dies (the process is killed: nothing is recorded) once the platform has
    # taken the shop's batch, before its answer reaches the task
    shop = ShopFiles()
    assert stack.runner is not None
    runner, killed = stack.runner, []

    def kill_once_taken(method: str, path: str, status: int) -> None:
        if not killed and method == "POST" and path.endswith(f"/{PIXEL_ID}/events") and status == 200:
            killed.extend(["send"] * runner.kill_running("SendPurchaseEventsFunction", _sending))

    stack.sandbox.answer_hooks.append(kill_once_taken)
    try:
        # When the shop syncs
        record = purchases_of(org, sync(api, org, shop))
    finally:
        stack.sandbox.answer_hooks.remove(kill_once_taken)
    # Then the state machine retried the task, which sent the batch again: the pixel counts each order
    # once, and the service's own count of what it sent is exact
    assert killed == ["send"]
    received = pixel_events(sandbox, shop)
    kept = [entry["event"]["event_id"] for entry in received if not entry["deduplicated"]]
    assert sorted(kept) == sorted(shop.in_window())
    assert len(received) == 2 * len(kept)  # every event arrived twice; the second copies were deduplicated
    assert (record.state, record.sent, record.rejected) == ("sent", len(shop.in_window()), 0)


def _sending(event: Any) -> bool:
    return isinstance(event, dict) and event.get("action") == "send"
