"""The checkout's order objects a sync gathers and compacts (``shared/payments/order_files.py``):
what is read (the single orders into one file, at most a sync's share of them), and that nothing is
deleted before the parts replacing it are stored."""

from __future__ import annotations

from collections.abc import Sequence
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

    def download_all(self, targets: Sequence[tuple[str, Path]]) -> None:
        for key, path in targets:
            path.write_bytes(self.objects[key])

    def fetch_into(self, keys: Sequence[str], path: Path, separator: bytes = b"\n") -> None:
        path.write_bytes(b"".join(self.objects[key] + separator for key in keys))

    def upload(self, key: str, path: Path, content_type: str = "application/octet-stream") -> None:
        if self.refuse_uploads:
            raise OSError("the bucket refused the upload")
        self.objects[key] = path.read_bytes()

    def delete_all(self, keys: Sequence[str]) -> None:
        for key in keys:
            del self.objects[key]


def test_gather_reads_day_parts_and_single_orders_and_leaves_anything_else(tmp_path: Path) -> None:
    # Given: a day part, two single orders, and an object of another shape under the prefix
    bucket = Bucket(
        {
            f"{PREFIX}days/2026-11-20/p1.parquet": b"part",
            f"{PREFIX}cs_a.json": b'{"order_id": "cs_a"}',
            f"{PREFIX}cs_b.json": b'{"order_id": "cs_b"}',
            f"{PREFIX}notes/readme.txt": b"?",
        }
    )
    # When
    found = CheckoutOrderFiles(bucket).gather(ORG, tmp_path)
    # Then: the part in a file of its own, the single orders in one file, one a line
    assert {day: [key for key, _ in held] for day, held in found.parts.items()} == {
        "2026-11-20": [f"{PREFIX}days/2026-11-20/p1.parquet"]
    }
    assert found.singles == [f"{PREFIX}cs_a.json", f"{PREFIX}cs_b.json"]
    assert [path.read_bytes() for path in found.part_paths] == [b"part"]
    assert [path.read_bytes() for path in found.single_paths] == [
        b'{"order_id": "cs_a"}\n{"order_id": "cs_b"}\n'
    ]
    assert (found.singles_left, len(list(tmp_path.iterdir()))) == (0, 2)


def test_a_backlog_is_read_a_syncs_share_at_a_time_and_the_rest_waits_for_the_next(tmp_path: Path) -> None:
    # Given: five single orders paid since the last sync, and a sync's share of two
    bucket = Bucket({f"{PREFIX}cs_{n}.json": f'{{"order_id": "cs_{n}"}}'.encode() for n in range(5)})
    files = CheckoutOrderFiles(bucket)
    # When: syncs follow one another, each compacting what it read
    taken: list[list[str]] = []
    left: list[int] = []
    for number in range(3):
        directory = tmp_path / str(number)
        directory.mkdir()
        found = files.gather(ORG, directory, limit=2)
        taken.append(found.singles)
        left.append(found.singles_left)
        files.compact(ORG, found, {})
    # Then: each read two at most, in one file, and said how many it left; together they read every
    # order once, and nothing is left in the bucket
    assert [len(keys) for keys in taken] == [2, 2, 1]
    assert left == [3, 1, 0]
    assert sorted(key for keys in taken for key in keys) == sorted(f"{PREFIX}cs_{n}.json" for n in range(5))
    assert bucket.keys(PREFIX) == []


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
