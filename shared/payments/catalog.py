"""The product a checkout sells, read from the organization's synced products file.

The dataset version in force holds the products as ``products.parquet`` (docs/data-plane.md); one
product is read from it by the columnar engine (a named query filtering on ``product_id``), never by
turning the file into one object per row. The file is immutable for its version, so a container keeps
the latest few it downloaded under ``/tmp`` and reads them again until the shop syncs anew.

A version synced before the engine stored its products as CSV; it has no Parquet file, and its
products are unknown to the checkout until the shop syncs again.
"""

from __future__ import annotations

import hashlib
import math
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from shared.records.datasources import DatasetVersion

# Downloaded products files a container keeps (each a few hundred kB at 20,000 products).
KEPT_FILES = 8


class CurrentDataset(Protocol):
    def current(self, org_id: str) -> DatasetVersion | None: ...


class Downloads(Protocol):
    def download(self, key: str, path: Path) -> None: ...


@dataclass(frozen=True)
class CatalogProduct:
    product_id: str
    name: str
    price: float | None = None


class ProductCatalog:
    """Looks products up in each organization's synced products file."""

    def __init__(self, datasets: CurrentDataset, blobs: Downloads, directory: Path | None = None) -> None:
        self._datasets = datasets
        self._blobs = blobs
        self._directory = directory or Path(tempfile.gettempdir()) / "checkout-catalog"

    def product(self, org_id: str, product_id: str) -> CatalogProduct | None:
        """``product_id`` of the organization's dataset in force, or None when there is no dataset,
        it holds no products file the engine reads, or the product is not in it. A product without a
        name is shown by its id; one without a price has ``price`` None."""
        dataset = self._datasets.current(org_id)
        key = dataset.keys.get("products") if dataset else None
        if key is None or not key.endswith(".parquet"):
            return None
        from shared.dataplane.runner import query_runner

        path = self._local_copy(key)
        with query_runner() as engine:
            rows = engine.rows("read_checkout_product", {"path": str(path), "product_id": product_id})
        if not rows:
            return None
        name, price = rows[0]
        usable = price is not None and math.isfinite(price) and price > 0
        return CatalogProduct(
            product_id=product_id, name=str(name or product_id), price=price if usable else None
        )

    def _local_copy(self, key: str) -> Path:
        """The object, downloaded once per container (a version's files never change)."""
        self._directory.mkdir(parents=True, exist_ok=True)
        path = self._directory / f"{hashlib.sha256(key.encode()).hexdigest()[:32]}.parquet"
        if not path.exists():
            partial = path.with_suffix(".part")
            self._blobs.download(key, partial)
            partial.replace(path)
            kept = sorted(self._directory.glob("*.parquet"), key=lambda p: p.stat().st_mtime, reverse=True)
            for old in kept[KEPT_FILES:]:
                old.unlink(missing_ok=True)
        return path
