"""The hosted checkout's paid orders as each sync reads them from the data bucket: one Parquet file per
day, plus the orders paid since the last sync, one small JSON object each (docs/data-plane.md).

The webhook writes one object per paid order (``shared.payments.webhooks.buyer_key``): S3 has no
append, and deliveries run in parallel. Left so, every sync would download every order ever paid,
one GET each (100,000 orders: 100,000 GETs, most of a function's 15 minutes). So each sync compacts
what it read: every day that gained an order gets one new Parquet part holding the whole day, written
before the objects it replaces are deleted. A sync then reads one part per day and the orders since.

No order is lost to two syncs compacting at once: an object is deleted only by the sync that read it
and wrote a part holding its rows first; two such parts of a day hold the same orders, and the
engine keeps one row per order id.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from shared.records.payments import checkout_orders_prefix

DAYS = "days/"


class OrderFileStore(Protocol):
    """The data bucket (``S3BlobStore``)."""

    def keys(self, prefix: str) -> list[str]: ...
    def download(self, key: str, path: Path) -> None: ...
    def upload(self, key: str, path: Path, content_type: str = "application/octet-stream") -> None: ...
    def delete(self, key: str) -> None: ...


def day_part_key(org_id: str, day: str, part: str) -> str:
    """A compacted day's Parquet part: ``checkout-orders/<org>/days/<YYYY-MM-DD>/<part>.parquet``."""
    return f"{checkout_orders_prefix(org_id)}{DAYS}{day}/{part}.parquet"


@dataclass(frozen=True)
class OrderFiles:
    """What a sync found and downloaded: the day parts (by day) and the single orders not yet compacted."""

    parts: dict[str, list[tuple[str, Path]]] = field(default_factory=dict)
    singles: list[tuple[str, Path]] = field(default_factory=list)

    @property
    def part_paths(self) -> list[Path]:
        return [path for day in sorted(self.parts) for _, path in self.parts[day]]

    @property
    def single_paths(self) -> list[Path]:
        return [path for _, path in self.singles]


@dataclass(frozen=True)
class Compacted:
    """What a compaction did: the parts written, and the objects they replaced (deleted)."""

    days: int
    parts_deleted: int
    singles_deleted: int


@dataclass
class CheckoutOrderFiles:
    blobs: OrderFileStore

    def gather(self, org_id: str, directory: Path) -> OrderFiles:
        """Download the organization's day parts and single orders into ``directory`` (one listing of
        the prefix; objects of any other shape under it are left alone)."""
        prefix = checkout_orders_prefix(org_id)
        parts: dict[str, list[tuple[str, Path]]] = {}
        singles: list[tuple[str, Path]] = []
        for number, key in enumerate(self.blobs.keys(prefix)):
            name = key[len(prefix) :]
            if name.startswith(DAYS) and name.endswith(".parquet") and name.count("/") == 2:
                day = name.split("/")[1]
                path = directory / f"part-{number}.parquet"
                parts.setdefault(day, []).append((key, path))
            elif "/" not in name and name.endswith(".json"):
                path = directory / f"order-{number}.json"
                singles.append((key, path))
            else:
                continue
            self.blobs.download(key, path)
        return OrderFiles(parts=parts, singles=singles)

    def compact(self, org_id: str, found: OrderFiles, days: Mapping[str, Path]) -> Compacted:
        """Store ``days`` (each a day's whole orders, as the engine wrote them from ``found``) as new
        parts, then delete the parts of those days and the single orders ``found`` held, which they
        replace. Nothing is deleted unless every new part was stored."""
        for day, path in days.items():
            self.blobs.upload(
                day_part_key(org_id, day, uuid.uuid4().hex), path, "application/vnd.apache.parquet"
            )
        replaced = [key for day in days for key, _ in found.parts.get(day, [])]
        for key in replaced:
            self.blobs.delete(key)
        for key, _ in found.singles:
            self.blobs.delete(key)
        return Compacted(days=len(days), parts_deleted=len(replaced), singles_deleted=len(found.singles))
