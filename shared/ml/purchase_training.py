"""The purchase-likelihood model, trained on the time split of ``shared.ml.training``.

Purchase model (``two_part``, the default). "Will this customer buy this product in the next H days"
is "will they order at all" times "this product, given that they order":

* The buyer part ranks customers by the :data:`~shared.ml.features.CUSTOMER_FEATURES` (recency, orders,
  spend, tenure, the gaps between orders and their trend). It is fitted on ``buyer_windows`` windows of
  length H, the training window and the ones before it a step apart (more rows than one window gives a
  shop of a few thousand customers), by ``HistGradientBoostingClassifier`` and by a logistic
  regression; the one with the higher ROC-AUC on the holdout's customers is kept. On The Complete
  Journey this part ranks "orders again" at 0.896 against 0.884 for a logistic regression on RFM
  and tenure fitted on the latest window (docs/model-quality.md), where the earlier single model,
  its per-product probabilities combined, reached 0.820.
* The product part is the logistic regression on ``log1p``-scaled, standardised features of every
  feature, fitted on the training window's buyers only, their products against uniformly drawn others
  weighted by the inverse sampling rate.
* Their product is Platt-scaled on the holdout pairs (a monotone map: the ranking metrics are those of
  the product), so that the value-based seeds and the predicted value of purchase events read it as a
  probability.

Gradient boosting over the pairs was removed earlier: its numpy scoring took 23 s at 1M users. The buyer
part's trees score customers, not pairs: the bundle keeps each customer's buyer logit as of the end of
the data, and serving walks the trees (numpy, ``shared.ml.scoring.buyer_logit``) only for the customers
of a request. ``logistic`` is the single logistic regression over all pairs, the model before the
buyer part.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Literal, Protocol

import numpy as np
from numpy.typing import NDArray
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import average_precision_score, roc_auc_score
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer, StandardScaler

from shared.errors import ValidationFailed
from shared.ml.features import (
    CUSTOMER_FEATURES,
    FEATURE_NAMES,
    GROWS_WITH_TIME,
    MODEL_DEPENDENT,
    FeatureState,
    History,
    customer_features,
    feature_fallbacks,
    log1p_columns,
    log_scaled_mask,
    pair_features,
)
from shared.ml.freshness import reference_distribution
from shared.ml.scoring import calibrated, shard_arrays, top_k, write_bundle
from shared.ml.shop_arrays import FEATURE_HISTORY_DAYS, EncodedShop, SplitShop, from_day
from shared.ml.taste import taste_factors
from shared.ml.trained import (
    Algorithm,
    Progress,
    TrainedModel,
    TrainingConfig,
    bundle_header,
    id_arrays,
    trained_model,
)

BuyerModel = Literal["gradient_boosting", "logistic"]


class PurchaseOracle(Protocol):
    """The true purchase probabilities, known only for synthetic data (``SyntheticShop`` is one)."""

    def purchase_probability(
        self, user_ids: list[str], product_ids: list[str], start: datetime, end: datetime
    ) -> NDArray[np.float64]: ...


def _train_purchase(
    shop: SplitShop,
    name: str,
    config: TrainingConfig,
    oracle: PurchaseOracle | None,
    trained_at: datetime,
    report: Progress,
) -> TrainedModel:
    rng = np.random.default_rng(config.seed)
    report("features")
    # Taste factors learnt before the training window, so its labels never shape them.
    shop = replace(shop, product_taste=taste_factors(shop, shop.train_day, config))
    two_part = config.algorithm == "two_part"
    users, products, labels, weights = _training_pairs(
        shop, rng, config.negatives_per_positive, config.max_training_pairs, buyers_only=two_part
    )
    # The training window's state (about 360 MB at 1M customers) lives only as long as this call.
    features = pair_features(shop.state(shop.train_day), users, products)

    report("fit")
    pipeline: Any
    if 0 < labels.sum() < labels.size:
        pipeline = _purchase_pipeline(config)
        pipeline.fit(features, labels, model__sample_weight=weights)
        model_arrays = _model_arrays(pipeline, config.algorithm)
    else:  # every pair bought (a one-product shop's buyers) or none: the rate is all there is
        rate = float(np.clip(np.average(labels, weights=weights), 1e-6, 1.0 - 1e-6))
        pipeline = ConstantProbability(rate)
        model_arrays = _constant_arrays(float(np.log(rate / (1.0 - rate))), FEATURE_NAMES, prefix="")
    # Every later stage builds arrays of its own: the pairs (about 200 MB at the design size) go now.
    del users, products, labels, weights, features
    buyer = _fit_buyer(shop, config) if two_part else None

    report("evaluate")
    holdout_window = shop.history.between(shop.cutoff_day, shop.end_day)
    # Per customer, then per pair: the samples hold each customer many times.
    buyer_probability = (
        _sigmoid(buyer.logit(customer_features(shop.history, shop.cutoff_day, shop.user_ids.size)))
        if buyer is not None
        else None
    )

    def uncalibrated(users: NDArray[np.int64], features: NDArray[np.float64]) -> NDArray[np.float64]:
        scores = pipeline.predict_proba(features)[:, 1]
        return scores if buyer_probability is None else scores * buyer_probability[users]

    # The same draws as ``purchase_feature_sample`` (the drift check repeats them), and one state for
    # them and the customers without orders (see ``_cold_start``).
    holdout_state = shop.state(shop.cutoff_day)
    eval_users, eval_products = _evaluation_pairs(shop, rng, config.max_eval_pairs)
    eval_features = pair_features(holdout_state, eval_users, eval_products)
    cold = _cold_start(shop, holdout_state, holdout_window)
    del holdout_state
    cold_scores = uncalibrated(cold.users, cold.features) if cold is not None else np.zeros(0)
    eval_labels = _bought(holdout_window, eval_users, eval_products)
    eval_scores = uncalibrated(eval_users, eval_features)
    calibration = None
    if buyer is not None:
        calibration = _platt(eval_scores, eval_labels)
        eval_scores = calibrated(eval_scores, calibration)
        cold_scores = calibrated(cold_scores, calibration)
    metrics = _classification_metrics(eval_labels, eval_scores)
    if buyer is not None:
        metrics |= buyer.metrics
    metrics |= _simple_purchase_rankings(eval_features, eval_labels)
    if cold is not None:
        metrics |= cold.metrics(cold_scores)
    if oracle is not None:
        truth = oracle.purchase_probability(
            shop.user_ids[eval_users].tolist(),
            shop.product_ids[eval_products].tolist(),
            from_day(shop.cutoff_day),
            from_day(shop.end_day),
        )
        metrics["oracle_roc_auc"] = float(roc_auc_score(eval_labels, truth))
        metrics["oracle_pr_auc"] = float(average_precision_score(eval_labels, truth))

    distributions = {
        feature: reference_distribution(eval_features[:, column])
        for column, feature in enumerate(FEATURE_NAMES)
        if feature not in GROWS_WITH_TIME | MODEL_DEPENDENT
    }
    del eval_users, eval_products, eval_features, eval_labels, eval_scores, cold, cold_scores

    report("export")
    if calibration is not None:
        model_arrays["calibration"] = calibration
    audited: Any = pipeline
    if buyer is not None and calibration is not None:
        constant = float(buyer.arrays["buyer_intercept"][0]) if buyer.model is None else 0.0
        audited = TwoPartModel(pipeline, buyer.model, constant, calibration)
    bundle, shards = _purchase_bundle(shop, name, config, trained_at, buyer, model_arrays)
    return trained_model(
        shop,
        name,
        "purchase",
        config,
        trained_at,
        metrics,
        distributions,
        audited,
        bundle,
        list(FEATURE_NAMES),
        shards=shards,
    )


def _purchase_bundle(
    shop: SplitShop,
    name: str,
    config: TrainingConfig,
    trained_at: datetime,
    buyer: _Buyer | None,
    model_arrays: dict[str, np.ndarray],
) -> tuple[bytes, list[bytes]]:
    """The purchase model's scoring bundle (the state as of the end of the data) and its serving shards,
    cut from the arrays in memory rather than from the bundle read back: at 1M customers the state is
    about 450 MB, and reading the bundle back for the shards held a second copy of it (the training's
    peak, 3,202 MB at the design size). Only the bytes leave this function."""
    if buyer is not None:
        # Each user's buyer logit as of the end, kept so that scoring a product for every user never
        # walks the trees (see ``shared.ml.scoring``); before the state is built, so the customer
        # aggregates' temporaries never sit on top of it.
        serving_customers = customer_features(shop.history, shop.end_day, shop.user_ids.size)
        model_arrays = model_arrays | buyer.arrays | {"user_buyer_logit": buyer.logit(serving_customers)}
        del serving_customers
    serving_state = shop.state(shop.end_day)
    header = bundle_header(shop, name, "purchase", config.algorithm, trained_at, serving_state)
    if buyer is not None:
        header["buyer_model"] = buyer.kind
    arrays = {
        **id_arrays(shop),
        **{f"state__{k}": v for k, v in serving_state.arrays().items()},
        "fallbacks": feature_fallbacks(serving_state.price_median),
        **{f"model__{k}": v for k, v in model_arrays.items()},
    }
    del serving_state
    bundle = write_bundle(header, arrays)
    return bundle, list(shard_arrays(header, arrays))


def _simple_purchase_rankings(features: NDArray[np.float64], labels: NDArray[np.int64]) -> dict[str, float]:
    """The holdout ROC-AUC of the simple methods the quality gate holds a purchase model to: customers
    by how recently they last ordered; each customer's products by how often they bought them, ties
    (and products they never bought) by the product's recent sales; products by their recent sales."""
    column = {name: features[:, FEATURE_NAMES.index(name)] for name in FEATURE_NAMES}
    sales = column["product_purchases_90d"]
    return {
        "recency_baseline_roc_auc": float(roc_auc_score(labels, -column["user_days_since_last_order"])),
        "own_history_baseline_roc_auc": float(
            roc_auc_score(labels, column["user_product_purchases"] + sales / (sales.max(initial=0.0) + 1.0))
        ),
        "popularity_baseline_roc_auc": float(roc_auc_score(labels, sales)),
    }


def _purchase_pipeline(config: TrainingConfig) -> Pipeline:
    return Pipeline(
        [
            ("log", FunctionTransformer(log1p_columns, kw_args={"mask": log_scaled_mask()})),
            ("scale", StandardScaler()),
            ("model", LogisticRegression(C=1.0, max_iter=2000)),
        ]
    )


def _training_pairs(
    shop: SplitShop,
    rng: np.random.Generator,
    negatives_per_positive: int,
    max_pairs: int,
    *,
    buyers_only: bool = False,
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64], NDArray[np.float64]]:
    """The positive pairs of the training window (all, or a weighted uniform sample when there are more
    than ``max_pairs`` pairs to fit in all) plus uniformly sampled, inverse-rate-weighted negatives;
    with ``buyers_only`` the pairs of the users who bought in the window only (the two-part model's
    product part: which products, given that the customer buys)."""
    window = shop.history.between(shop.train_day, shop.cutoff_day)
    n_products = shop.product_ids.size
    rows = np.unique(window.user).astype(np.int64) if buyers_only else np.arange(shop.user_ids.size)
    n_users = rows.size
    window_rows = np.searchsorted(rows, window.user) if buyers_only else window.user.astype(np.int64)
    all_positive_keys = np.unique(window_rows * n_products + window.product)
    n_pairs = n_users * n_products
    # A big shop's window has millions of positive pairs: a uniform sample of them, each standing for
    # the ones left out, bounds the feature matrix (and so memory) without biasing the probabilities.
    most_positives = max(1, max_pairs // (1 + negatives_per_positive))
    positive_keys = all_positive_keys
    if positive_keys.size > most_positives:
        positive_keys = np.sort(rng.choice(all_positive_keys, most_positives, replace=False))
    positive_weight = all_positive_keys.size / positive_keys.size
    n_samples = min(n_pairs, max(1, negatives_per_positive * positive_keys.size))
    sampled = rng.integers(0, n_pairs, n_samples)
    negative_keys = sampled[~np.isin(sampled, all_positive_keys)]
    # Each sampled negative stands for this many of all negative pairs.
    weight = (n_pairs - all_positive_keys.size) / max(negative_keys.size, 1)
    keys = np.concatenate([positive_keys, negative_keys])
    labels = np.concatenate([np.ones(positive_keys.size, np.int64), np.zeros(negative_keys.size, np.int64)])
    weights = np.concatenate(
        [np.full(positive_keys.size, positive_weight), np.full(negative_keys.size, weight)]
    )
    return rows[keys // n_products], keys % n_products, labels, weights


@dataclass(frozen=True)
class _Buyer:
    """The two-part model's buyer part: which kind won on the holdout, the fitted model, its arrays for
    the bundle (see ``shared.ml.scoring.buyer_logit``) and the holdout figures of every kind tried."""

    kind: BuyerModel
    model: Any
    arrays: dict[str, np.ndarray]
    metrics: dict[str, float]

    def logit(self, customers: NDArray[np.float64]) -> NDArray[np.float64]:
        """The buyer logit of rows of :data:`CUSTOMER_FEATURES` by scikit-learn (the bundle's numpy walk
        gives the same numbers, tests/unit/ml/test_scoring.py; this is faster on every customer)."""
        if self.model is None:
            return np.full(customers.shape[0], float(self.arrays["buyer_intercept"][0]))
        return np.asarray(self.model.decision_function(customers), dtype=np.float64)


@dataclass(frozen=True)
class TwoPartModel:
    """The two-part purchase model as scikit-learn objects (the ``pipeline.joblib`` artifact, for
    audits and retraining; serving reads the numpy bundle): the product part's pipeline on every
    feature, the buyer part's model on the :data:`CUSTOMER_FEATURES` columns (None: a constant logit,
    ``buyer_constant``) and the Platt scaling of their product."""

    product: Pipeline | ConstantProbability
    buyer: Any
    buyer_constant: float
    calibration: NDArray[np.float64]

    def predict_proba(self, features: NDArray[np.float64]) -> NDArray[np.float64]:
        """``(n, 2)`` probabilities of not buying and buying for rows in FEATURE_NAMES order."""
        product = self.product.predict_proba(features)[:, 1]
        customers = features[:, [FEATURE_NAMES.index(name) for name in CUSTOMER_FEATURES]]
        buyer = (
            self.buyer.predict_proba(customers)[:, 1]
            if self.buyer is not None
            else np.full(features.shape[0], _sigmoid(np.array([self.buyer_constant]))[0])
        )
        probability = calibrated(product * buyer, self.calibration)
        return np.column_stack([1.0 - probability, probability])


# The buyer part's gradient boosting: shallow trees and early stopping, since a shop may have only a
# few thousand customers (The Complete Journey: 2,469), each window one row per customer.
_BUYER_BOOSTING = {
    "learning_rate": 0.05,
    "max_iter": 300,
    "max_depth": 3,
    "min_samples_leaf": 50,
    "l2_regularization": 1.0,
}


def _fit_buyer(shop: SplitShop, config: TrainingConfig) -> _Buyer:
    """The probability that a customer orders anything in the next H days, from the
    :data:`CUSTOMER_FEATURES`: gradient boosting and a logistic regression are both fitted on windows
    before the cutoff (:func:`_buyer_rows`), and the one with the higher holdout ROC-AUC (customers
    ranked by it against who ordered in the holdout) is kept; a tie keeps the logistic regression."""
    features, labels = _buyer_rows(shop, config)
    holdout = customer_features(shop.history, shop.cutoff_day, shop.user_ids.size)
    holdout_labels = np.zeros(shop.user_ids.size, np.int64)
    holdout_labels[np.unique(shop.history.between(shop.cutoff_day, shop.end_day).user)] = 1
    candidates: dict[BuyerModel, dict[str, np.ndarray]] = {}
    fitted: dict[BuyerModel, Any] = {}
    if 0 < labels.sum() < labels.size:
        logistic = Pipeline(
            [
                (
                    "log",
                    FunctionTransformer(log1p_columns, kw_args={"mask": log_scaled_mask(CUSTOMER_FEATURES)}),
                ),
                ("scale", StandardScaler()),
                ("model", LogisticRegression(C=1.0, max_iter=2000)),
            ]
        ).fit(features, labels)
        candidates["logistic"] = _linear_arrays(logistic, CUSTOMER_FEATURES, prefix="buyer_")
        fitted["logistic"] = logistic
        boosting = HistGradientBoostingClassifier(**_BUYER_BOOSTING, random_state=config.seed)
        candidates["gradient_boosting"] = _tree_arrays(boosting.fit(features, labels))
        fitted["gradient_boosting"] = boosting
    else:  # every customer bought, or none did: the rate is all there is to learn
        rate = float(np.clip(labels.mean(), 1e-6, 1 - 1e-6))
        candidates["logistic"] = _constant_arrays(np.log(rate / (1 - rate)), CUSTOMER_FEATURES, "buyer_")
    metrics: dict[str, float] = {}
    if 0 < holdout_labels.sum() < holdout_labels.size:
        for kind, model in fitted.items():
            logit = np.asarray(model.decision_function(holdout), dtype=np.float64)
            metrics[f"buyer_{kind}_roc_auc"] = float(roc_auc_score(holdout_labels, logit))
    chosen: BuyerModel = max(
        candidates, key=lambda k: (metrics.get(f"buyer_{k}_roc_auc", 0.0), k == "logistic")
    )
    if f"buyer_{chosen}_roc_auc" in metrics:
        metrics["buyer_roc_auc"] = metrics[f"buyer_{chosen}_roc_auc"]
    metrics["buyer_training_rows"] = float(labels.size)
    return _Buyer(chosen, fitted.get(chosen), candidates[chosen], metrics)


def _buyer_rows(shop: SplitShop, config: TrainingConfig) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """The buyer part's training rows: for each window start ``t`` (the training window's, then every
    step before it while a horizon of history precedes it, ``config.buyer_windows`` at most), every
    customer's features as of ``t`` and whether they ordered in ``[t, t + H)``; all before the cutoff.
    More rows than ``config.max_buyer_rows``: a uniform sample of customers in each window."""
    horizon = float(shop.horizon_days)
    step = float(config.buyer_window_step or max(7, shop.horizon_days // 4))
    first_day = float(shop.history.day.min())
    starts = [
        start
        for start in (shop.train_day - k * step for k in range(config.buyer_windows))
        if start == shop.train_day or start - first_day >= min(horizon, FEATURE_HISTORY_DAYS)
    ]
    n_users = shop.user_ids.size
    per_window = min(n_users, max(1, config.max_buyer_rows // len(starts)))
    rng = np.random.default_rng(config.seed)
    features, labels = [], []
    for start in starts:
        users = (
            np.arange(n_users)
            if per_window == n_users
            else np.sort(rng.choice(n_users, per_window, replace=False))
        )
        window = np.zeros(n_users, np.int64)
        window[np.unique(shop.history.between(start, start + horizon).user)] = 1
        features.append(customer_features(shop.history, start, n_users)[users])
        labels.append(window[users])
    return np.vstack(features), np.concatenate(labels)


def _platt(scores: NDArray[np.float64], labels: NDArray[np.int64]) -> NDArray[np.float64]:
    """Platt scaling of the two parts' product, fitted on the holdout pairs (the latest window, which
    neither part learnt from): ``[slope, intercept]`` of the logit. A monotone map, so it changes the
    probabilities, never the ranking; without both outcomes in the holdout, the identity."""
    if not 0 < labels.sum() < labels.size:
        return np.array([1.0, 0.0])
    logit = _logit(scores)[:, None]
    fitted = LogisticRegression(C=1e6, max_iter=1000).fit(logit, labels)
    return np.array([float(fitted.coef_[0, 0]), float(fitted.intercept_[0])])


def _logit(probability: NDArray[np.float64]) -> NDArray[np.float64]:
    clipped = np.clip(probability, 1e-12, 1.0 - 1e-12)
    return np.asarray(np.log(clipped) - np.log1p(-clipped), dtype=np.float64)


def _sigmoid(values: NDArray[np.float64]) -> NDArray[np.float64]:
    return np.asarray(1.0 / (1.0 + np.exp(-values)), dtype=np.float64)


def purchase_feature_sample(
    shop: EncodedShop, as_of_day: float, rng: np.random.Generator, max_pairs: int
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.float64]]:
    """The pairs a purchase model is evaluated on (all, or ``max_pairs`` drawn with ``rng``) and their
    features as of ``as_of_day``: ``(users, products, features)`` with features in FEATURE_NAMES order.

    Training takes its holdout metrics and drift reference from this sample; the drift check measures
    the same sample on newer data.
    """
    users, products = _evaluation_pairs(shop, rng, max_pairs)
    return users, products, pair_features(shop.state(as_of_day), users, products)


def _evaluation_pairs(
    shop: EncodedShop, rng: np.random.Generator, max_pairs: int
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """All (user, product) pairs, or a uniform sample of them when there are more than ``max_pairs``."""
    n_products = shop.product_ids.size
    n_pairs = shop.user_ids.size * n_products
    keys = np.arange(n_pairs) if n_pairs <= max_pairs else rng.integers(0, n_pairs, max_pairs)
    return keys // n_products, keys % n_products


@dataclass(frozen=True)
class _ColdStart:
    """The customers without orders before the cutoff, as one row per product: they have no history to
    tell them apart, so every feature of theirs (the customer's, and the customer-and-product ones:
    taste, category, own purchases) is the same for each of them and a product has one score for all
    of them. ``users`` (one such customer, repeated) and ``features`` are the products' rows;
    ``customers`` how many there are, ``bought`` how many of them bought each product in the holdout."""

    users: NDArray[np.int64]
    features: NDArray[np.float64]
    customers: int
    bought: NDArray[np.int64]

    def metrics(self, scores: NDArray[np.float64]) -> dict[str, float]:
        """``cold_start_roc_auc``, the ROC-AUC of ``scores`` (one a product) over every pair of these
        customers with every product (each product's score counted once for each customer who bought
        it and once for each who did not), and ``cold_start_positives``, the purchases it rests on;
        nothing without both outcomes among them.

        Measured on every pair rather than on the evaluation sample's share of them: on the taste-driven
        benchmark shop (5,000 customers, 1,000 products) that sample (500,000 of the 5M pairs) held 8
        of their purchases, and one purchase's rank moved the figure by hundredths; every pair holds 96
        (docs/model-quality.md)."""
        positives = int(self.bought.sum())
        if not 0 < positives < self.customers * self.bought.size:
            return {}
        labels = np.concatenate([np.ones(scores.size, np.int64), np.zeros(scores.size, np.int64)])
        weights = np.concatenate([self.bought, self.customers - self.bought]).astype(np.float64)
        counted = weights > 0
        auc = roc_auc_score(labels[counted], np.tile(scores, 2)[counted], sample_weight=weights[counted])
        return {"cold_start_roc_auc": float(auc), "cold_start_positives": float(positives)}


def _cold_start(shop: SplitShop, state: FeatureState, holdout: History) -> _ColdStart | None:
    """The :class:`_ColdStart` of the customers with no order before the cutoff (``state`` is as of
    the cutoff, ``holdout`` its window's lines), or None when every customer had ordered."""
    ordered = np.zeros(shop.user_ids.size, dtype=bool)
    ordered[shop.history.before(shop.cutoff_day).user] = True
    newcomers = np.flatnonzero(~ordered)
    if newcomers.size == 0:
        return None
    n_products = shop.product_ids.size
    theirs = ~ordered[holdout.user]
    pairs = np.unique(holdout.user[theirs].astype(np.int64) * n_products + holdout.product[theirs])
    users = np.full(n_products, newcomers[0], dtype=np.int64)
    return _ColdStart(
        users=users,
        features=pair_features(state, users, np.arange(n_products, dtype=np.int64)),
        customers=int(newcomers.size),
        bought=np.bincount(pairs % n_products, minlength=n_products).astype(np.int64),
    )


def _bought(window: History, users: NDArray[np.int64], products: NDArray[np.int64]) -> NDArray[np.int64]:
    n_products = int(max(products.max(initial=0), window.product.max(initial=0))) + 1
    window_keys = window.user.astype(np.int64) * n_products + window.product
    return np.isin(users * n_products + products, window_keys).astype(np.int64)


def _classification_metrics(labels: NDArray[np.int64], scores: NDArray[np.float64]) -> dict[str, float]:
    positives = int(labels.sum())
    if positives == 0 or positives == labels.size:
        raise ValidationFailed(
            "The holdout window has no purchases to evaluate against.",
            field="orders",
            remedy="Upload more recent orders or a shorter horizon_days.",
        )
    decile = top_k(scores, max(1, labels.size // 10))
    return {
        "roc_auc": float(roc_auc_score(labels, scores)),
        "pr_auc": float(average_precision_score(labels, scores)),
        "lift_top_decile": float(labels[decile].mean() / labels.mean()),
        "holdout_pairs": float(labels.size),
        "holdout_positive_rate": float(labels.mean()),
    }


def _model_arrays(pipeline: Pipeline, algorithm: Algorithm) -> dict[str, np.ndarray]:
    """The fitted (product part's) logistic regression as plain arrays for the numpy bundle (see
    ``shared.ml.scoring``)."""
    return _linear_arrays(pipeline, FEATURE_NAMES)


def _linear_arrays(pipeline: Pipeline, names: Sequence[str], prefix: str = "") -> dict[str, np.ndarray]:
    """A fitted log1p-scale-logistic pipeline as arrays, named with ``prefix``."""
    scaler: StandardScaler = pipeline.named_steps["scale"]
    model: LogisticRegression = pipeline.named_steps["model"]
    return {
        f"{prefix}log_mask": log_scaled_mask(tuple(names)),
        f"{prefix}mean": np.asarray(scaler.mean_, dtype=np.float64),
        f"{prefix}scale": np.asarray(scaler.scale_, dtype=np.float64),
        f"{prefix}coef": np.asarray(model.coef_[0], dtype=np.float64),
        f"{prefix}intercept": np.asarray(model.intercept_, dtype=np.float64),
    }


def _constant_arrays(logit: float, names: Sequence[str], prefix: str) -> dict[str, np.ndarray]:
    """A logistic regression without slopes (the same logit for every row) as arrays for ``names``."""
    width = len(names)
    return {
        f"{prefix}log_mask": log_scaled_mask(tuple(names)),
        f"{prefix}mean": np.zeros(width),
        f"{prefix}scale": np.ones(width),
        f"{prefix}coef": np.zeros(width),
        f"{prefix}intercept": np.array([logit]),
    }


@dataclass(frozen=True)
class ConstantProbability:
    """A model that gives every row the same probability (what is left to learn from one outcome)."""

    probability: float

    def predict_proba(self, features: NDArray[np.float64]) -> NDArray[np.float64]:
        """``(n, 2)``: not buying and buying, the same for every row."""
        return np.tile([1.0 - self.probability, self.probability], (features.shape[0], 1))


def _tree_arrays(model: HistGradientBoostingClassifier) -> dict[str, np.ndarray]:
    """A fitted binary gradient boosting's trees as flat arrays (every tree's nodes one after another,
    children as positions in those arrays), which ``shared.ml.scoring.buyer_logit`` walks with numpy."""
    nodes = [predictors[0].nodes for predictors in model._predictors]
    offsets = np.cumsum([0, *[tree.size for tree in nodes[:-1]]]).astype(np.int64)
    flat = np.concatenate(nodes) if nodes else np.zeros(0, dtype=np.dtype([("value", "f8")]))
    shift = np.repeat(offsets, [tree.size for tree in nodes])
    leaf = flat["is_leaf"].astype(bool)
    return {
        "buyer_tree_root": offsets,
        "buyer_tree_feature": np.where(leaf, 0, flat["feature_idx"]).astype(np.int64),
        "buyer_tree_threshold": flat["num_threshold"].astype(np.float64),
        "buyer_tree_missing_left": flat["missing_go_to_left"].astype(np.bool_),
        "buyer_tree_left": np.where(leaf, np.arange(flat.size), flat["left"].astype(np.int64) + shift),
        "buyer_tree_right": np.where(leaf, np.arange(flat.size), flat["right"].astype(np.int64) + shift),
        "buyer_tree_value": np.where(leaf, flat["value"], 0.0).astype(np.float64),
        "buyer_tree_depth": np.array([int(flat["depth"].max(initial=0))], dtype=np.int64),
        "buyer_baseline": np.asarray(model._baseline_prediction, dtype=np.float64).reshape(1),
    }
