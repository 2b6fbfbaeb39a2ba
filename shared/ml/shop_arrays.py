"""A shop's data as the arrays training reads (``EncodedShop``, a dataset version's ``training.npz``),
and the time split every training makes of them (``SplitShop``: cutoff, horizon, the holdout).

Order lines are kept in time order, so every time window is a view; never one object per order line.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import fields as dataclass_fields
from datetime import UTC, date, datetime, timedelta

import numpy as np
from numpy.typing import NDArray
from scipy import sparse

from shared.errors import ValidationFailed
from shared.ml.datasets import ShopData
from shared.ml.features import FeatureState, History, build_state
from shared.ml.horizon import DEFAULT_HORIZON_DAYS, MAX_HORIZON_DAYS, MIN_HORIZON_DAYS

_DAY_SECONDS = 86_400.0
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MIN_ORDERS = 20
_UNCATEGORISED = "Uncategorised"


class OrdersGap(ValidationFailed):
    """The orders hold none in the window the models learn from (the horizon before the holdout): the
    file is valid and its data usable, but its timeline cannot train a model now (a shop closed for a
    season, or an old export with a new purchase after it). Unlike the other refusals, it says nothing
    against the data itself (``shared.predictions.training_job`` puts such a version in force)."""


# The features look back 90 days: the training window's features need that much history before it.
FEATURE_HISTORY_DAYS = 90


def longest_safe_horizon(span_days: float) -> int:
    """The longest horizon H a history of ``span_days`` allows: the holdout (H), the training labels
    (H) and the feature history before them (``FEATURE_HISTORY_DAYS``) must all fall inside it, so the
    training window never reaches back into a period with no history."""
    return int((span_days - FEATURE_HISTORY_DAYS) // 2)


@dataclass(frozen=True)
class EncodedShop:
    """A shop's data as arrays: sorted ids, product attributes, and the order history in epoch days.

    This is what a dataset version's ``training.npz`` holds (``docs/data-plane.md``): build it with
    :meth:`from_arrays` from those arrays, or with :func:`encode_shop` from loaded records (tests and
    small shops); :meth:`arrays` gives the arrays back. The order lines are kept in time order.
    """

    user_ids: NDArray[np.str_]  # sorted
    product_ids: NDArray[np.str_]  # sorted
    categories: list[str]
    product_category: NDArray[np.int64]
    product_price: NDArray[np.float64]
    history: History
    # The purchase model's taste factors (set once fitted; see ``shared.ml.features``).
    product_taste: NDArray[np.float64] | None = None

    @property
    def end_day(self) -> float:
        """Just after the last order, so the last order is part of everything "before the end"."""
        return float(self.history.day.max()) + 1e-6

    def state(self, as_of_day: float) -> FeatureState:
        return build_state(
            self.history,
            as_of_day=as_of_day,
            n_users=self.user_ids.size,
            product_category=self.product_category,
            product_price=self.product_price,
            product_taste=self.product_taste,
        )

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray]) -> EncodedShop:
        """The shop held by ``arrays`` named as in :data:`TRAINING_ARRAYS` (an opened ``training.npz``
        is such a mapping). Missing arrays or inconsistent lengths raise ``ValidationFailed``; order
        lines out of time order are put in order."""
        missing = [name for name in TRAINING_ARRAYS if name not in arrays]
        if missing:
            raise ValidationFailed(
                f"The training arrays lack {', '.join(missing)}.",
                field="training",
                remedy="Sync the data source again: the dataset version predates the training arrays.",
            )
        lines = {name: np.asarray(arrays[name]) for name in _LINE_ARRAYS}
        sizes = {value.size for value in lines.values()}
        user_ids, product_ids = np.asarray(arrays["user_ids"]), np.asarray(arrays["product_ids"])
        n_users, n_products = user_ids.size, product_ids.size
        if len(sizes) != 1 or np.asarray(arrays["product_category"]).size != n_products:
            raise ValidationFailed(
                "The training arrays disagree on their lengths.",
                field="training",
                remedy="Sync the data source again.",
            )
        for name, bound in (("order_user", n_users), ("order_product", n_products)):
            values = lines[name]
            if values.size and (int(values.min()) < 0 or int(values.max()) >= bound):
                raise ValidationFailed(
                    f"The training arrays' {name} points outside the ids.",
                    field="training",
                    remedy="Sync the data source again.",
                )
        day = lines["order_day"].astype(np.float64, copy=False)
        order = None if day.size < 2 or bool(np.all(day[1:] >= day[:-1])) else np.argsort(day, kind="stable")

        def line(name: str, dtype: type[np.generic]) -> np.ndarray:
            value = lines[name].astype(dtype, copy=False)
            return value if order is None else value[order]

        history = History(
            user=line("order_user", np.int32),
            product=line("order_product", np.int32),
            day=line("order_day", np.float64),
            units=line("order_units", np.float64),
            amount=line("order_amount", np.float64),
            order_key=line("order_key", np.int32),
        )
        return cls(
            user_ids=user_ids.astype(np.str_, copy=False),
            product_ids=product_ids.astype(np.str_, copy=False),
            categories=[str(c) for c in np.asarray(arrays["categories"]).tolist()],
            product_category=np.asarray(arrays["product_category"]).astype(np.int64),
            product_price=np.asarray(arrays["product_price"]).astype(np.float64),
            history=history,
        )

    def arrays(self) -> dict[str, np.ndarray]:
        """The shop as the arrays of :data:`TRAINING_ARRAYS` (what ``training.npz`` holds)."""
        h = self.history
        return {
            "user_ids": self.user_ids,
            "product_ids": self.product_ids,
            "categories": np.array(self.categories, dtype=np.str_),
            "product_category": self.product_category.astype(np.int32),
            "product_price": self.product_price.astype(np.float64),
            "order_user": h.user.astype(np.int32),
            "order_product": h.product.astype(np.int32),
            "order_day": h.day.astype(np.float64),
            "order_units": h.units.astype(np.float32),
            "order_amount": h.amount.astype(np.float64),
            "order_key": h.order_key.astype(np.int32),
        }


# The arrays of a dataset version's ``training.npz`` (docs/data-plane.md), the order lines last.
_LINE_ARRAYS = ("order_user", "order_product", "order_day", "order_units", "order_amount", "order_key")
TRAINING_ARRAYS = (
    "user_ids",
    "product_ids",
    "categories",
    "product_category",
    "product_price",
    *_LINE_ARRAYS,
)


def read_training_arrays(data: bytes) -> EncodedShop:
    """A ``training.npz`` (bytes) as an :class:`EncodedShop` (no pickles are read)."""
    with np.load(io.BytesIO(data), allow_pickle=False) as npz:
        return EncodedShop.from_arrays({name: npz[name] for name in npz.files})


def write_training_arrays(shop: EncodedShop) -> bytes:
    """``shop`` as ``training.npz`` bytes (the inverse of :func:`read_training_arrays`)."""
    buffer = io.BytesIO()
    np.savez(buffer, allow_pickle=False, **shop.arrays())
    return buffer.getvalue()


@dataclass(frozen=True, kw_only=True)
class SplitShop(EncodedShop):
    """An encoded shop with its training time split."""

    cutoff_day: float
    train_day: float
    horizon_days: int


def encode_shop(data: ShopData) -> EncodedShop:
    """``data`` as arrays (no size checks: training adds its own, see :func:`train_model`). Records are
    the small shops' and the tests' way in; a synced dataset version is read with
    :func:`read_training_arrays`."""
    user_ids = np.array(sorted({c.user_id for c in data.customers} | {o.user_id for o in data.orders}))
    catalogue = {p.product_id: p for p in data.products}
    product_ids = np.array(sorted(set(catalogue) | {o.product_id for o in data.orders}))
    categories = sorted({p.category or _UNCATEGORISED for p in catalogue.values()} | {_UNCATEGORISED})
    category_index = {c: k for k, c in enumerate(categories)}
    known = [catalogue.get(str(p)) for p in product_ids]
    product_category = np.array(
        [category_index[(p.category if p else None) or _UNCATEGORISED] for p in known], dtype=np.int64
    )
    product_price = np.array([p.price if p and p.price is not None else np.nan for p in known])

    orders = data.orders
    order_keys = {oid: k for k, oid in enumerate(sorted({o.order_id for o in orders}))}
    return EncodedShop.from_arrays(
        {
            "user_ids": user_ids,
            "product_ids": product_ids,
            "categories": np.array(categories),
            "product_category": product_category,
            "product_price": product_price,
            "order_user": np.searchsorted(user_ids, [o.user_id for o in orders]),
            "order_product": np.searchsorted(product_ids, [o.product_id for o in orders]),
            "order_day": np.array([to_day(o.timestamp) for o in orders], dtype=np.float64),
            "order_units": np.array([o.quantity for o in orders], dtype=np.float64),
            "order_amount": np.array([o.amount for o in orders], dtype=np.float64),
            "order_key": np.array([order_keys[o.order_id] for o in orders], dtype=np.int64),
        }
    )


def split_shop(data: ShopData | EncodedShop, requested: int | None, today: date | None = None) -> SplitShop:
    """``data`` split in time for a horizon of ``requested`` days (the longest safe one up to the
    default when None); ``today`` (by default the clock's) dates the remedy of a history too short.
    Raises ``ValidationFailed`` with what to do when the orders cannot be split so."""
    encoded = data if isinstance(data, EncodedShop) else encode_shop(data)
    if encoded.history.size < _MIN_ORDERS:
        raise ValidationFailed(
            f"Training needs at least {_MIN_ORDERS} order lines; got {encoded.history.size}.",
            field="orders",
            remedy=(
                f"Sync an orders file with at least {_MIN_ORDERS} order lines (more of your shop's history)."
            ),
        )
    history = encoded.history
    span = float(encoded.end_day - history.day.min())
    safe = longest_safe_horizon(span)
    if requested is not None and not MIN_HORIZON_DAYS <= requested <= MAX_HORIZON_DAYS:
        raise ValidationFailed(
            f"horizon_days is {requested}; it must be between {MIN_HORIZON_DAYS} and {MAX_HORIZON_DAYS}.",
            field="horizon_days",
            remedy=f"Ask for a horizon of {MIN_HORIZON_DAYS} to {MAX_HORIZON_DAYS} days.",
        )
    if requested is not None and requested > safe:
        raise ValidationFailed(
            f"Order history spans {span:.0f} days; a {requested}-day horizon needs "
            f"{2 * requested + FEATURE_HISTORY_DAYS} (the holdout and the training labels, {requested} days "
            f"each, and {FEATURE_HISTORY_DAYS} days of history before them), or the model would learn from "
            "a period with no history.",
            field="horizon_days",
            remedy=(
                f"Use a horizon of at most {safe} days, or upload a longer order history."
                if safe >= MIN_HORIZON_DAYS
                else "Upload a longer order history."
            ),
        )
    horizon = requested if requested is not None else min(DEFAULT_HORIZON_DAYS, safe)
    if horizon < MIN_HORIZON_DAYS:
        needed = 2 * MIN_HORIZON_DAYS + FEATURE_HISTORY_DAYS
        first_day, last_day = (from_day(float(day)).date() for day in (history.day.min(), history.day.max()))
        # A young shop has no older orders to upload: the day it will have enough, if it keeps selling.
        # Once that day has passed, the files miss orders the shop has (older ones, or the latest).
        ready_on = first_day + timedelta(days=needed)
        raise ValidationFailed(
            f"Order history spans {span:.0f} days; training needs at least {needed} days "
            f"({FEATURE_HISTORY_DAYS} days of history, then {MIN_HORIZON_DAYS} days of training labels "
            f"and {MIN_HORIZON_DAYS} of holdout).",
            field="orders",
            remedy=(
                "Upload a longer order history (every order since your shop opened). A younger shop: "
                f"sync again on or after {ready_on.isoformat()}, when its first order is {needed} days old."
                if ready_on > (today or datetime.now(UTC).date())
                else "Upload a longer order history: the orders file holds orders from "
                f"{first_day.isoformat()} to {last_day.isoformat()} only; sync every order since your shop "
                "opened, up to today."
            ),
        )
    # The end is just after the last order, so the last order belongs to the holdout.
    cutoff_day = encoded.end_day - horizon
    train_day = cutoff_day - horizon
    if history.before(train_day).size == 0 or history.between(cutoff_day, encoded.end_day).size == 0:
        raise ValidationFailed(
            f"Order history spans {span:.0f} days but has no orders before or inside the {horizon}-day "
            "holdout; the time split needs orders on both sides.",
            field="orders",
            remedy="Upload a longer order history or a shorter horizon_days.",
        )
    if history.between(train_day, cutoff_day).size == 0:
        # The models learn who bought in this window from what came before it: with no order in it
        # there is nothing to learn (a shop whose file stops months before a new order, say).
        first, last = (from_day(day).date().isoformat() for day in (train_day, cutoff_day))
        raise OrdersGap(
            f"The orders have a gap: none from {first} to {last}, the {horizon} days before the "
            f"{horizon}-day holdout that the models learn from, so there is nothing to train on.",
            field="orders",
            remedy="Sync an orders file with your shop's orders up to its latest one, with no months "
            "missing before it.",
        )
    fields = {f.name: getattr(encoded, f.name) for f in dataclass_fields(EncodedShop)}
    return SplitShop(**fields, cutoff_day=cutoff_day, train_day=train_day, horizon_days=horizon)


def to_day(moment: datetime) -> float:
    """``moment`` (timezone-aware) in days since the Unix epoch, the time axis of :class:`History`."""
    return (moment - _EPOCH).total_seconds() / _DAY_SECONDS


def from_day(day: float) -> datetime:
    """The instant ``day`` epoch days after the Unix epoch (the inverse of :func:`to_day`)."""
    return _EPOCH + timedelta(days=day)


def interaction_matrix(shop: EncodedShop, history: History) -> sparse.csr_matrix:
    """Users x products, ``log1p(units bought)`` (dampens a few huge repeat buyers)."""
    shape = (shop.user_ids.size, shop.product_ids.size)
    matrix = sparse.csr_matrix(
        (history.units.astype(np.float64), (history.user, history.product)), shape=shape
    )
    matrix.sum_duplicates()
    matrix.data = np.log1p(matrix.data)
    matrix.sort_indices()
    return matrix
