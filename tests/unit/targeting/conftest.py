"""The targeting tests' trained model: a purchase model of a 300-customer, 30-product synthetic shop."""

from __future__ import annotations

import pytest

from shared.ml.scoring import ScoringBundle, load_bundle
from shared.ml.trained import TrainingConfig
from shared.ml.training import train_model
from tools.synthetic import SyntheticConfig, generate_shop


@pytest.fixture(scope="module")
def bundle() -> ScoringBundle:
    shop = generate_shop(SyntheticConfig(n_users=300, n_products=30, seed=3))
    trained = train_model(shop.data, name="shop-purchase", model_type="purchase", config=TrainingConfig())
    return load_bundle(trained.artifacts["bundle"].data)
