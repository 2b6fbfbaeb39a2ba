"""Every model metric the Models page shows has a sentence of meaning and a verdict in words (issue 23,
item 4)."""

from __future__ import annotations

from shared.ml.trained import TrainingConfig
from shared.ml.training import train_model
from shared.predictions.metric_words import explain_metrics
from shared.predictions.model_overview import wizard_use
from tests.unit.records import model_record
from tools.synthetic import SyntheticConfig, generate_shop


def test_every_metric_training_records_has_a_meaning_and_a_verdict() -> None:
    # Given: both models trained on a small synthetic shop, with every metric training records
    shop = generate_shop(SyntheticConfig(n_users=300, n_products=30, seed=3))
    for model_type in ("purchase", "recommendation"):
        trained = train_model(shop.data, name="m", model_type=model_type, config=TrainingConfig())  # type: ignore[arg-type]

        # When: its metrics are explained
        words = explain_metrics(trained.metrics)

        # Then: each is explained and judged by a rule of its own, none left to the fallback
        assert {w.name for w in words} == set(trained.metrics)
        assert [w.name for w in words if w.verdict.startswith("Not judged")] == []
        assert all(w.meaning.endswith(".") and w.verdict.endswith(".") for w in words)


def test_a_ranking_is_judged_against_chance_and_its_baseline() -> None:
    words = {w.name: w for w in explain_metrics({"roc_auc": 0.74, "recency_baseline_roc_auc": 0.69})}
    assert (words["roc_auc"].kind, words["roc_auc"].shown) == ("good", "0.740")
    assert words["roc_auc"].verdict == "It clearly ranks likely buyers first (0.7 to 0.8)."
    assert words["recency_baseline_roc_auc"].verdict == (
        "The model does better (0.740) than ranking customers by their last order."
    )
    assert explain_metrics({"roc_auc": 0.52})[0].kind == "poor"


def test_shares_show_as_percentages_and_counts_whole() -> None:
    words = {
        w.name: w.shown for w in explain_metrics({"holdout_positive_rate": 0.0412, "holdout_pairs": 12345.0})
    }
    assert words == {"holdout_positive_rate": "4.1 %", "holdout_pairs": "12,345"}


def test_a_share_is_compared_with_its_baseline_in_the_same_form_as_it_is_shown() -> None:
    # Given a recommender's hits among 10 and the best sellers' (shares, shown as percentages)
    metrics = {
        "precision_at_10": 0.141,
        "popularity_precision_at_10": 0.101,
        "own_history_recall_at_10": 0.677,
    }
    metrics |= {"recall_at_10": 0.702}
    words = {w.name: w for w in explain_metrics(metrics)}
    # Then each verdict gives the other figure as a percentage too (it read "14.1 %" beside "Better than
    # recommending the best sellers (0.101)")
    assert words["precision_at_10"].verdict == "Better than recommending the best sellers (10.1 %)."
    assert words["popularity_precision_at_10"].verdict == (
        "The model does better (14.1 %) than recommending the best sellers."
    )
    assert words["own_history_recall_at_10"].verdict == (
        "The model does better (70.2 %) than recommending each customer their own most bought products."
    )


def test_an_unknown_metric_is_shown_and_said_to_be_unjudged() -> None:
    [word] = explain_metrics({"mystery_score": 0.5})
    assert (word.label, word.kind) == ("Mystery score", "info")


def test_the_wizard_uses_purchase_models_trained_on_synced_data_only() -> None:
    assert wizard_use(model_record(type="purchase", dataset_version="v1")).used
    assert not wizard_use(model_record(type="purchase", dataset_version=None)).used
    assert "ranks products for one customer" in wizard_use(model_record(type="recommendation")).reason
