"""What a data scientist would fit in an afternoon, for the real-data benchmark (issue 26).

Recommenders (each a ``fit(train, **settings) -> Scorer``; a scorer gives users x products scores):
popularity, own history (frequency, then popularity), implicit's ALS (BM25-weighted) and BPR, and
item-item kNN (cosine). Customers who buy again: logistic regression on recency, frequency, monetary
value and tenure, and BG/NBD. Settings are chosen on the validation window by the benchmark, never on
the test. ``implicit`` is a benchmark-only dependency (requirements-bench.txt).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy import optimize, sparse, special
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from shared.ml.features import History
from shared.ml.shop_arrays import EncodedShop

Scorer = Callable[[NDArray[np.int64]], NDArray[np.float64]]


def order_counts(shop: EncodedShop, history: History | None = None) -> sparse.csr_matrix:
    """Users x products: in how many distinct orders the user bought the product."""
    h = shop.history if history is None else history
    n_products = shop.product_ids.size
    keys = np.unique((h.order_key.astype(np.int64) * shop.user_ids.size + h.user) * n_products + h.product)
    pairs = keys % (shop.user_ids.size * n_products)
    matrix = sparse.csr_matrix(
        (np.ones(pairs.size), (pairs // n_products, pairs % n_products)),
        shape=(shop.user_ids.size, n_products),
    )
    matrix.sum_duplicates()
    return matrix


def buyers_per_product(shop: EncodedShop, window_days: float | None) -> NDArray[np.float64]:
    """Distinct buyers of each product in the last ``window_days`` of the shop (all of it: None)."""
    h = (
        shop.history
        if window_days is None
        else shop.history.between(shop.end_day - window_days, shop.end_day)
    )
    n_products = shop.product_ids.size
    pairs = np.unique(h.user.astype(np.int64) * n_products + h.product)
    return np.bincount(pairs % n_products, minlength=n_products).astype(np.float64)


def popularity(train: EncodedShop, window_days: float | None = 90.0) -> Scorer:
    counts = buyers_per_product(train, window_days)
    return lambda users: np.broadcast_to(counts, (users.size, counts.size)).copy()


def own_history(train: EncodedShop, window_days: float | None = 90.0) -> Scorer:
    """The customer's own purchases by how many orders held them, ties broken by popularity."""
    counts = order_counts(train)
    tie = buyers_per_product(train, window_days)
    tie = tie / (tie.max() + 1.0)
    return lambda users: counts[users].toarray() + tie


@dataclass(frozen=True)
class _Factors:
    users: NDArray[np.float64]
    items: NDArray[np.float64]

    def __call__(self, users: NDArray[np.int64]) -> NDArray[np.float64]:
        return np.asarray(self.users[users] @ self.items.T)


def _to_array(values: object) -> NDArray[np.float64]:
    return np.asarray(values.to_numpy() if hasattr(values, "to_numpy") else values, dtype=np.float64)


def als(
    train: EncodedShop, factors: int = 64, regularization: float = 0.05, iterations: int = 15, seed: int = 0
) -> Scorer:
    """implicit's AlternatingLeastSquares on BM25-weighted order counts."""
    from implicit.cpu.als import AlternatingLeastSquares
    from implicit.nearest_neighbours import bm25_weight

    weighted = bm25_weight(order_counts(train), K1=100, B=0.8).tocsr()
    model = AlternatingLeastSquares(
        factors=factors, regularization=regularization, iterations=iterations, random_state=seed
    )
    with threadpool_limits(1, "blas"):  # implicit's own threads, not BLAS's (its advice)
        model.fit(weighted, show_progress=False)
    return _Factors(_to_array(model.user_factors), _to_array(model.item_factors))


def bpr(
    train: EncodedShop,
    factors: int = 64,
    learning_rate: float = 0.05,
    regularization: float = 0.01,
    iterations: int = 100,
    seed: int = 0,
) -> Scorer:
    """implicit's BayesianPersonalizedRanking on who bought what."""
    from implicit.cpu.bpr import BayesianPersonalizedRanking

    bought = order_counts(train)
    bought.data = np.ones_like(bought.data)
    model = BayesianPersonalizedRanking(
        factors=factors,
        learning_rate=learning_rate,
        regularization=regularization,
        iterations=iterations,
        random_state=seed,
    )
    with threadpool_limits(1, "blas"):
        model.fit(bought.astype(np.float32).tocsr(), show_progress=False)
    return _Factors(_to_array(model.user_factors), _to_array(model.item_factors))


def item_knn(train: EncodedShop, neighbours: int = 100) -> Scorer:
    """Item-item cosine kNN (implicit's CosineRecommender): a product scores by its similarity to what
    the customer bought, each of those weighted by the customer's order count."""
    from implicit.nearest_neighbours import CosineRecommender

    counts = order_counts(train)
    model = CosineRecommender(K=neighbours)
    model.fit(counts.tocsr(), show_progress=False)
    similarity = model.similarity.tocsr()
    return lambda users: np.asarray((counts[users] @ similarity).toarray())


# Customers who buy again ------------------------------------------------------------------------------


def rfm_features(shop: EncodedShop, as_of_day: float) -> NDArray[np.float64]:
    """Per user: days since the last order, log orders, log spend, days since the first order, and
    log orders in the last 90 days, as of ``as_of_day`` (users without an order: recency and tenure
    at two years, counts 0)."""
    past = shop.history.before(as_of_day)
    n = shop.user_ids.size
    _, first_line = np.unique(past.order_key, return_index=True)
    order_user, order_day = past.user[first_line], past.day[first_line]
    frequency = np.bincount(order_user, minlength=n).astype(np.float64)
    recent = np.bincount(order_user[order_day >= as_of_day - 90], minlength=n).astype(np.float64)
    last = np.full(n, -np.inf)
    first = np.full(n, np.inf)
    np.maximum.at(last, past.user, past.day)
    np.minimum.at(first, past.user, past.day)
    spend = np.bincount(past.user, past.amount, minlength=n)
    seen = np.isfinite(last)
    recency = np.where(seen, as_of_day - last, 730.0)
    tenure = np.where(seen, as_of_day - first, 0.0)
    return np.column_stack([recency, np.log1p(frequency), np.log1p(spend), tenure, np.log1p(recent)])


def rfm_logistic(train: EncodedShop, horizon_days: float, validation_cut: float) -> NDArray[np.float64]:
    """Logistic regression of "ordered in the ``horizon_days`` after ``validation_cut``" on the RFM and
    tenure features as of ``validation_cut``, applied to the features as of the training shop's end:
    each user's probability of buying in the ``horizon_days`` after it."""
    features = rfm_features(train, validation_cut)
    window = train.history.between(validation_cut, validation_cut + horizon_days)
    labels = np.zeros(train.user_ids.size)
    labels[np.unique(window.user)] = 1.0
    known = features[:, 1] > 0
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
    model.fit(features[known], labels[known])
    return np.asarray(model.predict_proba(rfm_features(train, train.end_day))[:, 1])


def bgnbd_expected(train: EncodedShop, horizon_days: float) -> NDArray[np.float64]:
    """BG/NBD (Fader, Hardie and Lee 2005) on each user's distinct purchase days, weeks as the time
    unit, fitted by maximum likelihood on the training shop: the expected purchases in the
    ``horizon_days`` after its end (users without a purchase: 0)."""
    h = train.history
    end = np.floor(train.end_day)
    keys = np.unique(h.user.astype(np.int64) * 1_000_000 + np.floor(h.day).astype(np.int64))
    customer, purchase_day = keys // 1_000_000, (keys % 1_000_000).astype(np.float64)
    n = train.user_ids.size
    first = np.full(n, np.inf)
    last = np.full(n, -np.inf)
    np.minimum.at(first, customer, purchase_day)
    np.maximum.at(last, customer, purchase_day)
    seen = np.isfinite(first)
    x = np.asarray(np.bincount(customer, minlength=n) - 1.0, dtype=np.float64)[seen]
    t_x = ((last - first) / 7.0)[seen]
    big_t = ((end - first) / 7.0)[seen]
    r, alpha, a, b = fit_bgnbd(x, t_x, big_t)
    out = np.zeros(n)
    out[seen] = bgnbd_conditional_expectation((r, alpha, a, b), x, t_x, big_t, horizon_days / 7.0)
    return out


def fit_bgnbd(
    x: NDArray[np.float64], t_x: NDArray[np.float64], big_t: NDArray[np.float64]
) -> tuple[float, float, float, float]:
    """BG/NBD's (r, alpha, a, b) by maximum likelihood (Nelder-Mead on their logarithms)."""

    def negative_log_likelihood(log_params: NDArray[np.float64]) -> float:
        r, alpha, a, b = np.exp(log_params)
        part = special.gammaln(r + x) - special.gammaln(r) + r * np.log(alpha)
        part += special.gammaln(a + b) + special.gammaln(b + x) - special.gammaln(b)
        part -= special.gammaln(a + b + x)
        alive = -(r + x) * np.log(alpha + big_t)
        dropped = np.where(
            x > 0, np.log(a) - np.log(np.maximum(b + x - 1, 1e-12)) - (r + x) * np.log(alpha + t_x), -np.inf
        )
        return -float(np.sum(part + np.logaddexp(alive, dropped)))

    fitted = optimize.minimize(
        negative_log_likelihood, np.zeros(4), method="Nelder-Mead", options={"maxiter": 4000, "xatol": 1e-6}
    )
    r, alpha, a, b = np.exp(fitted.x).tolist()
    return r, alpha, a, b


def bgnbd_conditional_expectation(
    params: tuple[float, float, float, float],
    x: NDArray[np.float64],
    t_x: NDArray[np.float64],
    big_t: NDArray[np.float64],
    t: float,
) -> NDArray[np.float64]:
    """Expected purchases in the next ``t`` time units given (x, t_x, T)."""
    r, alpha, a, b = params
    hypergeometric = special.hyp2f1(r + x, b + x, a + b + x - 1, t / (alpha + big_t + t))
    numerator = (
        (a + b + x - 1) / (a - 1) * (1 - ((alpha + big_t) / (alpha + big_t + t)) ** (r + x) * hypergeometric)
    )
    denominator = 1 + (x > 0) * (a / (b + x - 1 + (x == 0))) * ((alpha + big_t) / (alpha + t_x)) ** (r + x)
    return np.asarray(numerator / denominator, dtype=np.float64)
