"""The training function's drift check: newer files in the data bucket to ``recommended_retrain``."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from local.runner import FunctionFailed
from local.seed import DemoCredentials
from local.stack import LocalStack
from shared import wiring
from shared.errors import Conflict
from shared.ml.datasets import OrderRecord, dump_records
from shared.ml.features import GROWS_WITH_TIME, MODEL_DEPENDENT
from tools.synthetic import SyntheticConfig, generate_shop

MODEL = "drift-watch"


@dataclass(frozen=True)
class Uploads:
    """Keys in the data bucket, and a (user, product) pair the model knows."""

    customers_key: str
    continued_orders_key: str  # the shop one month after training, carrying on as before
    busier_orders_key: str  # the same history, then a month in which customers buy 8x as often
    user_id: str
    product_id: str


@pytest.fixture(scope="module")
def uploads(stack: LocalStack, demo: DemoCredentials) -> Uploads:
    """Train MODEL on a year of orders through the function, and upload the month after it two ways."""
    config = SyntheticConfig(
        n_users=600, n_products=200, seed=7, start=datetime(2023, 6, 1, tzinfo=UTC), days=395
    )
    shop = generate_shop(config).data
    training_end = config.start + timedelta(days=365)
    history = [o for o in shop.orders if o.timestamp < training_end]
    busy = generate_shop(replace(config, mean_orders_per_user_year=config.mean_orders_per_user_year * 8))
    busy_month = [
        o.model_copy(update={"order_id": f"busy-{o.order_id}"})
        for o in busy.data.orders
        if o.timestamp >= training_end
    ]
    prefix = f"uploads/{demo.org_id}/drift/"
    blobs = wiring.data_blobs()
    orders: dict[str, list[OrderRecord]] = {
        "history.csv": history,
        "continued.csv": shop.orders,
        "busier.csv": history + busy_month,
    }
    for file_name, lines in orders.items():
        blobs.put(prefix + file_name, dump_records(lines, "csv"))
    blobs.put(prefix + "customers.csv", dump_records(shop.customers, "csv"))
    assert stack.gateway is not None
    stack.gateway.invoke(
        "TrainModelFunction",
        {
            "org_id": demo.org_id,
            "name": MODEL,
            "type": "purchase",
            "orders_key": prefix + "history.csv",
            "customers_key": prefix + "customers.csv",
        },
    )
    return Uploads(
        customers_key=prefix + "customers.csv",
        continued_orders_key=prefix + "continued.csv",
        busier_orders_key=prefix + "busier.csv",
        user_id=history[0].user_id,
        product_id=history[0].product_id,
    )


def check_drift(stack: LocalStack, demo: DemoCredentials, orders_key: str, customers_key: str) -> Any:
    assert stack.gateway is not None
    event = {
        "action": "check_drift",
        "org_id": demo.org_id,
        "name": MODEL,
        "orders_key": orders_key,
        "customers_key": customers_key,
    }
    return stack.gateway.invoke("TrainModelFunction", event)


def freshness_of(api: httpx.Client, demo: DemoCredentials, uploads: Uploads) -> dict[str, bool]:
    response = api.post(
        f"/client/predict/{MODEL}",
        json={"input": {"user_id": uploads.user_id, "product_id": uploads.product_id}},
        headers={"X-Service-Api-Key": demo.api_key},
    )
    assert response.status_code == 200, response.text
    freshness: dict[str, bool] = response.json()["model_info"]["freshness_status"]
    return freshness


def test_shifted_recent_orders_make_predictions_recommend_retraining(
    stack: LocalStack, api: httpx.Client, demo: DemoCredentials, uploads: Uploads
) -> None:
    # When
    result = check_drift(stack, demo, uploads.busier_orders_key, uploads.customers_key)
    # Then
    assert result["recommended_retrain"] is True
    assert result["max_feature_psi"] > 0.2
    assert freshness_of(api, demo, uploads) == {"is_stale": False, "recommended_retrain": True}


def test_recent_orders_like_the_old_ones_leave_the_model_fresh(
    stack: LocalStack, api: httpx.Client, demo: DemoCredentials, uploads: Uploads
) -> None:
    # When
    result = check_drift(stack, demo, uploads.continued_orders_key, uploads.customers_key)
    # Then
    assert result["recommended_retrain"] is False
    assert 0 <= result["max_feature_psi"] < 0.2
    assert freshness_of(api, demo, uploads) == {"is_stale": False, "recommended_retrain": False}


def test_the_measurement_is_stored_on_the_model_record_of_the_checked_version(
    stack: LocalStack, demo: DemoCredentials, uploads: Uploads
) -> None:
    # When
    result = check_drift(stack, demo, uploads.busier_orders_key, uploads.customers_key)
    # Then
    record = wiring.model_store().get(demo.org_id, MODEL)
    assert record is not None
    assert record.version == result["version"]
    assert record.max_feature_psi == pytest.approx(result["max_feature_psi"])
    assert record.feature_psi is not None
    assert record.feature_psi.keys() == set(record.feature_order) - GROWS_WITH_TIME - MODEL_DEPENDENT
    assert record.drift_checked_at is not None


def test_the_drift_check_leaves_usage_counters_alone(
    stack: LocalStack, api: httpx.Client, demo: DemoCredentials, uploads: Uploads
) -> None:
    # Given: the model has served predictions
    freshness_of(api, demo, uploads)
    before = wiring.model_store().get(demo.org_id, MODEL)
    assert before is not None
    assert before.usageStats.total_predictions > 0
    # When
    check_drift(stack, demo, uploads.continued_orders_key, uploads.customers_key)
    # Then
    after = wiring.model_store().get(demo.org_id, MODEL)
    assert after is not None
    assert after.usageStats == before.usageStats
    assert after.last_prediction_date == before.last_prediction_date


def test_checking_an_unknown_model_names_it(
    stack: LocalStack, demo: DemoCredentials, uploads: Uploads
) -> None:
    # Given
    assert stack.gateway is not None
    event = {"action": "check_drift", "org_id": demo.org_id, "name": "no-such-model", "orders_key": "x.csv"}
    # When / Then: the invoker gets Lambda's error payload, naming the model
    with pytest.raises(FunctionFailed, match="no-such-model") as raised:
        stack.gateway.invoke("TrainModelFunction", event)
    assert raised.value.error_type == "NotFound"


def test_a_measurement_of_a_replaced_version_is_not_stored(demo: DemoCredentials, uploads: Uploads) -> None:
    # Given: the model's current record
    before = wiring.model_store().get(demo.org_id, MODEL)
    assert before is not None
    # When / Then: a check that measured an older version comes back
    with pytest.raises(Conflict, match="no longer at version"):
        wiring.model_store().record_drift(
            demo.org_id,
            MODEL,
            "19990101T000000Z",
            max_feature_psi=9.0,
            feature_psi={"product_price": 9.0},
            checked_at=datetime(2030, 1, 1, tzinfo=UTC),
        )
    after = wiring.model_store().get(demo.org_id, MODEL)
    assert after == before
