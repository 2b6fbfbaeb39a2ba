from __future__ import annotations

import hashlib
import json
import pickle
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from shared.errors import ValidationFailed
from shared.ml import scoring
from shared.ml.datasets import OrderRecord, ShopData
from shared.ml.features import GROWS_WITH_TIME, MODEL_DEPENDENT
from shared.ml.shop_arrays import (
    TRAINING_ARRAYS,
    EncodedShop,
    OrdersGap,
    encode_shop,
    read_training_arrays,
    write_training_arrays,
)
from shared.ml.trained import TrainedModel, TrainingConfig
from shared.ml.training import baseline_shortfall, train_model
from tests.unit.ml.conftest import TRAINED_AT
from tools.synthetic import SyntheticConfig, SyntheticShop, generate_shop


def test_purchase_model_approaches_the_oracle(purchase_model: TrainedModel) -> None:
    # Given a model trained on a synthetic shop with a known oracle
    metrics = purchase_model.metrics

    # Then its holdout AUC is close to the best achievable and its top decile is enriched
    assert metrics["roc_auc"] >= 0.9 * metrics["oracle_roc_auc"]
    assert metrics["lift_top_decile"] > 3


def test_purchase_model_records_what_it_was_trained_on(purchase_model: TrainedModel) -> None:
    # Then the metadata has the feature order, the users and a drift reference per feature (but for
    # customer age, which grows by construction)
    assert purchase_model.feature_names[0] == "user_days_since_last_order"
    assert len(purchase_model.training_user_ids) == 600
    assert (
        set(purchase_model.feature_distributions)
        == set(purchase_model.feature_names) - GROWS_WITH_TIME - MODEL_DEPENDENT
    )
    assert purchase_model.training_cutoff == purchase_model.data_end - timedelta(days=30)


def test_artifact_checksums_match_their_bytes(purchase_model: TrainedModel) -> None:
    # Then each artifact's SHA-256 is that of its data
    for artifact in purchase_model.artifacts.values():
        assert artifact.sha256 == hashlib.sha256(artifact.data).hexdigest()


def test_the_serving_shards_a_purchase_training_keeps_are_those_of_its_bundle(
    shop: SyntheticShop, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a shard size that splits the 600-user shop into six shards
    monkeypatch.setattr(scoring, "SHARD_USERS", 100)
    # When a purchase model is trained (its shards cut from the arrays in memory, not the bundle's bytes)
    model = train_model(shop.data, name="buyers", model_type="purchase", now=TRAINED_AT)
    # Then they are, byte for byte, the shards of the bundle it keeps
    kept = [model.artifacts[role].data for role in sorted(model.artifacts) if role.startswith("shard-")]
    assert len(kept) == 6
    assert kept == scoring.shard_bundle(model.artifacts["bundle"].data)


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


def test_a_shop_with_fewer_products_than_a_top_ten_gets_a_recommendation_model() -> None:
    # Given a shop that sells three products (its validation ranks fewer than ten)
    shop = generate_shop(SyntheticConfig(n_users=400, n_products=3, seed=5))

    # When a recommendation model is trained
    model = train_model(shop.data, name="three", model_type="recommendation", now=TRAINED_AT)

    # Then it is trained and measured, every product ranked for each buyer
    assert model.metrics["ndcg_at_10"] > 0
    assert 0 < model.metrics["precision_at_10"] <= 0.3


TWENTY_DAYS_FROM = datetime(2024, 1, 1, tzinfo=UTC)


def twenty_days_of_orders() -> ShopData:
    """40 orders over 20 days from ``TWENTY_DAYS_FROM``: too short a history to train on."""
    orders = [
        OrderRecord(
            order_id=f"o{k}", user_id=f"u{k % 5}", product_id="p1", quantity=1, amount=1.0,
            timestamp=TWENTY_DAYS_FROM + timedelta(hours=12 * k),
        )
        for k in range(40)
    ]  # fmt: skip
    return ShopData([], [], orders)


def test_a_history_too_short_to_split_is_rejected() -> None:
    # Given 40 orders over 20 days
    shop = twenty_days_of_orders()

    # When training with the default horizon, 30 days after the first order
    with pytest.raises(ValidationFailed) as raised:
        train_model(shop, name="m", model_type="purchase", now=TWENTY_DAYS_FROM + timedelta(days=30))

    # Then the error says what is missing
    assert "spans 20 days" in raised.value.message
    assert "at least 104 days" in raised.value.message
    # And what to do, also for a shop that has no older orders: the day its first one is 104 days old
    assert raised.value.remedy == (
        "Upload a longer order history (every order since your shop opened). A younger shop: sync "
        "again on or after 2024-04-14, when its first order is 104 days old."
    )


def test_a_history_too_short_whose_first_order_is_long_past_asks_for_the_missing_orders() -> None:
    # Given 40 orders over 20 days, the first a year before the training
    shop = twenty_days_of_orders()

    # When training
    with pytest.raises(ValidationFailed) as raised:
        train_model(shop, name="m", model_type="purchase", now=TWENTY_DAYS_FROM + timedelta(days=365))

    # Then the remedy does not send the shop to wait for a day long past: its files miss orders it has
    assert raised.value.remedy == (
        "Upload a longer order history: the orders file holds orders from 2024-01-01 to 2024-01-20 only; "
        "sync every order since your shop opened, up to today."
    )


@pytest.mark.parametrize("model_type", ["purchase", "recommendation"])
def test_orders_with_a_gap_where_the_models_learn_are_refused_naming_it(model_type: str) -> None:
    # Given a shop's file whose orders stop in September, then one new order at the end of November
    # (a checkout's purchase after an old export): no order in the 30 days before the holdout
    start = datetime(2026, 1, 10, tzinfo=UTC)
    orders = [
        OrderRecord(
            order_id=f"o{k}", user_id=f"u{k % 12}", product_id=f"p{k % 2}", quantity=1, amount=1.0,
            timestamp=start + timedelta(days=7 * k),
        )
        for k in range(36)
    ] + [
        OrderRecord(
            order_id="paid", user_id="u1", product_id="p0", quantity=1, amount=1.0,
            timestamp=datetime(2026, 11, 29, 10, tzinfo=UTC),
        )
    ]  # fmt: skip

    # When training
    with pytest.raises(OrdersGap) as raised:
        train_model(ShopData([], [], orders), name="m", model_type=model_type)

    # Then it is refused (not a crash), naming the empty window and what to sync
    assert raised.value.field == "orders"
    assert "none from 2026-09-30 to 2026-10-30" in raised.value.message
    assert "orders up to its latest one" in (raised.value.remedy or "")


def _daily_orders(days: int) -> ShopData:
    start = datetime(2024, 1, 1, tzinfo=UTC)
    orders = [
        OrderRecord(
            order_id=f"o{k}", user_id=f"u{k % 40}", product_id=f"p{k % 7}", quantity=1, amount=1.0,
            timestamp=start + timedelta(hours=6 * k),
        )
        for k in range(days * 4)
    ]  # fmt: skip
    return ShopData([], [], orders)


def test_a_horizon_the_history_cannot_support_is_refused_naming_the_longest_it_can() -> None:
    # Given 200 days of orders: 90 days of feature history leave 110, so at most 55 days each
    data = _daily_orders(200)
    # When
    with pytest.raises(ValidationFailed) as raised:
        train_model(data, name="m", model_type="purchase", config=TrainingConfig(holdout_days=90))
    # Then
    assert raised.value.field == "horizon_days"
    assert "at most 54 days" in (raised.value.remedy or "")


def test_without_a_horizon_a_short_history_gets_the_longest_safe_one() -> None:
    # Given 130 days of orders, too short for the default 30-day horizon after 90 days of history
    model = train_model(_daily_orders(130), name="m", model_type="purchase")
    # Then the horizon is the longest that keeps the training window inside the history
    assert model.holdout_days == 19
    assert model.training_cutoff == model.data_end - timedelta(days=19)


def test_a_horizon_out_of_range_is_refused() -> None:
    with pytest.raises(ValidationFailed, match="between 7 and 180"):
        train_model(
            _daily_orders(400), name="m", model_type="purchase", config=TrainingConfig(holdout_days=3)
        )


@pytest.mark.parametrize(
    ("metrics", "reason"),
    [
        ({"roc_auc": 0.52, "recency_baseline_roc_auc": 0.5}, "not above 0.55"),
        (
            {"roc_auc": 0.70, "recency_baseline_roc_auc": 0.75},
            "did not beat the strongest simple method on your latest orders, ranking customers by how "
            "recently they last ordered: ROC-AUC 0.700 against 0.750 (0.050 lower)",
        ),
        ({"roc_auc": 0.80, "recency_baseline_roc_auc": 0.75}, None),
    ],
)
def test_a_purchase_model_must_beat_a_coin_flip_and_recency(
    metrics: dict[str, float], reason: str | None
) -> None:
    shortfall = baseline_shortfall("purchase", metrics)
    assert (shortfall is None) if reason is None else (reason in (shortfall or ""))


def test_the_trained_purchase_model_reports_the_recency_baseline(purchase_model: TrainedModel) -> None:
    assert 0.5 < purchase_model.metrics["recency_baseline_roc_auc"] < purchase_model.metrics["roc_auc"]


def test_the_customer_lifetime_features_are_computed_from_the_history() -> None:
    # Given one customer who ordered on days 0, 10 and 40 (spending 5, 5, 20), seen on day 100
    from shared.ml.features import History, build_state, pair_features

    history = History(
        user=np.array([0, 0, 0]),
        product=np.array([0, 0, 0]),
        day=np.array([0.0, 10.0, 40.0]),
        units=np.ones(3),
        amount=np.array([5.0, 5.0, 20.0]),
        order_key=np.arange(3),
    )
    state = build_state(
        history, as_of_day=100.0, n_users=2, product_category=np.zeros(1, np.int64), product_price=np.ones(1)
    )
    # When
    names = ["user_days_since_first_order", "user_mean_days_between_orders", "user_spend_trend_90d"]
    rows = pair_features(state, np.array([0, 1]), np.array([0, 0]), names)
    # Then: age 100 days, a 20-day rhythm, +20 spent in the last 90 days over the 90 before; a
    # customer without orders gets the fallbacks
    assert rows.tolist() == [[100.0, 20.0, 20.0], [0.0, 730.0, 0.0]]


def test_the_category_lift_says_how_much_more_a_customer_buys_in_a_category_than_the_shop() -> None:
    # Given a shop selling 8 units in category 0 and 8 in category 1, one customer having bought 6 of
    # category 0 and nothing else, seen on day 10
    from shared.ml.features import CATEGORY_PRIOR_UNITS, History, build_state, pair_features

    history = History(
        user=np.array([0, 1, 2]),
        product=np.array([0, 0, 1]),
        day=np.array([1.0, 2.0, 3.0]),
        units=np.array([6.0, 2.0, 8.0]),
        amount=np.ones(3),
        order_key=np.arange(3),
    )
    state = build_state(
        history, as_of_day=10.0, n_users=4, product_category=np.array([0, 1]), product_price=np.ones(2)
    )

    # When the lift is computed for that customer and one without orders, for both categories and an
    # unknown product
    rows = pair_features(state, np.array([0, 0, 3, 0]), np.array([0, 1, 0, -1]), ["user_category_lift"])

    # Then it is log((6 + a/2) / (6 + a)) - log(1/2) for the category bought, the log of the smoothed
    # share alone for the other, and 0 for the new customer and the unknown product
    a = CATEGORY_PRIOR_UNITS
    expected = [np.log((6 + a / 2) / (6 + a) / 0.5), np.log((a / 2) / (6 + a) / 0.5), 0.0, 0.0]
    assert rows[:, 0] == pytest.approx(expected)
    assert rows[0, 0] > 0 > rows[1, 0]


def test_taste_factors_make_products_bought_by_the_same_customers_alike() -> None:
    # Given two groups of customers, even ones buying 4 of products 0-7, odd ones 4 of products 8-15
    from shared.ml.shop_arrays import split_shop
    from shared.ml.taste import taste_factors

    rng = np.random.default_rng(3)
    start = datetime(2024, 1, 1, tzinfo=UTC)
    orders = [
        OrderRecord(
            order_id=f"o{user}-{line}",
            user_id=f"u{user:03d}",
            product_id=f"p{8 * (user % 2) + product:02d}",
            timestamp=start + timedelta(days=int(rng.integers(0, 300))),
            quantity=1,
            amount=10.0,
        )
        for user in range(200)
        for line, product in enumerate(rng.choice(8, size=4, replace=False))
    ]
    # ... and two late orders, so the history spans a year with orders in the window the models learn from
    late = [
        OrderRecord(
            order_id=f"late{day}",
            user_id="u000",
            product_id="p00",
            timestamp=start + timedelta(days=day),
            quantity=1,
            amount=10.0,
        )
        for day in (320, 364)
    ]
    shop = split_shop(ShopData(customers=[], products=[], orders=[*orders, *late]), None)

    # When the taste factors are learnt
    factors = taste_factors(shop, shop.train_day, TrainingConfig())

    # Then they are unit vectors; products of one group are alike, products of different groups not at all
    similarity = factors @ factors.T
    off_diagonal = ~np.eye(8, dtype=bool)
    assert np.linalg.norm(factors, axis=1) == pytest.approx(np.ones(16))
    assert similarity[:8, :8][off_diagonal].mean() > 0.3
    assert similarity[8:, 8:][off_diagonal].mean() > 0.3
    assert np.abs(similarity[:8, 8:]).max() == pytest.approx(0.0, abs=1e-9)


def test_a_shop_read_back_from_its_training_arrays_is_the_same_shop(shop: SyntheticShop) -> None:
    # Given a shop encoded from its records
    encoded = encode_shop(shop.data)
    # When it is written as training.npz and read back
    restored = read_training_arrays(write_training_arrays(encoded))
    # Then every array is as it was, in the dtypes of docs/data-plane.md
    arrays, expected = restored.arrays(), encoded.arrays()
    assert set(arrays) == set(TRAINING_ARRAYS)
    for name in TRAINING_ARRAYS:
        assert arrays[name].tolist() == expected[name].tolist(), name
    assert restored.history.user.dtype == np.int32
    assert restored.history.in_time_order


def test_a_model_trained_from_arrays_is_the_model_trained_from_records(
    shop: SyntheticShop, purchase_model: TrainedModel
) -> None:
    # Given the fixture's shop as training arrays
    arrays = read_training_arrays(write_training_arrays(encode_shop(shop.data)))
    # When a purchase model is trained from them
    model = train_model(arrays, name="buyers", model_type="purchase", oracle=shop, now=TRAINED_AT)
    # Then it is the model trained from the records: same metrics, same bundle
    assert model.metrics == purchase_model.metrics
    assert model.artifacts["bundle"].sha256 == purchase_model.artifacts["bundle"].sha256


def test_order_lines_out_of_time_order_are_put_in_order() -> None:
    # Given arrays whose lines are not in time order
    arrays = {
        "user_ids": np.array(["u0", "u1"]),
        "product_ids": np.array(["p0"]),
        "categories": np.array(["Uncategorised"]),
        "product_category": np.zeros(1, np.int32),
        "product_price": np.array([np.nan]),
        "order_user": np.array([1, 0, 1], np.int32),
        "order_product": np.zeros(3, np.int32),
        "order_day": np.array([30.0, 10.0, 20.0]),
        "order_units": np.array([3.0, 1.0, 2.0], np.float32),
        "order_amount": np.array([30.0, 10.0, 20.0]),
        "order_key": np.array([2, 0, 1], np.int32),
    }
    # When
    history = EncodedShop.from_arrays(arrays).history
    # Then the lines are in time order, each line's values kept together, and a window is a view
    assert history.day.tolist() == [10.0, 20.0, 30.0]
    assert history.units.tolist() == [1.0, 2.0, 3.0]
    assert history.user.tolist() == [0, 1, 1]
    assert np.shares_memory(history.before(25.0).day, history.day)


def test_arrays_pointing_outside_their_ids_are_refused() -> None:
    # Given arrays whose order line names a product that is not in product_ids
    arrays = encode_shop(generate_shop(SyntheticConfig(n_users=20, n_products=5, seed=1)).data).arrays()
    arrays["order_product"] = arrays["order_product"].copy()
    arrays["order_product"][0] = 5
    # Then
    with pytest.raises(ValidationFailed, match="order_product"):
        EncodedShop.from_arrays(arrays)


def test_keys_of_a_large_shop_do_not_overflow_32_bit_indices() -> None:
    # Given a shop of 3M users and 2,000 products whose last user bought the last product, with the
    # indices in 32 bits as training.npz stores them (product x users is past 2**31)
    from shared.ml.features import History, build_state, pair_features

    history = History(
        user=np.array([2_999_999], np.int32),
        product=np.array([1_999], np.int32),
        day=np.array([1.0]),
        units=np.array([4.0]),
        amount=np.array([8.0]),
        order_key=np.zeros(1, np.int32),
    )
    # When its state is built
    state = build_state(
        history,
        as_of_day=2.0,
        n_users=3_000_000,
        product_category=np.zeros(2_000, np.int64),
        product_price=np.ones(2_000),
    )
    # Then the pair is found where it is, and only there
    rows = pair_features(
        state, np.array([2_999_999, 0]), np.array([1_999, 1_999]), ["user_product_purchases"]
    )
    assert rows[:, 0].tolist() == [4.0, 0.0]


@pytest.mark.parametrize("name", ["TwoPartModel", "ConstantProbability"])
def test_a_pipeline_artifact_written_before_the_purchase_model_moved_still_unpickles(name: str) -> None:
    # Given a pipeline.joblib written before the purchase model's classes moved to
    # shared.ml.purchase_training: its pickle names them under shared.ml.training
    written_before = f"cshared.ml.training\n{name}\n.".encode()
    # When it is read, then the class is the one training uses now
    from shared.ml import purchase_training

    assert pickle.loads(written_before) is getattr(purchase_training, name)  # noqa: S301 (our own bytes)
