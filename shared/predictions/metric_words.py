"""Each model metric in a marketer's words: what it measures, in one sentence, and a verdict.

Training records its metrics by name (``shared.ml.training``: ``roc_auc``, ``ndcg_at_10``, ...) on the
model's holdout, the latest orders it did not train on. The Models page shows each with its meaning
and a verdict; the verdict's thresholds are stated in the words themselves, so the page never says
"good" without saying against what. A baseline (``recency_baseline_roc_auc``, ``popularity_*``) is
judged by whether the model beats it, which is the rule training itself applies before serving a
model (``shared.ml.training.baseline_shortfall``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Literal

from pydantic import Field

from shared.wire_models import CamelModel

Kind = Literal["good", "fair", "poor", "info"]


class MetricWords(CamelModel):
    name: str = Field(description="The metric's name as training records it (metrics has its value).")
    label: str = Field(description="Its name in words.")
    value: float
    shown: str = Field(description="The value as the page shows it (a share as a percentage, a count whole).")
    meaning: str = Field(description="One sentence: what it measures.")
    verdict: str = Field(description="What the value says about the model, in words.")
    kind: Kind = Field(description="good, fair, poor, or info (a count or a figure for comparison).")


Judge = Callable[[float, Mapping[str, float]], tuple[Kind, str]]


def _ranking(value: float, _: Mapping[str, float]) -> tuple[Kind, str]:
    if value >= 0.8:
        return "good", "Strong: it ranks likely buyers far above the others (0.8 or more)."
    if value >= 0.7:
        return "good", "It clearly ranks likely buyers first (0.7 to 0.8)."
    if value > 0.55:
        return "fair", "Better than chance, with room to improve (0.55 to 0.7)."
    return "poor", "No better than chance (0.55 or less): more order history should help."


def _against_random(value: float, metrics: Mapping[str, float]) -> tuple[Kind, str]:
    base = metrics.get("holdout_positive_rate")
    if not base:
        return "info", "Compare it with the share of buyers: picking at random scores about that."
    times = value / base
    if times >= 3:
        return "good", f"{times:.1f} times what picking customers at random would get."
    if times >= 1.5:
        return "fair", f"{times:.1f} times what picking customers at random would get."
    return "poor", f"Close to picking customers at random ({times:.1f} times)."


def _lift(value: float, _: Mapping[str, float]) -> tuple[Kind, str]:
    if value >= 3:
        return "good", f"The best-scored tenth bought {value:.1f} times as often as average: a strong target."
    if value >= 1.5:
        return "fair", f"The best-scored tenth bought {value:.1f} times as often as average."
    return "poor", f"The best-scored tenth bought about as often as average ({value:.1f} times)."


def _pairs(value: float, _: Mapping[str, float]) -> tuple[Kind, str]:
    if value >= 10_000:
        return "good", "Enough to trust the figures above."
    if value >= 1_000:
        return "fair", "Enough for a fair reading; the figures may move by a few points."
    return "poor", "Few: treat the figures above as rough."


def _buyers(value: float, _: Mapping[str, float]) -> tuple[Kind, str]:
    if value >= 10:
        return "good", "Enough buyers to trust the figures above."
    if value >= 1:
        return "fair", "Enough buyers for a fair reading."
    return "poor", "Few buyers: treat the figures above as rough."


def _for_comparison(value: float, _: Mapping[str, float]) -> tuple[Kind, str]:
    return "info", "For comparison: what picking customers at random would get right."


def _beaten_by(model_metric: str, what: str) -> Judge:
    def judge(value: float, metrics: Mapping[str, float]) -> tuple[Kind, str]:
        model = metrics.get(model_metric)
        if model is None:
            return "info", f"The score of {what}, for comparison."
        shown = _shown_as_listed(model_metric, model)
        if model > value:
            return "good", f"The model does better ({shown}) than {what}."
        return "poor", f"The model does no better ({shown}) than {what}."

    return judge


def _recommendations(baseline: str) -> Judge:
    def judge(value: float, metrics: Mapping[str, float]) -> tuple[Kind, str]:
        base = metrics.get(baseline)
        if base is None:
            return "info", "Higher is better."
        shown = _shown_as_listed(baseline, base)
        if value > base:
            return "good", f"Better than recommending the best sellers ({shown})."
        return "poor", f"No better than recommending the best sellers ({shown})."

    return judge


def _candidate(what: str) -> Judge:
    def judge(value: float, metrics: Mapping[str, float]) -> tuple[Kind, str]:
        chosen = metrics.get("buyer_roc_auc")
        if chosen is not None and abs(chosen - value) < 1e-12:
            return "info", f"The one kept: {what} ranked who orders best on the latest orders."
        return "info", f"Not kept: the other kind ranked who orders better ({chosen or 0:.3f})."

    return judge


def _rows(value: float, _: Mapping[str, float]) -> tuple[Kind, str]:
    if value >= 10_000:
        return "good", "Enough to trust the first part."
    if value >= 1_000:
        return "fair", "Enough for a fair first part."
    return "poor", "Few: the first part is rough."


def _cold_purchases(value: float, _: Mapping[str, float]) -> tuple[Kind, str]:
    # The ranking measure's chance spread shrinks with the square root of the purchases it rests on:
    # about 0.07 on 8, 0.02 on 100, 0.01 on 400 (Hanley and McNeil, at a measure near 0.75).
    if value >= 400:
        return "good", "Enough to trust the ranking of new customers to about 0.01."
    if value >= 50:
        return (
            "fair",
            "Enough for a fair reading of the ranking of new customers: chance moves it by 0.01 to 0.03.",
        )
    return "poor", "Few: chance alone moves the ranking of new customers by several hundredths."


def _synthetic(value: float, _: Mapping[str, float]) -> tuple[Kind, str]:
    return "info", "Only known for the synthetic demo shop, whose true buying chances are known."


# name -> (label, meaning, how the value is shown, verdict)
_METRICS: dict[str, tuple[str, str, str, Judge]] = {
    "roc_auc": (
        "Ranking of buyers (ROC AUC)",
        "How often the model scores a customer who went on to buy the product above one who did not: "
        "0.5 is a coin flip, 1 is always.",
        "score",
        _ranking,
    ),
    "auc": (
        "Ranking of buyers (AUC)",
        "How often the model scores a customer who went on to buy above one who did not: 0.5 is a coin "
        "flip, 1 is always.",
        "score",
        _ranking,
    ),
    "pr_auc": (
        "Precision of the top of the list (PR AUC)",
        "How many of the customers the model puts first really bought, averaged down the list.",
        "score",
        _against_random,
    ),
    "lift_top_decile": (
        "Lift in the best-scored 10 %",
        "How many times as often the best-scored tenth of customers bought as customers on average.",
        "times",
        _lift,
    ),
    "holdout_pairs": (
        "Customer-product pairs tested",
        "How many (customer, product) pairs the model was tested on, from the latest orders it did not "
        "train on.",
        "count",
        _pairs,
    ),
    "holdout_positive_rate": (
        "Share of tested pairs that bought",
        "The share of tested customer-product pairs that ended in a purchase.",
        "percent",
        _for_comparison,
    ),
    "recency_baseline_roc_auc": (
        "Ranking by last order (baseline)",
        "The same ranking measure for simply putting the customers who ordered most recently first: the "
        "model must beat it to be used.",
        "score",
        _beaten_by("roc_auc", "ranking customers by their last order"),
    ),
    "own_history_baseline_roc_auc": (
        "Ranking by own favourites (baseline)",
        "The same ranking measure for putting first each customer's products they bought most often, "
        "then the best sellers: the model must beat it to be used.",
        "score",
        _beaten_by("roc_auc", "ranking each customer's own favourites first"),
    ),
    "popularity_baseline_roc_auc": (
        "Ranking by best sellers (baseline)",
        "The same ranking measure for putting the products that sold most in the last 90 days first: "
        "the model must beat it to be used.",
        "score",
        _beaten_by("roc_auc", "ranking the best sellers first"),
    ),
    "buyer_roc_auc": (
        "Ranking of who orders at all (ROC AUC)",
        "How often the model's first part scores a customer who went on to order anything above one who "
        "did not: 0.5 is a coin flip, 1 is always.",
        "score",
        _ranking,
    ),
    "buyer_gradient_boosting_roc_auc": (
        "Who orders, by gradient boosting (ROC AUC)",
        "The same measure for the gradient boosting the first part was chosen from.",
        "score",
        _candidate("gradient boosting"),
    ),
    "buyer_logistic_roc_auc": (
        "Who orders, by logistic regression (ROC AUC)",
        "The same measure for the logistic regression the first part was chosen from.",
        "score",
        _candidate("logistic regression"),
    ),
    "buyer_training_rows": (
        "Customer rows the first part learnt from",
        "How many (customer, window) rows the model's first part learnt from, each a customer in one of "
        "the windows before the latest orders.",
        "count",
        _rows,
    ),
    "cold_start_roc_auc": (
        "Ranking of new customers (ROC AUC)",
        "The ranking measure for customers with no order before the test period, on their pairs with "
        "every product.",
        "score",
        _ranking,
    ),
    "cold_start_positives": (
        "Purchases of new customers tested",
        "How many products customers with no order before the test period went on to buy: what their "
        "ranking measure rests on.",
        "count",
        _cold_purchases,
    ),
    "ndcg_at_10": (
        "Quality of the top 10 recommendations (NDCG@10)",
        "How high the products a customer went on to buy appear among their 10 recommendations: 1 is "
        "every purchase at the top, 0 none in the list.",
        "score",
        _recommendations("popularity_ndcg_at_10"),
    ),
    "precision_at_10": (
        "Hits among 10 recommendations",
        "The share of the 10 recommended products that the customer then bought.",
        "percent",
        _recommendations("popularity_precision_at_10"),
    ),
    "recall_at_10": (
        "Purchases found in the top 10",
        "The share of the products a customer then bought that were among their 10 recommendations.",
        "percent",
        _recommendations("popularity_recall_at_10"),
    ),
    "popularity_ndcg_at_10": (
        "Best sellers' top 10 quality (baseline)",
        "The same measure for recommending everyone the best sellers: the model should beat it.",
        "score",
        _beaten_by("ndcg_at_10", "recommending the best sellers"),
    ),
    "popularity_precision_at_10": (
        "Best sellers' hits among 10 (baseline)",
        "The share of 10 best sellers that a customer then bought: the model should beat it.",
        "percent",
        _beaten_by("precision_at_10", "recommending the best sellers"),
    ),
    "popularity_recall_at_10": (
        "Purchases found among the 10 best sellers (baseline)",
        "The share of a customer's next purchases that were among the 10 best sellers.",
        "percent",
        _beaten_by("recall_at_10", "recommending the best sellers"),
    ),
    "own_history_ndcg_at_10": (
        "Each customer's own favourites' top 10 quality (baseline)",
        "The same measure for recommending each customer the products they bought in the most orders, "
        "then the best sellers: the model should beat it.",
        "score",
        _beaten_by("ndcg_at_10", "recommending each customer their own most bought products"),
    ),
    "own_history_precision_at_10": (
        "Own favourites' hits among 10 (baseline)",
        "The share of a customer's 10 most bought products (then best sellers) that they bought again.",
        "percent",
        _beaten_by("precision_at_10", "recommending each customer their own most bought products"),
    ),
    "own_history_recall_at_10": (
        "Purchases found among a customer's own favourites (baseline)",
        "The share of a customer's next purchases that were among their 10 most bought products.",
        "percent",
        _beaten_by("recall_at_10", "recommending each customer their own most bought products"),
    ),
    "ndcg_at_10_new": (
        "Quality of the top 10 new products (NDCG@10)",
        "Asked for products a customer never bought (exclude_purchased): how high the new products they "
        "went on to buy appear among those 10.",
        "score",
        _recommendations("popularity_ndcg_at_10_new"),
    ),
    "popularity_ndcg_at_10_new": (
        "Best sellers they never bought, top 10 quality (baseline)",
        "The same measure for recommending each customer the best sellers they never bought: the model's "
        "new products should beat it.",
        "score",
        _beaten_by("ndcg_at_10_new", "recommending the best sellers a customer never bought"),
    ),
    "holdout_users_new": (
        "Customers tested on new products",
        "How many tested customers bought a product they had never bought before, which the new-products "
        "ranking was checked against.",
        "count",
        _buyers,
    ),
    "holdout_users": (
        "Customers tested",
        "How many customers who bought in the test period the recommendations were checked against.",
        "count",
        _buyers,
    ),
    "oracle_roc_auc": (
        "Best possible ranking (synthetic shop)",
        "The ranking measure of the true buying chances: no model can do better.",
        "score",
        _synthetic,
    ),
    "oracle_pr_auc": (
        "Best possible precision (synthetic shop)",
        "The precision measure of the true buying chances: no model can do better.",
        "score",
        _synthetic,
    ),
}


def explain_metrics(metrics: Mapping[str, float]) -> list[MetricWords]:
    """Every recorded metric with its label, meaning and verdict, in the order above (a metric this
    module does not know comes last, said to be unexplained rather than left out)."""
    known = [name for name in _METRICS if name in metrics]
    unknown = sorted(set(metrics) - set(_METRICS))
    explained = []
    for name in known:
        label, meaning, form, judge = _METRICS[name]
        kind, verdict = judge(metrics[name], metrics)
        explained.append(
            MetricWords(
                name=name,
                label=label,
                value=metrics[name],
                shown=_shown(metrics[name], form),
                meaning=meaning,
                verdict=verdict,
                kind=kind,
            )
        )
    for name in unknown:
        explained.append(
            MetricWords(
                name=name,
                label=name.replace("_", " ").capitalize(),
                value=metrics[name],
                shown=_shown(metrics[name], "score"),
                meaning="A measure recorded when the model was trained.",
                verdict="Not judged: the service has no rule for it.",
                kind="info",
            )
        )
    return explained


def _shown_as_listed(name: str, value: float) -> str:
    """``value`` of the metric ``name`` as its own row shows it (a share as a percentage), so that a
    verdict comparing two figures gives both in one form."""
    return _shown(value, _METRICS[name][2] if name in _METRICS else "score")


def _shown(value: float, form: str) -> str:
    if form == "count":
        return f"{value:,.0f}"
    if form == "percent":
        return f"{100 * value:.1f} %"
    if form == "times":
        return f"{value:.1f} times"
    return f"{value:.3f}"
