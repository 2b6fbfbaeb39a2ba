from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime, timedelta

import pytest

from shared.errors import ValidationFailed
from shared.ml.datasets import OrderRecord, ShopData
from shared.ml.training import TrainedModel, train_model


def test_purchase_model_approaches_the_oracle(purchase_model: TrainedModel) -> None:
    # Given a model trained on a synthetic shop with a known oracle
    metrics = purchase_model.metrics

    # Then its holdout AUC is close to the best achievable and its top decile is enriched
    assert metrics["roc_auc"] >= 0.9 * metrics["oracle_roc_auc"]
    assert metrics["lift_top_decile"] > 3


def test_purchase_model_records_what_it_was_trained_on(purchase_model: TrainedModel) -> None:
    # Then the metadata has the feature order, the users and a drift reference per feature
    assert purchase_model.feature_names[0] == "user_days_since_last_order"
    assert len(purchase_model.training_user_ids) == 600
    assert set(purchase_model.feature_distributions) == set(purchase_model.feature_names)
    assert purchase_model.training_cutoff == purchase_model.data_end - timedelta(days=30)


def test_artifact_checksums_match_their_bytes(purchase_model: TrainedModel) -> None:
    # Then each artifact's SHA-256 is that of its data
    for artifact in purchase_model.artifacts.values():
        assert artifact.sha256 == hashlib.sha256(artifact.data).hexdigest()


def test_metadata_json_leaves_the_bytes_out(purchase_model: TrainedModel) -> None:
    # When the metadata is serialised
    metadata = json.loads(purchase_model.model_dump_json())

    # Then artifacts are described by checksum, without their content
    assert set(metadata["artifacts"]["bundle"]) == {"file_name", "sha256", "size_bytes"}


def test_recommendations_beat_popularity(recommendation_model: TrainedModel) -> None:
    # Then NDCG@10 on the holdout is above the popularity baseline's
    metrics = recommendation_model.metrics
    assert metrics["ndcg_at_10"] > metrics["popularity_ndcg_at_10"]
    assert 0 < metrics["precision_at_10"] <= 1


def test_a_history_too_short_to_split_is_rejected() -> None:
    # Given 40 orders over 20 days
    start = datetime(2024, 1, 1, tzinfo=UTC)
    orders = [
        OrderRecord(
            order_id=f"o{k}", user_id=f"u{k % 5}", product_id="p1", quantity=1, amount=1.0,
            timestamp=start + timedelta(hours=12 * k),
        )
        for k in range(40)
    ]  # fmt: skip

    # When training with a 30-day holdout
    with pytest.raises(ValidationFailed) as raised:
        train_model(ShopData([], [], orders), name="m", model_type="purchase")

    # Then the error says what is missing
    assert "time split" in raised.value.message
