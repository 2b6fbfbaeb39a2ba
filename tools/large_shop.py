"""A large shop for benchmarks: 1M customers, 10M order lines and 20k products in seconds, written as the
three CSV files a merchant uploads (``tools.synthetic`` is the small shop with a known oracle).

Every column is drawn with numpy and turned into text a whole column at a time (``astype("S")``,
``np.datetime_as_string``); rows are assembled as a byte matrix per chunk of rows and written with
the padding removed, so no Python object is made per row. The shapes are those of a shop: a few heavy
buyers and many one-off ones (log-normal activity), a long tail of products (Zipf-like), orders of one
to four lines, timestamps over two years; most customers give an e-mail, many a phone.

``bad_orders`` writes the "half malformed" orders file of issue 20 (every other line broken in one
of the ways merchants' files break) and ``duplicate_customers`` a customers file with repeated ids.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

CHUNK_ROWS = 1_000_000
_FIRST = (
    b"ann",
    b"bob",
    b"cara",
    b"dev",
    b"emma",
    b"finn",
    b"gita",
    b"hugo",
    b"isla",
    b"jon",
    b"kemi",
    b"leo",
)
_LAST = (b"lee", b"smith", b"jones", b"patel", b"khan", b"brown", b"garcia", b"nguyen", b"muller", b"rossi")
_COUNTRIES = (b"GB", b"US", b"CA", b"AU", b"DE", b"FR")
_CATEGORIES = (b"Shoes", b"Tops", b"Home", b"Kitchen", b"Toys", b"Books", b"Sports", b"Garden", b"Beauty")
# Broken cells a merchant's export really has: a blank required cell, a zero or text quantity, a
# negative or text amount, a time with no time of day or an impossible date, an unknown customer.
_BAD_CELLS = {
    3: (b"0", b"two", b""),
    4: (b"-5", b"n/a"),
    5: (b"2026-13-01T00:00:00", b"yesterday", b""),
}


@dataclass(frozen=True)
class LargeShopConfig:
    """Size and shape of a large shop. Defaults: the design size of issue 20."""

    n_customers: int = 1_000_000
    n_orders: int = 10_000_000
    n_products: int = 20_000
    days: int = 730
    end: datetime = datetime(2026, 11, 1, tzinfo=UTC)
    seed: int = 0


@dataclass(frozen=True)
class ShopFiles:
    customers: Path
    products: Path
    orders: Path

    def by_kind(self) -> dict[str, Path]:
        return {"customers": self.customers, "products": self.products, "orders": self.orders}


def write_large_shop(directory: Path, config: LargeShopConfig | None = None) -> ShopFiles:
    """Write ``customers.csv``, ``products.csv`` and ``orders.csv`` of a shop into ``directory``."""
    config = config or LargeShopConfig()
    directory.mkdir(parents=True, exist_ok=True)
    files = ShopFiles(directory / "customers.csv", directory / "products.csv", directory / "orders.csv")
    rng = np.random.default_rng(config.seed)
    _write(
        files.customers, b"user_id,email,first_name,last_name,phone,country", _customer_chunks(rng, config)
    )
    _write(files.products, b"product_id,name,category,price", _product_chunks(rng, config))
    _write(files.orders, b"order_id,user_id,product_id,quantity,amount,timestamp", _order_chunks(rng, config))
    return files


def bad_orders(path: Path, config: LargeShopConfig | None = None) -> Path:
    """An orders file of ``config.n_orders`` lines, every other one broken (see ``_BAD_CELLS``)."""
    config = config or LargeShopConfig()
    rng = np.random.default_rng(config.seed + 1)
    _write(
        path, b"order_id,user_id,product_id,quantity,amount,timestamp", _order_chunks(rng, config, bad=True)
    )
    return path


def duplicate_customers(path: Path, config: LargeShopConfig | None = None, every: int = 10) -> Path:
    """A customers file where every ``every``-th row repeats the id of the row before it."""
    config = config or LargeShopConfig()
    rng = np.random.default_rng(config.seed)
    _write(
        path,
        b"user_id,email,first_name,last_name,phone,country",
        _customer_chunks(rng, config, duplicate_every=every),
    )
    return path


# --- columns as text -------------------------------------------------------------------------------


def _ids(prefix: bytes, numbers: NDArray[np.int64], width: int) -> NDArray[np.bytes_]:
    """``prefix`` + zero-padded numbers, e.g. ``u0000042``, as a fixed-width byte column."""
    digits = np.char.zfill(numbers.astype(f"S{width}"), width)
    return np.char.add(prefix, digits)


def _pick(choices: Sequence[bytes], index: NDArray[np.int64]) -> NDArray[np.bytes_]:
    return np.array(choices, dtype=np.bytes_)[index]


def _money(values: NDArray[np.float64]) -> NDArray[np.bytes_]:
    """Amounts in cents as ``19.5``/``3.07``: the shortest text of the rounded value."""
    return np.round(values, 2).astype("S24")


def _rows(columns: Sequence[NDArray[np.bytes_]]) -> bytes:
    """CSV lines from byte columns (no cell holds a comma, quote or line break): a matrix of cells and
    separators, flattened with each cell's padding dropped."""
    n = columns[0].size
    parts: list[NDArray[np.uint8]] = []
    for k, column in enumerate(columns):
        width = column.dtype.itemsize
        parts.append(np.frombuffer(column.tobytes(), dtype=np.uint8).reshape(n, width))
        parts.append(np.full((n, 1), ord("\n") if k == len(columns) - 1 else ord(","), dtype=np.uint8))
    matrix = np.concatenate(parts, axis=1)
    flat = matrix.ravel()
    return flat[flat != 0].tobytes()


def _write(path: Path, header: bytes, chunks: Iterator[list[NDArray[np.bytes_]]]) -> None:
    with path.open("wb") as out:
        out.write(header + b"\n")
        for columns in chunks:
            out.write(_rows(columns))


def _customer_chunks(
    rng: np.random.Generator, config: LargeShopConfig, duplicate_every: int = 0
) -> Iterator[list[NDArray[np.bytes_]]]:
    for start in range(0, config.n_customers, CHUNK_ROWS):
        k = np.arange(start, min(start + CHUNK_ROWS, config.n_customers), dtype=np.int64)
        n = k.size
        numbers = k - 1 if duplicate_every else k
        ids = _ids(b"u", np.where((k % max(duplicate_every, 1) == 0) & (k > 0), numbers, k), 7)
        first = _pick(_FIRST, rng.integers(0, len(_FIRST), n))
        last = _pick(_LAST, rng.integers(0, len(_LAST), n))
        country_index = rng.choice(len(_COUNTRIES), n, p=[0.35, 0.3, 0.1, 0.1, 0.1, 0.05])
        email = np.char.add(np.char.add(np.char.add(first, b"."), last), k.astype("S7"))
        email = np.char.add(email, b"@example.com")
        email[rng.random(n) < 0.05] = b""  # some customers never gave an e-mail
        # Phones in ranges set aside for fiction (Ofcom's drama range, 555-01xx in North America).
        line = rng.integers(0, 100, n).astype("S3")
        phone = np.where(
            np.isin(country_index, [0, 3, 4, 5]),
            np.char.add(b"+44 7700 900", np.char.zfill(line, 3)),
            np.char.add(b"+1 202 555 01", np.char.zfill(line, 2)),
        )
        phone[rng.random(n) < 0.3] = b""
        yield [ids, email, first, last, phone, _pick(_COUNTRIES, country_index)]


def _product_chunks(rng: np.random.Generator, config: LargeShopConfig) -> Iterator[list[NDArray[np.bytes_]]]:
    k = np.arange(config.n_products, dtype=np.int64)
    category = rng.integers(0, len(_CATEGORIES), k.size)
    names = np.char.add(np.char.add(_pick(_CATEGORIES, category), b" item "), k.astype("S6"))
    price = rng.lognormal(3.0, 0.7, k.size)
    yield [_ids(b"p", k, 5), names, _pick(_CATEGORIES, category), _money(price)]


def _order_chunks(
    rng: np.random.Generator, config: LargeShopConfig, bad: bool = False
) -> Iterator[list[NDArray[np.bytes_]]]:
    # Who buys: log-normal activity, so a few customers place many orders. What: Zipf-like popularity.
    activity = rng.lognormal(0.0, 1.2, config.n_customers)
    buyer_weights = activity / activity.sum()
    popularity = 1.0 / np.arange(1, config.n_products + 1) ** 0.9
    product_weights = rng.permutation(popularity / popularity.sum())
    price = rng.lognormal(3.0, 0.7, config.n_products)
    end = int(config.end.timestamp())
    span = config.days * 86_400
    order_number = 0
    for start in range(0, config.n_orders, CHUNK_ROWS):
        n = min(CHUNK_ROWS, config.n_orders - start)
        # Orders of 1-4 lines: a line continues the previous order with probability 0.35.
        new_order = rng.random(n) >= 0.35
        new_order[0] = True
        order_index = order_number + np.cumsum(new_order) - 1
        order_number = int(order_index[-1]) + 1
        starts = np.flatnonzero(new_order)
        per_order = np.diff(np.append(starts, n))
        users = np.repeat(rng.choice(config.n_customers, starts.size, p=buyer_weights), per_order)
        seconds = np.repeat(end - rng.integers(1, span, starts.size), per_order)
        products = rng.choice(config.n_products, n, p=product_weights)
        quantity = 1 + rng.poisson(0.25, n)
        amount = quantity * price[products] * rng.choice([1.0, 1.0, 1.0, 0.9, 0.8], n)
        stamps = np.datetime_as_string(seconds.astype("datetime64[s]"), unit="s").astype("S19")
        columns = [
            _ids(b"o", order_index, 9),
            _ids(b"u", users, 7),
            _ids(b"p", products, 5),
            quantity.astype("S6"),
            _money(amount),
            stamps,
        ]
        if bad:
            _break_every_other_row(rng, columns)
        yield columns


def _break_every_other_row(rng: np.random.Generator, columns: list[NDArray[np.bytes_]]) -> None:
    n = columns[0].size
    broken = np.arange(1, n, 2)
    column_choice = rng.choice(list(_BAD_CELLS), broken.size)
    for column, cells in _BAD_CELLS.items():
        rows = broken[column_choice == column]
        width = max(columns[column].dtype.itemsize, *(len(c) for c in cells))
        columns[column] = columns[column].astype(f"S{width}")
        columns[column][rows] = np.array(cells, dtype=np.bytes_)[rng.integers(0, len(cells), rows.size)]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--customers", type=int, default=LargeShopConfig.n_customers)
    parser.add_argument("--orders", type=int, default=LargeShopConfig.n_orders)
    parser.add_argument("--products", type=int, default=LargeShopConfig.n_products)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    config = LargeShopConfig(
        n_customers=args.customers, n_orders=args.orders, n_products=args.products, seed=args.seed
    )
    files = write_large_shop(args.directory, config)
    for kind, path in files.by_kind().items():
        print(f"{kind}: {path} ({path.stat().st_size / 1e6:,.0f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
