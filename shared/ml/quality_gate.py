"""The quality gate: a trained model is made current only when it beats the strongest simple method
on the merchant's own holdout (the latest orders it did not learn from).

Training records each simple method's figure beside the model's (``shared.ml.training``): for a purchase
model the ROC-AUC of ranking customers by how recently they last ordered, of ranking each customer's
products by how often they bought them (then the best sellers), and of ranking products by their
recent sales; for a recommendation model the NDCG@10 of the best sellers and of each customer's own
most-bought products. The gate takes the strongest of those present and says, in words, what the model
beat and by how much, or what it lost to (the training job then keeps the previous version in service).
Pure Python: the dashboard's functions read it without numpy or scikit-learn.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

# A purchase model must also rank better than a coin flip by this much.
MIN_ROC_AUC = 0.55

# Each model type's measure and simple methods: metric name -> the method in words.
MEASURES = {"purchase": ("roc_auc", "ROC-AUC"), "recommendation": ("ndcg_at_10", "NDCG@10")}
SIMPLE_METHODS: dict[str, dict[str, str]] = {
    "purchase": {
        "recency_baseline_roc_auc": "ranking customers by how recently they last ordered",
        "own_history_baseline_roc_auc": (
            "ranking each customer's products by how often they bought them, then the best sellers"
        ),
        "popularity_baseline_roc_auc": "ranking products by their sales in the last 90 days",
    },
    "recommendation": {
        "popularity_ndcg_at_10": "recommending the best sellers",
        "own_history_ndcg_at_10": (
            "recommending each customer's own most-bought products, then the best sellers"
        ),
    },
}


@dataclass(frozen=True)
class QualityGate:
    """The gate's verdict: the model's figure (``value``, of ``measure``) against the strongest simple
    method's (``bar``, ``strongest`` in words, ``strongest_metric`` by name)."""

    passed: bool
    measure: str
    value: float
    strongest: str
    strongest_metric: str
    bar: float

    @property
    def margin(self) -> float:
        """How far above (positive) or below (negative) the strongest simple method the model is."""
        return self.value - self.bar

    def sentence(self) -> str:
        """The verdict in words: what the model beat and by how much, or what it lost to."""
        if self.passed:
            return (
                f"It beat the strongest simple method on your latest orders, {self.strongest}: "
                f"{self.measure} {self.value:.3f} against {self.bar:.3f} ({_by(self.margin)})."
            )
        if self.strongest_metric == "coin_flip":
            return (
                f"Its {self.measure} on your latest orders is {self.value:.3f}, not above {self.bar:g} "
                "(ranking at random scores 0.5): it did not beat a coin flip."
            )
        return (
            f"It did not beat the strongest simple method on your latest orders, {self.strongest}: "
            f"{self.measure} {self.value:.3f} against {self.bar:.3f} ({_by(self.margin)})."
        )


def _by(margin: float) -> str:
    if abs(margin) < 0.0005:
        return "level with it"
    return f"{abs(margin):.3f} {'higher' if margin > 0 else 'lower'}"


def quality_gate(model_type: str, metrics: Mapping[str, float]) -> QualityGate | None:
    """The gate of a model of ``model_type`` with these holdout ``metrics``; None when its own figure or
    every simple method's was not recorded (a model trained before the gate)."""
    metric, measure = MEASURES[model_type]
    methods = {name: words for name, words in SIMPLE_METHODS[model_type].items() if name in metrics}
    if metric not in metrics:
        return None
    value = float(metrics[metric])
    if model_type == "purchase" and value <= MIN_ROC_AUC:
        return QualityGate(False, measure, value, "a coin flip", "coin_flip", MIN_ROC_AUC)
    if not methods:
        return None
    strongest = max(methods, key=lambda name: metrics[name])
    bar = float(metrics[strongest])
    return QualityGate(value >= bar, measure, value, methods[strongest], strongest, bar)
