"""Model quality on synthetic data, where the truth is known.

* Purchase likelihood: holdout ROC-AUC against the oracle's ROC-AUC on the same pairs (target >= 0.95x).
* Recommendation: holdout NDCG@10 against the popularity baseline (target >= 2x). The oracle's own
  NDCG@10 (ranking by the true probabilities) is reported beside it: it is the ceiling, and when the
  oracle itself is below 2x popularity the target cannot be met on that shop.

Two shops: a popularity-heavy long tail (Zipf 0.9) and one where individual taste dominates (Zipf 0.5,
sharper affinities). Run with ``python -m benchmarks.ml_quality``.
"""

from __future__ import annotations

import time

import numpy as np

from benchmarks._rows import BenchRow, bench_row, print_rows
from shared.ml.trained import TrainedModel
from shared.ml.training import train_model
from tools.synthetic import SyntheticConfig, SyntheticShop, generate_shop

SCENARIOS = {
    "long_tail": SyntheticConfig(n_users=5000, n_products=1000, n_categories=16, seed=42),
    "taste_driven": SyntheticConfig(
        n_users=5000, n_products=1000, n_categories=16, seed=42, zipf_exponent=0.5, affinity=2.5
    ),
}


def run() -> list[BenchRow]:
    """Train both model types on each scenario and compare them with the oracle and the baseline."""
    rows: list[BenchRow] = []
    for scenario, config in SCENARIOS.items():
        rows.extend(_scenario_rows(scenario, config))
    return rows


def _scenario_rows(scenario: str, config: SyntheticConfig) -> list[BenchRow]:
    shop = generate_shop(config)
    size = f"{config.n_users} users, {config.n_products} products, {len(shop.data.orders)} orders"
    started = time.perf_counter()
    purchase = train_model(shop.data, name="bench-purchase", model_type="purchase", oracle=shop)
    purchase_seconds = time.perf_counter() - started
    started = time.perf_counter()
    recommend = train_model(shop.data, name="bench-recommend", model_type="recommendation")
    recommend_seconds = time.perf_counter() - started

    p, r = purchase.metrics, recommend.metrics
    oracle_ndcg = _oracle_ndcg(shop, recommend)
    auc_ratio = p["roc_auc"] / p["oracle_roc_auc"]
    ndcg_ratio = r["ndcg_at_10"] / r["popularity_ndcg_at_10"]
    s = scenario
    return [
        bench_row(
            f"{s}.purchase_roc_auc",
            p["roc_auc"],
            "auc",
            baseline=p["oracle_roc_auc"],
            target=">= 0.95x oracle",
            passed=auc_ratio >= 0.95,
            notes=f"{purchase.algorithm}; {size}",
        ),
        bench_row(
            f"{s}.purchase_pr_auc", p["pr_auc"], "ap", baseline=p["oracle_pr_auc"], notes="baseline: oracle"
        ),
        bench_row(
            f"{s}.purchase_cold_start_roc_auc",
            p.get("cold_start_roc_auc", float("nan")),
            "auc",
            notes=(
                "users with no orders before the cutoff, their pairs with every product: "
                f"{p.get('cold_start_positives', 0):.0f} bought"
            ),
        ),
        bench_row(
            f"{s}.purchase_lift_top_decile",
            p["lift_top_decile"],
            "x",
            notes="top-10% positive rate / overall",
        ),
        bench_row(
            f"{s}.recommend_ndcg_at_10",
            r["ndcg_at_10"],
            "ndcg",
            baseline=r["popularity_ndcg_at_10"],
            target=">= 2x popularity",
            passed=ndcg_ratio >= 2.0,
            notes="baseline: popularity",
        ),
        bench_row(
            f"{s}.recommend_ndcg_vs_oracle",
            r["ndcg_at_10"],
            "ndcg",
            baseline=oracle_ndcg,
            notes=f"oracle is {oracle_ndcg / r['popularity_ndcg_at_10']:.2f}x popularity (the ceiling)",
        ),
        bench_row(
            f"{s}.recommend_precision_at_10",
            r["precision_at_10"],
            "p@10",
            baseline=r["popularity_precision_at_10"],
            notes="baseline: popularity",
        ),
        bench_row(
            f"{s}.recommend_recall_at_10",
            r["recall_at_10"],
            "r@10",
            baseline=r["popularity_recall_at_10"],
            notes="baseline: popularity",
        ),
        bench_row(
            f"{s}.train_purchase_seconds", purchase_seconds, "s", notes="2-core machine, incl. evaluation"
        ),
        bench_row(f"{s}.train_recommendation_seconds", recommend_seconds, "s", notes="incl. blend tuning"),
    ]


def _oracle_ndcg(shop: SyntheticShop, model: TrainedModel, k: int = 10) -> float:
    """NDCG@k of ranking every product by its true purchase probability, for the holdout's buyers."""
    cutoff, end = model.training_cutoff, model.data_end
    holdout = [o for o in shop.data.orders if cutoff <= o.timestamp < end]
    buyers = sorted({shop.user_index[o.user_id] for o in holdout})
    row_of = {user: row for row, user in enumerate(buyers)}
    n_products = shop.config.n_products
    truth = np.zeros((len(buyers), n_products), dtype=bool)
    for order in holdout:
        truth[row_of[shop.user_index[order.user_id]], shop.product_index[order.product_id]] = True
    users = np.repeat(np.array(buyers, dtype=np.int64), n_products)
    products = np.tile(np.arange(n_products, dtype=np.int64), len(buyers))
    scores = shop.probability_by_index(users, products, cutoff, end).reshape(len(buyers), n_products)
    ranked = np.argsort(-scores, axis=1)[:, :k]
    discounts = 1.0 / np.log2(np.arange(2, k + 2))
    ideal = np.array([discounts[: min(n, k)].sum() for n in truth.sum(axis=1)])
    return float(((np.take_along_axis(truth, ranked, axis=1) @ discounts) / ideal).mean())


if __name__ == "__main__":
    print_rows(run())
