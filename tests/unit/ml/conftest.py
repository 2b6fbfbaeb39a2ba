"""Shared fixtures: one small synthetic shop and the models trained on it (trained once per session)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from shared.ml.trained import TrainedModel, TrainingConfig
from shared.ml.training import train_model
from tools.synthetic import SyntheticConfig, SyntheticShop, generate_shop

TRAINED_AT = datetime(2025, 1, 2, tzinfo=UTC)


@pytest.fixture(scope="session")
def shop() -> SyntheticShop:
    return generate_shop(SyntheticConfig(n_users=600, n_products=80, seed=7))


@pytest.fixture(scope="session")
def purchase_model(shop: SyntheticShop) -> TrainedModel:
    return train_model(shop.data, name="buyers", model_type="purchase", oracle=shop, now=TRAINED_AT)


@pytest.fixture(scope="session")
def recommendation_model(shop: SyntheticShop) -> TrainedModel:
    return train_model(shop.data, name="picks", model_type="recommendation", now=TRAINED_AT)


@pytest.fixture(scope="session")
def repeat_model_recommender(shop: SyntheticShop) -> TrainedModel:
    """The recommender of the same shop with its repeat model fitted whatever the number of re-purchases
    (the shop has about 260, under the default ``min_repeat_positives``)."""
    config = TrainingConfig(min_repeat_positives=1)
    return train_model(shop.data, name="picks", model_type="recommendation", config=config, now=TRAINED_AT)
