"""The recommendation model, trained on the time split of ``shared.ml.training``.

Recommendation model (``taste_blend``). Never users x products: the purchases are a sparse user x
product matrix (``log1p`` units), and a user's score for a product is a weighted sum of five parts
(``BLEND_PARTS``): the product's popularity (``log1p`` of its units sold), whether the user bought it
(repeat purchases), the affinity of their history to it through SVD item factors (of which products
each customer bought, ``AFFINITY_INPUT``), their taste for it
through the purchase model's bought-together (PPMI) factors, and their lift in its category. The
weights are a logistic regression of "bought in the window before the cutoff" on the parts, over a
fixed sample of that window's buyers and uniformly drawn products; never fitted on the holdout. A last
part, ``repeat_count`` (the orders that held the product, unscaled), gets the weight among
``REPEAT_COUNT_WEIGHTS`` with the best NDCG@10 on that window, so that "each customer's own products by
how often they bought them, then the rest of the blend" (the own-history ranking that wins on grocery
logs) is reachable. Or, if it does better there, ``repeat_model`` instead: a gradient-boosted repeat
model's probability that the customer buys each product they bought before again in the horizon, from
how often and how lately they bought it against their own rhythm for it and everyone's
(``REPEAT_FEATURES``; fitted on the window before the one it is weighed on, as the repeat-consumption
literature does with time-decayed frequency and item repurchase cycles: TIFU-KNN, Hu et al. 2020; Li et
al. 2023). The bundle keeps its probability per history entry as of the end of the data, so serving never
walks its trees; the probabilities are those of the repeat model refitted on the holdout
(``shared.ml.training``). The new-products blend (``exclude_purchased``) is fitted the same way on the
products the buyers had never bought, then kept, given more affinity, or replaced by affinity alone,
whichever ranks the window's new purchases best (``_new_product_weights``). On the
benchmark shops this beats the earlier SVD + popularity + owned-bonus blend tuned on a grid: NDCG@10
0.368 against 0.342 (long tail, popularity 0.260) and 0.300 against 0.282 (taste driven). Dense scores
exist only for a chunk of users at a time (``_SCORE_CELLS``), and the holdout metrics are measured on a
fixed sample of at most ``_EVALUATION_BUYERS`` buyers.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

import numpy as np
from numpy.typing import NDArray
from scipy import sparse
from sklearn.decomposition import TruncatedSVD
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression

from shared.ml.features import CATEGORY_PRIOR_UNITS, History
from shared.ml.freshness import reference_distribution
from shared.ml.scoring import category_lift, write_bundle
from shared.ml.shop_arrays import EncodedShop, SplitShop, interaction_matrix
from shared.ml.taste import taste_factors
from shared.ml.trained import (
    RECOMMENDATION_ALGORITHM,
    Progress,
    TrainedModel,
    TrainingConfig,
    bundle_header,
    id_arrays,
    trained_model,
)

# The blend's parts, in the order of its weights (see ``_Recommender``).
BLEND_PARTS = (
    "popularity",
    "popularity_recent",
    "owned",
    "repeat_orders",
    "repeat_share",
    "repeat_recency",
    "repeat_orders_since",
    "repeat_product",
    "affinity",
    "taste",
    "category",
    "repeat_count",
    "repeat_model",
)
# The parts the logistic regression of ``_fit_blend`` weighs. The last two are weighed after it, one of
# them at most, on the validation window's NDCG@10 (``_repeat_weight``): ``repeat_count`` (the orders
# that held the product, unscaled: own history's order), so that "the customer's products by how often
# they bought them, then the rest of the blend" is a blend the training can reach, and
# ``repeat_model`` (the repeat model's probability of buying the product again in the horizon), so that
# "the customer's products by how likely they are to buy each again" is.
LOGISTIC_PARTS = BLEND_PARTS[:-2]
# The weights tried for each: 0 (the fitted blend alone) to one that puts the products bought before
# above every other (for repeat_model: those with a probability of a few percent or more).
REPEAT_COUNT_WEIGHTS = (0.0, 0.1, 0.3, 1.0, 3.0, 1000.0)
REPEAT_MODEL_WEIGHTS = (1.0, 3.0, 10.0, 30.0, 1000.0)
# The parts that say something of a product the user never bought: the new-products blend's
# (``exclude_purchased``), fitted on those products alone.
NEW_PRODUCT_PARTS = ("popularity", "popularity_recent", "affinity", "taste", "category")
# What is added to the fitted new-products blend's affinity weight among its candidates
# (``_new_product_weights``; affinity is scaled to about [-1, 1]).
NEW_AFFINITY_WEIGHTS = (1.0, 3.0, 10.0)
RECOMMENDATION_TASTE_FACTORS = 24
# What the affinity part's SVD factorises: which products each customer bought ("owned"), not how much
# of each ("weights", log1p of the units).
AFFINITY_INPUT = "owned"
# Dense score rows are built this many cells at a time (32 MB of float64 per part).
_SCORE_CELLS = 1 << 22
# Holdout buyers the recommendation metrics are measured on (a fixed, seeded sample of them).
_EVALUATION_BUYERS = 20_000
# Window buyers the blend's weights are fitted on, uniformly drawn products per buyer, and the
# products a buyer had bought before that the fit sees at most (all of them, up to this many).
_BLEND_BUYERS = 20_000
_BLEND_NEGATIVES = 100
_BLEND_OWNED = 200
# Validation buyers the repeat_count weight is chosen on at most.
_REPEAT_BUYERS = 4_000
_PAIR_CHUNK = 200_000


@dataclass(frozen=True)
class Purchases:
    """What each user bought before ``as_of_day``, as users x products CSR matrices of one sparsity:
    ``weights`` (``log1p`` units), ``orders`` (how many distinct orders held the product) and
    ``days_since`` (days from the last purchase of it to ``as_of_day``), ``days_first`` (from the first)
    and ``orders_since`` (the user's orders placed after the last); ``user_orders`` is each user's
    distinct orders. Built from order lines without one object per line (:func:`purchases`)."""

    weights: sparse.csr_matrix
    orders: sparse.csr_matrix
    days_since: sparse.csr_matrix
    orders_since: sparse.csr_matrix
    user_orders: NDArray[np.float64]
    days_first: sparse.csr_matrix

    def rows(self, users: NDArray[np.int64]) -> Purchases:
        return Purchases(
            self.weights[users],
            self.orders[users],
            self.days_since[users],
            self.orders_since[users],
            self.user_orders[users],
            self.days_first[users],
        )

    def product_gap(self) -> NDArray[np.float64]:
        """Per product, the mean days between two purchases of it by one customer (over the customers
        who bought it in two orders or more; NaN for a product nobody bought twice)."""
        n_products = self.orders.shape[1]
        again = self.orders.data >= 2
        gaps = (self.days_first.data - self.days_since.data) / np.maximum(self.orders.data - 1.0, 1.0)
        total = np.bincount(self.orders.indices[again], gaps[again], minlength=n_products)
        count = np.bincount(self.orders.indices[again], minlength=n_products)
        return np.divide(total, count, out=np.full(n_products, np.nan), where=count > 0)

    def product_rebuy(self) -> NDArray[np.float64]:
        """Per product, the log of the smoothed share of its buyers who bought it in two orders or more
        (how much it is a product people buy again)."""
        n_products = self.orders.shape[1]
        buyers = np.bincount(self.orders.indices, minlength=n_products)
        again = np.bincount(self.orders.indices, self.orders.data >= 2, minlength=n_products)
        return np.asarray(np.log((again + 1.0) / (buyers + 2.0)), dtype=np.float64)


def purchases(shop: EncodedShop, as_of_day: float) -> Purchases:
    """The :class:`Purchases` of ``shop``'s lines before ``as_of_day``."""
    history = shop.history.before(as_of_day)
    n_users, n_products = shop.user_ids.size, shop.product_ids.size
    pair = history.user.astype(np.int64) * n_products + history.product
    keys, inverse = np.unique(pair, return_inverse=True)
    units = np.bincount(inverse, history.units, minlength=keys.size)
    last = np.full(keys.size, -np.inf)
    np.maximum.at(last, inverse, history.day)
    first = np.full(keys.size, np.inf)
    np.minimum.at(first, inverse, history.day)
    # Distinct (order, pair): a product on two lines of one order is bought in one order.
    order_pairs = np.unique(history.order_key.astype(np.int64) * keys.size + inverse)
    orders = np.bincount(order_pairs % keys.size, minlength=keys.size).astype(np.float64)
    del pair, inverse, order_pairs
    _, first_line = np.unique(history.order_key, return_index=True)
    order_user, order_day = history.user[first_line].astype(np.int64), history.day[first_line]
    user_orders = np.bincount(order_user, minlength=n_users).astype(np.float64)
    users, items = keys // n_products, (keys % n_products).astype(np.int32)
    # The user's orders after their last purchase of the product: orders sorted by user then time on
    # one number line (each user's days shifted past the previous user's), searched once per pair.
    first_day = float(order_day.min()) if order_day.size else 0.0
    stride = float(order_day.max() - first_day + 2.0) if order_day.size else 1.0
    line = np.sort(order_user * stride + (order_day - first_day))
    after = np.searchsorted(line, users * stride + (last - first_day), side="right")
    block_end = np.cumsum(user_orders)
    orders_since = block_end[users] - after
    indptr = np.searchsorted(users, np.arange(n_users + 1)).astype(np.int64)

    def matrix(values: NDArray[np.float64]) -> sparse.csr_matrix:
        return sparse.csr_matrix((values, items, indptr), shape=(n_users, n_products))

    return Purchases(
        weights=matrix(np.log1p(units)),
        orders=matrix(orders),
        days_since=matrix(np.maximum(as_of_day - last, 1e-6)),
        orders_since=matrix(orders_since.astype(np.float64)),
        user_orders=user_orders,
        days_first=matrix(np.maximum(as_of_day - first, 1e-6)),
    )


# The repeat model's features of a (customer, product they bought before) pair, in its column order:
# how often and how lately they bought it, against their own rhythm for it (the days between their
# purchases of it) and everyone's (the product's mean gap), their orders and tenure, and the product's
# rebuy share and recent sales.
REPEAT_FEATURES = (
    "orders",
    "days_since",
    "days_first",
    "orders_since",
    "user_orders",
    "share",
    "user_days_since",
    "user_days_first",
    "own_gap",
    "own_gap_ratio",
    "own_gap_ratio_ahead",
    "rate",
    "product_rebuy",
    "product_gap",
    "product_gap_ratio",
    "product_recent",
)
# Entries the repeat model's features are built for at once (16 float64 columns: 32 MB).
_REPEAT_CHUNK = 250_000


def repeat_features(
    rows: Purchases,
    product_rebuy: NDArray[np.float64],
    product_gap: NDArray[np.float64],
    product_recent: NDArray[np.float64],
    horizon_days: float,
) -> NDArray[np.float64]:
    """The :data:`REPEAT_FEATURES` of every entry of ``rows`` (the pairs of its history, in CSR order),
    one row per entry; NaN where a gap is undefined (a product bought once, or nobody bought twice)."""
    orders = rows.orders.data
    since, first = rows.days_since.data, rows.days_first.data
    user = np.repeat(np.arange(rows.orders.shape[0]), np.diff(rows.orders.indptr))
    items = rows.orders.indices
    # The user's last and first order as of the day: the nearest and farthest of their purchases.
    user_since = np.full(rows.orders.shape[0], np.inf)
    np.minimum.at(user_since, user, since)
    user_first = np.zeros(rows.orders.shape[0])
    np.maximum.at(user_first, user, first)
    own_gap = np.where(orders >= 2, (first - since) / np.maximum(orders - 1.0, 1.0), np.nan)
    own_gap = np.where(own_gap > 0, own_gap, np.where(orders >= 2, 0.5, np.nan))
    gap = product_gap[items]
    return np.column_stack(
        [
            orders,
            since,
            first,
            rows.orders_since.data,
            rows.user_orders[user],
            orders / np.maximum(rows.user_orders[user], 1.0),
            user_since[user],
            user_first[user],
            own_gap,
            since / own_gap,
            (since + horizon_days) / own_gap,
            orders / np.maximum(user_first[user], 1.0),
            product_rebuy[items],
            gap,
            since / np.where(gap > 0, gap, np.nan),
            product_recent[items],
        ]
    )


def repeat_scores(
    model: HistGradientBoostingClassifier | None,
    rows: Purchases,
    product_rebuy: NDArray[np.float64],
    product_gap: NDArray[np.float64],
    product_recent: NDArray[np.float64],
    horizon_days: float,
) -> sparse.csr_matrix:
    """``model``'s probability of buying again in the horizon for every entry of ``rows`` (on its
    sparsity; zeros without a model), the features built ``_REPEAT_CHUNK`` entries at a time."""
    values = np.zeros(rows.orders.nnz)
    if model is not None and values.size:
        indptr = rows.orders.indptr
        # Chunks of whole users (a user's features need all of their row), about _REPEAT_CHUNK entries.
        cuts = np.unique(np.searchsorted(indptr, np.arange(0, values.size, _REPEAT_CHUNK), side="right") - 1)
        bounds = np.append(cuts, indptr.size - 1)
        for first, last in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
            part = rows.rows(np.arange(first, last))
            features = repeat_features(part, product_rebuy, product_gap, product_recent, horizon_days)
            values[indptr[first] : indptr[last]] = model.predict_proba(features)[:, 1]
    return sparse.csr_matrix((values, rows.orders.indices, rows.orders.indptr), shape=rows.orders.shape)


def _fit_repeat(
    shop: SplitShop, as_of_day: float, config: TrainingConfig
) -> HistGradientBoostingClassifier | None:
    """The repeat model as of ``as_of_day``: gradient boosting of "bought again in ``[as_of_day - H,
    as_of_day)``" on the :data:`REPEAT_FEATURES` of every pair bought before that window (the pairs of a
    seeded draw of customers, at most ``config.max_repeat_pairs``). None when that history is empty or
    the window holds fewer than ``config.min_repeat_positives`` re-purchases (or pairs not bought
    again): too few to learn from, the count of orders ranks them instead."""
    horizon = float(shop.horizon_days)
    start = as_of_day - horizon
    before = purchases(shop, start)
    lengths = np.diff(before.orders.indptr)
    users = np.flatnonzero(lengths)
    if users.size == 0:
        return None
    users = np.random.default_rng(config.seed).permutation(users)
    users = np.sort(users[: max(1, int(np.searchsorted(np.cumsum(lengths[users]), config.max_repeat_pairs)))])
    rows = before.rows(users)
    window = shop.history.between(start, as_of_day)
    n_products = shop.product_ids.size
    bought = np.unique(window.user.astype(np.int64) * n_products + window.product)
    entry_user = np.repeat(users.astype(np.int64), np.diff(rows.orders.indptr))
    labels = np.isin(entry_user * n_products + rows.orders.indices, bought).astype(np.int64)
    positives = int(labels.sum())
    if min(positives, labels.size - positives) < max(1, config.min_repeat_positives):
        return None
    features = repeat_features(
        rows, before.product_rebuy(), before.product_gap(), log_popularity(shop, start, horizon), horizon
    )
    return repeat_estimator(config.seed).fit(features, labels)


def repeat_estimator(seed: int) -> HistGradientBoostingClassifier:
    """The repeat model's gradient boosting, unfitted (``benchmarks.real_shops`` fits the same one on a
    test window's own answers, for the ceiling of these features)."""
    return HistGradientBoostingClassifier(
        learning_rate=0.05, max_iter=300, max_leaf_nodes=15, random_state=seed
    )


@dataclass(frozen=True)
class _Recommender:
    """The recommendation model as of one day: per product its popularity (``log1p`` of the units
    sold before, ever and in the last ``recent_days``), SVD item factors of the purchase matrix, taste
    factors of what is bought together, category and the categories' shares; and the blends' weights
    over :data:`BLEND_PARTS` and, for products the user never bought, :data:`NEW_PRODUCT_PARTS`.

    A user's score for a product, from what they bought (:class:`Purchases`): ``popularity[p]`` and
    ``popularity_recent[p]``; the repeat parts, zero for a product they never bought: ``owned`` (1),
    ``repeat_orders`` (``log1p`` of the orders that held it), ``repeat_share`` (the share of their
    orders that held it), ``repeat_recency`` (``log1p`` of the days since they last bought it),
    ``repeat_count`` (the orders, unscaled) and ``repeat_model`` (``repeat_model``'s probability that
    they buy it again in the horizon, :func:`repeat_scores`);
    ``affinity`` (their history ``w @ F`` against ``F[p]``, over a global scale), ``taste`` (the
    unit-length ``w @ T`` against ``T[p]``) and ``category`` (the smoothed lift of their share of the
    product's category over the shop's); weighted and summed. Nothing is per user but the history row,
    so scoring never holds users x products beyond a chunk.
    """

    svd: TruncatedSVD
    item_factors: NDArray[np.float64]
    affinity_scale: float
    taste: NDArray[np.float64]
    popularity: NDArray[np.float64]
    popularity_recent: NDArray[np.float64]
    product_rebuy: NDArray[np.float64]
    product_category: NDArray[np.int64]
    category_share: NDArray[np.float64]
    weights: NDArray[np.float64]
    new_weights: NDArray[np.float64]
    product_gap: NDArray[np.float64] | None = None
    repeat_model: HistGradientBoostingClassifier | None = None
    horizon_days: float = 0.0
    # What ``affinity`` factorises and multiplies: "owned" (1 for each product the user bought) or
    # "weights" (``log1p`` of the units, the models trained before it).
    affinity_input: str = "weights"

    def affinity_rows(self, history: sparse.csr_matrix) -> sparse.csr_matrix:
        """The rows ``affinity`` multiplies: ``history`` itself, or 1 where it is not 0."""
        return (history > 0).astype(np.float64) if self.affinity_input == "owned" else history

    def repeat_scores(self, rows: Purchases) -> sparse.csr_matrix:
        """The repeat model's probability that each user of ``rows`` buys each product they bought
        before again in the horizon, on the history's sparsity (0 everywhere without a model)."""
        gap = self.product_gap if self.product_gap is not None else np.full(self.product_rebuy.size, np.nan)
        return repeat_scores(
            self.repeat_model, rows, self.product_rebuy, gap, self.popularity_recent, self.horizon_days
        )

    def part(self, name: str, rows: Purchases) -> NDArray[np.float64]:
        """Part ``name`` of the users of ``rows`` against every product (rows x products)."""
        shape = rows.weights.shape
        if name in ("popularity", "popularity_recent"):
            return np.broadcast_to(getattr(self, name), shape)
        if name == "owned":
            return (rows.weights > 0).toarray().astype(np.float64)
        if name == "repeat_orders":
            return np.log1p(rows.orders.toarray())
        if name == "repeat_count":
            return np.asarray(rows.orders.toarray(), dtype=np.float64)
        if name == "repeat_model":
            return np.asarray(self.repeat_scores(rows).toarray(), dtype=np.float64)
        if name == "repeat_share":
            return rows.orders.toarray() / np.maximum(rows.user_orders, 1.0)[:, None]
        if name == "repeat_recency":
            return np.log1p(rows.days_since.toarray())
        if name == "repeat_orders_since":
            return np.log1p(rows.orders_since.toarray())
        if name == "repeat_product":
            return (rows.weights > 0).toarray() * self.product_rebuy
        if name == "affinity":
            embedding = np.asarray(self.affinity_rows(rows.weights) @ self.item_factors)
            return embedding @ self.item_factors.T / self.affinity_scale
        if name == "taste":
            taste = np.asarray(rows.weights @ self.taste)
            norms = np.linalg.norm(taste, axis=1, keepdims=True)
            return np.divide(taste, norms, out=np.zeros_like(taste), where=norms > 0) @ self.taste.T
        lift = category_lift(
            _category_sums(rows.weights, self.product_category, self.category_share.size),
            np.asarray(rows.weights.sum(axis=1)).ravel(),
            self.category_share,
            CATEGORY_PRIOR_UNITS,
        )
        return lift[:, self.product_category]

    def scores(self, rows: Purchases, *, new_only: bool = False) -> NDArray[np.float64]:
        """The blended scores of the users of ``rows`` for every product (rows x products); with
        ``new_only`` the new-products blend, and the products each user bought at ``-inf``."""
        names, weights = (NEW_PRODUCT_PARTS, self.new_weights) if new_only else (BLEND_PARTS, self.weights)
        total = np.zeros(rows.weights.shape)
        for weight, name in zip(weights.tolist(), names, strict=True):
            if weight:
                total += weight * self.part(name, rows)
        if new_only:
            total[rows.weights.nonzero()] = -np.inf
        return total

    def pair_parts(
        self, bought: Purchases, users: NDArray[np.int64], products: NDArray[np.int64]
    ) -> NDArray[np.float64]:
        """The parts at the pairs ``(users[k], products[k])``, columns in :data:`BLEND_PARTS` order
        (computed ``_PAIR_CHUNK`` pairs at a time: each pair needs its user's factors)."""
        return np.vstack(
            [
                self._pair_parts(
                    bought, users[start : start + _PAIR_CHUNK], products[start : start + _PAIR_CHUNK]
                )
                for start in range(0, users.size, _PAIR_CHUNK)
            ]
            or [np.zeros((0, len(BLEND_PARTS)))]
        )

    def _pair_parts(
        self, bought: Purchases, users: NDArray[np.int64], products: NDArray[np.int64]
    ) -> NDArray[np.float64]:
        unique, row_of = np.unique(users, return_inverse=True)
        rows = bought.weights[unique]
        embedding = np.asarray(self.affinity_rows(rows) @ self.item_factors)[row_of]
        taste = np.asarray(rows @ self.taste)
        norms = np.linalg.norm(taste, axis=1, keepdims=True)
        taste = np.divide(taste, norms, out=np.zeros_like(taste), where=norms > 0)[row_of]
        lift = category_lift(
            _category_sums(rows, self.product_category, self.category_share.size),
            np.asarray(rows.sum(axis=1)).ravel(),
            self.category_share,
            CATEGORY_PRIOR_UNITS,
        )
        orders = np.asarray(bought.orders[users, products]).ravel()
        repeat = np.asarray(self.repeat_scores(bought.rows(unique))[row_of, products]).ravel()
        days_since = np.asarray(bought.days_since[users, products]).ravel()
        orders_since = np.asarray(bought.orders_since[users, products]).ravel()
        columns = {
            "popularity": self.popularity[products],
            "popularity_recent": self.popularity_recent[products],
            "owned": (orders > 0).astype(np.float64),
            "repeat_orders": np.log1p(orders),
            "repeat_count": orders.astype(np.float64),
            "repeat_model": repeat,
            "repeat_share": orders / np.maximum(bought.user_orders[users], 1.0),
            "repeat_recency": np.log1p(days_since),
            "repeat_orders_since": np.log1p(orders_since),
            "repeat_product": (orders > 0) * self.product_rebuy[products],
            "affinity": np.einsum("ij,ij->i", embedding, self.item_factors[products]) / self.affinity_scale,
            "taste": np.einsum("ij,ij->i", taste, self.taste[products]),
            "category": lift[row_of, self.product_category[products]],
        }
        return np.column_stack([columns[name] for name in BLEND_PARTS])


def _category_sums(
    rows: sparse.csr_matrix, product_category: NDArray[np.int64], n_categories: int
) -> NDArray[np.float64]:
    """Users x categories: the history weight of each user in each category."""
    indicator = sparse.csr_matrix(
        (np.ones(product_category.size), (np.arange(product_category.size), product_category)),
        shape=(product_category.size, n_categories),
    )
    return np.asarray((rows @ indicator).toarray())


def _train_recommendation(
    shop: SplitShop, name: str, config: TrainingConfig, trained_at: datetime, report: Progress
) -> TrainedModel:
    rng = np.random.default_rng(config.seed)
    report("tune")
    # The blends' weights are learnt on the window before the cutoff, never on the holdout.
    weights, new_weights = _fit_blend(shop, _fit_parts(shop, shop.train_day, config), rng)
    report("fit")
    recommender = replace(_fit_parts(shop, shop.cutoff_day, config), weights=weights, new_weights=new_weights)

    report("evaluate")
    metrics = _evaluate_recommender(shop, recommender, rng)

    report("refit")
    served_model = _served_repeat_model(shop, recommender, config)
    # The joblib artifact: the fitted scikit-learn SVD and the blend around it, with the repeat model
    # served. Nothing read the fit the metrics judged, so it is not kept: ``repeat_model_refitted`` says
    # whether the metrics describe another fit, the one as of ``training_cutoff`` (``_fit_repeat`` at
    # the cutoff, deterministic with ``config.seed``, gives it again).
    fitted = {
        "svd": recommender.svd,
        "repeat_model": served_model,
        "repeat_model_refitted": served_model is not recommender.repeat_model,
        "affinity_scale": recommender.affinity_scale,
        "blend_parts": list(BLEND_PARTS),
        "blend_weights": weights.tolist(),
        "new_product_parts": list(NEW_PRODUCT_PARTS),
        "new_product_weights": new_weights.tolist(),
    }

    report("export")
    serving = purchases(shop, shop.end_day)
    # The served repeat model's probabilities as of the end of the data, one per history entry, so that
    # serving reads them and never walks its trees.
    served_repeat = repeat_scores(
        served_model,
        serving,
        serving.product_rebuy(),
        serving.product_gap(),
        log_popularity(shop, shop.end_day, shop.horizon_days),
        float(shop.horizon_days),
    ).data
    taste = np.asarray(serving.weights @ recommender.taste)
    header = bundle_header(shop, name, "recommendation", RECOMMENDATION_ALGORITHM, trained_at, None)
    header |= {
        "affinity_scale": recommender.affinity_scale,
        "affinity_input": recommender.affinity_input,
        "blend_parts": list(BLEND_PARTS),
        "blend_weights": weights.tolist(),
        "new_product_parts": list(NEW_PRODUCT_PARTS),
        "new_product_weights": new_weights.tolist(),
        "category_prior": CATEGORY_PRIOR_UNITS,
    }
    bundle = write_bundle(
        header,
        {
            **id_arrays(shop),
            "model__item_factors": recommender.item_factors.astype(np.float64),
            "model__taste": recommender.taste.astype(np.float64),
            "model__popularity": log_popularity(shop, shop.end_day),
            "model__popularity_recent": log_popularity(shop, shop.end_day, shop.horizon_days),
            "model__product_rebuy": serving.product_rebuy(),
            "model__product_category": shop.product_category.astype(np.int64),
            "model__category_share": _category_share(
                serving.weights, shop.product_category, len(shop.categories)
            ),
            "model__history_indptr": serving.weights.indptr.astype(np.int64),
            "model__history_items": serving.weights.indices.astype(np.int64),
            "model__history_weights": serving.weights.data.astype(np.float64),
            "model__history_orders": serving.orders.data.astype(np.float64),
            "model__history_days_since": serving.days_since.data.astype(np.float64),
            "model__history_orders_since": serving.orders_since.data.astype(np.float64),
            "model__history_repeat": served_repeat.astype(np.float64),
            "model__user_orders": serving.user_orders,
            "model__user_taste_norm": np.linalg.norm(taste, axis=1),
        },
    )
    del taste
    distributions = {
        feature: reference_distribution(values)
        for feature, values in recommendation_features(shop, shop.end_day).items()
    }
    return trained_model(
        shop, name, "recommendation", config, trained_at, metrics, distributions, fitted, bundle, []
    )


def _served_repeat_model(
    shop: SplitShop, recommender: _Recommender, config: TrainingConfig
) -> HistGradientBoostingClassifier | None:
    """The repeat model the bundle's probabilities come from: refitted as of the end of the data (it
    learns "bought again in the holdout" from the pairs before it), the usual refit after validation.

    The quality gate and the holdout metrics judge ``recommender``'s repeat model, fitted as of the
    cutoff (its window ends ``H`` days before the holdout); the served one learns the same question on
    the latest window, a window the served model would otherwise never learn from (on The Complete
    Journey's test, 0.5280 against 0.5226 NDCG@10, docs/model-quality.md). The evaluated fit is served
    when the blend does not weigh the repeat model (nothing to refit), when there is none (the refit
    would be a model never evaluated) or when the latest window has too few re-purchases to learn from
    (``_fit_repeat`` returns None)."""
    if recommender.repeat_model is None or not recommender.weights[BLEND_PARTS.index("repeat_model")]:
        return recommender.repeat_model
    return _fit_repeat(shop, shop.end_day, config) or recommender.repeat_model


def _fit_parts(shop: SplitShop, as_of_day: float, config: TrainingConfig) -> _Recommender:
    """The recommendation model's per-product parts as of ``as_of_day`` (weights left at 1)."""
    matrix = interaction_matrix(shop, shop.history.before(as_of_day))
    owned = (matrix > 0).astype(np.float64) if AFFINITY_INPUT == "owned" else matrix
    components = max(1, min(config.svd_components, min(matrix.shape) - 1))
    svd = TruncatedSVD(n_components=components, random_state=config.seed).fit(owned)
    factors = np.asarray(svd.components_.T, dtype=np.float64)
    # A global scale (not per user) keeps one user's scores comparable across products and users,
    # taken on a fixed sample of users with a history so it costs the same at any size.
    with_history = np.flatnonzero(matrix.getnnz(axis=1))
    # (at most 2,000 users, fewer for a large catalogue: the sample's dense scores are users x products)
    most = max(1, min(2_000, _SCORE_CELLS // max(matrix.shape[1], 1)))
    sample = np.random.default_rng(config.seed).choice(
        with_history, min(with_history.size, most), replace=False
    )
    affinity = np.asarray(owned[np.sort(sample)] @ factors) @ factors.T
    scale = float(np.quantile(np.abs(affinity), 0.99)) if affinity.size else 1.0
    bought = purchases(shop, as_of_day)
    return _Recommender(
        svd=svd,
        item_factors=factors,
        affinity_scale=scale or 1.0,
        taste=taste_factors(shop, as_of_day, config, RECOMMENDATION_TASTE_FACTORS),
        popularity=log_popularity(shop, as_of_day),
        popularity_recent=log_popularity(shop, as_of_day, shop.horizon_days),
        product_rebuy=bought.product_rebuy(),
        product_category=shop.product_category.astype(np.int64),
        category_share=_category_share(matrix, shop.product_category, len(shop.categories)),
        weights=np.ones(len(BLEND_PARTS)),
        new_weights=np.ones(len(NEW_PRODUCT_PARTS)),
        product_gap=bought.product_gap(),
        repeat_model=_fit_repeat(shop, as_of_day, config),
        horizon_days=float(shop.horizon_days),
        affinity_input=AFFINITY_INPUT,
    )


def log_popularity(shop: EncodedShop, as_of_day: float, days: float | None = None) -> NDArray[np.float64]:
    """``log1p`` of the units of each product sold before ``as_of_day`` (in the ``days`` before it)."""
    past = (
        shop.history.before(as_of_day) if days is None else shop.history.between(as_of_day - days, as_of_day)
    )
    return np.log1p(np.bincount(past.product, past.units, minlength=shop.product_ids.size))


def _category_share(
    matrix: sparse.csr_matrix, product_category: NDArray[np.int64], n_categories: int
) -> NDArray[np.float64]:
    """Each category's share of the history weight of all users (zeros when nothing was bought)."""
    sold = np.bincount(product_category[matrix.indices], matrix.data, minlength=n_categories)
    total = float(sold.sum())
    return sold / total if total > 0 else sold


def _fit_blend(
    shop: SplitShop, parts: _Recommender, rng: np.random.Generator
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The blends' weights: logistic regressions of "bought in the window before the cutoff" on the
    parts as of its start, over the window's buyers (a fixed sample of at most ``_BLEND_BUYERS``).

    Each buyer contributes the products they bought in the window, the products they had bought
    before (at most ``_BLEND_OWNED``, drawn) and ``_BLEND_NEGATIVES`` uniformly drawn products, each
    pair weighted by the inverse of the rate at which its kind was drawn, so the fit is the one over
    all of the buyer's products: the repeat parts learn which of their products a customer buys
    again, the others which products they buy that they never had. The new-products blend is fitted
    on the products the buyer had never bought alone. Ranking a user's products by a fitted linear
    score ranks them by the modelled probability."""
    before = purchases(shop, shop.train_day)
    window = shop.history.between(shop.train_day, shop.cutoff_day)
    n_products = shop.product_ids.size
    bought = np.unique(window.user.astype(np.int64) * n_products + window.product)
    buyers = np.unique(bought // n_products)
    if buyers.size > _BLEND_BUYERS:
        buyers = np.sort(rng.choice(buyers, _BLEND_BUYERS, replace=False))
        bought = bought[np.isin(bought // n_products, buyers)]
    # What the buyers had bought before, at most _BLEND_OWNED each (a uniform draw of the rest).
    owned_rows = before.weights[buyers].tocoo()
    owned = buyers[owned_rows.row].astype(np.int64) * n_products + owned_rows.col
    owned_count = np.diff(before.weights.indptr)[buyers].astype(np.float64)
    rank = rng.random(owned.size)
    keep = np.zeros(owned.size, dtype=bool)
    order = np.lexsort((rank, owned_rows.row))
    position = np.arange(owned.size) - np.searchsorted(owned_rows.row[order], owned_rows.row[order])
    keep[order[position < _BLEND_OWNED]] = True
    owned_weight = owned_count / np.minimum(owned_count, _BLEND_OWNED).clip(min=1)
    drawn = np.repeat(buyers, _BLEND_NEGATIVES) * n_products + rng.integers(
        0, n_products, buyers.size * _BLEND_NEGATIVES
    )
    all_owned = np.sort(owned)
    drawn = np.unique(drawn[~np.isin(drawn, all_owned) & ~np.isin(drawn, bought)])
    kept_owned = np.setdiff1d(owned[keep], bought)
    new_bought = np.setdiff1d(bought, all_owned)
    keys = np.concatenate([bought, kept_owned, drawn])
    labels = np.concatenate([np.ones(bought.size), np.zeros(kept_owned.size + drawn.size)])
    buyer_of = np.searchsorted(buyers, keys // n_products)
    drawn_count = np.bincount(np.searchsorted(buyers, drawn // n_products), minlength=buyers.size)
    unowned_weight = (n_products - owned_count) / np.maximum(drawn_count, 1)
    weights = np.concatenate(
        [
            np.ones(bought.size),
            owned_weight[buyer_of[bought.size : bought.size + kept_owned.size]],
            unowned_weight[buyer_of[bought.size + kept_owned.size :]],
        ]
    )
    features = parts.pair_parts(before, keys // n_products, keys % n_products)
    if labels.min() == labels.max():
        return np.ones(len(BLEND_PARTS)), np.ones(len(NEW_PRODUCT_PARTS))
    logistic = [BLEND_PARTS.index(name) for name in LOGISTIC_PARTS]
    blend = np.zeros(len(BLEND_PARTS))
    blend[logistic] = _linear_ranker(features[:, logistic], labels, weights)
    name, weight = _repeat_weight(replace(parts, weights=blend), before, window, buyers, shop)
    blend[BLEND_PARTS.index(name)] = weight
    new_rows = np.concatenate(
        [np.isin(bought, new_bought), np.zeros(kept_owned.size, dtype=bool), np.ones(drawn.size, dtype=bool)]
    )
    columns = [BLEND_PARTS.index(name) for name in NEW_PRODUCT_PARTS]
    new_labels = labels[new_rows]
    if new_labels.min() == new_labels.max():
        return blend, blend[columns]
    new_blend = _linear_ranker(features[new_rows][:, columns], new_labels, np.ones(new_labels.size))
    return blend, _new_product_weights(parts, new_blend, before, window, buyers, shop)


def _new_product_weights(
    parts: _Recommender,
    fitted: NDArray[np.float64],
    before: Purchases,
    window: History,
    buyers: NDArray[np.int64],
    shop: SplitShop,
) -> NDArray[np.float64]:
    """The new-products blend's weights (over :data:`NEW_PRODUCT_PARTS`) with the best NDCG@10 of the
    products each buyer had never bought, on the window before the cutoff (never the holdout), over its
    buyers who had bought before and bought something new there (at most ``_REPEAT_BUYERS``): the
    logistic regression's ``fitted`` weights, those with :data:`NEW_AFFINITY_WEIGHTS` added to
    ``affinity``, or ``affinity`` alone; a tie keeps the earlier candidate.

    The logistic regression is fitted pointwise on drawn products, where popularity says most; what
    ranks a customer's top ten new products is mostly their affinity (on The Complete Journey's
    validation split a 32-factor SVD of who bought what ranked new products at NDCG@10 0.098 alone,
    against the fitted blend's 0.058 and implicit's ALS's 0.083)."""
    truth = interaction_matrix(shop, window)
    truth = truth - truth.multiply(before.weights > 0)
    truth.eliminate_zeros()
    users = buyers[(before.user_orders[buyers] > 0) & (truth[buyers].getnnz(axis=1) > 0)]
    if users.size > _REPEAT_BUYERS:  # a fixed, seeded sample of them
        users = np.sort(np.random.default_rng(0).choice(users, _REPEAT_BUYERS, replace=False))
    if users.size == 0:
        return fitted
    at = NEW_PRODUCT_PARTS.index("affinity")
    alone = np.zeros(len(NEW_PRODUCT_PARTS))
    alone[at] = 1.0
    candidates = [fitted, *[fitted + weight * alone for weight in NEW_AFFINITY_WEIGHTS], alone]
    sums = [_RankingSums() for _ in candidates]
    chunk = max(1, _SCORE_CELLS // max(shop.product_ids.size, 1))
    new_parts = replace(parts, new_weights=fitted)
    for start in range(0, users.size, chunk):
        rows = before.rows(users[start : start + chunk])
        blended = new_parts.scores(rows, new_only=True)
        affinity = parts.part("affinity", rows)
        relevant = truth[users[start : start + chunk]]
        for weights, ranking in zip(candidates[:-1], sums[:-1], strict=True):
            ranking.add(blended + (weights[at] - fitted[at]) * affinity, relevant)
        affinity[np.isinf(blended)] = -np.inf
        sums[-1].add(affinity, relevant)
    ndcg = [ranking.means("")["ndcg_at_10"] for ranking in sums]
    return candidates[int(np.argmax(ndcg))]


def _repeat_weight(
    parts: _Recommender, before: Purchases, window: History, buyers: NDArray[np.int64], shop: SplitShop
) -> tuple[str, float]:
    """The part (``repeat_count`` or ``repeat_model``) and its weight with the best NDCG@10 on the
    window before the cutoff (the validation window; never the holdout), over its buyers who had bought
    before (at most ``_REPEAT_BUYERS``, each scored against every product), among
    :data:`REPEAT_COUNT_WEIGHTS` and :data:`REPEAT_MODEL_WEIGHTS` (the latter only with a repeat model);
    a tie keeps the earlier candidate (``repeat_count`` before ``repeat_model``, smaller weights first)."""
    n_products = shop.product_ids.size
    truth = interaction_matrix(shop, window)
    users = buyers[before.user_orders[buyers] > 0]
    if users.size > _REPEAT_BUYERS:  # a fixed, seeded sample of them
        users = np.sort(np.random.default_rng(0).choice(users, _REPEAT_BUYERS, replace=False))
    if users.size == 0:
        return "repeat_count", 0.0
    candidates = [("repeat_count", weight) for weight in REPEAT_COUNT_WEIGHTS]
    if parts.repeat_model is not None:
        candidates += [("repeat_model", weight) for weight in REPEAT_MODEL_WEIGHTS]
    sums = [_RankingSums() for _ in candidates]
    chunk = max(1, _SCORE_CELLS // max(n_products, 1))
    for start in range(0, users.size, chunk):
        rows = before.rows(users[start : start + chunk])
        blended = parts.scores(rows)
        values = {name: parts.part(name, rows) for name in ("repeat_count", "repeat_model")}
        relevant = truth[users[start : start + chunk]]
        for (name, weight), ranking in zip(candidates, sums, strict=True):
            ranking.add(blended + weight * values[name], relevant)
    ndcg = [ranking.means("")["ndcg_at_10"] for ranking in sums]
    return candidates[int(np.argmax(ndcg))]


def _linear_ranker(
    features: NDArray[np.float64], labels: NDArray[np.float64], weights: NDArray[np.float64]
) -> NDArray[np.float64]:
    """The weights of a logistic regression on standardised ``features`` (sample ``weights``), in the
    units of the raw features (a part that never varies gets 0)."""
    mean = np.average(features, axis=0, weights=weights)
    scale = np.sqrt(np.average((features - mean) ** 2, axis=0, weights=weights))
    varies = scale > 1e-12
    standard = (features[:, varies] - mean[varies]) / scale[varies]
    model = LogisticRegression(C=1.0, max_iter=2000).fit(
        standard, labels, sample_weight=weights * (weights.size / weights.sum())
    )
    coefficients = np.zeros(features.shape[1])
    coefficients[varies] = model.coef_[0] / scale[varies]
    return coefficients


def _evaluate_recommender(
    shop: SplitShop, recommender: _Recommender, rng: np.random.Generator
) -> dict[str, float]:
    """Ranking metrics on the holdout's buyers (a fixed sample of at most ``_EVALUATION_BUYERS``),
    scored in chunks: of the model, of the best sellers (units in the 90 days before the cutoff), and of
    each buyer's own history (the products they bought in the most orders, then the best sellers),
    over any product; and over only the products each buyer never bought (``_new``: the model's
    new-products blend against the best sellers they never bought)."""
    bought = purchases(shop, shop.cutoff_day)
    holdout = interaction_matrix(shop, shop.history.between(shop.cutoff_day, shop.end_day))
    buyers = np.flatnonzero(holdout.getnnz(axis=1))
    if buyers.size > _EVALUATION_BUYERS:
        buyers = np.sort(rng.choice(buyers, _EVALUATION_BUYERS, replace=False))
    popularity = _popularity(shop, shop.cutoff_day)
    sums = {name: _RankingSums() for name in ("", "popularity_", "own_history_", "new_", "popularity_new_")}
    chunk = max(1, _SCORE_CELLS // max(shop.product_ids.size, 1))
    for start in range(0, buyers.size, chunk):
        users = buyers[start : start + chunk]
        rows = bought.rows(users)
        truth = holdout[users]
        sums[""].add(recommender.scores(rows), truth)
        best_sellers = np.broadcast_to(popularity, (users.size, popularity.size))
        sums["popularity_"].add(best_sellers, truth)
        sums["own_history_"].add(rows.orders.toarray() + 0.5 * best_sellers, truth)
        # New products only: the buyers with a holdout purchase of a product they never bought.
        new_truth = truth - truth.multiply(rows.weights > 0)
        new_truth.eliminate_zeros()
        with_new = np.flatnonzero(new_truth.getnnz(axis=1))
        if with_new.size:
            owned = rows.weights[with_new].nonzero()
            sums["new_"].add(recommender.scores(rows.rows(with_new), new_only=True), new_truth[with_new])
            unowned_sellers = np.array(best_sellers[with_new], dtype=np.float64)
            unowned_sellers[owned] = -np.inf
            sums["popularity_new_"].add(unowned_sellers, new_truth[with_new])
    metrics = {
        **sums[""].means(""),
        **sums["popularity_"].means("popularity_"),
        **sums["own_history_"].means("own_history_"),
    }
    metrics["ndcg_at_10_new"] = sums["new_"].means("")["ndcg_at_10"]
    metrics["popularity_ndcg_at_10_new"] = sums["popularity_new_"].means("")["ndcg_at_10"]
    metrics["holdout_users"] = float(buyers.size)
    metrics["holdout_users_new"] = float(sums["new_"].users)
    return metrics


class _RankingSums:
    """Sums of precision@k, recall@k and NDCG@k over chunks of users, for their means."""

    def __init__(self, k: int = 10) -> None:
        self.k = k
        self.users = 0
        self.sums = np.zeros(3)

    def add(self, scores: np.ndarray, relevant: sparse.csr_matrix) -> None:
        metrics = _ranking_metrics(scores, relevant, "", self.k)
        n = relevant.shape[0]
        self.users += n
        self.sums += n * np.array([metrics[f"{m}_at_{self.k}"] for m in ("precision", "recall", "ndcg")])

    def means(self, prefix: str) -> dict[str, float]:
        values = self.sums / max(self.users, 1)
        return {
            f"{prefix}{m}_at_{self.k}": float(v)
            for m, v in zip(("precision", "recall", "ndcg"), values.tolist(), strict=True)
        }


def recommendation_features(shop: EncodedShop, as_of_day: float) -> dict[str, NDArray[np.float64]]:
    """The drift-reference features of a recommendation model, one value per user as of ``as_of_day``:
    ``user_history_items``, how many distinct products the user had bought."""
    matrix = interaction_matrix(shop, shop.history.before(as_of_day))
    return {"user_history_items": np.diff(matrix.indptr).astype(np.float64)}


def _popularity(shop: SplitShop, as_of_day: float) -> NDArray[np.float64]:
    """Units sold per product in the last 90 days, log-scaled to [0, 1]."""
    recent = shop.history.between(as_of_day - 90, as_of_day)
    counts = np.log1p(np.bincount(recent.product, recent.units, minlength=shop.product_ids.size))
    return counts / max(float(counts.max()), 1e-12)


def _ranking_metrics(
    scores: np.ndarray, relevant: sparse.csr_matrix, prefix: str, k: int = 10
) -> dict[str, float]:
    """Mean precision@k, recall@k and binary NDCG@k of score rows against the holdout purchases. A
    shop with fewer than ``k`` products has all of them ranked (precision still counts ``k`` places)."""
    truth = (relevant > 0).toarray()
    shown = min(k, scores.shape[1])
    best = np.argpartition(-scores, shown - 1, axis=1)[:, :shown]
    order = np.argsort(-np.take_along_axis(scores, best, axis=1), axis=1, kind="stable")
    ranked = np.take_along_axis(best, order, axis=1)
    hits = np.take_along_axis(truth, ranked, axis=1).astype(np.float64)
    n_relevant = truth.sum(axis=1)
    discounts = 1.0 / np.log2(np.arange(2, shown + 2))
    ideal = np.array([discounts[: min(n, shown)].sum() for n in n_relevant])
    return {
        f"{prefix}precision_at_{k}": float((hits.sum(axis=1) / k).mean()),
        f"{prefix}recall_at_{k}": float((hits.sum(axis=1) / n_relevant).mean()),
        f"{prefix}ndcg_at_{k}": float(((hits @ discounts) / ideal).mean()),
    }
