"""The recommender can reach "each customer's own products by how often they bought them" and "by how
likely they are to buy each again": its last parts, ``repeat_count`` and ``repeat_model``, are weighed
on the validation window after the fitted blend."""

from __future__ import annotations

import numpy as np

from shared.ml.scoring import load_bundle
from shared.ml.training import (
    BLEND_PARTS,
    REPEAT_COUNT_WEIGHTS,
    REPEAT_FEATURES,
    REPEAT_MODEL_WEIGHTS,
    EncodedShop,
    TrainedModel,
    TrainingConfig,
    purchases,
    repeat_features,
)


def test_the_repeat_count_weight_is_one_of_those_tried_on_validation(
    recommendation_model: TrainedModel,
) -> None:
    # Given the recommender trained on the small synthetic shop
    header = load_bundle(recommendation_model.artifacts["bundle"].data).header
    # Then its blend holds every part, the repeat count among them, weighed by one of the tried weights
    weights = dict(zip(header["blend_parts"], header["blend_weights"], strict=True))
    assert list(weights) == list(BLEND_PARTS)
    assert weights["repeat_count"] in REPEAT_COUNT_WEIGHTS
    assert weights["repeat_model"] in (0.0, *REPEAT_MODEL_WEIGHTS)
    # And at most one of the two parts weighed after the fit is in use
    assert weights["repeat_count"] == 0.0 or weights["repeat_model"] == 0.0


def test_with_the_largest_weight_a_customers_own_products_come_first_by_their_orders(
    recommendation_model: TrainedModel,
) -> None:
    # Given the served bundle with the largest repeat_count weight
    bundle = load_bundle(recommendation_model.artifacts["bundle"].data)
    weights = bundle.header["blend_weights"]
    weights[BLEND_PARTS.index("repeat_count")] = max(REPEAT_COUNT_WEIGHTS)
    weights[BLEND_PARTS.index("repeat_model")] = 0.0
    # And a customer who bought several products in different numbers of orders
    indptr = bundle._model["history_indptr"]
    orders = bundle._model["history_orders"]
    user = next(
        u
        for u in range(bundle.user_count)
        if indptr[u + 1] - indptr[u] >= 3 and np.unique(orders[indptr[u] : indptr[u + 1]]).size >= 2
    )
    items = bundle._model["history_items"][indptr[user] : indptr[user + 1]]
    counts = orders[indptr[user] : indptr[user + 1]]
    # When it recommends as many products as the customer bought
    top = bundle.recommend(bundle.user_ids_at(np.array([user]))[0], int(items.size))
    # Then those are exactly the customer's products, in non-increasing order of the orders that held them
    by_id = dict(zip(bundle._product_ids[items].tolist(), counts.tolist(), strict=True))
    ranked = [str(product) for product, _ in top]
    assert set(ranked) == {str(p) for p in by_id}
    ranked_counts = [by_id[p] for p in ranked]
    assert ranked_counts == sorted(ranked_counts, reverse=True)


def test_the_repeat_model_gives_every_history_entry_a_probability(
    repeat_model_recommender: TrainedModel,
) -> None:
    # Given the served bundle of a recommender with a repeat model, trained on the small synthetic shop
    model = load_bundle(repeat_model_recommender.artifacts["bundle"].data)._model
    # Then each (customer, product bought before) entry has the repeat model's probability of a rebuy
    repeat = model["history_repeat"]
    assert repeat.size == model["history_items"].size
    assert np.all((repeat >= 0.0) & (repeat <= 1.0))
    # And it tells entries apart: customers rebuy some of their products more surely than others
    assert np.unique(repeat).size > 10


def test_a_shop_with_few_rebuys_is_ranked_by_the_count_of_its_orders_not_by_a_repeat_model(
    recommendation_model: TrainedModel,
) -> None:
    # Given the small synthetic shop: about 260 re-purchases in the repeat model's window, fewer than
    # the default min_repeat_positives (500)
    assert TrainingConfig().min_repeat_positives == 500
    bundle = load_bundle(recommendation_model.artifacts["bundle"].data)
    # Then no repeat model was fitted: every entry's probability is zero and its part weighs nothing
    assert not np.any(bundle._model["history_repeat"])
    weights = dict(zip(bundle.header["blend_parts"], bundle.header["blend_weights"], strict=True))
    assert weights["repeat_model"] == 0.0


def test_the_repeat_features_measure_a_customers_own_rhythm_for_a_product() -> None:
    # Given a customer who bought milk every 7 days (days 0, 7 and 14) and bread once (day 10)
    shop = EncodedShop.from_arrays(
        {
            "user_ids": np.array(["u1"]),
            "product_ids": np.array(["bread", "milk"]),
            "categories": np.array(["Uncategorised"]),
            "product_category": np.zeros(2, dtype=np.int64),
            "product_price": np.ones(2),
            "order_user": np.zeros(4, dtype=np.int64),
            "order_product": np.array([1, 1, 0, 1]),
            "order_day": np.array([0.0, 7.0, 10.0, 14.0]),
            "order_units": np.ones(4),
            "order_amount": np.ones(4),
            "order_key": np.arange(4),
        }
    )
    # When the repeat features are built as of day 21 for a 7-day horizon
    bought = purchases(shop, 21.0)
    rows = repeat_features(bought, bought.product_rebuy(), bought.product_gap(), np.zeros(2), 7.0)
    features = {name: rows[:, k] for k, name in enumerate(REPEAT_FEATURES)}
    # Then milk (the second entry) is 3 orders, last 7 days ago, every 7 days: one cycle since it, two by
    # the horizon's end
    bread, milk = 0, 1
    assert features["orders"][milk] == 3.0
    assert features["days_since"][milk] == 7.0
    assert features["own_gap"][milk] == 7.0
    assert features["own_gap_ratio"][milk] == 1.0
    assert features["own_gap_ratio_ahead"][milk] == 2.0
    # And bread, bought once, has no rhythm of its own
    assert np.isnan(features["own_gap"][bread])
    # And both know the customer last ordered 7 days ago, first 21 days ago, in 4 orders
    assert features["user_days_since"].tolist() == [7.0, 7.0]
    assert features["user_days_first"].tolist() == [21.0, 21.0]
    assert features["user_orders"].tolist() == [4.0, 4.0]
