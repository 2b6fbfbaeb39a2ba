"""Benchmark: the hosted checkout's paid orders as a sync reads them (issue 22, item 4): the sync that
compacts a backlog of single orders (one JSON object each in the data bucket), before and after
reading them many requests at a time into one file.

Before (until 2026-11-28): one GET at a time into a file per order, the engine reading the files
(2,000 a read), the replaced objects deleted one request at a time. After: ``CONCURRENT_REQUESTS``
GETs at a time into one file, which the engine reads as one, the DELETEs as many at a time, at most
``SINGLES_PER_SYNC`` orders a sync (``shared/payments/order_files.py``).

Two parts, each side by side in one run (the machine is shared):

- ``checkout_orders.engine.<orders>.*``: the engine alone on local files, ``CHECKOUT_ORDERS_ENGINE``
  orders (default 20,000) paid over 365 days: the compacting sync reading them as single files, the
  same reading them from one file, and a later sync reading the 365 parts plus one day's new orders.
- ``checkout_orders.s3.<orders>.*``: the data bucket on a local S3 (moto's server over HTTP, SSE-KMS
  as the template's bucket), ``CHECKOUT_ORDERS_S3`` orders (default 20,000): the first sync that
  meets them, both ways, on the same objects. A local GET costs moto's CPU rather than S3's tens of
  milliseconds of waiting, so requests in flight at once gain less here than on S3; the request
  count (one GET and one DELETE per order, both ways) is the figure that carries over.

Run ``python -m benchmarks checkout_orders``.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import socket
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks._rows import BenchRow, bench_row

ORG = "bench-shop"
DAYS = 365
DAY_SECONDS = 86_400
START = 1_764_547_200  # 2025-12-01T00:00:00Z


def order(number: int, orders: int) -> dict[str, Any]:
    paid = START + int(number * DAYS * DAY_SECONDS / orders)
    return {
        "order_id": f"cs_test_{number:08d}",
        "product_id": f"p{number % 200}",
        "quantity": 1 + number % 3,
        "amount_total": 1250 * (1 + number % 3),
        "amount": 12.5 * (1 + number % 3),
        "currency": "usd",
        "paid_at": "",
        "paid_at_epoch": paid,
        "email": f"Buyer{number % 40_000}@Example.com",
        "name": "Ada Buyer",
    }


def write_singles(directory: Path, numbers: range, orders: int) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for number in numbers:
        path = directory / f"cs_test_{number:08d}.json"
        path.write_text(json.dumps(order(number, orders)))
        paths.append(path)
    return paths


def timed_read(
    parts: list[Path], singles: list[Path], write: bool, out: Path
) -> tuple[float, dict[str, Path]]:
    """Seconds of one sync's checkout-order step in the engine (read; with ``write``, the days that
    gained an order written again), and the day files written, copied into ``out``."""
    from shared.dataplane.engine import session
    from shared.datasources import sync

    with session() as workspace:
        started = time.perf_counter()
        days = sync.read_checkout_orders(workspace, parts, singles, {})
        written = sync.write_checkout_order_days(workspace, days) if write else {}
        seconds = time.perf_counter() - started
        kept = {}
        for day, path in written.items():
            # Out of the workspace (removed on leaving): the parts of the next sync.
            target = out / f"{day}.parquet"
            shutil.copyfile(path, target)
            kept[day] = target
        return seconds, kept


def engine_rows(orders: int) -> list[BenchRow]:
    root = Path(tempfile.mkdtemp(prefix="checkout-orders-"))
    try:
        for name in ("parts", "parts-after"):
            (root / name).mkdir()
        singles = write_singles(root / "singles", range(orders), orders)
        joined = root / "orders-since.json"
        joined.write_bytes(b"".join(path.read_bytes() + b"\n" for path in singles))
        before, _ = timed_read([], singles, write=True, out=root / "parts")
        compacting, parts = timed_read([], [joined], write=True, out=root / "parts")
        per_day = orders // DAYS
        new = write_singles(root / "new", range(orders, orders + per_day), orders)
        new_joined = root / "new.json"
        new_joined.write_bytes(b"".join(path.read_bytes() + b"\n" for path in new))
        after, _ = timed_read(sorted(parts.values()), [new_joined], write=True, out=root / "parts-after")
        name = f"checkout_orders.engine.{orders}"
        return [
            bench_row(
                f"{name}.compacting_sync_files",
                before,
                "s",
                notes=f"the compacting sync before: {orders:,} JSON files read (2,000 a read), "
                f"{len(parts)} day parts written",
            ),
            bench_row(
                f"{name}.compacting_sync",
                compacting,
                "s",
                baseline=before,
                target="< compacting_sync_files",
                passed=compacting < before,
                notes=f"the compacting sync: the {orders:,} orders fetched into one file, read, "
                f"{len(parts)} day parts written",
            ),
            bench_row(
                f"{name}.later_sync",
                after,
                "s",
                baseline=before,
                notes=f"{len(parts)} day parts + {per_day} new orders read, their day written again",
            ),
        ]
    finally:
        shutil.rmtree(root, ignore_errors=True)


def s3_rows(orders: int) -> list[BenchRow]:
    """The first sync that meets ``orders`` single orders in the bucket, both ways on the same objects:
    one GET at a time into a file each, the engine reading the files, one DELETE at a time (before);
    ``CONCURRENT_REQUESTS`` GETs at a time into one file, the engine reading it, the DELETEs as many
    at a time (after)."""
    from concurrent.futures import ThreadPoolExecutor

    import boto3

    from local.moto_server import MotoServer
    from shared.payments.order_files import SINGLES_PER_SYNC, CheckoutOrderFiles, day_part_key
    from shared.repositories.blobs import CONCURRENT_REQUESTS, S3BlobStore

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # not a line per request
    root = Path(tempfile.mkdtemp(prefix="checkout-orders-s3-"))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = MotoServer("127.0.0.1", port)
    server.start()
    try:
        from botocore.config import Config

        url = f"http://127.0.0.1:{port}"
        options: dict[str, Any] = {
            "endpoint_url": url,
            "region_name": "eu-west-1",
            "aws_access_key_id": "test",
            "aws_secret_access_key": "test",
        }
        s3 = boto3.client(
            "s3",
            config=Config(max_pool_connections=CONCURRENT_REQUESTS, s3={"addressing_style": "path"}),
            **options,
        )
        s3.create_bucket(Bucket="data", CreateBucketConfiguration={"LocationConstraint": "eu-west-1"})
        key_id = boto3.client("kms", **options).create_key()["KeyMetadata"]["KeyId"]
        blobs = S3BlobStore(s3, "data", key_id)
        keys = [f"checkout-orders/{ORG}/cs_test_{number:08d}.json" for number in range(orders)]

        def put_all() -> None:
            with ThreadPoolExecutor(max_workers=8) as pool:
                list(
                    pool.map(
                        lambda n: blobs.put(keys[n], json.dumps(order(n, orders)).encode()), range(orders)
                    )
                )

        put_all()
        # Before: one request at a time, a file per order, the engine reading the files
        (root / "before").mkdir()
        (root / "parts-before").mkdir()
        started = time.perf_counter()
        listed = blobs.keys(f"checkout-orders/{ORG}/")
        paths = []
        for number, key in enumerate(listed):
            path = root / "before" / f"order-{number}.json"
            blobs.download(key, path)
            paths.append(path)
        gather_before = time.perf_counter() - started
        engine_before, days_before = timed_read([], paths, write=True, out=root / "parts-before")
        # After: the sync's own gather (a share of SINGLES_PER_SYNC at most, into one file)
        files = CheckoutOrderFiles(blobs)
        (root / "after").mkdir()
        (root / "parts").mkdir()
        started = time.perf_counter()
        found = files.gather(ORG, root / "after")
        gather_after = time.perf_counter() - started
        engine_after, days = timed_read(found.part_paths, found.single_paths, write=True, out=root / "parts")
        started = time.perf_counter()
        files.compact(ORG, found, days)
        compaction_after = time.perf_counter() - started
        # The compaction before (the parts PUT, then one DELETE at a time), on the objects written again
        put_all()
        started = time.perf_counter()
        for day, path in days_before.items():
            blobs.upload(day_part_key(ORG, day, "before"), path, "application/vnd.apache.parquet")
        for key in keys:
            blobs.delete(key)
        compaction_before = time.perf_counter() - started
        before = gather_before + engine_before + compaction_before
        after = gather_after + engine_after + compaction_after
        name = f"checkout_orders.s3.{orders}"
        return [
            bench_row(f"{name}.gets", len(found.singles), "GETs", notes="one per order, both ways"),
            bench_row(
                f"{name}.gather_before", gather_before, "s", notes="LIST + one GET at a time, a file each"
            ),
            bench_row(
                f"{name}.gather_after",
                gather_after,
                "s",
                baseline=gather_before,
                notes=f"LIST + {CONCURRENT_REQUESTS} GETs at a time into one file "
                f"(at most {SINGLES_PER_SYNC:,} a sync)",
            ),
            bench_row(
                f"{name}.engine_before", engine_before, "s", notes=f"{orders:,} files read, days written"
            ),
            bench_row(
                f"{name}.engine_after",
                engine_after,
                "s",
                baseline=engine_before,
                notes="one file read, days written",
            ),
            bench_row(
                f"{name}.compaction_before",
                compaction_before,
                "s",
                notes=f"{len(days_before)} parts PUT, one DELETE at a time",
            ),
            bench_row(
                f"{name}.compaction_after",
                compaction_after,
                "s",
                baseline=compaction_before,
                notes=f"{len(days)} parts PUT, the DELETEs {CONCURRENT_REQUESTS} at a time",
            ),
            bench_row(
                f"{name}.first_sync_before",
                before,
                "s",
                notes="gather + engine + deletes, one request at a time (local S3 answers faster than S3)",
            ),
            bench_row(
                f"{name}.first_sync_after",
                after,
                "s",
                baseline=before,
                target="< first_sync_before",
                passed=after < before,
                notes="gather + engine + compaction, concurrent requests, one file",
            ),
        ]
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)


def run() -> list[BenchRow]:
    engine = [int(s) for s in os.environ.get("CHECKOUT_ORDERS_ENGINE", "20000").split(",") if s]
    bucket = [int(s) for s in os.environ.get("CHECKOUT_ORDERS_S3", "20000").split(",") if s]
    rows: list[BenchRow] = []
    for orders in engine:
        rows.extend(engine_rows(orders))
    for orders in bucket:
        rows.extend(s3_rows(orders))
    return rows


if __name__ == "__main__":
    for row in run():
        print(json.dumps(row))
