"""The hosted checkout's paid orders as each sync reads them from the data bucket: one Parquet file per
day, plus the orders paid since the last sync, one small JSON object each (docs/data-plane.md).

The webhook writes one object per paid order (``shared.payments.webhooks.buyer_key``): S3 has no
append, and deliveries run in parallel. Left so, every sync would download every order ever paid,
one GET each (100,000 orders: 100,000 GETs, most of a function's 15 minutes). So each sync compacts
what it read: every day that gained an order gets one new Parquet part holding the whole day, written
before the objects it replaces are deleted. A sync then reads one part per day and the orders since.

The orders since are read many at once into one local file, which the engine reads as one (100,000
files cost it minutes; one file of 100,000 orders, a moment), and a sync takes at most
``SINGLES_PER_SYNC`` of them: the first sync that meets a large backlog (a shop selling for months
before its first sync, or syncs stopped a while) compacts that many and leaves the rest, still in
the bucket, to the next syncs, so no run outgrows its function's time and each one makes progress.

No order is lost to two syncs compacting at once: an object is deleted only by the sync that read it
and wrote a part holding its rows first; two such parts of a day hold the same orders, and the
engine keeps one row per order id.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from shared.records.payments import checkout_orders_prefix

DAYS = "days/"
# The single orders one sync reads and compacts at most (32 at a time, S3's tens of milliseconds each:
# under a minute to read, as long to delete); the rest wait in the bucket for the next sync.
SINGLES_PER_SYNC = 50_000


class OrderFileStore(Protocol):
    """The data bucket (``S3BlobStore``)."""

    def keys(self, prefix: str) -> list[str]: ...
    def download_all(self, targets: Sequence[tuple[str, Path]]) -> None: ...
    def fetch_into(self, keys: Sequence[str], path: Path, separator: bytes = b"\n") -> None: ...
    def upload(self, key: str, path: Path, content_type: str = "application/octet-stream") -> None: ...
    def delete_all(self, keys: Sequence[str]) -> None: ...


def day_part_key(org_id: str, day: str, part: str) -> str:
    """A compacted day's Parquet part: ``checkout-orders/<org>/days/<YYYY-MM-DD>/<part>.parquet``."""
    return f"{checkout_orders_prefix(org_id)}{DAYS}{day}/{part}.parquet"


@dataclass(frozen=True)
class OrderFiles:
    """What a sync found and downloaded: the day parts (by day), the single orders read (their keys,
    all in one local file of JSON objects, one a line) and how many more were left for the next sync."""

    parts: dict[str, list[tuple[str, Path]]] = field(default_factory=dict)
    singles: list[str] = field(default_factory=list)
    singles_file: Path | None = None
    singles_left: int = 0

    @property
    def part_paths(self) -> list[Path]:
        return [path for day in sorted(self.parts) for _, path in self.parts[day]]

    @property
    def single_paths(self) -> list[Path]:
        return [self.singles_file] if self.singles_file is not None and self.singles else []


@dataclass(frozen=True)
class Compacted:
    """What a compaction did: the parts written, and the objects they replaced (deleted)."""

    days: int
    parts_deleted: int
    singles_deleted: int


@dataclass
class CheckoutOrderFiles:
    blobs: OrderFileStore

    def gather(self, org_id: str, directory: Path, limit: int | None = None) -> OrderFiles:
        """Download the organization's day parts and at most ``limit`` (``SINGLES_PER_SYNC``) single
        orders into ``directory`` (one listing of the prefix; the singles into one file; objects of any
        other shape under the prefix are left alone)."""
        limit = SINGLES_PER_SYNC if limit is None else limit
        prefix = checkout_orders_prefix(org_id)
        parts: dict[str, list[tuple[str, Path]]] = {}
        singles: list[str] = []
        for number, key in enumerate(self.blobs.keys(prefix)):
            name = key[len(prefix) :]
            if name.startswith(DAYS) and name.endswith(".parquet") and name.count("/") == 2:
                day = name.split("/")[1]
                parts.setdefault(day, []).append((key, directory / f"part-{number}.parquet"))
            elif "/" not in name and name.endswith(".json"):
                singles.append(key)
        self.blobs.download_all([target for day in sorted(parts) for target in parts[day]])
        taken, left = singles[:limit], len(singles) - min(len(singles), limit)
        singles_file = directory / "orders-since.json"
        self.blobs.fetch_into(taken, singles_file)
        return OrderFiles(parts=parts, singles=taken, singles_file=singles_file, singles_left=left)

    def compact(self, org_id: str, found: OrderFiles, days: Mapping[str, Path]) -> Compacted:
        """Store ``days`` (each a day's whole orders, as the engine wrote them from ``found``) as new
        parts, then delete the parts of those days and the single orders ``found`` held, which they
        replace. Nothing is deleted unless every new part was stored."""
        for day, path in days.items():
            self.blobs.upload(
                day_part_key(org_id, day, uuid.uuid4().hex), path, "application/vnd.apache.parquet"
            )
        replaced = [key for day in days for key, _ in found.parts.get(day, [])]
        self.blobs.delete_all(replaced)
        self.blobs.delete_all(found.singles)
        return Compacted(days=len(days), parts_deleted=len(replaced), singles_deleted=len(found.singles))
