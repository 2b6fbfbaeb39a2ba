"""The two-part purchase model: a buyer part (does the customer order at all in the horizon?) times a
product part (which products, given an order), calibrated on the holdout."""

from __future__ import annotations

import io

import joblib
import numpy as np
import pytest
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.metrics import roc_auc_score

from shared.ml.features import CUSTOMER_FEATURES, History, build_state, customer_features, pair_features
from shared.ml.purchase_training import _tree_arrays
from shared.ml.scoring import buyer_logit, load_bundle
from shared.ml.shop_arrays import encode_shop, to_day
from shared.ml.trained import TrainedModel, TrainingConfig
from shared.ml.training import train_model
from tools.synthetic import SyntheticShop


def _history() -> History:
    # Customer 0 orders on days 0, 10 and 40; customer 1 on days 5 and 50; customer 2 never.
    return History(
        user=np.array([0, 1, 0, 0, 1]),
        product=np.array([0, 1, 0, 1, 0]),
        day=np.array([0.0, 5.0, 10.0, 40.0, 50.0]),
        units=np.ones(5),
        amount=np.array([5.0, 7.0, 5.0, 20.0, 3.0]),
        order_key=np.arange(5),
    )


def test_the_purchase_rhythm_features_are_the_last_gap_and_its_trend() -> None:
    # Given customers who ordered on days 0, 10, 40 and on days 5, 50, and one who never ordered
    state = build_state(
        _history(),
        as_of_day=60.0,
        n_users=3,
        product_category=np.zeros(2, np.int64),
        product_price=np.ones(2),
    )
    # When their rhythm is read on day 60
    names = ["user_days_between_last_orders", "user_gap_trend", "user_orders_30d"]
    rows = pair_features(state, np.arange(3), np.zeros(3, np.int64), names)
    # Then the last gap is 30 and 45 days; the first customer slowed down (30 against a mean of 20),
    # the second kept a steady rhythm; the one without orders gets "never" and no trend
    assert rows[:, 0].tolist() == [30.0, 45.0, 730.0]
    assert np.allclose(rows[:, 1], [np.log(31 / 21), 0.0, 0.0])
    assert rows[:, 2].tolist() == [1.0, 1.0, 0.0]


def test_customer_features_are_the_pair_features_of_the_customer_alone() -> None:
    # Given a history and its feature state on day 60
    history = _history()
    state = build_state(
        history, as_of_day=60.0, n_users=3, product_category=np.zeros(2, np.int64), product_price=np.ones(2)
    )
    # When the buyer part's features are computed without the per-product aggregates
    alone = customer_features(history, 60.0, 3)
    # Then they are the pair features' customer columns, for any product
    for product in (0, 1):
        paired = pair_features(state, np.arange(3), np.full(3, product), CUSTOMER_FEATURES)
        assert np.array_equal(alone, paired)


def test_the_bundle_walks_the_buyer_trees_to_scikit_learns_logit() -> None:
    # Given a gradient boosting fitted on customer features (some rows on a split's threshold)
    rng = np.random.default_rng(3)
    features = np.round(rng.gamma(2.0, 20.0, size=(3000, len(CUSTOMER_FEATURES))))
    labels = (features[:, 0] + rng.normal(0, 20, 3000) < 40).astype(np.int64)
    model = HistGradientBoostingClassifier(max_iter=40, max_depth=3, random_state=0).fit(features, labels)
    # When the bundle's numpy walk of its trees scores rows it saw and rows it did not
    rows = np.vstack([features[:500], np.round(rng.gamma(2.0, 20.0, size=(500, len(CUSTOMER_FEATURES))))])
    walked = buyer_logit(_tree_arrays(model), rows)
    # Then the logits are scikit-learn's own
    assert np.allclose(walked, model.decision_function(rows), rtol=1e-12, atol=1e-12)


def test_a_purchase_model_knows_who_orders_at_all(purchase_model: TrainedModel) -> None:
    # Given the two-part purchase model of the small synthetic shop
    bundle = load_bundle(purchase_model.artifacts["bundle"].data)
    # When it is asked each customer's chance of ordering anything in its horizon
    ordering = bundle.order_probabilities()
    # Then every customer has a probability strictly between 0 and 1, and the buyer part was chosen
    # between gradient boosting and logistic regression on the holdout, where it ranks who orders
    assert ordering is not None
    assert ordering.shape == (bundle.user_count,)
    assert np.all((ordering > 0) & (ordering < 1))
    assert purchase_model.algorithm == "two_part"
    assert purchase_model.metrics["buyer_roc_auc"] > 0.6
    assert {"buyer_logistic_roc_auc", "buyer_gradient_boosting_roc_auc"} <= set(purchase_model.metrics)


def test_the_cold_start_figure_is_every_pair_of_the_customers_without_orders(shop: SyntheticShop) -> None:
    # Given a purchase model evaluated on a sample of a tenth of the shop's (customer, product) pairs
    config = TrainingConfig(max_eval_pairs=5000)
    trained = train_model(shop.data, name="buyers", model_type="purchase", config=config)
    assert trained.metrics["holdout_pairs"] == 5000
    # When every pair of the customers with no order before the cutoff with every product is scored by
    # the trained model (its scikit-learn form) on features as of the cutoff, and labelled from the
    # shop's records by whether the customer bought the product in the holdout
    cutoff, end = trained.training_cutoff, trained.data_end
    encoded = encode_shop(shop.data)
    ordered = {o.user_id for o in shop.data.orders if o.timestamp < cutoff}
    newcomers = np.flatnonzero([user not in ordered for user in encoded.user_ids.tolist()])
    bought = {(o.user_id, o.product_id) for o in shop.data.orders if cutoff <= o.timestamp < end}
    users = np.repeat(newcomers, encoded.product_ids.size)
    products = np.tile(np.arange(encoded.product_ids.size), newcomers.size)
    labels = np.array(
        [
            (encoded.user_ids[u], encoded.product_ids[p]) in bought
            for u, p in zip(users, products, strict=True)
        ]
    )
    # (no taste factors: a customer without orders has no taste, whatever the products' factors)
    state = encoded.state(to_day(cutoff))
    model = joblib.load(io.BytesIO(trained.artifacts["pipeline"].data))
    scores = model.predict_proba(pair_features(state, users, products))[:, 1]
    # Then the cold-start figure is the ROC-AUC over all of those pairs (not over the sample's tenth of
    # them) and says how many purchases it rests on
    assert labels.sum() >= 10
    assert trained.metrics["cold_start_positives"] == labels.sum()
    assert trained.metrics["cold_start_roc_auc"] == pytest.approx(roc_auc_score(labels, scores), abs=1e-9)
