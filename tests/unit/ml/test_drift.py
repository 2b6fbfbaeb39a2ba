"""Feature drift: a model's training-time feature distributions against data synced after training."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta

import pytest

from shared.errors import ValidationFailed
from shared.ml.artifacts import save_trained_model
from shared.ml.datasets import ShopData
from shared.ml.drift import DriftReference, measure_drift
from shared.ml.trained import TrainedModel
from shared.ml.training import train_model
from tools.synthetic import SyntheticConfig, generate_shop

PSI_THRESHOLD = 0.2  # the default drift_psi_threshold
RECENT_DAYS = 30
BUSIER = 8  # how many times as often customers buy in the shifted month


@dataclass(frozen=True)
class DriftScenario:
    """A year of orders to train on, then one more month: as the shop went on, or shifted."""

    training: ShopData
    continued: ShopData  # the same shop, one month later
    busier: ShopData  # the same history, then a month in which customers buy BUSIER times as often


@pytest.fixture(scope="module")
def scenario() -> DriftScenario:
    # A catalogue of 200 products: product features have one value per product, so a much smaller
    # catalogue makes their PSI noisy even without a shift.
    config = SyntheticConfig(
        n_users=600, n_products=200, seed=7, start=datetime(2023, 6, 1, tzinfo=UTC), days=365 + RECENT_DAYS
    )
    shop = generate_shop(config).data
    training_end = config.start + timedelta(days=365)
    history = [o for o in shop.orders if o.timestamp < training_end]
    busy = generate_shop(replace(config, mean_orders_per_user_year=config.mean_orders_per_user_year * BUSIER))
    busy_month = [
        o.model_copy(update={"order_id": f"busy-{o.order_id}"})
        for o in busy.data.orders
        if o.timestamp >= training_end
    ]
    return DriftScenario(
        training=ShopData(shop.customers, shop.products, history),
        continued=shop,
        busier=ShopData(shop.customers, shop.products, history + busy_month),
    )


@pytest.fixture(scope="module")
def purchase_model(scenario: DriftScenario) -> TrainedModel:
    return train_model(scenario.training, name="buyers", model_type="purchase")


@pytest.fixture(scope="module")
def purchase_reference(purchase_model: TrainedModel) -> DriftReference:
    return DriftReference.of(purchase_model)


@pytest.fixture(scope="module")
def recommendation_reference(scenario: DriftScenario) -> DriftReference:
    return DriftReference.of(train_model(scenario.training, name="picks", model_type="recommendation"))


def test_a_shop_that_carries_on_as_before_shows_no_purchase_feature_drift(
    scenario: DriftScenario, purchase_reference: DriftReference
) -> None:
    # When
    report = measure_drift(purchase_reference, scenario.continued)
    # Then
    assert set(report.psi_by_feature) == set(purchase_reference.feature_distributions)
    assert report.max_psi == max(report.psi_by_feature.values())
    assert report.max_psi < PSI_THRESHOLD


def test_customers_buying_much_more_often_drift_the_purchase_activity_features(
    scenario: DriftScenario, purchase_reference: DriftReference
) -> None:
    # When
    report = measure_drift(purchase_reference, scenario.busier)
    # Then
    assert report.max_psi > PSI_THRESHOLD
    assert report.psi_by_feature["product_purchases_30d"] > PSI_THRESHOLD
    assert report.psi_by_feature["user_days_since_last_order"] > PSI_THRESHOLD
    assert report.psi_by_feature["product_price"] < PSI_THRESHOLD


def test_a_repriced_catalogue_drifts_the_price_feature_only(
    scenario: DriftScenario, purchase_reference: DriftReference
) -> None:
    # Given: the shop carried on, but every list price tripled
    repriced = ShopData(
        scenario.continued.customers,
        [p.model_copy(update={"price": (p.price or 0.0) * 3}) for p in scenario.continued.products],
        scenario.continued.orders,
    )
    # When
    report = measure_drift(purchase_reference, repriced)
    # Then
    drifted = {name for name, psi in report.psi_by_feature.items() if psi > PSI_THRESHOLD}
    assert drifted == {"product_price"}


def test_a_shop_that_carries_on_as_before_shows_no_recommendation_drift(
    scenario: DriftScenario, recommendation_reference: DriftReference
) -> None:
    # When
    report = measure_drift(recommendation_reference, scenario.continued)
    # Then
    assert set(report.psi_by_feature) == {"user_history_items"}
    assert report.max_psi < PSI_THRESHOLD


def test_customers_buying_much_more_often_drift_their_history_sizes(
    scenario: DriftScenario, recommendation_reference: DriftReference
) -> None:
    # When
    report = measure_drift(recommendation_reference, scenario.busier)
    # Then
    assert report.psi_by_feature["user_history_items"] > PSI_THRESHOLD


def test_the_report_says_what_was_measured(
    scenario: DriftScenario, purchase_reference: DriftReference
) -> None:
    # Given
    new_lines = len(scenario.continued.orders) - len(scenario.training.orders)
    # When
    report = measure_drift(purchase_reference, scenario.continued)
    # Then: every user x product pair, as of just after the last order
    assert report.sample_size == 600 * 200
    assert report.new_order_lines == new_lines > 0
    last_order = max(o.timestamp for o in scenario.continued.orders)
    assert timedelta(0) < report.as_of - last_order < timedelta(seconds=1)


def test_purchase_pairs_are_sampled_when_there_are_more_than_asked_for(
    scenario: DriftScenario, purchase_reference: DriftReference
) -> None:
    # When
    report = measure_drift(purchase_reference, scenario.continued, max_pairs=20_000)
    # Then
    assert report.sample_size == 20_000
    assert report.max_psi < PSI_THRESHOLD


def test_data_with_nothing_after_the_models_data_end_is_rejected(
    scenario: DriftScenario, purchase_reference: DriftReference
) -> None:
    # When / Then: the training data itself holds no new orders
    with pytest.raises(ValidationFailed, match="nothing after the model's data end") as raised:
        measure_drift(purchase_reference, scenario.training)
    assert raised.value.field == "orders"


def test_the_reference_reads_the_stored_training_metadata(purchase_model: TrainedModel) -> None:
    # Given: the model saved as the training function saves it
    store: dict[str, bytes] = {}
    keys = save_trained_model(purchase_model, _DictStore(store))
    # When
    reference = DriftReference.model_validate_json(store[keys["metadata"]])
    # Then
    assert reference == DriftReference.of(purchase_model)
    assert reference.data_end == purchase_model.data_end


class _DictStore:
    def __init__(self, objects: dict[str, bytes]) -> None:
        self._objects = objects

    def put(self, key: str, data: bytes) -> None:
        self._objects[key] = data
