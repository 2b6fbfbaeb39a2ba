"""The recommender's new-products ranking (``exclude_purchased``): the affinity part factorises which
products each customer bought, and the new-products blend's weights are chosen on the validation
window's new purchases among the fitted ones, those with more affinity, and affinity alone."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from shared.ml.recommendation_training import (
    NEW_AFFINITY_WEIGHTS,
    NEW_PRODUCT_PARTS,
    _fit_parts,
    _new_product_weights,
    purchases,
)
from shared.ml.scoring import ScoringBundle, load_bundle
from shared.ml.shop_arrays import split_shop
from shared.ml.trained import TrainedModel, TrainingConfig
from tools.synthetic import SyntheticShop


def test_the_served_affinity_is_the_trained_affinity_of_the_products_bought(
    shop: SyntheticShop, recommendation_model: TrainedModel
) -> None:
    # Given the served bundle, its new-products blend set to the affinity part alone
    bundle = load_bundle(recommendation_model.artifacts["bundle"].data)
    assert bundle.header["affinity_input"] == "owned"
    header = bundle.header | {"new_product_weights": [float(n == "affinity") for n in NEW_PRODUCT_PARTS]}
    affinity_only = ScoringBundle(header, bundle._arrays)
    # And the training's recommender with the bundle's factors, on the same history
    encoded = split_shop(shop.data, None)
    history = purchases(encoded, encoded.end_day)
    users = np.arange(0, history.weights.shape[0], 37)
    parts = replace(
        _fit_parts(encoded, encoded.end_day, TrainingConfig()),
        item_factors=bundle._model["item_factors"],
        affinity_scale=float(header["affinity_scale"]),
    )
    # When both score those users
    trained = parts.part("affinity", history.rows(users))
    served = np.vstack([affinity_only._recommendation_scores_for_user(int(u), new_only=True) for u in users])
    # Then they agree, and a customer's affinity does not change with how many units they bought
    assert served == pytest.approx(trained, rel=1e-4, abs=1e-6)
    heavier = replace(history, weights=history.weights * 3.0)
    assert parts.part("affinity", heavier.rows(users)) == pytest.approx(trained)


def test_the_new_products_weights_are_one_of_the_candidates_tried_on_validation(
    shop: SyntheticShop,
) -> None:
    # Given the parts as of the start of the validation window and a fitted blend
    encoded = split_shop(shop.data, None)
    parts = _fit_parts(encoded, encoded.train_day, TrainingConfig())
    before = purchases(encoded, encoded.train_day)
    window = encoded.history.between(encoded.train_day, encoded.cutoff_day)
    buyers = np.unique(window.user).astype(np.int64)
    fitted = np.array([0.5, 0.2, 0.1, 0.3, 0.4])
    # When the weights are chosen
    chosen = _new_product_weights(parts, fitted, before, window, buyers, encoded)
    # Then they are the fitted ones, those with more affinity, or affinity alone
    at = NEW_PRODUCT_PARTS.index("affinity")
    alone = np.eye(len(NEW_PRODUCT_PARTS))[at]
    candidates = [fitted, *[fitted + w * alone for w in NEW_AFFINITY_WEIGHTS], alone]
    assert any(np.array_equal(chosen, candidate) for candidate in candidates)
    # And without any buyer the fitted ones are kept
    none = np.zeros(0, dtype=np.int64)
    assert np.array_equal(_new_product_weights(parts, fitted, before, window, none, encoded), fitted)
