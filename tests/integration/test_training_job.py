"""The training function: files in the data bucket to a registered model that serves predictions."""

from __future__ import annotations

from datetime import timedelta

import httpx
import pytest

from local.runner import FunctionFailed
from local.seed import DemoCredentials
from local.stack import LocalStack
from shared import wiring
from shared.ml.datasets import dump_records
from shared.ml.shop_arrays import encode_shop, write_training_arrays
from tools.synthetic import SyntheticConfig, generate_shop


def test_a_model_trained_from_uploaded_csv_files_serves_predictions(
    stack: LocalStack, api: httpx.Client, demo: DemoCredentials
) -> None:
    # Given: a merchant's orders and customers uploaded to the data bucket
    shop = generate_shop(SyntheticConfig(n_users=300, n_products=40, seed=3))
    wiring.data_blobs().put(f"uploads/{demo.org_id}/orders.csv", dump_records(shop.data.orders, "csv"))
    wiring.data_blobs().put(
        f"uploads/{demo.org_id}/customers.jsonl", dump_records(shop.data.customers, "jsonl")
    )
    event = {
        "org_id": demo.org_id,
        "name": "from-files",
        "type": "purchase",
        "orders_key": f"uploads/{demo.org_id}/orders.csv",
        "customers_key": f"uploads/{demo.org_id}/customers.jsonl",
    }
    # When
    assert stack.gateway is not None
    result = stack.gateway.invoke("TrainModelFunction", event)
    # Then
    assert result["training_user_count"] == 300
    assert {"roc_auc", "pr_auc", "lift_top_decile"} <= set(result["metrics"])
    order = shop.data.orders[0]
    response = api.post(
        "/client/predict/from-files",
        json={"input": {"user_id": order.user_id, "product_id": order.product_id}},
        headers={"X-Service-Api-Key": demo.api_key},
    )
    assert response.status_code == 200, response.text


def test_a_model_trained_from_a_dataset_versions_training_arrays_serves_predictions(
    stack: LocalStack, api: httpx.Client, demo: DemoCredentials
) -> None:
    # Given: a dataset version's training arrays (training.npz) in the data bucket, and no files
    shop = generate_shop(SyntheticConfig(n_users=300, n_products=40, seed=5))
    key = f"datasets/{demo.org_id}/v-arrays/training.npz"
    wiring.data_blobs().put(key, write_training_arrays(encode_shop(shop.data)))
    event = {"org_id": demo.org_id, "name": "from-arrays", "type": "recommendation", "training_key": key}
    # When
    assert stack.gateway is not None
    result = stack.gateway.invoke("TrainModelFunction", event)
    # Then the model is trained on every user of the arrays and serves recommendations
    assert result["training_user_count"] == 300
    assert result["metrics"]["ndcg_at_10"] >= result["metrics"]["popularity_ndcg_at_10"]
    response = api.post(
        "/client/predict/from-arrays",
        json={"input": {"user_id": shop.data.orders[0].user_id}},
        headers={"X-Service-Api-Key": demo.api_key},
    )
    assert response.status_code == 200, response.text
    assert len(response.json()["predictions"]) == 10


def test_a_bad_file_is_rejected_whole_naming_file_row_and_field(
    stack: LocalStack, demo: DemoCredentials
) -> None:
    # Given
    wiring.data_blobs().put(
        f"uploads/{demo.org_id}/bad-orders.csv",
        b"order_id,user_id,product_id,quantity,amount,timestamp\no1,u1,p1,one,9.5,2025-01-01T00:00:00Z\n",
    )
    event = {"org_id": demo.org_id, "name": "bad", "orders_key": f"uploads/{demo.org_id}/bad-orders.csv"}
    # Then: the invoker gets what Lambda returns for the error, its type and message, which name the
    # file, row and field
    assert stack.gateway is not None
    with pytest.raises(FunctionFailed) as raised:
        stack.gateway.invoke("TrainModelFunction", event)
    assert raised.value.error_type == "ValidationFailed"
    assert raised.value.error_message.startswith("bad-orders.csv has 1 invalid record(s): row 2 quantity: ")
    assert wiring.model_store().get(demo.org_id, "bad") is None


def test_the_horizon_is_a_parameter_of_the_job(stack: LocalStack, demo: DemoCredentials) -> None:
    # Given a shop's orders uploaded
    shop = generate_shop(SyntheticConfig(n_users=300, n_products=40, seed=4))
    wiring.data_blobs().put(f"uploads/{demo.org_id}/h-orders.csv", dump_records(shop.data.orders, "csv"))
    event = {
        "org_id": demo.org_id,
        "name": "two-weeks",
        "horizon_days": 14,
        "orders_key": f"uploads/{demo.org_id}/h-orders.csv",
    }
    # When
    assert stack.gateway is not None
    result = stack.gateway.invoke("TrainModelFunction", event)
    # Then the model predicts the next 14 days, evaluated on the last 14
    record = wiring.model_store().get(demo.org_id, "two-weeks")
    assert record is not None
    assert result["version"] == record.version
    last_order = max(order.timestamp for order in shop.data.orders)
    assert timedelta(days=13.9) < last_order - record.training_cutoff < timedelta(days=14.1)


def test_an_unknown_job_field_is_refused_not_ignored(stack: LocalStack, demo: DemoCredentials) -> None:
    event = {
        "org_id": demo.org_id,
        "name": "typo",
        "holdout_days": 14,
        "orders_key": f"uploads/{demo.org_id}/h-orders.csv",
    }
    assert stack.gateway is not None
    with pytest.raises(FunctionFailed) as raised:
        stack.gateway.invoke("TrainModelFunction", event)
    assert raised.value.error_type == "ValidationFailed"
    assert "holdout_days" in raised.value.error_message


def test_a_trained_model_records_each_simple_method_it_beat_on_its_holdout(
    stack: LocalStack, api: httpx.Client, demo: DemoCredentials
) -> None:
    # Given: a merchant's orders in the data bucket
    shop = generate_shop(SyntheticConfig(n_users=300, n_products=40, seed=11))
    wiring.data_blobs().put(f"uploads/{demo.org_id}/gate-orders.csv", dump_records(shop.data.orders, "csv"))
    event = {
        "org_id": demo.org_id,
        "name": "gated",
        "type": "purchase",
        "orders_key": f"uploads/{demo.org_id}/gate-orders.csv",
    }
    # When the training function trains and registers a purchase model
    assert stack.gateway is not None
    result = stack.gateway.invoke("TrainModelFunction", event)
    # Then its metrics hold every simple method it was held to on its holdout, all beaten
    metrics = result["metrics"]
    simple = ("recency_baseline_roc_auc", "own_history_baseline_roc_auc", "popularity_baseline_roc_auc")
    assert all(metrics["roc_auc"] >= metrics[name] for name in simple), metrics
    # And the registered model is the two-part one: its buyer part ranks who orders at all
    assert 0.5 < metrics["buyer_roc_auc"] <= 1.0
