"""The quality gate: a model is made current only when it beats the strongest simple method on the
merchant's own holdout, and says in words what it beat and by how much."""

from __future__ import annotations

from shared.ml.quality_gate import quality_gate
from shared.ml.training import baseline_shortfall


def test_a_recommender_is_held_to_the_stronger_of_best_sellers_and_own_favourites() -> None:
    # Given a recommender that beats the best sellers but not each customer's own favourites
    metrics = {"ndcg_at_10": 0.471, "popularity_ndcg_at_10": 0.072, "own_history_ndcg_at_10": 0.509}
    # When the gate judges it
    gate = quality_gate("recommendation", metrics)
    # Then it fails against own history, saying by how much
    assert gate is not None
    assert not gate.passed
    assert gate.strongest_metric == "own_history_ndcg_at_10"
    assert gate.sentence() == (
        "It did not beat the strongest simple method on your latest orders, recommending each "
        "customer's own most-bought products, then the best sellers: NDCG@10 0.471 against 0.509 "
        "(0.038 lower)."
    )


def test_a_recommender_that_beats_every_simple_method_says_what_it_beat_and_by_how_much() -> None:
    # Given a recommender above both simple methods
    metrics = {"ndcg_at_10": 0.52, "popularity_ndcg_at_10": 0.30, "own_history_ndcg_at_10": 0.509}
    # When the gate judges it
    gate = quality_gate("recommendation", metrics)
    # Then it passes, naming the stronger one and the margin
    assert gate is not None
    assert gate.passed
    assert baseline_shortfall("recommendation", metrics) is None
    assert "recommending each customer's own most-bought products" in gate.sentence()
    assert "NDCG@10 0.520 against 0.509 (0.011 higher)" in gate.sentence()


def test_a_purchase_model_is_held_to_recency_own_history_and_best_sellers() -> None:
    # Given a purchase model above recency and best sellers, below own history
    metrics = {
        "roc_auc": 0.80,
        "recency_baseline_roc_auc": 0.70,
        "own_history_baseline_roc_auc": 0.82,
        "popularity_baseline_roc_auc": 0.65,
    }
    # When the gate judges it
    shortfall = baseline_shortfall("purchase", metrics)
    # Then it is not made current, and the reason names own history
    assert shortfall is not None
    assert "ranking each customer's products by how often they bought them" in shortfall
    assert "ROC-AUC 0.800 against 0.820 (0.020 lower)" in shortfall


def test_a_purchase_model_no_better_than_a_coin_flip_fails_whatever_the_baselines() -> None:
    gate = quality_gate("purchase", {"roc_auc": 0.54, "recency_baseline_roc_auc": 0.5})
    assert gate is not None
    assert not gate.passed
    assert "did not beat a coin flip" in gate.sentence()


def test_a_model_trained_before_the_simple_methods_were_recorded_has_no_verdict() -> None:
    assert quality_gate("recommendation", {"ndcg_at_10": 0.3}) is None
    assert baseline_shortfall("recommendation", {"ndcg_at_10": 0.3}) is None
