"""The hosted checkout's paid orders join each sync's data (issue 22, item 4): the webhook keeps one
JSON object per order under ``checkout-orders/<org>/``; every sync adds them to the version's tables,
the buyer as the customers file's customer with the same e-mail or a customer of their own, with the
order id the provider's session id (so the purchase the sync sends later has the event id the webhook
already sent, and the pixel keeps one). Each sync compacts what it read into one Parquet part per day
(``shared/payments/order_files.py``), so the next reads one object per day, not one per order."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import pytest

from shared.datasources import sync as engine_sync
from shared.datasources.models import SyncRequest
from shared.payments import order_files
from shared.records.datasources import DatasetVersion
from tests.unit.datasources.conftest import ORG, DataSourceWorld
from tests.unit.datasources.test_sync import CUSTOMERS, ORDERS, PRODUCTS


def paid_order(
    world: DataSourceWorld,
    session_id: str,
    paid_at: datetime = datetime(2026, 11, 20, 15, 30, tzinfo=UTC),
    **fields: Any,
) -> None:
    """A paid order's file as the webhook writes it (``shared.payments.webhooks._buyer_file``)."""
    order = {
        "order_id": session_id,
        "product_id": "p1",
        "quantity": 2,
        "amount_total": 1900,
        "amount": 19.0,
        "currency": "usd",
        "paid_at": paid_at.isoformat(),
        "paid_at_epoch": int(paid_at.timestamp()),
        "email": "ada@example.com",
        "name": "Ada Lovelace",
    } | fields
    world.blobs.put(f"checkout-orders/{ORG}/{session_id}.json", json.dumps(order).encode())


def synced(world: DataSourceWorld) -> DatasetVersion:
    request = SyncRequest.model_validate({"files": world.put_files(CUSTOMERS, PRODUCTS, ORDERS)})
    started = world.service.start_sync(ORG, request, world.start)
    world.service.run_sync(ORG, started.sync_id)
    version = world.datasets.latest(ORG)  # stored; in force once its purchase model is trained
    assert version is not None
    return version


def rows(world: DataSourceWorld, version: DatasetVersion, table: str, tmp_path: Path) -> list[dict[str, Any]]:
    path = tmp_path / f"{table}.parquet"
    path.write_bytes(world.blobs.get(version.keys[table]))
    found = duckdb.connect().execute("SELECT * FROM read_parquet($path)", {"path": str(path)})
    names = [column[0] for column in found.description]
    return [dict(zip(names, row, strict=True)) for row in found.fetchall()]


def test_a_paid_order_of_a_new_buyer_joins_the_version_with_a_customer_of_its_own(
    world: DataSourceWorld, tmp_path: Path
) -> None:
    # Given: the shop's files and an order paid through the hosted checkout by someone not in them
    paid_order(world, "cs_test_new", email=" Ada@Example.com ")

    # When: the shop syncs
    version = synced(world)

    # Then: the order is the version's, under the session id, at its time and amount
    orders = rows(world, version, "orders", tmp_path)
    [order] = [o for o in orders if o["order_id"] == "cs_test_new"]
    buyer = "checkout-" + hashlib.sha256(b"ada@example.com").hexdigest()[:24]
    assert (order["user_id"], order["product_id"], order["quantity"], order["amount"]) == (
        buyer,
        "p1",
        2,
        19.0,
    )
    assert order["timestamp"] == datetime(2026, 11, 20, 15, 30)
    # And the buyer is a customer, by e-mail and name, as the pixel keys them
    customers = {c["user_id"]: c for c in rows(world, version, "customers", tmp_path)}
    assert (customers[buyer]["email"], customers[buyer]["first_name"], customers[buyer]["last_name"]) == (
        "ada@example.com",
        "Ada",
        "Lovelace",
    )
    # And the version counts them beside the files' rows, and says which rows the checkout added (the
    # wizard said "synced (4 customers)" of a customers file of 3 rows, and nothing of why)
    assert version.row_counts == {"customers": 4, "products": 2, "orders": 4}
    assert version.from_checkout == {"customers": 1, "orders": 1}
    assert version.orders_end == datetime(2026, 11, 20, 15, 30, tzinfo=UTC)


def test_a_buyer_in_the_customers_file_is_that_customer(world: DataSourceWorld, tmp_path: Path) -> None:
    # Given: an order paid by the customers file's u3 (bob@example.com), with the e-mail in capitals
    paid_order(world, "cs_test_bob", email="BOB@example.com", name="Robert Ray")

    # When: the shop syncs
    version = synced(world)

    # Then: the order is u3's, and no customer is added
    [order] = [o for o in rows(world, version, "orders", tmp_path) if o["order_id"] == "cs_test_bob"]
    assert order["user_id"] == "u3"
    assert version.row_counts["customers"] == 3
    assert version.from_checkout == {"customers": 0, "orders": 1}


def test_orders_the_files_have_or_whose_product_is_gone_are_not_added(
    world: DataSourceWorld, tmp_path: Path
) -> None:
    # Given: a checkout order whose id the orders file has, and one for a product no longer sold
    paid_order(world, "o1")
    paid_order(world, "cs_test_gone", product_id="p-discontinued")

    # When: the shop syncs
    version = synced(world)

    # Then: the version holds the files' orders only, o1 once and the file's
    orders = rows(world, version, "orders", tmp_path)
    assert sorted(o["order_id"] for o in orders) == ["o1", "o2", "o3"]
    assert [o["user_id"] for o in orders if o["order_id"] == "o1"] == ["u1"]


def test_every_sync_holds_every_paid_order(world: DataSourceWorld, tmp_path: Path) -> None:
    # Given: a sync with one checkout order, then one more paid
    paid_order(world, "cs_test_first", email=None, name=None)
    synced(world)
    paid_order(world, "cs_test_second", email="grace@example.com", name="Grace")

    # When: the shop syncs again
    version = synced(world)

    # Then: both are in the new version (a buyer without an e-mail keyed by the order)
    orders = {o["order_id"]: o for o in rows(world, version, "orders", tmp_path)}
    assert orders["cs_test_first"]["user_id"] == "checkout-cs_test_first"
    assert orders["cs_test_second"]["user_id"].startswith("checkout-")
    customers = {c["user_id"]: c for c in rows(world, version, "customers", tmp_path)}
    assert (
        customers["checkout-cs_test_first"]["email"],
        customers[orders["cs_test_second"]["user_id"]]["last_name"],
    ) == (
        None,
        None,
    )


def order_objects(world: DataSourceWorld) -> list[str]:
    """What the data bucket holds of the checkout's orders, the day parts' ids left out."""
    return [
        key.rsplit("/", 1)[0] + "/" if "/days/" in key else key
        for key in world.blobs.keys(f"checkout-orders/{ORG}/")
    ]


def test_a_sync_compacts_the_orders_it_read_into_one_part_per_day(
    world: DataSourceWorld, tmp_path: Path
) -> None:
    # Given: three orders paid over two days, one object each as the webhook writes them
    paid_order(world, "cs_a", datetime(2026, 11, 20, 9, 0, tzinfo=UTC))
    paid_order(world, "cs_b", datetime(2026, 11, 20, 23, 59, tzinfo=UTC))
    paid_order(world, "cs_c", datetime(2026, 11, 21, 0, 1, tzinfo=UTC), email="grace@example.com")

    # When: the shop syncs
    version = synced(world)

    # Then: the version holds all three, and the bucket one part per day (UTC) instead of three objects
    assert {"cs_a", "cs_b", "cs_c"} <= {o["order_id"] for o in rows(world, version, "orders", tmp_path)}
    assert order_objects(world) == [
        f"checkout-orders/{ORG}/days/2026-11-20/",
        f"checkout-orders/{ORG}/days/2026-11-21/",
    ]
    # And the day's part holds its orders, as the webhook wrote them, in the time they were paid
    [day] = world.blobs.keys(f"checkout-orders/{ORG}/days/2026-11-20/")
    path = tmp_path / "day.parquet"
    path.write_bytes(world.blobs.get(day))
    held = duckdb.connect().execute(
        "SELECT order_id, amount_total, currency, email FROM read_parquet($p)", {"p": str(path)}
    )
    assert held.fetchall() == [
        ("cs_a", 1900, "usd", "ada@example.com"),
        ("cs_b", 1900, "usd", "ada@example.com"),
    ]


def test_the_next_sync_reads_the_parts_and_the_orders_paid_since(
    world: DataSourceWorld, tmp_path: Path
) -> None:
    # Given: a sync that compacted a day, then an order paid later that day and one the next day
    paid_order(world, "cs_a", datetime(2026, 11, 20, 9, 0, tzinfo=UTC))
    synced(world)
    paid_order(world, "cs_b", datetime(2026, 11, 20, 18, 0, tzinfo=UTC))
    paid_order(world, "cs_c", datetime(2026, 11, 21, 8, 0, tzinfo=UTC))

    # When: the shop syncs again
    version = synced(world)

    # Then: every order is in the version, once
    orders = [o["order_id"] for o in rows(world, version, "orders", tmp_path)]
    assert sorted(o for o in orders if o.startswith("cs_")) == ["cs_a", "cs_b", "cs_c"]
    # And the day that gained an order was written again whole: still one part a day
    assert order_objects(world) == [
        f"checkout-orders/{ORG}/days/2026-11-20/",
        f"checkout-orders/{ORG}/days/2026-11-21/",
    ]
    # And a third sync with nothing new reads the parts and leaves them as they are
    before = world.blobs.keys(f"checkout-orders/{ORG}/")
    again = synced(world)
    assert sorted(
        o["order_id"] for o in rows(world, again, "orders", tmp_path) if o["order_id"].startswith("cs_")
    ) == [
        "cs_a",
        "cs_b",
        "cs_c",
    ]
    assert world.blobs.keys(f"checkout-orders/{ORG}/") == before


def test_an_order_both_compacted_and_written_again_counts_once(
    world: DataSourceWorld, tmp_path: Path
) -> None:
    # Given: a compacted order whose event the provider delivered again later (the webhook rewrites
    # its object), and a second part of its day left by another sync compacting at the same time
    paid_order(world, "cs_a")
    synced(world)
    [part] = world.blobs.keys(f"checkout-orders/{ORG}/days/")
    world.blobs.put(part.rsplit("/", 1)[0] + "/concurrent.parquet", world.blobs.get(part))
    paid_order(world, "cs_a")

    # When: the shop syncs
    version = synced(world)

    # Then: the order is in the version once, and its day is one part again
    orders = [o["order_id"] for o in rows(world, version, "orders", tmp_path)]
    assert orders.count("cs_a") == 1
    assert len(world.blobs.keys(f"checkout-orders/{ORG}/days/")) == 1
    assert version.row_counts["orders"] == 4


def test_many_single_orders_are_read_a_bounded_number_of_files_at_a_time(
    world: DataSourceWorld, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given: five orders paid since the last sync, read two files at a time
    monkeypatch.setattr(engine_sync, "SINGLES_PER_READ", 2)
    for number in range(5):
        paid_order(world, f"cs_many_{number}", datetime(2026, 11, 20, 9, number, tzinfo=UTC))

    # When: the shop syncs
    version = synced(world)

    # Then: every one of them is in the version
    orders = {o["order_id"] for o in rows(world, version, "orders", tmp_path)}
    assert {f"cs_many_{number}" for number in range(5)} <= orders


def test_a_backlog_beyond_a_syncs_share_joins_the_next_syncs_and_none_is_lost(
    world: DataSourceWorld, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given: five orders paid since the last sync, and a sync's share of two
    monkeypatch.setattr(order_files, "SINGLES_PER_SYNC", 2)
    for number in range(5):
        paid_order(world, f"cs_backlog_{number}", datetime(2026, 11, 20, 9, number, tzinfo=UTC))

    # When: the shop syncs three times
    versions = [synced(world) for _ in range(3)]

    # Then: each sync added two more of them (the first two, then four, then all five), each once
    held = [
        sorted(
            o["order_id"] for o in rows(world, version, "orders", tmp_path) if o["order_id"].startswith("cs_")
        )
        for version in versions
    ]
    assert [len(orders) for orders in held] == [2, 4, 5]
    assert held[2] == [f"cs_backlog_{number}" for number in range(5)]
    # And every order ends in its day's one part, none left as a single object
    assert order_objects(world) == [f"checkout-orders/{ORG}/days/2026-11-20/"]


def test_a_refunded_order_is_learned_from_at_what_the_merchant_kept(
    world: DataSourceWorld, tmp_path: Path
) -> None:
    # Given: two orders of 19.00 synced (compacted), one more paid since; then the provider refunded
    # one of the compacted in full and the new one in part (9.00 of 19.00)
    paid_order(world, "cs_kept", datetime(2026, 11, 20, 9, 0, tzinfo=UTC))
    paid_order(world, "cs_returned", datetime(2026, 11, 20, 10, 0, tzinfo=UTC))
    synced(world)
    paid_order(world, "cs_part", datetime(2026, 11, 21, 9, 0, tzinfo=UTC))
    world.refunds.refunded = {"cs_returned": 1900, "cs_part": 900}

    # When: the shop syncs
    version = synced(world)

    # Then: the order refunded in full is no purchase the models learn from; the one refunded in part
    # counts at the 10.00 kept; the other at what was paid
    orders = {o["order_id"]: o for o in rows(world, version, "orders", tmp_path)}
    assert "cs_returned" not in orders
    assert (orders["cs_part"]["amount"], orders["cs_kept"]["amount"]) == (10.0, 19.0)
    # And the bucket keeps what was paid: a later sync takes the refunds off again
    again = {o["order_id"]: o for o in rows(world, synced(world), "orders", tmp_path)}
    assert ("cs_returned" in again, again["cs_part"]["amount"]) == (False, 10.0)
