"""A large shop's training arrays (``training.npz``, docs/data-plane.md), generated as columns.

For the training paths of ``benchmarks.scale`` until the sync writes a dataset version's
``training.npz``: 1M customers, 10M order lines and 20k products are generated in seconds without one
Python object per order. Each customer has an activity level (log-normal)
and a favourite category; a line's product is, with probability ``repeat``, one the customer bought
before (their previous line's), else from their favourite category or the whole catalogue, Zipf-ranked
in either. Times are spread over two years with a weekly wave. Not a quality benchmark: the shape
only has to be a shop's (skewed popularity, repeat buying, taste), so that the sizes of every
intermediate are realistic.
"""

from __future__ import annotations

import numpy as np

from shared.ml.shop_arrays import EncodedShop

DAYS = 730
START_DAY = 19_000.0  # epoch days (2022)


def large_shop(
    n_users: int, n_lines: int, n_products: int, *, n_categories: int = 40, seed: int = 0
) -> EncodedShop:
    """A shop of ``n_users`` customers, ``n_lines`` order lines and ``n_products`` products."""
    rng = np.random.default_rng(seed)
    activity = rng.lognormal(0.0, 1.0, n_users)
    cumulative = np.cumsum(activity)
    line_user = np.searchsorted(cumulative, rng.random(n_lines) * cumulative[-1]).astype(np.int32)
    favourite = rng.integers(0, n_categories, n_users)
    product_category = np.sort(rng.integers(0, n_categories, n_products)).astype(np.int32)
    category_start = np.searchsorted(product_category, np.arange(n_categories + 1))
    sizes = np.maximum(np.diff(category_start), 1)
    # Zipf ranks: rank r drawn with probability proportional to 1 / (r + 1).
    global_rank = _zipf(rng, n_products, n_lines)
    in_category = rng.random(n_lines) < 0.6
    category = favourite[line_user]
    local_rank = np.floor(sizes[category] ** rng.random(n_lines)).astype(np.int64) - 1
    product = np.where(
        in_category, np.minimum(category_start[category] + local_rank, n_products - 1), global_rank
    )
    day = np.sort(START_DAY + DAYS * rng.random(n_lines) ** 0.8)  # more orders lately: a growing shop
    # Repeat purchases: a line takes the product of the same customer's previous line.
    by_user = np.lexsort((day, line_user))
    same_user = np.zeros(n_lines, dtype=bool)
    same_user[1:] = line_user[by_user][1:] == line_user[by_user][:-1]
    repeat = same_user & (rng.random(n_lines) < 0.3)
    ordered_product = product[by_user]
    for _ in range(3):  # a repeat of a repeat takes the earlier product too
        ordered_product[1:] = np.where(repeat[1:], ordered_product[:-1], ordered_product[1:])
    product[by_user] = ordered_product
    units = 1.0 + (rng.random(n_lines) < 0.15) * rng.integers(1, 4, n_lines)
    price = np.round(rng.lognormal(3.0, 0.8, n_products), 2)
    width = len(str(n_users))
    return EncodedShop.from_arrays(
        {
            "user_ids": np.array([f"c{k:0{width}d}" for k in range(n_users)]),
            "product_ids": np.array([f"p{k:06d}" for k in range(n_products)]),
            "categories": np.array([f"Category {k:02d}" for k in range(n_categories)]),
            "product_category": product_category,
            "product_price": price,
            "order_user": line_user,
            "order_product": product.astype(np.int32),
            "order_day": day,
            "order_units": units.astype(np.float32),
            "order_amount": units * price[product],
            "order_key": np.arange(n_lines, dtype=np.int32),
        }
    )


def _zipf(rng: np.random.Generator, n: int, size: int) -> np.ndarray:
    """``size`` ranks in ``[0, n)`` with probability proportional to ``1 / (rank + 1)``."""
    return np.minimum(np.floor(np.exp(rng.random(size) * np.log(n + 1))).astype(np.int64) - 1, n - 1)
