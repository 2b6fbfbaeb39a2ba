"""Benchmark: the hosted checkout's paid orders as a sync reads them (issue 22, item 4), before and
after the daily compaction (``shared/payments/order_files.py``).

Before: every sync downloaded every order ever paid, one JSON object each, and the engine read them
all. After: a sync downloads one Parquet part per day of sales plus the orders paid since the last
sync, and writes the days that gained an order again whole.

Two parts, each side by side in one run (the machine is shared):

- ``checkout_orders.engine.<orders>.*``: the engine alone on local files, ``CHECKOUT_ORDERS_ENGINE``
  orders (default 100,000) paid over 365 days: reading them as single JSON files (every sync before),
  the one sync that compacts them all (read, and write 365 day parts), and a later sync reading the
  365 parts plus one day's new orders and writing that day again.
- ``checkout_orders.s3.<orders>.*``: the data bucket on a local S3 (moto's server over HTTP, SSE-KMS
  as the template's bucket), ``CHECKOUT_ORDERS_S3`` orders (default 5,000; putting 100,000 objects
  into moto takes most of an hour): the objects gathered (one LIST per 1,000, one GET each) before
  and after compaction, with the GET count. A local GET is faster than S3's (tens of milliseconds
  a request from a function is typical), so the request count is the figure that carries over.

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
        days = sync.read_checkout_orders(workspace, parts, singles)
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
        before, _ = timed_read([], singles, write=False, out=root / "parts")
        compacting, parts = timed_read([], singles, write=True, out=root / "parts")
        per_day = orders // DAYS
        new = write_singles(root / "new", range(orders, orders + per_day), orders)
        after, _ = timed_read(sorted(parts.values()), new, write=True, out=root / "parts-after")
        name = f"checkout_orders.engine.{orders}"
        return [
            bench_row(
                f"{name}.read_singles",
                before,
                "s",
                notes=f"every sync before: {orders:,} JSON files read by the engine",
            ),
            bench_row(
                f"{name}.compacting_sync",
                compacting,
                "s",
                baseline=before,
                notes=f"the one sync that compacts: read {orders:,} files, write {len(parts)} day parts",
            ),
            bench_row(
                f"{name}.later_sync",
                after,
                "s",
                baseline=before,
                target="< read_singles",
                passed=after < before,
                notes=f"{len(parts)} day parts + {per_day} new orders read, their day written again",
            ),
        ]
    finally:
        shutil.rmtree(root, ignore_errors=True)


def s3_rows(orders: int) -> list[BenchRow]:
    import boto3

    from local.moto_server import MotoServer
    from shared.payments.order_files import CheckoutOrderFiles
    from shared.repositories.blobs import S3BlobStore

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # not a line per request
    root = Path(tempfile.mkdtemp(prefix="checkout-orders-s3-"))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = MotoServer("127.0.0.1", port)
    server.start()
    try:
        url = f"http://127.0.0.1:{port}"
        options: dict[str, Any] = {
            "endpoint_url": url,
            "region_name": "eu-west-1",
            "aws_access_key_id": "test",
            "aws_secret_access_key": "test",
        }
        s3 = boto3.client("s3", **options)
        s3.create_bucket(Bucket="data", CreateBucketConfiguration={"LocationConstraint": "eu-west-1"})
        key_id = boto3.client("kms", **options).create_key()["KeyMetadata"]["KeyId"]
        blobs = S3BlobStore(s3, "data", key_id)
        for number in range(orders):
            blobs.put(
                f"checkout-orders/{ORG}/cs_test_{number:08d}.json", json.dumps(order(number, orders)).encode()
            )
        files = CheckoutOrderFiles(blobs)

        def gather(name: str) -> tuple[float, Any]:
            directory = root / name
            directory.mkdir()
            started = time.perf_counter()
            found = files.gather(ORG, directory)
            return time.perf_counter() - started, found

        before, found = gather("before")
        gets_before = len(found.singles) + len(found.part_paths)
        # The compaction, as the sync does it
        (root / "parts").mkdir()
        _, days = timed_read(found.part_paths, found.single_paths, write=True, out=root / "parts")
        started = time.perf_counter()
        files.compact(ORG, found, days)
        compaction = time.perf_counter() - started
        after, found_after = gather("after")
        gets_after = len(found_after.singles) + len(found_after.part_paths)
        name = f"checkout_orders.s3.{orders}"
        return [
            bench_row(f"{name}.gets_before", gets_before, "GETs", notes="every sync before: one per order"),
            bench_row(
                f"{name}.gets_after",
                gets_after,
                "GETs",
                baseline=gets_before,
                target=f"<= {DAYS}",
                passed=gets_after <= DAYS,
                notes="a sync after compaction: one per day of sales",
            ),
            bench_row(f"{name}.gather_before", before, "s", notes="LIST + GETs, local S3"),
            bench_row(
                f"{name}.gather_after",
                after,
                "s",
                baseline=before,
                notes="LIST + GETs of the day parts, local S3",
            ),
            bench_row(
                f"{name}.compaction",
                compaction,
                "s",
                notes=f"{len(days)} parts PUT, {orders:,} objects DELETEd one by one, local S3 (once)",
            ),
        ]
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)


def run() -> list[BenchRow]:
    engine = [int(s) for s in os.environ.get("CHECKOUT_ORDERS_ENGINE", "100000").split(",") if s]
    bucket = [int(s) for s in os.environ.get("CHECKOUT_ORDERS_S3", "5000").split(",") if s]
    rows: list[BenchRow] = []
    for orders in engine:
        rows.extend(engine_rows(orders))
    for orders in bucket:
        rows.extend(s3_rows(orders))
    return rows


if __name__ == "__main__":
    for row in run():
        print(json.dumps(row))
