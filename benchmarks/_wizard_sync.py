"""Child process of ``benchmarks.wizard``: one sync of a 1M-customer, 5M-order shop, so its peak
memory (``ru_maxrss``) is the sync's own. Prints one JSON line: wall and CPU seconds of the sync (the
machine is shared, so CPU time says what the sync itself cost), peak memory, and the load average."""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from benchmarks._bulk_blobs import BulkBlobs
from shared.datasources.models import SyncRequest
from shared.datasources.service import DataSourceService, NoRefunds
from shared.records.datasources import DatasetVersion, SyncRecord
from shared.records.uploads import UploadForm

ORG = "bench-shop"


class MemoryBlobs(BulkBlobs):
    def __init__(self) -> None:
        self.objects: dict[str, bytes] = {}

    def put(self, key: str, data: bytes, content_type: str = "application/octet-stream") -> None:
        self.objects[key] = data

    def get(self, key: str) -> bytes:
        return self.objects[key]

    def download(self, key: str, path: Path) -> None:
        path.write_bytes(self.objects[key])

    def upload(self, key: str, path: Path, content_type: str = "application/octet-stream") -> None:
        self.objects[key] = path.read_bytes()

    def delete(self, key: str) -> None:
        self.objects.pop(key, None)

    def size(self, key: str) -> int | None:
        return len(self.objects[key]) if key in self.objects else None

    def upload_form(self, key: str, content_type: str, max_bytes: int, expires_seconds: int) -> UploadForm:
        return UploadForm(f"memory://{key}", {"key": key})

    def keys(self, prefix: str) -> list[str]:
        return sorted(key for key in self.objects if key.startswith(prefix))


class MemoryDatasets:
    def __init__(self) -> None:
        self.versions: dict[str, DatasetVersion] = {}
        self.syncs: dict[str, SyncRecord] = {}
        self.pointer: str | None = None

    def store(self, record: DatasetVersion) -> None:
        # In force at once: the benchmark trains nothing, and its purchase training would publish it.
        self.versions[record.version] = record
        self.pointer = record.version

    def latest(self, org_id: str) -> DatasetVersion | None:
        return next(iter(self.list_versions(org_id)), None)

    def current(self, org_id: str) -> DatasetVersion | None:
        return self.versions.get(self.pointer) if self.pointer else None

    def get(self, org_id: str, version: str) -> DatasetVersion | None:
        return self.versions.get(version)

    def list_versions(self, org_id: str) -> list[DatasetVersion]:
        return sorted(self.versions.values(), key=lambda v: v.version, reverse=True)

    def put_sync(self, record: SyncRecord) -> None:
        self.syncs[record.sync_id] = record

    def get_sync(self, org_id: str, sync_id: str) -> SyncRecord | None:
        return self.syncs.get(sync_id)

    def list_syncs(self, org_id: str) -> list[SyncRecord]:
        return sorted(self.syncs.values(), key=lambda s: s.sync_id, reverse=True)


def shop_files(n_customers: int, n_orders: int, n_products: int = 5_000) -> dict[str, bytes]:
    """CSV files of a shop: every customer with an e-mail, most with a name and phone."""
    rng = np.random.default_rng(0)
    countries = np.array(["GB", "US", "CA", "AU", "DE", "FR"])[rng.integers(0, 6, n_customers)]
    customers = "user_id,email,first_name,last_name,phone,country\n" + "".join(
        f"u{i:07d},shopper{i}@example.com,Ann,Lee,+44 7700 9{i % 100_000:05d},{c}\n"
        if i % 4
        else f"u{i:07d},shopper{i}@example.com,,,,{c}\n"
        for i, c in enumerate(countries.tolist())
    )
    products = "product_id,name,category,price\n" + "".join(
        f"p{i:05d},Item {i},Category {i % 40},{(i % 90) + 0.99}\n" for i in range(n_products)
    )
    users = rng.integers(0, n_customers, n_orders).tolist()
    items = rng.integers(0, n_products, n_orders).tolist()
    seconds = rng.integers(1_730_000_000, 1_790_000_000, n_orders).astype("datetime64[s]")
    stamps = np.datetime_as_string(seconds, unit="s").tolist()
    orders = "order_id,user_id,product_id,quantity,amount,timestamp\n" + "".join(
        f"o{j},u{u:07d},p{p:05d},1,19.5,{t}\n"
        for j, (u, p, t) in enumerate(zip(users, items, stamps, strict=True))
    )
    return {"customers": customers.encode(), "products": products.encode(), "orders": orders.encode()}


def main(n_customers: int, n_orders: int) -> None:
    files = shop_files(n_customers, n_orders)
    input_mb = sum(len(data) for data in files.values()) / 1e6
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    blobs, datasets = MemoryBlobs(), MemoryDatasets()
    keys = {kind: f"data-sources/{ORG}/bench/{kind}.csv" for kind in files}
    for kind, data in files.items():
        blobs.put(keys[kind], data)
    del files
    service = DataSourceService(
        datasets=datasets,
        blobs=blobs,
        refunds=NoRefunds(),
        clock=lambda: datetime.now(UTC),
        max_file_bytes=2**31,
    )
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu_before = usage.ru_utime + usage.ru_stime
    started = time.perf_counter()
    sync = service.start_sync(ORG, SyncRequest.model_validate({"files": keys}), lambda *_: None)
    outcome = service.run_sync(ORG, sync.sync_id)
    seconds = time.perf_counter() - started
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu_seconds = usage.ru_utime + usage.ru_stime - cpu_before
    peak_kb = usage.ru_maxrss
    version = datasets.current(ORG)
    print(
        json.dumps(
            {
                "seconds": seconds,
                "cpu_seconds": cpu_seconds,
                "load_average": os.getloadavg()[0],
                "state": outcome.state,
                "rows": version.row_counts if version else None,
                "input_mb": input_mb,
                "peak_rss_mb": peak_kb / 1024,
                "rss_before_sync_mb": rss_before / 1024,
            }
        )
    )


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))
