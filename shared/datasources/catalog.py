"""The synced catalog, searchable by product id and name (issue 23, item 4).

A sync keeps its good products' ids, names and categories as three text arrays in ``catalog.npz``
beside the dataset, sorted by ``product_id``, with their prices (``shared.datasources.sync.write_catalog``).
A search reads that file and matches the text against every id and name at once with numpy, ranking
an exact id first, then ids that start with it, names that start with it, names with a word that
starts with it, and any id or name that contains it (case ignored), each group by id; only the first
``limit`` become Python objects. :class:`Catalogs` says whether a product is listed and priced (what
the hosted checkout's publishing asks before an advert links to a product's checkout page).
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np
from numpy.typing import NDArray

from shared.records.datasources import DatasetVersion

# What the synced products say of a product: listed with a price (finite, above 0), listed without
# one, not listed; no products synced at all; or unknown (a version stored before prices were kept).
Listing = Literal["priced", "no_price", "unlisted", "no_products", "unknown"]


@dataclass(frozen=True)
class Catalog:
    """The products of a dataset version, by sorted ``product_id`` ("" for a name or category not given)."""

    product_ids: NDArray[np.str_]
    names: NDArray[np.str_]
    categories: NDArray[np.str_]
    # NaN for a product without a price; None for a file written before prices were kept.
    prices: NDArray[np.float64] | None = None


@dataclass(frozen=True)
class Found:
    """A search's answer: the positions in the catalog of the products shown, best first, and how many
    products matched in all."""

    positions: NDArray[np.int64]
    matches: int


def read_catalog(data: bytes) -> Catalog:
    with np.load(io.BytesIO(data), allow_pickle=False) as npz:
        return Catalog(
            product_ids=npz["product_ids"],
            names=npz["names"],
            categories=npz["categories"],
            prices=npz["prices"] if "prices" in npz.files else None,
        )


class CurrentDataset(Protocol):
    def current(self, org_id: str) -> DatasetVersion | None: ...


class BlobReader(Protocol):
    def get(self, key: str) -> bytes: ...


@dataclass(frozen=True)
class Catalogs:
    """The catalog of each organization's dataset in force."""

    datasets: CurrentDataset
    blobs: BlobReader

    def listing(self, org_id: str, product_id: str) -> Listing:
        """What the dataset in force says of ``product_id`` (:data:`Listing`); ``unknown`` for a
        version stored before its catalog, or its prices, were kept."""
        current = self.datasets.current(org_id)
        if current is None:
            return "no_products"
        key = current.keys.get("catalog")
        if key is None:
            return "unknown"
        catalog = read_catalog(self.blobs.get(key))
        at = np.flatnonzero(catalog.product_ids == product_id)
        if at.size == 0:
            return "unlisted"
        if catalog.prices is None:
            return "unknown"
        price = float(catalog.prices[at[0]])
        return "priced" if np.isfinite(price) and price > 0 else "no_price"


def search_catalog(catalog: Catalog, text: str, limit: int) -> Found:
    """The products whose id or name contains ``text`` (case ignored), best first (see the module
    docstring), at most ``limit``; with no text, the first ``limit`` products by id."""
    wanted = text.strip().lower()
    size = catalog.product_ids.size
    if not wanted or size == 0:
        return Found(positions=np.arange(min(limit, size), dtype=np.int64), matches=size)
    ids = np.char.lower(catalog.product_ids)
    names = np.char.lower(catalog.names)
    in_id = np.char.find(ids, wanted) >= 0
    in_name = np.char.find(names, wanted) >= 0
    word = np.char.find(np.char.add(" ", names), " " + wanted) >= 0
    rank = np.select(
        [
            ids == wanted,
            np.char.startswith(ids, wanted),
            np.char.startswith(names, wanted),
            word,
            in_id | in_name,
        ],
        [0, 1, 2, 3, 4],
        default=5,
    )
    matched = np.flatnonzero(rank < 5)
    order = matched[np.argsort(rank[matched], kind="stable")]  # within a rank, by id
    return Found(positions=order[:limit].astype(np.int64), matches=int(matched.size))
