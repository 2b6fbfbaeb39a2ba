"""The shop files ``make dev`` writes for the launch wizard: they sync without a rejected row, hold
enough GB customers for a prospecting lookalike's seed with room to spare, and hold the user and
product the banner's examples name (the demo models are trained on the same shop)."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

from local.seed import demo_shop, sample_ids, write_shop_files
from shared.clock import utc_now
from shared.ml.validation import validate_shop_files


def test_the_demo_shop_files_sync_whole_and_seed_a_gb_lookalike(tmp_path: Path) -> None:
    # When
    paths = write_shop_files(tmp_path / "demo-shop", demo_shop())

    # Then: the three files the wizard asks for, valid row for row
    assert [p.name for p in paths] == ["customers.csv", "products.csv", "orders.csv"]
    files = {p.stem: p.read_bytes() for p in paths}
    validation = validate_shop_files(**files, names={kind: f"{kind}.csv" for kind in files}, now=utc_now())
    assert validation.rejected == []
    # And: GB customers are at least three times a lookalike's 100-person seed, so the wizard's
    # default segment (the top half of scores) can seed one (78 of the top fifth did, measured)
    header, *rows = files["customers"].decode().splitlines()
    at = header.split(",").index("country")
    assert sum(row.split(",")[at] == "GB" for row in rows) >= 300


def test_the_banners_sample_user_and_product_are_in_the_files_the_wizard_uploads(tmp_path: Path) -> None:
    # Given the shop make dev trains its demo models on and writes for the wizard
    shop = demo_shop()
    user, product = sample_ids(shop)
    # When its files are written
    customers, products, _ = (p.read_text().splitlines() for p in write_shop_files(tmp_path, shop))
    # Then the banner's sample user is a customer, and its sample product is listed with a price (a
    # segment of it can be previewed once synced, and its hosted checkout sells it): before, the
    # models came from another synthetic shop, whose sample product p00107 the files did not hold
    assert any(row.startswith(f"{user},") for row in customers)
    header = products[0].split(",")
    [row] = [row.split(",") for row in products[1:] if row.startswith(f"{product},")]
    assert float(row[header.index("price")]) > 0


def test_the_readmes_prediction_example_names_a_user_and_product_of_the_demo_shop(tmp_path: Path) -> None:
    # Given the README's quick start, which a new user runs against make dev
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    example = re.search(r"/client/predict/purchase-likelihood .*?-d '(\{.*?\})'", readme, re.DOTALL)
    assert example is not None
    given = json.loads(example.group(1))["input"]
    # When make dev's shop files are written
    customers, products, _ = (p.read_text().splitlines() for p in write_shop_files(tmp_path, demo_shop()))
    # Then the example's user is a customer and its product is sold there: it named p00107 of the
    # synthetic shop make dev trained on before, which the demo shop does not sell, so its score
    # was a new product's, and the same product in targeting is refused as not in the catalog
    assert any(row.startswith(f"{given['user_id']},") for row in customers)
    assert any(row.startswith(f"{given['product_id']},") for row in products[1:])


def test_the_demo_shop_make_dev_writes_ends_the_day_it_starts_so_its_last_week_is_sent_as_purchases() -> None:
    # Given the day make dev starts
    now = datetime(2026, 11, 30, 2, 30, tzinfo=UTC)
    generated = demo_shop()
    # When it makes its demo shop
    shop = demo_shop(ending=now)
    # Then the shop ends in the day before: its last order is under a day old, and its last 7 days
    # hold orders the platform still takes as purchase events (the generated shop ends on 2024-12-31:
    # the wizard's sync skipped all 11,086 orders as older than the platform's 7 days)
    times = [order.timestamp for order in shop.data.orders]
    assert now - timedelta(days=1) < shop.end <= now
    assert now - max(times) < timedelta(days=1)
    assert sum(now - time <= timedelta(days=7) for time in times) >= 100
    # And it is the same shop, moved by whole days: the same orders of the same customers and
    # products (the banner's and the README's examples hold), at the same times of day
    moved_by = shop.config.start - generated.config.start
    assert moved_by % timedelta(days=1) == timedelta(0)
    assert [(o.order_id, o.user_id, o.product_id, o.amount) for o in shop.data.orders] == [
        (o.order_id, o.user_id, o.product_id, o.amount) for o in generated.data.orders
    ]
    pairs = zip(shop.data.orders, generated.data.orders, strict=True)
    assert all(order.timestamp == before.timestamp + moved_by for order, before in pairs)
    assert sample_ids(shop) == sample_ids(generated)
