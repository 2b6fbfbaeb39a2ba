"""The recommender can reach "each customer's own products by how often they bought them" and "by how
likely they are to buy each again": its last parts, ``repeat_count`` and ``repeat_model``, are weighed
on the validation window after the fitted blend."""

from __future__ import annotations

import dataclasses
import io
from typing import Any

import joblib
import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier

from shared.ml.recommendation_training import (
    BLEND_PARTS,
    REPEAT_COUNT_WEIGHTS,
    REPEAT_FEATURES,
    REPEAT_MODEL_WEIGHTS,
    _fit_repeat,
    purchases,
    repeat_features,
    repeat_scores,
)
from shared.ml.scoring import load_bundle
from shared.ml.shop_arrays import EncodedShop, split_shop, to_day
from shared.ml.trained import TrainedModel, TrainingConfig
from shared.ml.training import train_model
from tests.unit.ml.conftest import TRAINED_AT
from tools import train as train_cli
from tools.synthetic import SyntheticShop


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


def _pipeline(model: TrainedModel) -> dict[str, Any]:
    fitted: dict[str, Any] = joblib.load(io.BytesIO(model.artifacts["pipeline"].data))
    return fitted


def test_the_served_repeat_model_is_refitted_on_the_holdout_after_the_evaluation(
    shop: SyntheticShop, repeat_model_recommender: TrainedModel
) -> None:
    # Given the recommender of the small synthetic shop whose blend weighs its repeat model
    bundle = load_bundle(repeat_model_recommender.artifacts["bundle"].data)
    weights = dict(zip(bundle.header["blend_parts"], bundle.header["blend_weights"], strict=True))
    assert weights["repeat_model"] > 0.0
    encoded = split_shop(shop.data, repeat_model_recommender.holdout_days)
    config = TrainingConfig(min_repeat_positives=1, holdout_days=encoded.horizon_days)
    fitted = _pipeline(repeat_model_recommender)
    serving = purchases(encoded, encoded.end_day)
    features = repeat_features(
        serving,
        serving.product_rebuy(),
        serving.product_gap(),
        bundle._model["popularity_recent"],
        float(encoded.horizon_days),
    )
    # Then the artifact keeps the served repeat model alone, and says the metrics describe another fit:
    # the one as of the cutoff, which never saw the holdout and which ``_fit_repeat`` gives again
    assert fitted["repeat_model_refitted"] is True
    assert [name for name, value in fitted.items() if isinstance(value, HistGradientBoostingClassifier)] == [
        "repeat_model"
    ]
    evaluated = _fit_repeat(encoded, encoded.cutoff_day, config)
    assert evaluated is not None
    # And the one served is refitted as of the end of the data: it learnt the holdout's re-purchases
    served = _fit_repeat(encoded, encoded.end_day, config)
    assert served is not None
    assert np.array_equal(fitted["repeat_model"].predict_proba(features), served.predict_proba(features))
    assert not np.allclose(served.predict_proba(features), evaluated.predict_proba(features))
    # And the bundle's probability of every history entry is the served model's
    expected = repeat_scores(
        served,
        serving,
        serving.product_rebuy(),
        serving.product_gap(),
        bundle._model["popularity_recent"],
        float(encoded.horizon_days),
    )
    assert np.allclose(bundle._model["history_repeat"], expected.data)


def test_a_holdout_with_too_few_re_purchases_serves_the_evaluated_repeat_model(shop: SyntheticShop) -> None:
    # Given the small synthetic shop without its re-purchases in the holdout (its last 30 days; the
    # last order is kept, so the holdout stays where it was): the window before has about 300
    cutoff = split_shop(shop.data, 30).cutoff_day
    last = max(order.timestamp for order in shop.data.orders)
    seen: set[tuple[str, str]] = set()
    orders = []
    for order in sorted(shop.data.orders, key=lambda o: o.timestamp):
        pair = (order.user_id, order.product_id)
        if not (to_day(order.timestamp) >= cutoff and pair in seen and order.timestamp < last):
            orders.append(order)
        seen.add(pair)
    # When the recommender is trained with a repeat model needing 100 re-purchases in its window
    model = train_model(
        dataclasses.replace(shop.data, orders=orders),
        name="picks",
        model_type="recommendation",
        config=TrainingConfig(min_repeat_positives=100),
        now=TRAINED_AT,
    )
    # Then the blend weighs the repeat model evaluated as of the cutoff
    bundle = load_bundle(model.artifacts["bundle"].data)
    weights = dict(zip(bundle.header["blend_parts"], bundle.header["blend_weights"], strict=True))
    assert weights["repeat_model"] > 0.0
    # And, the holdout having too few re-purchases to refit it on, that model is the one served
    fitted = _pipeline(model)
    assert fitted["repeat_model"] is not None
    assert fitted["repeat_model_refitted"] is False
    assert np.any(bundle._model["history_repeat"])


def test_the_training_reports_the_refit_as_a_stage_of_its_own(shop: SyntheticShop) -> None:
    # When the recommender is trained with a progress callback
    stages: list[str] = []
    train_model(
        shop.data,
        name="picks",
        model_type="recommendation",
        config=TrainingConfig(min_repeat_positives=1),
        now=TRAINED_AT,
        progress=stages.append,
    )
    # Then the repeat model's refit on the holdout is reported after the evaluation, before the export
    assert stages == ["encode", "tune", "fit", "evaluate", "refit", "export"]
    # And the local training's progress bar counts those stages
    assert train_cli._STAGES["recommendation"] == stages


def test_the_repeat_model_learns_from_every_pair_of_a_grocery_log_the_size_of_the_complete_journey() -> None:
    # Given The Complete Journey's latest window: 577,255 (customer, product bought before) pairs
    # (2,469 households; docs/model-quality.md, "A seventh round")
    pairs = 577_255
    # Then the repeat model is fitted on all of them, not on a draw of its customers
    assert TrainingConfig().max_repeat_pairs >= pairs
    # And the cap still bounds the fit at the design size (8.2-9.0M pairs before each window), where
    # 4,000,000 took the training over its 3,072 MB target
    assert TrainingConfig().max_repeat_pairs < 4_000_000


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
