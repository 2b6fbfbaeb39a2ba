"""Purchase-likelihood features for (user, product) pairs, computed with numpy only.

Training and serving both call :func:`pair_features` on a :class:`FeatureState`, so a feature is defined
in exactly one place and the served model sees the same numbers it was trained on (no train/serve skew).
This module is imported by the scoring bundle, so it must never import scikit-learn, scipy or pandas.

A ``FeatureState`` is a snapshot of the shop's order history as of one instant (``as_of_day``): per-user
and per-product aggregates, plus sparse (product, user) and (category, user) aggregates keyed by
``row * n_users + user`` in sorted ``int64`` arrays, so a pair lookup is one vectorised ``searchsorted``.

Features (all numeric, in this order):

======================================  ======================================================  ========
name                                    meaning                                                 fallback
======================================  ======================================================  ========
user_days_since_last_order              days from the user's last order to ``as_of``            730
user_orders_90d                         the user's orders in the last 90 days                   0
user_orders_total                       the user's orders ever                                  0
user_spend_90d                          the user's spend in the last 90 days                    0
user_spend_total                        the user's spend ever                                   0
product_purchases_30d                   units of the product sold in the last 30 days          0
product_purchases_90d                   units of the product sold in the last 90 days          0
product_purchases_total                 units of the product sold ever                          0
product_price                           the product's list price                                median
user_category_purchases_90d             units the user bought in the product's category, 90d   0
user_category_share                     share of the user's units that were in that category   0
user_product_purchases                  units of this product the user bought ever             0
user_product_days_since_last            days since the user last bought this product            730
user_days_since_first_order             customer age: days since the user's first order         0
user_mean_days_between_orders           mean gap between the user's orders (2+ orders)          730
user_spend_trend_90d                    spend in the last 90 days minus the 90 days before      0
user_product_affinity                   the user's taste for the product (see below)            0
user_category_lift                      how much more the user buys in the product's category   0
                                        than the shop does (log ratio, see below)
user_orders_30d                         the user's orders in the last 30 days                   0
user_days_between_last_orders           gap between the user's last two orders (2+ orders)      730
user_gap_trend                          log of the last gap over the mean gap: above 0, the     0
                                        customer is slowing down; below, speeding up
======================================  ======================================================  ========

Taste: training learns a few product factors (``product_taste``) from which products are bought by
the same customers (before the training window): the positive pointwise mutual information of two
products being bought by one customer, factorised (see ``shared.ml.taste``). A user's taste is the
unit-length, units-weighted mean of the factors of what they bought, and ``user_product_affinity`` is
its dot product with the product's factors.

Category lift: ``log((units in the category + a * share) / (units + a)) - log(share)``, where ``share``
is the category's share of all units the shop sold and ``a`` (:data:`CATEGORY_PRIOR_UNITS`) is a prior
of a few units at the shop's share, so a customer with one purchase is not taken for a specialist; 0
for a customer without orders. ``user_category_share`` is the same ratio unsmoothed and unscaled; the lift
is on the log scale a linear model needs (purchase rates multiply).

The customer-lifetime features are the age, the purchase rhythm (mean gap, last gap and its trend) and
the spend trend; :data:`CUSTOMER_FEATURES` (the features of the user alone) are what the purchase
model's buyer part sees (``shared.ml.purchase_training``). A bundle keeps
the feature names it was trained on and :func:`pair_features` computes exactly those, so a model
trained before a feature was added keeps scoring as it was trained.

"Fallback" is the value used when it cannot be computed (a product unknown at training time) or the
caller supplies a missing/non-finite override: counts fall back to 0 (nothing observed), recencies to
:data:`NEVER_DAYS` (never happened), and the price to the training median.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

# Recency given to "never happened": two years, far beyond the windows the features look at.
NEVER_DAYS = 730.0
RECENT_DAYS = 90.0
TREND_DAYS = 30.0
# The category lift's prior: this many units bought at the shop's category shares.
CATEGORY_PRIOR_UNITS = 3.0
# Order lines whose taste factors are summed at once (see ``_user_taste``).
_TASTE_CHUNK_LINES = 1_000_000

FEATURE_NAMES: tuple[str, ...] = (
    "user_days_since_last_order",
    "user_orders_90d",
    "user_orders_total",
    "user_spend_90d",
    "user_spend_total",
    "product_purchases_30d",
    "product_purchases_90d",
    "product_purchases_total",
    "product_price",
    "user_category_purchases_90d",
    "user_category_share",
    "user_product_purchases",
    "user_product_days_since_last",
    "user_days_since_first_order",
    "user_mean_days_between_orders",
    "user_spend_trend_90d",
    "user_product_affinity",
    "user_category_lift",
    "user_orders_30d",
    "user_days_between_last_orders",
    "user_gap_trend",
)
# Heavy-tailed counts and money: a linear model sees them through log1p (see training and scoring).
LOG_SCALED: tuple[str, ...] = (
    "user_orders_90d",
    "user_orders_total",
    "user_spend_90d",
    "user_spend_total",
    "product_purchases_30d",
    "product_purchases_90d",
    "product_purchases_total",
    "product_price",
    "user_category_purchases_90d",
    "user_product_purchases",
    "user_days_since_first_order",
    "user_mean_days_between_orders",
    "user_orders_30d",
    "user_days_between_last_orders",
)
# Features that depend on the user alone (the same for every product), in FEATURE_NAMES order: what
# the purchase model's buyer part ("does this customer order at all in the horizon?") sees.
CUSTOMER_FEATURES: tuple[str, ...] = (
    "user_days_since_last_order",
    "user_orders_90d",
    "user_orders_total",
    "user_spend_90d",
    "user_spend_total",
    "user_days_since_first_order",
    "user_mean_days_between_orders",
    "user_spend_trend_90d",
    "user_orders_30d",
    "user_days_between_last_orders",
    "user_gap_trend",
)
USER_ONLY_FEATURES = frozenset(CUSTOMER_FEATURES)
# Features that change by construction as time passes (every customer gets older): their shift says
# nothing about the shop changing, so drift is not measured on them.
GROWS_WITH_TIME = frozenset({"user_days_since_first_order"})
# Features the drift check cannot recompute from the files alone (they need the model's own factors).
MODEL_DEPENDENT = frozenset({"user_product_affinity"})
_RECENCY_FEATURES = (
    "user_days_since_last_order",
    "user_product_days_since_last",
    "user_mean_days_between_orders",
    "user_days_between_last_orders",
)


@dataclass(frozen=True)
class History:
    """Order lines as parallel arrays of indices into sorted user/product id lists.

    ``day`` is the order time in days since the Unix epoch; ``units`` the quantity; ``amount`` the money.
    Indices may be any integer type (a dataset version stores them as ``int32``): every key computed
    from them is widened to ``int64`` first. Lines in time order (as a dataset version stores them)
    make :meth:`before` and :meth:`between` views of the arrays, not copies: at 10M lines a copy is
    several hundred MB.
    """

    user: NDArray[np.integer[Any]]
    product: NDArray[np.integer[Any]]
    day: FloatArray
    units: FloatArray
    amount: FloatArray
    order_key: NDArray[np.integer[Any]]  # one id per order, so several lines of one order count as one
    in_time_order: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        day = self.day
        object.__setattr__(self, "in_time_order", bool(day.size < 2 or np.all(day[1:] >= day[:-1])))

    @property
    def size(self) -> int:
        """How many order lines."""
        return int(self.day.size)

    def before(self, day: float) -> History:
        """The lines strictly before ``day``."""
        if self.in_time_order:
            return self._slice(0, int(np.searchsorted(self.day, day, side="left")))
        return self._take(self.day < day)

    def between(self, start: float, end: float) -> History:
        """The lines with ``start <= day < end``."""
        if self.in_time_order:
            first, last = np.searchsorted(self.day, [start, end], side="left").tolist()
            return self._slice(int(first), max(int(first), int(last)))
        return self._take((self.day >= start) & (self.day < end))

    def _slice(self, first: int, last: int) -> History:
        part = slice(first, last)
        return History(
            self.user[part],
            self.product[part],
            self.day[part],
            self.units[part],
            self.amount[part],
            self.order_key[part],
        )

    def _take(self, keep: NDArray[np.bool_]) -> History:
        return History(
            self.user[keep],
            self.product[keep],
            self.day[keep],
            self.units[keep],
            self.amount[keep],
            self.order_key[keep],
        )


@dataclass(frozen=True)
class FeatureState:
    """Aggregates of a history as of ``as_of_day``; everything :func:`pair_features` needs."""

    as_of_day: float
    n_users: int
    user_days_since_last_order: FloatArray
    user_orders_90d: FloatArray
    user_orders_total: FloatArray
    user_spend_90d: FloatArray
    user_spend_total: FloatArray
    user_units_total: FloatArray
    product_purchases_30d: FloatArray
    product_purchases_90d: FloatArray
    product_purchases_total: FloatArray
    product_price: FloatArray
    product_category: IntArray
    # (product, user) aggregates, keyed by product * n_users + user, sorted.
    pair_keys: IntArray
    pair_units: FloatArray
    pair_days_since_last: FloatArray
    # (category, user) aggregates, keyed by category * n_users + user, sorted.
    category_keys: IntArray
    category_units_total: FloatArray
    category_units_90d: FloatArray
    price_median: float
    # Customer-lifetime aggregates (absent from bundles trained before they existed).
    user_days_since_first_order: FloatArray | None = None
    user_mean_days_between_orders: FloatArray | None = None
    user_spend_trend_90d: FloatArray | None = None
    user_orders_30d: FloatArray | None = None
    user_days_between_last_orders: FloatArray | None = None
    # Taste factors: (n_products, k) and (n_users, k); see the module docstring.
    product_taste: FloatArray | None = None
    user_taste: FloatArray | None = None
    # Each category's share of all units sold, indexed by category (for the category lift).
    category_share: FloatArray | None = None

    def arrays(self) -> dict[str, np.ndarray]:
        """Every array field by name (for saving into a bundle; absent ones are left out)."""
        return {name: value for name, value in vars(self).items() if isinstance(value, np.ndarray)}


def feature_fallbacks(price_median: float) -> FloatArray:
    """Fallback value of each feature, in :data:`FEATURE_NAMES` order (see the module docstring)."""
    fallbacks = np.zeros(len(FEATURE_NAMES))
    for name in _RECENCY_FEATURES:
        fallbacks[FEATURE_NAMES.index(name)] = NEVER_DAYS
    fallbacks[FEATURE_NAMES.index("product_price")] = price_median
    return fallbacks


def build_state(
    history: History,
    *,
    as_of_day: float,
    n_users: int,
    product_category: IntArray,
    product_price: FloatArray,
    product_taste: FloatArray | None = None,
) -> FeatureState:
    """Aggregate ``history`` (only lines before ``as_of_day`` are used) into a :class:`FeatureState`.

    ``product_category`` and ``product_price`` are indexed by product; a missing price is NaN and is
    replaced by the median of the known prices.
    """
    past = history.before(as_of_day)
    n_products = len(product_category)
    age = as_of_day - past.day
    recent = age <= RECENT_DAYS
    trend = age <= TREND_DAYS
    customer = _customer_aggregates(past, n_users, as_of_day)
    prices = np.asarray(product_price, dtype=np.float64)
    known_prices = prices[np.isfinite(prices)]
    price_median = float(np.median(known_prices)) if known_prices.size else 0.0

    line_user = past.user.astype(np.int64)
    pair_keys, pair_units, pair_last = _grouped(
        past.product.astype(np.int64) * n_users + line_user, past.units, past.day
    )
    category = np.asarray(product_category, dtype=np.int64)[past.product]
    line_category_key = category * n_users + line_user
    del line_user
    category_keys, category_units, _ = _grouped(line_category_key, past.units, past.day)
    category_recent_units = _sum_by_key(category_keys, line_category_key[recent], past.units[recent])
    del line_category_key
    return FeatureState(
        as_of_day=as_of_day,
        n_users=n_users,
        **customer,
        user_units_total=np.bincount(past.user, past.units, minlength=n_users),
        product_purchases_30d=np.bincount(past.product[trend], past.units[trend], minlength=n_products),
        product_purchases_90d=np.bincount(past.product[recent], past.units[recent], minlength=n_products),
        product_purchases_total=np.bincount(past.product, past.units, minlength=n_products),
        product_price=np.where(np.isfinite(prices), prices, price_median),
        product_category=np.asarray(product_category, dtype=np.int64),
        pair_keys=pair_keys,
        pair_units=pair_units,
        pair_days_since_last=as_of_day - pair_last,
        category_keys=category_keys,
        category_units_total=category_units,
        category_units_90d=category_recent_units,
        price_median=price_median,
        product_taste=product_taste,
        user_taste=None if product_taste is None else _user_taste(past, n_users, product_taste),
        category_share=_category_share(category, past.units, product_category),
    )


def _customer_aggregates(past: History, n_users: int, as_of_day: float) -> dict[str, FloatArray]:
    """The per-user arrays of a :class:`FeatureState` (the :data:`CUSTOMER_FEATURES` but the gap
    trend, which is computed from two of them) of the lines ``past``, all before ``as_of_day``."""
    age = as_of_day - past.day
    recent = age <= RECENT_DAYS
    previous = (age > RECENT_DAYS) & (age <= 2 * RECENT_DAYS)
    _, first_line = np.unique(past.order_key, return_index=True)
    order_user, order_day = past.user[first_line].astype(np.int64), past.day[first_line]
    order_age = as_of_day - order_day
    orders_total = np.bincount(order_user, minlength=n_users).astype(np.float64)
    last_day = np.full(n_users, np.nan)
    first_day = np.full(n_users, np.nan)
    if past.day.size:
        np.fmax.at(last_day, past.user, past.day)
        np.fmin.at(first_day, past.user, past.day)
    ordered = np.isfinite(first_day)
    span = np.where(ordered, last_day - first_day, 0.0)
    mean_gap = np.divide(span, orders_total - 1, out=np.full(n_users, NEVER_DAYS), where=orders_total >= 2)
    # The gap between each user's last two orders: orders sorted by user then day, the last of each
    # user's run against the one before it.
    by_user = np.lexsort((order_day, order_user))
    sorted_user, sorted_day = order_user[by_user], order_day[by_user]
    last_of_user = np.flatnonzero(np.append(sorted_user[1:] != sorted_user[:-1], sorted_user.size > 0))
    has_previous = last_of_user[(last_of_user > 0)]
    has_previous = has_previous[sorted_user[has_previous - 1] == sorted_user[has_previous]]
    last_gap = np.full(n_users, NEVER_DAYS)
    last_gap[sorted_user[has_previous]] = sorted_day[has_previous] - sorted_day[has_previous - 1]
    spend_recent = np.bincount(past.user[recent], past.amount[recent], minlength=n_users)
    return {
        "user_days_since_last_order": np.where(ordered, as_of_day - last_day, NEVER_DAYS),
        "user_orders_90d": np.bincount(order_user[order_age <= RECENT_DAYS], minlength=n_users).astype(
            np.float64
        ),
        "user_orders_total": orders_total,
        "user_spend_90d": spend_recent,
        "user_spend_total": np.bincount(past.user, past.amount, minlength=n_users),
        "user_days_since_first_order": np.where(ordered, as_of_day - first_day, 0.0),
        "user_mean_days_between_orders": mean_gap,
        "user_spend_trend_90d": spend_recent
        - np.bincount(past.user[previous], past.amount[previous], minlength=n_users),
        "user_orders_30d": np.bincount(order_user[order_age <= TREND_DAYS], minlength=n_users).astype(
            np.float64
        ),
        "user_days_between_last_orders": last_gap,
    }


def customer_features(history: History, as_of_day: float, n_users: int) -> FloatArray:
    """The :data:`CUSTOMER_FEATURES` of every user as of ``as_of_day`` (only lines before it are
    used), ``(n_users, len(CUSTOMER_FEATURES))``: the same numbers :func:`pair_features` gives for
    them, without the per-product aggregates a :class:`FeatureState` also builds."""
    aggregates = _customer_aggregates(history.before(as_of_day), n_users, as_of_day)
    columns = [
        gap_trend(aggregates["user_days_between_last_orders"], aggregates["user_mean_days_between_orders"])
        if name == "user_gap_trend"
        else aggregates[name]
        for name in CUSTOMER_FEATURES
    ]
    return np.column_stack(columns).astype(np.float64, copy=False)


def gap_trend(last_gap: FloatArray, mean_gap: FloatArray) -> FloatArray:
    """``log((last gap + 1) / (mean gap + 1))``: 0 for a customer with fewer than two orders (both
    gaps are "never") or a steady rhythm, above 0 when the last gap was longer than usual."""
    return np.asarray(np.log((last_gap + 1.0) / (mean_gap + 1.0)), dtype=np.float64)


def _category_share(line_category: IntArray, units: FloatArray, product_category: IntArray) -> FloatArray:
    """Each category's share of the units sold (zeros when nothing was sold)."""
    n_categories = int(product_category.max(initial=-1)) + 1
    sold = np.bincount(line_category, units, minlength=n_categories)[:n_categories].astype(np.float64)
    total = float(sold.sum())
    return sold / total if total > 0 else sold


def _user_taste(past: History, n_users: int, product_taste: FloatArray) -> FloatArray:
    """Each user's unit-length, units-weighted mean of the taste factors of what they bought (zeros
    for a user without orders)."""
    taste = np.zeros((n_users, product_taste.shape[1]))
    # In chunks of lines: the factors of every line at once would be lines x factors x 8 bytes.
    for start in range(0, past.size, _TASTE_CHUNK_LINES):
        part = slice(start, start + _TASTE_CHUNK_LINES)
        np.add.at(taste, past.user[part], product_taste[past.product[part]] * past.units[part, None])
    norms = np.linalg.norm(taste, axis=1, keepdims=True)
    return np.divide(taste, norms, out=np.zeros_like(taste), where=norms > 0)


def pair_features(
    state: FeatureState, users: IntArray, products: IntArray, names: Sequence[str] = FEATURE_NAMES
) -> FloatArray:
    """Feature matrix ``(len(users), len(names))`` for the pairs ``(users[k], products[k])``, columns in
    the order of ``names`` (a model's trained features; all of :data:`FEATURE_NAMES` by default).

    Users must be valid indices; a product index of -1 means "unknown product" and gets the fallbacks.
    """
    users = np.asarray(users, dtype=np.int64)
    products = np.asarray(products, dtype=np.int64)
    known = products >= 0
    product = np.where(known, products, 0)
    pair_key = product * state.n_users + users
    pair_units = _lookup(state.pair_keys, state.pair_units, pair_key, known, 0.0)
    pair_recency = _lookup(state.pair_keys, state.pair_days_since_last, pair_key, known, NEVER_DAYS)
    category_key = state.product_category[product] * state.n_users + users
    category_units = _lookup(state.category_keys, state.category_units_total, category_key, known, 0.0)
    category_recent = _lookup(state.category_keys, state.category_units_90d, category_key, known, 0.0)
    pair = _PairValues(pair_units, pair_recency, category_units, category_recent)
    return _assemble(state, users, products, pair, names)


def product_features(
    state: FeatureState, product: int, first: int, last: int, names: Sequence[str] = FEATURE_NAMES
) -> FloatArray:
    """:func:`pair_features` of one known product (index ``product >= 0``) for the users at positions
    ``first`` to ``last`` (exclusive): the same matrix, found without a search per user. The keys are
    sorted by product (category) then user, so one product's pairs with a range of users are one
    contiguous run of keys, found with two binary searches and spread out by position."""
    n = last - first

    def spread(
        keys: IntArray, row: int, columns: tuple[FloatArray, FloatArray], defaults: tuple[float, float]
    ) -> tuple[FloatArray, FloatArray]:
        low, high = np.searchsorted(keys, [row * state.n_users + first, row * state.n_users + last]).tolist()
        at = keys[low:high] - (row * state.n_users + first)
        out = []
        for values, default in zip(columns, defaults, strict=True):
            column = np.full(n, default)
            column[at] = values[low:high]
            out.append(column)
        return out[0], out[1]

    pair_units, pair_recency = spread(
        state.pair_keys, product, (state.pair_units, state.pair_days_since_last), (0.0, NEVER_DAYS)
    )
    category = int(state.product_category[product])
    category_units, category_recent = spread(
        state.category_keys, category, (state.category_units_total, state.category_units_90d), (0.0, 0.0)
    )
    pair = _PairValues(pair_units, pair_recency, category_units, category_recent)
    products = np.full(n, product, dtype=np.int64)
    return _assemble(state, slice(first, last), products, pair, names, single_product=product)


@dataclass(frozen=True)
class _PairValues:
    """What :func:`pair_features` looks up per pair: the (product, user) and (category, user) values."""

    units: FloatArray
    recency: FloatArray
    category_units: FloatArray
    category_recent: FloatArray


def _assemble(
    state: FeatureState,
    users: IntArray | slice,
    products: IntArray,
    pair: _PairValues,
    names: Sequence[str],
    single_product: int | None = None,
) -> FloatArray:
    """The feature columns of ``names`` from the looked-up ``pair`` values; ``users`` positions or a
    slice of them. With ``single_product`` (every pair's product, known) the product's values and
    taste are taken once rather than gathered per pair."""
    known = products >= 0
    product = np.where(known, products, 0)
    fallback = feature_fallbacks(state.price_median)
    pair_units, pair_recency = pair.units, pair.recency
    category_units, category_recent = pair.category_units, pair.category_recent

    n = products.size

    def product_column(values: FloatArray, name: str) -> FloatArray:
        if single_product is not None:
            return np.full(n, float(values[single_product]))
        return np.where(known, values[product], fallback[FEATURE_NAMES.index(name)])

    user_units = state.user_units_total[users]
    share = np.divide(category_units, user_units, out=np.zeros(n), where=user_units > 0)

    def user_column(name: str) -> FloatArray:
        values = getattr(state, name)
        if values is None:  # a state saved before this feature existed
            return np.full(n, fallback[FEATURE_NAMES.index(name)])
        return np.asarray(values[users], dtype=np.float64)

    if state.user_taste is not None and state.product_taste is not None and "user_product_affinity" in names:
        if single_product is not None:
            affinity = np.asarray(state.user_taste[users] @ state.product_taste[single_product], np.float64)
        else:
            affinity = np.einsum("ij,ij->i", state.user_taste[users], state.product_taste[product]) * known
    else:  # a state without taste factors (saved before they existed, or rebuilt without the model)
        affinity = np.zeros(n)

    def category_lift() -> FloatArray:
        if state.category_share is None:  # a state saved before the lift existed
            return np.zeros(n)
        category = state.product_category[product]
        in_range = category < state.category_share.size
        share = np.where(in_range, state.category_share[np.where(in_range, category, 0)], 0.0)
        sold = known & (share > 0)
        share = np.where(sold, share, 1.0)
        smoothed = (category_units + CATEGORY_PRIOR_UNITS * share) / (user_units + CATEGORY_PRIOR_UNITS)
        return np.where(sold, np.log(smoothed) - np.log(share), 0.0)

    def trend() -> FloatArray:
        if state.user_days_between_last_orders is None or state.user_mean_days_between_orders is None:
            return np.zeros(n)
        return gap_trend(
            np.asarray(state.user_days_between_last_orders[users], np.float64),
            np.asarray(state.user_mean_days_between_orders[users], np.float64),
        )

    computed = {
        "user_gap_trend": trend,
        "user_product_affinity": lambda: affinity,
        "user_category_lift": category_lift,
        "user_category_purchases_90d": lambda: category_recent,
        "user_category_share": lambda: share,
        "user_product_purchases": lambda: pair_units,
        "user_product_days_since_last": lambda: pair_recency,
    }
    columns = []
    for name in names:
        if name in computed:
            columns.append(computed[name]())
        elif name.startswith("product_"):
            columns.append(product_column(getattr(state, name), name))
        else:
            columns.append(user_column(name))
    return np.column_stack(columns).astype(np.float64, copy=False)


def _grouped(keys: IntArray, units: FloatArray, day: FloatArray) -> tuple[IntArray, FloatArray, FloatArray]:
    """Sorted unique keys with summed units and the latest day per key."""
    if keys.size == 0:
        return np.zeros(0, np.int64), np.zeros(0), np.zeros(0)
    unique, inverse = np.unique(keys, return_inverse=True)
    summed = np.bincount(inverse, units, minlength=unique.size)
    latest = np.full(unique.size, -np.inf)
    np.maximum.at(latest, inverse, day)
    return unique.astype(np.int64), summed, latest


def _sum_by_key(sorted_keys: IntArray, keys: IntArray, values: FloatArray) -> FloatArray:
    """Sum ``values`` per key into the positions of ``sorted_keys`` (every key must be present)."""
    out = np.zeros(sorted_keys.size)
    np.add.at(out, np.searchsorted(sorted_keys, keys), values)
    return out


def _lookup(
    sorted_keys: IntArray, values: FloatArray, keys: IntArray, valid: NDArray[np.bool_], default: float
) -> FloatArray:
    """``values`` at each of ``keys`` in ``sorted_keys``; ``default`` where absent or not ``valid``."""
    if sorted_keys.size == 0:
        return np.full(keys.shape, default)
    position = np.minimum(np.searchsorted(sorted_keys, keys), sorted_keys.size - 1)
    found = valid & (sorted_keys[position] == keys)
    return np.where(found, values[position], default)


def log_scaled_mask(feature_names: tuple[str, ...] | list[str] = FEATURE_NAMES) -> NDArray[np.bool_]:
    """Boolean mask of the features a linear model sees through ``log1p`` (see :data:`LOG_SCALED`)."""
    return np.array([name in LOG_SCALED for name in feature_names])


def log1p_columns(features: FloatArray, mask: NDArray[np.bool_]) -> FloatArray:
    """``features`` with ``log1p`` applied to the masked columns (negative values clipped to 0 first)."""
    out = np.array(features, dtype=np.float64, copy=True)
    out[:, mask] = np.log1p(np.maximum(out[:, mask], 0.0))
    return out
