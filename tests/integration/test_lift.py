"""Lift against a holdout through the local stack: a segment audience keeps half its users out of
the upload, the shop then syncs orders in which the uploaded group buys more (planted), and
GET /platform-ads/audiences/{audienceId}/lift finds the planted difference inside its interval."""

from __future__ import annotations

import csv
import io
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import numpy as np

from local.connected import ConnectedOrg
from local.stack import LocalStack
from shared.ml.datasets import OrderRecord, dump_records, load_records
from tests.integration.test_data_source import shop_files, upload_shop, wait_for_sync
from tests.integration.test_wizard import SEGMENT, synced_and_trained

UPLOADED_RATE, HOLDOUT_RATE = 0.6, 0.2


def sync_orders_after_activation(
    api: httpx.Client,
    org: ConnectedOrg,
    files: dict[str, bytes],
    groups: dict[str, str],
    activated_at: str,
    *,
    product: str,
    rates: tuple[float, float],
    seed: int,
    amounts: tuple[float, ...] = (30.0,),
) -> dict[str, Any]:
    """Sync the shop's ``files`` again with orders planted since the activation: each uploaded user
    buys ``product`` with probability ``rates[0]``, each held-out user with ``rates[1]``, for one of
    ``amounts``. The stack's clock is real and a sync refuses orders in the future, so "since" is the
    seconds since it. Returns the data source once the sync is done."""
    activated = datetime.fromisoformat(activated_at)
    time.sleep(2)
    elapsed = (datetime.now(UTC) - activated).total_seconds() - 0.5
    orders = load_records(files["orders"], OrderRecord, file_name="orders.csv")
    # The shop's history is moved to end a day before the activation, as a shop's that kept selling: a
    # history that ends months before the planted orders is refused by training (a gap where the
    # models learn, a4eb5b0), and a sync whose training refuses its data never goes in force, so the
    # lift would never read its orders. The moved orders are all before the activation: none counts.
    shift = activated - timedelta(days=1) - max(order.timestamp for order in orders)
    if shift > timedelta(0):
        orders = [order.model_copy(update={"timestamp": order.timestamp + shift}) for order in orders]
    rng = np.random.default_rng(seed)
    for user_id, group in sorted(groups.items()):
        if rng.random() < (rates[0] if group == "uploaded" else rates[1]):
            orders.append(
                OrderRecord(
                    order_id=f"lift-{user_id}",
                    user_id=user_id,
                    product_id=product,
                    quantity=1,
                    amount=amounts[0] if len(amounts) == 1 else float(rng.choice(amounts)),
                    timestamp=activated + timedelta(seconds=float(rng.uniform(0.5, elapsed))),
                )
            )
    sync = api.post(
        "/platform-ads/data-source/sync",
        json={"uploadId": upload_shop(api, org, {**files, "orders": dump_records(orders, "csv")})},
        headers=org.headers,
    )
    assert sync.status_code == 202, sync.text
    # The lift reads the data in force: the sync's, once its purchase model is trained on it.
    return wait_for_sync(api, org, sync.json()["syncId"], trained=True)


def test_a_planted_uplift_is_found_by_the_lift_endpoint(
    stack: LocalStack, api: httpx.Client, org: ConnectedOrg
) -> None:
    # Given: a trained shop and an audience of its whole scored segment with a 50 % holdout
    synced_and_trained(api, org)
    created = api.post(
        "/platform-ads/audiences",
        json={"name": "Lift", "segment": {**SEGMENT, "value": 100}, "holdoutPercent": 50, "holdoutSeed": 15},
        headers=org.headers,
    )
    assert created.status_code == 201, created.text
    audience_id = created.json()["audienceId"]
    link = api.get(f"/platform-ads/audiences/{audience_id}/snapshot", headers=org.headers).json()
    rows = list(csv.DictReader(io.StringIO(httpx.get(link["url"]).content.decode("utf-8-sig"))))
    groups = {row["user_id"]: row["group"] for row in rows}
    assert set(groups.values()) == {"uploaded", "holdout"}

    # Before any order after the activation, the report says there is not enough data yet
    early = api.get(f"/platform-ads/audiences/{audience_id}/lift", headers=org.headers)
    assert early.status_code == 200, early.text
    assert early.json()["verdict"] == "not_enough_data"

    # When: the shop syncs the orders since the activation (the stack's clock is real and a sync
    # refuses orders in the future, so "since" is the seconds since it), in which uploaded users buy
    # the product 60 % of the time and held-out users 20 % (a planted 40 points)
    synced = sync_orders_after_activation(
        api,
        org,
        shop_files(n_users=500, seed=11),
        groups,
        early.json()["activatedAt"],
        product=SEGMENT["productId"],
        rates=(UPLOADED_RATE, HOLDOUT_RATE),
        seed=4,
    )
    assert synced["current"]["version"] != early.json()["datasetVersion"]
    report = api.get(f"/platform-ads/audiences/{audience_id}/lift", headers=org.headers)

    # Then: the difference's interval excludes zero and covers the planted 40 points, on every user
    assert report.status_code == 200, report.text
    lift = report.json()
    rate = lift["difference"]["purchaseRate"]
    assert 0 < rate["low"] <= UPLOADED_RATE - HOLDOUT_RATE <= rate["high"]
    assert lift["verdict"] == "uplift"
    assert lift["uploaded"]["users"] + lift["holdout"]["users"] == len(groups)
    assert rate["users"] == len(groups)
    assert lift["days"] >= 0
    assert lift["windowStart"] == early.json()["activatedAt"]
    assert lift["holdoutSeed"] == "15"  # a string: seeds go past 2^53, where JavaScript numbers round
    assert len(lift["calibration"]) == 10
