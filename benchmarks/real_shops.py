"""The models on real shops, beside what a data scientist would fit in an afternoon (issue 26).

For each real log (``benchmarks._real_data``: The Complete Journey, an Instacart sample; CDNOW in
``benchmarks.cdnow``) the models are trained by the production code on what came before the test
window and compared, in the same run, with the baselines of ``benchmarks._baselines`` fitted on the
same lines. Every baseline's settings are chosen on the validation window at the end of the training
period (the same split, one window earlier); the models choose theirs inside training, which never
sees the test window either.

Recommendation: NDCG@10 (binary) on the test window's buyers who had bought before, over any product
and over only the products each had never bought (those users with at least one new product; the
products they had bought are left out of every method's ranking). Purchase ("buys again"): ROC-AUC of
"orders anything in the test window" over the customers who had ordered before, by the purchase
model's probability of ordering anything in its horizon (its buyer part; a model without one: its
per-product probabilities aggregated as the probability of buying at least one product). The
purchase model's calibration on (customer, product) pairs is printed as a reliability table.

Ceiling (not a model: it learns from the test's own answers): the repeat model's gradient boosting on
its features as of the test's start, fitted on which of their products the customers bought in the
test, out of fold (five folds by customer), ranks each test buyer's own products, then the products
they never bought by popularity; its NDCG@10 (any product) beside own history's is how far ranking a
customer's own products with these features goes when the answers are there to learn from (a model must
learn from earlier windows instead; the served blend, which also ranks new products, can pass it).

Run with ``python -m benchmarks real_shops`` (well over an hour on two shared cores: The Complete
Journey's 68,192 products make every baseline's grid slow); ``REAL_SHOPS_TASKS=purchase`` (or
``recommend``, or ``ceiling``, or several, comma-separated) runs those tasks only, and the recorded
rows of the others are dropped with the module's.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from itertools import pairwise
from itertools import product as grid

import numpy as np
from numpy.typing import NDArray
from scipy import sparse
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import GroupKFold, cross_val_predict

from benchmarks import _baselines as base
from benchmarks._real_data import RealShop, Split, complete_journey, instacart_sample
from benchmarks._rows import BenchRow, bench_row, print_rows
from shared.ml.recommendation_training import log_popularity, purchases, repeat_estimator, repeat_features
from shared.ml.scoring import ScoringBundle, load_bundle
from shared.ml.shop_arrays import EncodedShop
from shared.ml.trained import TrainingConfig
from shared.ml.training import train_model

K = 10
_CHUNK = 256
_GRIDS: dict[str, list[dict[str, object]]] = {
    "popularity": [{"window_days": w} for w in (28.0, 90.0, None)],
    "own_history": [{"window_days": w} for w in (28.0, 90.0, None)],
    "als": [
        {"factors": f, "regularization": r, "iterations": 15}
        for f, r in grid((32, 64, 128), (0.01, 0.1, 1.0))
    ],
    "bpr": [
        {"factors": f, "learning_rate": lr, "iterations": 100} for f, lr in grid((64, 128), (0.01, 0.05))
    ],
    "item_knn": [{"neighbours": k} for k in (20, 100, 400)],
}
_FITS: dict[str, Callable[..., base.Scorer]] = {
    "popularity": base.popularity,
    "own_history": base.own_history,
    "als": base.als,
    "bpr": base.bpr,
    "item_knn": base.item_knn,
}


def run() -> list[BenchRow]:
    rows: list[BenchRow] = []
    for load in (complete_journey, instacart_sample):
        started = time.perf_counter()
        shop = load()
        rows.extend(_shop_rows(shop))
        _log(f"{shop.name}: {time.perf_counter() - started:.0f}s")
    return rows


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# Recommendation ---------------------------------------------------------------------------------------


def _eval_users(split: Split, new_only: bool) -> tuple[NDArray[np.int64], list[NDArray[np.int64]]]:
    """The test buyers who had bought before, and each one's relevant products (only those they had
    never bought when ``new_only``; users left without any are dropped)."""
    n_products = split.train.product_ids.size
    test_pairs = np.unique(split.test.user.astype(np.int64) * n_products + split.test.product)
    past = split.train.history
    past_pairs = np.unique(past.user.astype(np.int64) * n_products + past.product)
    if new_only:
        test_pairs = test_pairs[~np.isin(test_pairs, past_pairs)]
    users = np.unique(test_pairs // n_products)
    users = users[np.isin(users, np.unique(past.user))]
    test_pairs = test_pairs[np.isin(test_pairs // n_products, users)]
    bounds = np.searchsorted(test_pairs // n_products, np.append(users, users[-1] + 1 if users.size else 0))
    relevant = [test_pairs[bounds[i] : bounds[i + 1]] % n_products for i in range(users.size)]
    return users, relevant


def _ndcg(top: NDArray[np.int64], relevant: list[NDArray[np.int64]]) -> float:
    discounts = 1.0 / np.log2(np.arange(2, K + 2))
    total = 0.0
    for ranked, truth in zip(top, relevant, strict=True):
        hits = np.isin(ranked, truth)
        total += float(hits @ discounts[: ranked.size]) / float(discounts[: min(truth.size, K)].sum())
    return total / max(len(relevant), 1)


def _top(scores: NDArray[np.float64]) -> NDArray[np.int64]:
    best = np.argpartition(-scores, K - 1, axis=1)[:, :K]
    order = np.argsort(-np.take_along_axis(scores, best, axis=1), axis=1, kind="stable")
    return np.take_along_axis(best, order, axis=1)


def _scorer_ndcg(scorer: base.Scorer, split: Split, new_only: bool) -> float:
    users, relevant = _eval_users(split, new_only)
    owned = base.order_counts(split.train) if new_only else None
    tops = []
    for start in range(0, users.size, _CHUNK):
        chunk = users[start : start + _CHUNK]
        scores = np.array(scorer(chunk), dtype=np.float64)
        if owned is not None:
            rows = owned[chunk].tocoo()
            scores[rows.row, rows.col] = -np.inf
        tops.append(_top(scores))
    return _ndcg(np.vstack(tops) if tops else np.zeros((0, K), np.int64), relevant)


def _bundle_ndcg(bundle: ScoringBundle, split: Split, new_only: bool) -> float:
    """NDCG@10 of the served model's own top 10 (``recommend``, with ``exclude_purchased``)."""
    users, relevant = _eval_users(split, new_only)
    index = {p: k for k, p in enumerate(split.train.product_ids.tolist())}
    ids = split.train.user_ids
    top = np.array(
        [
            [index[p] for p, _ in bundle.recommend(str(ids[u]), K, exclude_purchased=new_only)]
            for u in users.tolist()
        ]
    ).reshape(-1, K)
    return _ndcg(top, relevant)


def _choose(name: str, validation: Split) -> dict[bool, tuple[dict[str, object], float]]:
    """The settings of baseline ``name`` with the best validation NDCG@10, for any product (``False``)
    and for new products only (``True``): each setting fitted once, scored both ways."""
    best: dict[bool, tuple[dict[str, object], float]] = {False: ({}, -1.0), True: ({}, -1.0)}
    for settings in _GRIDS[name]:
        scorer = _FITS[name](validation.train, **settings)
        for new_only in (False, True):
            value = _scorer_ndcg(scorer, validation, new_only)
            if value > best[new_only][1]:
                best[new_only] = (settings, value)
    return best


def _recommendation_rows(shop: RealShop, split: Split, validation: Split) -> list[BenchRow]:
    rows: list[BenchRow] = []
    started = time.perf_counter()
    config = TrainingConfig(holdout_days=_horizon(shop, split.train))
    model = train_model(split.train, name=f"{shop.name}-rec", model_type="recommendation", config=config)
    bundle = load_bundle(model.artifacts["bundle"].data)
    train_seconds = time.perf_counter() - started
    # Each baseline's settings chosen on validation, then fitted on the training shop (once when both
    # modes chose the same settings).
    tested: dict[bool, dict[str, tuple[float, dict[str, object]]]] = {False: {}, True: {}}
    for name in _FITS:
        chosen = _choose(name, validation)
        fitted: dict[str, base.Scorer] = {}
        for new_only in (False, True):
            settings = chosen[new_only][0]
            key = repr(sorted(settings.items()))
            if key not in fitted:
                fitted[key] = _FITS[name](split.train, **settings)
            tested[new_only][name] = (_scorer_ndcg(fitted[key], split, new_only), settings)
            _log(f"  {shop.name} new={new_only} {name} {tested[new_only][name][0]:.4f} {settings}")
    for new_only in (False, True):
        mode = "new" if new_only else "any"
        ours = _bundle_ndcg(bundle, split, new_only)
        measured = tested[new_only]
        best_name = max(measured, key=lambda n: measured[n][0])
        best = measured[best_name][0]
        if new_only:
            bar, target, passed = measured["als"][0], ">= ALS", ours >= measured["als"][0]
        else:
            bar, target, passed = best, ">= 1.05x best baseline", ours >= 1.05 * best
        users = _eval_users(split, new_only)[0].size
        rows.append(
            bench_row(
                f"{shop.name}.recommend_ndcg_{mode}",
                ours,
                "ndcg",
                baseline=bar,
                target=target,
                passed=passed,
                notes=f"{model.algorithm}; best baseline {best_name} {best:.4f}; {users} test buyers; "
                f"trained in {train_seconds:.0f}s",
            )
        )
        for name, (value, settings) in measured.items():
            rows.append(
                bench_row(
                    f"{shop.name}.baseline_{name}_ndcg_{mode}",
                    value,
                    "ndcg",
                    notes=f"settings chosen on validation: {settings or 'none'}",
                )
            )
    return rows


def _ceiling_rows(shop: RealShop, split: Split, validation: Split) -> list[BenchRow]:
    started = time.perf_counter()
    settings = _choose("own_history", validation)[False][0]
    window = settings["window_days"] if isinstance(settings["window_days"], float) else None
    own = _scorer_ndcg(base.own_history(split.train, window), split, False)
    ceiling = _ceiling_ndcg(split, _horizon(shop, split.train), window)
    return [
        bench_row(
            f"{shop.name}.ceiling_ndcg_any",
            ceiling,
            "ndcg",
            baseline=own,
            notes="not a model: it learns from the test's own answers. The repeat model's estimator on its "
            "features as of the test's start, fitted on the test's labels out of fold (5 folds by "
            "customer), ranks each test buyer's own products, then popularity; baseline: own history "
            f"(window {window} days, chosen on validation); how far these features rank a customer's own "
            f"products with the answers to learn from; {time.perf_counter() - started:.0f}s",
        )
    ]


def _ceiling_ndcg(split: Split, horizon: float, window_days: float | None) -> float:
    """NDCG@10 (any product) of each test buyer's own products ranked by the repeat model's estimator
    fitted on the test's own labels (bought in the test or not) of every (customer, product bought
    before) pair, on its features as of the test's start (the rows the served model scores), predicted
    out of fold with the folds grouped by customer so that no customer's labels inform their own scores;
    then the products they never bought, by distinct buyers in the last ``window_days`` (own history's
    order; its ties too)."""
    train = split.train
    n_products = train.product_ids.size
    rows = purchases(train, train.end_day)
    features = repeat_features(
        rows,
        rows.product_rebuy(),
        rows.product_gap(),
        log_popularity(train, train.end_day, horizon),
        horizon,
    )
    user = np.repeat(np.arange(train.user_ids.size, dtype=np.int64), np.diff(rows.orders.indptr))
    bought = np.unique(split.test.user.astype(np.int64) * n_products + split.test.product)
    labels = np.isin(user * n_products + rows.orders.indices, bought).astype(np.int64)
    predicted = cross_val_predict(
        repeat_estimator(0), features, labels, groups=user, cv=GroupKFold(5), method="predict_proba"
    )[:, 1]
    popular = base.buyers_per_product(train, window_days)
    popular = popular / (popular.max() + 1.0)
    # Own products above every other (2 + a probability), ties between them broken by popularity.
    own = sparse.csr_matrix(
        (2.0 + predicted + 1e-6 * popular[rows.orders.indices], rows.orders.indices, rows.orders.indptr),
        shape=rows.orders.shape,
    )

    def scorer(users: NDArray[np.int64]) -> NDArray[np.float64]:
        scores = np.broadcast_to(popular, (users.size, n_products)).copy()
        entries = own[users].tocoo()
        scores[entries.row, entries.col] = entries.data
        return scores

    return _scorer_ndcg(scorer, split, False)


def _horizon(shop: RealShop, train: EncodedShop) -> int:
    span = float(train.end_day - train.history.day.min())
    return int(min(shop.horizon_days, max(7, (span - 90) // 2)))


# Purchase ---------------------------------------------------------------------------------------------


def _purchase_rows(shop: RealShop, split: Split) -> list[BenchRow]:
    train = split.train
    known = np.unique(train.history.user)
    bought = np.zeros(train.user_ids.size)
    bought[np.unique(split.test.user)] = 1.0
    labels = bought[known]
    horizon = _horizon(shop, train)
    started = time.perf_counter()
    model = train_model(
        train, name=f"{shop.name}-buy", model_type="purchase", config=TrainingConfig(holdout_days=horizon)
    )
    train_seconds = time.perf_counter() - started
    bundle = load_bundle(model.artifacts["bundle"].data)
    any_purchase = _any_purchase(bundle, train)
    validation_cut = train.end_day - split.test_days
    scores = {
        "rfm_logistic": base.rfm_logistic(train, split.test_days, validation_cut),
        "bgnbd": base.bgnbd_expected(train, split.test_days),
        "recency": -base.rfm_features(train, train.end_day)[:, 0],
    }
    ours = float(roc_auc_score(labels, any_purchase[known]))
    measured = {name: float(roc_auc_score(labels, value[known])) for name, value in scores.items()}
    best_name = max(measured, key=lambda n: measured[n])
    best = measured[best_name]
    rows = [
        bench_row(
            f"{shop.name}.purchase_buys_again_roc_auc",
            ours,
            "auc",
            baseline=best,
            target=">= best baseline + 0.01",
            passed=ours >= best + 0.01,
            notes=f"{model.algorithm}, horizon {horizon} days; best baseline {best_name}; "
            f"{known.size} customers, {labels.mean():.1%} buy again; trained in {train_seconds:.0f}s",
        ),
        *[
            bench_row(f"{shop.name}.baseline_{name}_buys_again_roc_auc", value, "auc")
            for name, value in measured.items()
        ],
    ]
    if bundle.order_probabilities() is not None:
        rows.extend(_order_reliability_rows(shop, any_purchase[known], labels))
    rows.extend(_reliability_rows(shop, bundle, split))
    return rows


def _order_reliability_rows(
    shop: RealShop, predicted: NDArray[np.float64], labels: NDArray[np.float64]
) -> list[BenchRow]:
    """The buyer part's probability of ordering in the horizon against who ordered in the test, for
    the customers who had ordered before, in bins of predicted probability."""
    rows = []
    for low, high in pairwise(np.array([0.0, 0.25, 0.5, 0.75, 0.9, 1.0001])):
        inside = (predicted >= low) & (predicted < high)
        if not inside.any():
            continue
        rows.append(
            bench_row(
                f"{shop.name}.order_calibration_{low:g}_{min(high, 1.0):g}",
                float(labels[inside].mean()),
                "rate",
                baseline=float(predicted[inside].mean()),
                notes=f"customers predicted to order with probability in [{low:g}, {min(high, 1.0):g}): "
                f"actual rate vs mean predicted; {int(inside.sum())} customers",
            )
        )
    return rows


def _any_purchase(bundle: ScoringBundle, train: EncodedShop) -> NDArray[np.float64]:
    """Each user's probability of ordering anything in the horizon: the served model's own (its buyer
    part), or for a model without one, of buying at least one product (the products taken as
    independent) from its score of every product for every user."""
    own = bundle.order_probabilities()
    if own is not None:
        return own
    log_none = np.zeros(bundle.user_count)
    for product_id in train.product_ids.tolist():
        log_none += np.log1p(-np.clip(bundle.score_all_users(product_id), 0.0, 1.0 - 1e-12))
    return 1.0 - np.exp(log_none)


def _reliability_rows(shop: RealShop, bundle: ScoringBundle, split: Split) -> list[BenchRow]:
    """The served model's probabilities against what happened, on every bought (customer, product) pair
    of the test window and uniformly drawn others (weighted back to all pairs), in bins of predicted
    probability."""
    train = split.train
    n_products = train.product_ids.size
    rng = np.random.default_rng(0)
    positives = np.unique(split.test.user.astype(np.int64) * n_products + split.test.product)
    drawn = rng.integers(0, train.user_ids.size * n_products, 200_000)
    drawn = drawn[~np.isin(drawn, positives)]
    negative_weight = (train.user_ids.size * n_products - positives.size) / drawn.size
    keys = np.concatenate([positives, drawn])
    labels = np.concatenate([np.ones(positives.size), np.zeros(drawn.size)])
    weights = np.concatenate([np.ones(positives.size), np.full(drawn.size, negative_weight)])
    users, products = keys // n_products, keys % n_products
    predicted = np.empty(keys.size)
    ids, pids = train.user_ids, train.product_ids
    by_product = np.argsort(products, kind="stable")
    bounds = np.searchsorted(products[by_product], np.arange(n_products + 1))
    for p in np.unique(products).tolist():
        members = by_product[bounds[p] : bounds[p + 1]]
        all_users = bundle.score_all_users(str(pids[p]))
        predicted[members] = all_users[users[members]]
    del ids
    edges = np.array([0.0, 0.001, 0.01, 0.03, 0.1, 0.3, 1.0001])
    rows = []
    for low, high in pairwise(edges):
        inside = (predicted >= low) & (predicted < high)
        if not inside.any():
            continue
        w = weights[inside]
        mean_predicted = float((predicted[inside] * w).sum() / w.sum())
        actual = float((labels[inside] * w).sum() / w.sum())
        rows.append(
            bench_row(
                f"{shop.name}.calibration_{low:g}_{min(high, 1.0):g}",
                actual,
                "rate",
                baseline=mean_predicted,
                notes=f"pairs predicted in [{low:g}, {min(high, 1.0):g}): actual rate vs mean predicted; "
                f"{int(inside.sum())} pairs ({int(labels[inside].sum())} bought)",
            )
        )
    return rows


def _shop_rows(shop: RealShop) -> list[BenchRow]:
    split = shop.split()
    _log(f"{shop.description}")
    tasks = {
        task for task in os.environ.get("REAL_SHOPS_TASKS", "recommend,purchase,ceiling").split(",") if task
    }
    validation = shop.split(split.train)
    rows = _recommendation_rows(shop, split, validation) if "recommend" in tasks else []
    if "ceiling" in tasks:
        rows.extend(_ceiling_rows(shop, split, validation))
    if shop.purchase_task and "purchase" in tasks:
        rows.extend(_purchase_rows(shop, split))
    return rows


if __name__ == "__main__":
    print_rows(run())
