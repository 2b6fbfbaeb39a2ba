"""The checkout's order objects a sync gathers and compacts (``shared/payments/order_files.py``):
what is read, and that nothing is deleted before the parts replacing it are stored."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from shared.payments.order_files import CheckoutOrderFiles

ORG = "org-1"
PREFIX = f"checkout-orders/{ORG}/"


@dataclass
class Bucket:
    objects: dict[str, bytes] = field(default_factory=dict)
    refuse_uploads: bool = False

    def keys(self, prefix: str) -> list[str]:
        return sorted(key for key in self.objects if key.startswith(prefix))

    def download(self, key: str, path: Path) -> None:
        path.write_bytes(self.objects[key])

    def upload(self, key: str, path: Path, content_type: str = "application/octet-stream") -> None:
        if self.refuse_uploads:
            raise OSError("the bucket refused the upload")
        self.objects[key] = path.read_bytes()

    def delete(self, key: str) -> None:
        del self.objects[key]


def test_gather_reads_day_parts_and_single_orders_and_leaves_anything_else(tmp_path: Path) -> None:
    # Given: a day part, two single orders, and an object of another shape under the prefix
    bucket = Bucket(
        {
            f"{PREFIX}days/2026-11-20/p1.parquet": b"part",
            f"{PREFIX}cs_a.json": b"{}",
            f"{PREFIX}cs_b.json": b"{}",
            f"{PREFIX}notes/readme.txt": b"?",
        }
    )
    # When
    found = CheckoutOrderFiles(bucket).gather(ORG, tmp_path)
    # Then
    assert {day: [key for key, _ in held] for day, held in found.parts.items()} == {
        "2026-11-20": [f"{PREFIX}days/2026-11-20/p1.parquet"]
    }
    assert [key for key, _ in found.singles] == [f"{PREFIX}cs_a.json", f"{PREFIX}cs_b.json"]
    assert [path.read_bytes() for path in found.part_paths] == [b"part"]
    assert len(list(tmp_path.iterdir())) == 3


def test_compaction_replaces_the_days_parts_and_the_single_orders(tmp_path: Path) -> None:
    bucket = Bucket(
        {
            f"{PREFIX}days/2026-11-20/p1.parquet": b"old",
            f"{PREFIX}days/2026-11-19/p0.parquet": b"untouched",
            f"{PREFIX}cs_a.json": b"{}",
        }
    )
    files = CheckoutOrderFiles(bucket)
    found = files.gather(ORG, tmp_path)
    new_day = tmp_path / "new.parquet"
    new_day.write_bytes(b"whole day")
    # When
    done = files.compact(ORG, found, {"2026-11-20": new_day})
    # Then
    [written] = bucket.keys(f"{PREFIX}days/2026-11-20/")
    assert bucket.objects[written] == b"whole day"
    assert bucket.keys(PREFIX) == sorted([written, f"{PREFIX}days/2026-11-19/p0.parquet"])
    assert (done.days, done.parts_deleted, done.singles_deleted) == (1, 1, 1)


def test_nothing_is_deleted_when_a_new_part_is_not_stored(tmp_path: Path) -> None:
    bucket = Bucket({f"{PREFIX}days/2026-11-20/p1.parquet": b"old", f"{PREFIX}cs_a.json": b"{}"})
    files = CheckoutOrderFiles(bucket)
    found = files.gather(ORG, tmp_path)
    new_day = tmp_path / "new.parquet"
    new_day.write_bytes(b"whole day")
    bucket.refuse_uploads = True
    # When
    with pytest.raises(OSError, match="refused the upload"):
        files.compact(ORG, found, {"2026-11-20": new_day})
    # Then
    assert bucket.keys(PREFIX) == [f"{PREFIX}cs_a.json", f"{PREFIX}days/2026-11-20/p1.parquet"]
