from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import joblib
import numpy as np
import pytest

from shared.errors import NotFound, ServiceError
from shared.ml import scoring
from shared.ml.scoring import ScoringBundle, load_bundle, top_k
from shared.ml.trained import TrainedModel
from tools.synthetic import SyntheticShop

ROOT = Path(__file__).resolve().parents[3]


def _bundle(model: TrainedModel) -> ScoringBundle:
    return load_bundle(model.artifacts["bundle"].data, model.artifacts["bundle"].sha256)


def _feature_rows(bundle: ScoringBundle, model: TrainedModel, n: int) -> np.ndarray:
    rng = np.random.default_rng(0)
    users = rng.choice(model.training_user_ids, n)
    products = rng.choice([f"p{k:05d}" for k in range(80)], n)
    return np.vstack([bundle.purchase_features(u, p) for u, p in zip(users, products, strict=True)])


@pytest.mark.parametrize("model_fixture", ["purchase_model"])
def test_bundle_scores_equal_the_scikit_learn_pipeline(
    model_fixture: str, request: pytest.FixtureRequest
) -> None:
    # Given a trained model's pipeline and its numpy bundle
    model: TrainedModel = request.getfixturevalue(model_fixture)
    pipeline = joblib.load(io.BytesIO(model.artifacts["pipeline"].data))
    bundle = _bundle(model)
    features = _feature_rows(bundle, model, 500)

    # When both score the same 500 rows
    expected = pipeline.predict_proba(features)[:, 1]
    actual = bundle.predict_matrix(features)

    # Then they agree to floating-point precision
    assert np.allclose(actual, expected, rtol=1e-9, atol=1e-12)


def test_scoring_does_not_import_scikit_learn_or_scipy(purchase_model: TrainedModel, tmp_path: Path) -> None:
    # Given a bundle on disk
    path = tmp_path / "bundle.npz"
    path.write_bytes(purchase_model.artifacts["bundle"].data)
    user = purchase_model.training_user_ids[0]
    script = (
        "import sys; from pathlib import Path; from shared.ml.scoring import load_bundle;"
        f"b = load_bundle(Path({str(path)!r}).read_bytes()); b.score_purchase({user!r}, 'p00001');"
        "b.score_all_users('p00001');"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in {'sklearn', 'scipy', 'joblib', 'pandas'}))"
    )

    # When a fresh interpreter loads it and scores
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
    )

    # Then none of the training libraries were loaded
    assert result.stdout.strip() == "[]"


def test_unknown_user_is_not_found_with_the_user_count(purchase_model: TrainedModel) -> None:
    # Given a bundle
    bundle = _bundle(purchase_model)

    # When scoring a user outside the training data
    with pytest.raises(NotFound) as raised:
        bundle.score_purchase("nobody", "p00001")

    # Then the message names the user and the number available
    assert "nobody" in raised.value.message
    assert "600 users" in raised.value.message
    assert not bundle.has_user("nobody")
    assert bundle.user_count == 600


def test_extra_features_override_computed_ones_by_name(purchase_model: TrainedModel) -> None:
    # Given a user and product
    bundle = _bundle(purchase_model)
    user = purchase_model.training_user_ids[1]

    # When the caller supplies a known feature, a non-finite one and an unknown one
    row = bundle.purchase_features(
        user, "p00002", {"user_product_purchases": 4, "product_price": float("nan"), "shoe_size": 9}
    )

    # Then the known one is used, the non-finite one falls back to the median price, the unknown is ignored
    names = bundle.feature_names
    assert row[0, names.index("user_product_purchases")] == 4
    assert row[0, names.index("product_price")] == bundle.purchase_features(user, "unknown-product")[0, 8]
    assert bundle.ignored_features({"shoe_size": 9, "product_price": 1}) == ["shoe_size"]


def test_more_past_purchases_raise_the_likelihood(purchase_model: TrainedModel) -> None:
    # Given a user and product
    bundle = _bundle(purchase_model)
    user = purchase_model.training_user_ids[2]

    # When the same pair is scored as a first-time and as a repeat purchase
    first = bundle.score_purchase(user, "p00003", {"user_product_purchases": 0})
    repeat = bundle.score_purchase(user, "p00003", {"user_product_purchases": 3})

    # Then repeat buyers are more likely
    assert repeat > first


def test_scoring_all_users_matches_scoring_each(purchase_model: TrainedModel) -> None:
    # Given a bundle
    bundle = _bundle(purchase_model)

    # When one product is scored for every user at once
    scores = bundle.score_all_users("p00004")

    # Then each score equals the single-request score
    picked = top_k(scores, 5)
    for user, score in zip(bundle.user_ids_at(picked), scores[picked], strict=True):
        assert bundle.score_purchase(user, "p00004") == pytest.approx(score, rel=1e-12)


def test_top_k_returns_the_best_first() -> None:
    # Given scores
    scores = np.array([0.1, 0.9, 0.3, 0.7, 0.5])

    # Then the top 3 come back in descending order
    assert top_k(scores, 3).tolist() == [1, 3, 4]
    assert top_k(scores, 10).size == 5


def test_reason_names_the_category_of_recent_purchases(purchase_model: TrainedModel) -> None:
    # Given a user's most-bought category product they have not bought themselves
    bundle = _bundle(purchase_model)
    user = purchase_model.training_user_ids[3]
    override = {"user_product_purchases": 0, "user_category_purchases_90d": 3}

    # When predicted
    prediction = bundle.predict_purchase(user, "p00005", override)

    # Then the reason says what they bought, where
    assert prediction.reason.startswith("bought 3 items in ")
    assert prediction.reason.removeprefix("bought 3 items in ").split(" in the last")[0] in bundle.categories


@pytest.mark.parametrize(
    ("days", "said"),
    [
        (16.2, "last bought 16 days ago"),
        (1.0, "last bought 1 day ago"),
        (0.3, "last bought less than a day ago"),
    ],
)
def test_reason_says_how_long_ago_the_customer_last_bought_the_product_in_words(
    purchase_model: TrainedModel, days: float, said: str
) -> None:
    # Given a customer who bought the product before, some days before the model's data ends
    bundle = _bundle(purchase_model)
    user = purchase_model.training_user_ids[3]
    override = {"user_product_purchases": 2, "user_product_days_since_last": days}

    # When predicted
    prediction = bundle.predict_purchase(user, "p00005", override)

    # Then the reason counts the purchases and says when, as a person would ("last 1 days ago" and
    # "last 0 days ago" before)
    assert prediction.reason == f"bought this product 2 times before, {said}"


def test_recommend_returns_k_distinct_products_best_first(recommendation_model: TrainedModel) -> None:
    # Given a recommendation bundle
    bundle = _bundle(recommendation_model)
    user = recommendation_model.training_user_ids[0]

    # When asking for 10 items
    items = bundle.recommend(user, 10)

    # Then they are distinct and sorted by score
    assert len({product for product, _ in items}) == 10
    assert [score for _, score in items] == sorted((score for _, score in items), reverse=True)


def test_recommendation_scores_for_a_product_match_per_user_scores(
    recommendation_model: TrainedModel,
) -> None:
    # Given a recommendation bundle and its top product for a user
    bundle = _bundle(recommendation_model)
    user = recommendation_model.training_user_ids[10]
    product, score = bundle.recommend(user, 1)[0]

    # When that product is scored for all users
    all_scores = bundle.score_all_users(product)

    # Then the user's entry is the same score
    assert all_scores[recommendation_model.training_user_ids.index(user)] == pytest.approx(score)


def test_new_products_only_leaves_out_everything_the_user_bought(recommendation_model: TrainedModel) -> None:
    # Given a recommendation bundle and a user whose top products include ones they bought before
    bundle = _bundle(recommendation_model)
    users = recommendation_model.training_user_ids
    user = next(u for u in users if bundle._history_items(users.index(u)).size >= 3)
    owned = {bundle._product_id(i) for i in bundle._history_items(users.index(user)).tolist()}

    # When asking for new products only
    items = bundle.recommend(user, 10, exclude_purchased=True)

    # Then ten products come back, none of them bought before, best first
    assert len(items) == 10
    assert not owned & {product for product, _ in items}
    assert [score for _, score in items] == sorted((score for _, score in items), reverse=True)


def test_new_products_only_ranks_with_the_new_products_blend(recommendation_model: TrainedModel) -> None:
    # Given a recommendation bundle with a blend fitted on products its buyers had never bought
    bundle = _bundle(recommendation_model)
    assert bundle.header["new_product_parts"]
    assert len(bundle.header["new_product_weights"]) == len(bundle.header["new_product_parts"])
    user = recommendation_model.training_user_ids[3]

    # When asking for new products only
    items = bundle.recommend(user, 5, exclude_purchased=True)

    # Then their scores are the new-products blend's
    scores = bundle._recommendation_scores_for_user(3, new_only=True)
    scores[bundle._history_items(3)] = -np.inf
    assert [score for _, score in items] == pytest.approx(
        sorted(scores[np.isfinite(scores)], reverse=True)[:5]
    )


def test_a_product_bought_in_more_orders_ranks_higher_for_its_buyer(
    recommendation_model: TrainedModel,
) -> None:
    # Given the blend's weights learnt on the synthetic shop (customers re-buy what they bought)
    header = _bundle(recommendation_model).header
    weights = dict(zip(header["blend_parts"], header["blend_weights"], strict=True))

    # Then having bought a product, and having bought it in more orders, both raise its score
    assert weights["owned"] > 0
    assert weights["repeat_orders"] + weights["repeat_share"] > 0


def test_a_corrupted_bundle_is_refused(purchase_model: TrainedModel) -> None:
    # Given bundle bytes that do not match their checksum
    original = purchase_model.artifacts["bundle"].data
    data = original[:-1] + bytes([original[-1] ^ 0xFF])

    # Then loading fails instead of serving garbage
    with pytest.raises(ServiceError, match="checksum"):
        load_bundle(data, purchase_model.artifacts["bundle"].sha256)


def test_the_serving_shards_partition_the_users_and_score_as_the_whole_bundle(
    purchase_model: TrainedModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a shard size that splits the 600-user shop into six shards
    monkeypatch.setattr(scoring, "SHARD_USERS", 100)
    whole = load_bundle(purchase_model.artifacts["bundle"].data)
    # When
    shards = [load_bundle(data) for data in scoring.shard_bundle(purchase_model.artifacts["bundle"].data)]
    # Then every user is in exactly the shard shard_of names, scored as by the whole bundle
    assert len(shards) == 6
    assert sum(shard.user_count for shard in shards) == whole.user_count
    for user in purchase_model.training_user_ids[::7]:
        shard = shards[scoring.shard_of(user, len(shards))]
        assert [s.has_user(user) for s in shards].count(True) == 1
        for product in ("p00001", "p00042", "not-a-product"):
            # float32 state and half-precision taste factors: within 0.1 % of the float64 score
            assert shard.score_purchase(user, product) == pytest.approx(
                whole.score_purchase(user, product), rel=1e-3
            )


def test_the_serving_shards_are_compact(purchase_model: TrainedModel) -> None:
    data = purchase_model.artifacts["bundle"].data
    [shard] = scoring.shard_bundle(data)
    assert len(shard) < len(data) / 3


def test_the_recommendation_shards_recommend_as_the_whole_bundle(
    recommendation_model: TrainedModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a recommendation model split into six shards
    monkeypatch.setattr(scoring, "SHARD_USERS", 100)
    data = recommendation_model.artifacts["bundle"].data
    whole = load_bundle(data)
    # When
    shards = [load_bundle(shard) for shard in scoring.shard_bundle(data)]
    # Then each user's shard recommends what the whole bundle does, with the same scores
    for user in recommendation_model.training_user_ids[::9]:
        shard = shards[scoring.shard_of(user, len(shards))]
        expected = whole.recommend(user, 5)
        actual = shard.recommend(user, 5)
        assert [p for p, _ in actual] == [p for p, _ in expected]
        assert [s for _, s in actual] == pytest.approx([s for _, s in expected], rel=1e-3, abs=1e-4)


def test_a_recommendation_model_scores_a_product_for_every_user_as_it_scores_each_user(
    recommendation_model: TrainedModel,
) -> None:
    # Given a recommendation bundle
    bundle = _bundle(recommendation_model)
    users = recommendation_model.training_user_ids
    # When one product is scored for every user at once (segmented sums over the histories)
    column = bundle.score_all_users("p00003")
    # Then each user's score is the one their own ranking of every product gives that product
    for index in range(0, len(users), 37):
        scores = bundle._recommendation_scores_for_user(index)
        assert column[index] == pytest.approx(scores[3], rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("model_fixture", ["purchase_model", "recommendation_model"])
def test_scores_in_chunks_of_users_are_the_scores_of_all_users(
    model_fixture: str, request: pytest.FixtureRequest
) -> None:
    # Given a bundle
    model: TrainedModel = request.getfixturevalue(model_fixture)
    bundle = _bundle(model)
    # When a product is scored in chunks of 128 users
    chunks = list(bundle.iter_user_scores("p00005", chunk_users=128))
    # Then the chunks cover every user in order, each at most 128, with the scores of all at once
    assert [first for first, _ in chunks] == list(range(0, bundle.user_count, 128))
    assert max(scores.size for _, scores in chunks) == 128
    assert np.concatenate([scores for _, scores in chunks]) == pytest.approx(bundle.score_all_users("p00005"))


def test_scoring_a_product_for_every_user_gives_each_users_own_score(purchase_model: TrainedModel) -> None:
    # Given a purchase bundle
    bundle = _bundle(purchase_model)
    users = purchase_model.training_user_ids
    for product in ("p00000", "p00042", "p00079", "not-a-product"):
        # When the product is scored for every user at once
        column = bundle.score_all_users(product)
        # Then each user's score is the one a single prediction gives
        for index in range(0, len(users), 23):
            assert column[index] == pytest.approx(bundle.score_purchase(users[index], product), rel=1e-12)


@pytest.mark.parametrize("model_fixture", ["purchase_model", "recommendation_model"])
def test_a_bundle_knows_which_users_bought_a_product(
    model_fixture: str, request: pytest.FixtureRequest, shop: SyntheticShop
) -> None:
    # Given a trained bundle and the shop's orders of one product
    model: TrainedModel = request.getfixturevalue(model_fixture)
    bundle = _bundle(model)
    buyers = {o.user_id for o in shop.data.orders if o.product_id == "p00001"}
    assert buyers

    # When asking who bought it (and who bought a product it never saw)
    bought = bundle.bought_by("p00001")

    # Then exactly its buyers, in the bundle's user order; nobody bought the unknown one
    assert set(bundle.user_ids[bought].tolist()) == buyers
    assert not bundle.bought_by("no-such-product").any()


@pytest.mark.parametrize("model_fixture", ["purchase_model", "recommendation_model"])
def test_a_product_scored_shard_by_shard_is_the_whole_bundles_column_in_its_order(
    model_fixture: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a model split into six shards
    monkeypatch.setattr(scoring, "SHARD_USERS", 100)
    model: TrainedModel = request.getfixturevalue(model_fixture)
    data = model.artifacts["bundle"].data
    whole = load_bundle(data)
    shards = scoring.shard_bundle(data)
    assert len(shards) == 6

    # When one product is scored for every user, one shard loaded at a time
    scored = scoring.score_shards(
        (load_bundle(shard) for shard in shards),
        "p00003",
        bought=True,
        values=model_fixture == "purchase_model",
    )

    # Then the users are the whole bundle's, in its order, and each column is its
    assert scored.user_ids.astype(np.str_).tolist() == whole.user_ids.tolist()
    # float32 state and half-precision taste factors, as the predict function serves them
    assert scored.scores == pytest.approx(whole.score_all_users("p00003"), rel=1e-3, abs=1e-6)
    assert scored.bought is not None
    assert scored.bought.tolist() == whole.bought_by("p00003").tolist()
    assert scored.bought.any()
    assert not scored.bought.all()
    if model_fixture == "purchase_model":
        spend, orders = whole.spend_and_orders()
        assert scored.spend == pytest.approx(spend, rel=1e-6)
        assert scored.orders == pytest.approx(orders)
    else:
        assert scored.spend is None
        assert scored.orders is None


def test_scoring_no_shard_is_refused() -> None:
    with pytest.raises(ServiceError, match="no serving shards"):
        scoring.score_shards(iter([]), "p00003")
