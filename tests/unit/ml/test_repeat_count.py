"""The recommender can reach "each customer's own products by how often they bought them": its last
part, ``repeat_count``, is weighed on the validation window after the fitted blend."""

from __future__ import annotations

import numpy as np

from shared.ml.scoring import load_bundle
from shared.ml.training import BLEND_PARTS, REPEAT_COUNT_WEIGHTS, TrainedModel


def test_the_repeat_count_weight_is_one_of_those_tried_on_validation(
    recommendation_model: TrainedModel,
) -> None:
    # Given the recommender trained on the small synthetic shop
    header = load_bundle(recommendation_model.artifacts["bundle"].data).header
    # Then its blend holds every part, the repeat count among them, weighed by one of the tried weights
    weights = dict(zip(header["blend_parts"], header["blend_weights"], strict=True))
    assert list(weights) == list(BLEND_PARTS)
    assert weights["repeat_count"] in REPEAT_COUNT_WEIGHTS


def test_with_the_largest_weight_a_customers_own_products_come_first_by_their_orders(
    recommendation_model: TrainedModel,
) -> None:
    # Given the served bundle with the largest repeat_count weight
    bundle = load_bundle(recommendation_model.artifacts["bundle"].data)
    weights = bundle.header["blend_weights"]
    weights[BLEND_PARTS.index("repeat_count")] = max(REPEAT_COUNT_WEIGHTS)
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
