"""The paths ``benchmarks.scale`` measures, each in a child process of its own (``benchmarks._scale_child``).

A path is a name, the template function it runs in (its ``MemorySize`` is what the peak is held to,
``tests/unit/test_memory_settings.py``), the largest shop it is measured at, and a ``measure``
function. ``measure(shop, workdir)`` runs in the child with the shop's CSV files on disk; it sets up
what it needs, times only the path itself and returns :class:`Measured`. The child's peak resident
memory (VmHWM, reset at its start: ``benchmarks._scale_child``) is the path's peak, setup included,
so setup is kept small.

Add a path: write its ``measure`` here (or in a module of your own imported here) and append it to
``PATHS``. Paths run in the order listed; a path may read what an earlier one left in ``workdir``
(the sync leaves the dataset version's objects under ``workdir/blobs``).
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from benchmarks._bulk_blobs import BulkBlobs
from benchmarks._scale_types import Measured, ScalePath, ShopSize, cpu_seconds
from shared.records.datasources import DatasetVersion, SyncRecord
from shared.records.uploads import UploadForm
from tools.large_shop import ShopFiles

if TYPE_CHECKING:
    from shared.datasources.service import DataSourceService

ORG = "scale-shop"


# --- stores on disk, counting calls ------------------------------------------------------------------


class DiskBlobs(BulkBlobs):
    """The data bucket as a directory: what S3BlobStore offers the services, with each call counted."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.calls = 0

    def _path(self, key: str) -> Path:
        return self.root / key

    def put(self, key: str, data: bytes, content_type: str = "application/octet-stream") -> None:
        self.calls += 1
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)

    def get(self, key: str) -> bytes:
        self.calls += 1
        return self._path(key).read_bytes()

    def open(self, key: str) -> BinaryIO:
        """The object as a stream, as S3BlobStore.open gives it."""
        self.calls += 1
        return self._path(key).open("rb")

    def get_range(self, key: str, start: int, end: int) -> bytes:
        """Bytes ``start`` to ``end`` inclusive, as an HTTP Range GET gives them."""
        self.calls += 1
        with self._path(key).open("rb") as file:
            file.seek(start)
            return file.read(end - start + 1)

    def size(self, key: str) -> int | None:
        path = self._path(key)
        return path.stat().st_size if path.exists() else None

    def download(self, key: str, path: Path) -> None:
        self.calls += 1
        _copy(self._path(key), path)

    def upload(self, key: str, path: Path, content_type: str = "application/octet-stream") -> None:
        self.calls += 1
        target = self._path(key)
        target.parent.mkdir(parents=True, exist_ok=True)
        _copy(path, target)

    def delete(self, key: str) -> None:
        self.calls += 1
        self._path(key).unlink(missing_ok=True)

    def start_parts(self, key: str, content_type: str = "application/octet-stream") -> str:
        self.calls += 1
        return key

    def put_part(self, key: str, upload: str, number: int, path: Path) -> str:
        self.calls += 1
        target = self.root / "_parts" / key / f"{number:05d}"
        target.parent.mkdir(parents=True, exist_ok=True)
        _copy(path, target)
        return f"{number:05d}"

    def finish_parts(self, key: str, upload: str, etags: Sequence[str]) -> None:
        """The parts joined into the object, as S3 joins them."""
        self.calls += 1
        target = self._path(key)
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("wb") as file:
            for etag in etags:
                part = self.root / "_parts" / key / etag
                with part.open("rb") as source:
                    shutil.copyfileobj(source, file, 8 << 20)
                part.unlink()

    def upload_form(self, key: str, content_type: str, max_bytes: int, expires_seconds: int) -> UploadForm:
        return UploadForm(f"file://{self._path(key)}", {"key": key})

    def keys(self, prefix: str) -> list[str]:
        """The keys under ``prefix``, in key order, as S3's listing gives them."""
        self.calls += 1
        found = self.root.glob(prefix + "**/*") if prefix.endswith("/") else self.root.glob(prefix + "*")
        return sorted(str(path.relative_to(self.root)) for path in found if path.is_file())


def _copy(source: Path, target: Path) -> None:
    with source.open("rb") as reader, target.open("wb") as writer:
        while chunk := reader.read(8 << 20):
            writer.write(chunk)


class DiskDatasets:
    """The dataset store as a JSON file per record, so later paths (other processes) read the version."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)

    def store(self, record: DatasetVersion) -> None:
        # In force at once: the paths train nothing, and its purchase training would publish it.
        (self.root / f"version-{record.version}.json").write_text(record.model_dump_json())
        (self.root / "current").write_text(record.version)

    def latest(self, org_id: str) -> DatasetVersion | None:
        return next(iter(self.list_versions(org_id)), None)

    def current(self, org_id: str) -> DatasetVersion | None:
        pointer = self.root / "current"
        return self.get(org_id, pointer.read_text()) if pointer.exists() else None

    def get(self, org_id: str, version: str) -> DatasetVersion | None:
        path = self.root / f"version-{version}.json"
        return DatasetVersion.model_validate_json(path.read_text()) if path.exists() else None

    def list_versions(self, org_id: str) -> list[DatasetVersion]:
        found = [DatasetVersion.model_validate_json(p.read_text()) for p in self.root.glob("version-*.json")]
        return sorted(found, key=lambda v: v.version, reverse=True)

    def put_sync(self, record: SyncRecord) -> None:
        (self.root / f"sync-{record.sync_id}.json").write_text(record.model_dump_json())

    def get_sync(self, org_id: str, sync_id: str) -> SyncRecord | None:
        path = self.root / f"sync-{sync_id}.json"
        return SyncRecord.model_validate_json(path.read_text()) if path.exists() else None

    def list_syncs(self, org_id: str) -> list[SyncRecord]:
        found = [SyncRecord.model_validate_json(p.read_text()) for p in self.root.glob("sync-*.json")]
        return sorted(found, key=lambda s: s.sync_id, reverse=True)


# --- the paths ---------------------------------------------------------------------------------------


def _sync_service(datasets: DiskDatasets, blobs: DiskBlobs) -> DataSourceService:
    """The sync job's service on disk, its engine limited as the wiring limits it
    (``Settings.engine_memory_mb``; the child sets the variable from the template)."""
    from shared.datasources.service import DataSourceService, NoRefunds

    fixed = os.environ.get("ENGINE_MEMORY_MB")
    return DataSourceService(
        datasets=datasets,
        blobs=blobs,
        refunds=NoRefunds(),
        clock=lambda: datetime.now(UTC),
        max_file_bytes=2**32,
        engine_memory_mb=int(fixed) if fixed else None,
    )


def measure_sync(size: ShopSize, shop: ShopFiles, workdir: Path) -> Measured:
    """The data-source sync job: the three uploaded files in, a published dataset version out."""
    from shared.datasources.models import SyncRequest

    blobs = DiskBlobs(workdir / "blobs")
    datasets = DiskDatasets(workdir / "datasets")
    keys = {kind: f"data-sources/{ORG}/scale/{path.name}" for kind, path in shop.by_kind().items()}
    for kind, path in shop.by_kind().items():
        blobs.upload(keys[kind], path)
    blobs.calls = 0
    service = _sync_service(datasets, blobs)
    sync = service.start_sync(ORG, SyncRequest.model_validate({"files": keys}), lambda *_: None)
    started = time.perf_counter()
    outcome = service.run_sync(ORG, sync.sync_id)
    seconds = time.perf_counter() - started
    if outcome.state != "synced":
        raise RuntimeError(f"the sync ended {outcome.state}: {json.dumps(outcome.error)}")
    return Measured(
        seconds=seconds,
        calls=blobs.calls,
        notes=f"rows read {outcome.rows_read}",
    )


def measure_lift(size: ShopSize, shop: ShopFiles, workdir: Path) -> Measured:
    """The lift report of a segment on the shop's most bought product (the largest slice of order
    lines): a tenth of the customers, a tenth of them held out, activated a year before the last
    order. Reads the dataset version the sync stored; the groups file is written first."""
    import io

    import numpy as np

    from shared.activation.users_files import groups_csv
    from shared.audiences.identifiers import AudienceUser
    from shared.audiences.lift import LiftService
    from shared.records.audiences import ActivationRecord, AudienceRecord, HoldoutRecord, SegmentProvenance

    blobs = DiskBlobs(workdir / "blobs")
    datasets = DiskDatasets(workdir / "datasets")
    dataset = datasets.current(ORG)
    if dataset is None or dataset.orders_end is None:
        raise RuntimeError("run the sync path first")
    with np.load(io.BytesIO(blobs.get(dataset.keys["aggregates"])), allow_pickle=False) as aggregates:
        offsets, products = aggregates["line_offsets"], aggregates["product_ids"]
        user_ids = aggregates["user_ids"][::10].tolist()
    product = str(products[int(np.argmax(np.diff(offsets)))])
    rng = np.random.default_rng(0)
    scores = rng.beta(1.5, 8.0, len(user_ids))
    groups = ["holdout" if held else "uploaded" for held in (rng.random(len(user_ids)) < 0.1).tolist()]
    users = [AudienceUser(user_id=u, score=float(s)) for u, s in zip(user_ids, scores.tolist(), strict=True)]
    blobs.put("groups.csv", groups_csv(users, groups))
    del users, user_ids
    activated = dataset.orders_end.replace(year=dataset.orders_end.year - 1)
    record = AudienceRecord(
        org_id=ORG,
        audience_id="aud-scale",
        name="Likely buyers",
        objective="retargeting",
        status="active",
        ad_account_id="act_1",
        created_at=activated,
        updated_at=activated,
        segment=SegmentProvenance(
            model_name="shop-purchase",
            model_version="m1",
            dataset_version=dataset.version,
            product_id=product,
            rule="top_percent",
            value=10,
            users_selected=len(groups),
            users_without_customer_row=0,
        ),
        holdout=HoldoutRecord(
            percent=10,
            seed=1,
            uploaded_users=groups.count("uploaded"),
            holdout_users=groups.count("holdout"),
            groups_key="groups.csv",
        ),
        activation=ActivationRecord(started_at=activated, updated_at=activated, finished_at=activated),
    )

    class _One:
        def get(self, org_id: str, audience_id: str) -> AudienceRecord:
            return record

    class _NoModel:
        def get(self, org_id: str, name: str) -> None:
            return None

    service = LiftService(_One(), datasets, blobs, _NoModel())
    blobs.calls = 0
    started = time.perf_counter()
    report = service.report(ORG, "aud-scale")
    seconds = time.perf_counter() - started
    return Measured(
        seconds=seconds,
        calls=blobs.calls,
        notes=f"product {product}: {report.orders_in_window:,} lines in the window, "
        f"{report.uploaded.users + report.holdout.users:,} segment users",
    )


def measure_sync_bad_input(size: ShopSize, shop: ShopFiles, workdir: Path) -> Measured:
    """Issue 20's bad input at this size: an orders file with every other line broken and a customers
    file repeating every tenth id, synced without accepting rejected rows. The sync must end in
    review with the counts and the first examples, store nothing, within the same memory. The files
    are written by a process of their own first, so their making is not in this one's peak."""
    import subprocess
    import sys

    from shared.datasources.models import SyncRequest

    bad = workdir / "bad-input"
    bad.mkdir(exist_ok=True)
    make = (
        "from pathlib import Path; "
        "from tools.large_shop import LargeShopConfig, bad_orders, duplicate_customers; "
        f"c = LargeShopConfig(n_customers={size.customers}, n_orders={size.orders}, "
        f"n_products={size.products}); "
        f"bad_orders(Path({str(bad / 'orders.csv')!r}), c); "
        f"duplicate_customers(Path({str(bad / 'customers.csv')!r}), c)"
    )
    subprocess.run([sys.executable, "-c", make], check=True)
    blobs = DiskBlobs(workdir / "bad-blobs")
    datasets = DiskDatasets(workdir / "bad-datasets")
    files = {"customers": bad / "customers.csv", "products": shop.products, "orders": bad / "orders.csv"}
    keys = {kind: f"data-sources/{ORG}/bad/{path.name}" for kind, path in files.items()}
    for kind, path in files.items():
        blobs.upload(keys[kind], path)
    blobs.calls = 0
    service = _sync_service(datasets, blobs)
    sync = service.start_sync(ORG, SyncRequest.model_validate({"files": keys}), lambda *_: None)
    started = time.perf_counter()
    outcome = service.run_sync(ORG, sync.sync_id)
    seconds = time.perf_counter() - started
    if outcome.state != "review" or datasets.current(ORG) is not None:
        raise RuntimeError(f"the bad input ended {outcome.state}")
    return Measured(
        seconds=seconds,
        calls=blobs.calls,
        notes=f"review: {outcome.rejected_count:,} problems, rows read {outcome.rows_read}, "
        f"{len(outcome.rejected_rows)} examples; nothing stored",
    )


PATHS: list[ScalePath] = [
    ScalePath("sync", "DataSourceSyncJobFunction", max_orders=10_000_000, measure=measure_sync),
    ScalePath(
        "sync_bad_input", "DataSourceSyncJobFunction", max_orders=10_000_000, measure=measure_sync_bad_input
    ),
    ScalePath("lift", "GetAudienceLiftFunction", max_orders=10_000_000, measure=measure_lift),
]


def _training_paths() -> list[ScalePath]:
    from benchmarks import _scale_training as training

    return [
        # Setup, held to no function: the training arrays when the sync wrote none.
        ScalePath("training_arrays", "", max_orders=10_000_000, measure=training.measure_training_arrays),
        ScalePath("train_purchase", "TrainModelFunction", 10_000_000, training.measure_train_purchase),
        ScalePath(
            "train_recommendation", "TrainModelFunction", 10_000_000, training.measure_train_recommendation
        ),
        ScalePath("export", "TrainModelFunction", max_orders=10_000_000, measure=training.measure_export),
        # The code before the rewrite, at the sizes this 24 GB machine survives.
        ScalePath("train_purchase_before", "", 1_000_000, training.measure_train_purchase_before),
        ScalePath("train_recommendation_before", "", 100_000, training.measure_train_recommendation_before),
    ]


PATHS += _training_paths()


def measure_preview(size: ShopSize, shop: ShopFiles, workdir: Path) -> Measured:
    """The targeting preview as the TargetingPreviewFunction answers it: the purchase bundle
    ``train_purchase`` kept (``workdir/purchase-bundle.npz``) and the sync's ``identifiers.npz``, no
    order line read. The first preview (reads the coverage, builds the bundle-to-customers join) and
    the median of five warm ones: top 20% for the most bought product (the aggregates' largest
    slice), a lookalike seed in GB."""
    import statistics

    import numpy as np

    from shared.ml.freshness import FreshnessRules
    from shared.ml.scoring import load_bundle
    from shared.records.models import ModelRecord
    from shared.targeting.models import PreviewRequest
    from shared.targeting.service import CoverageCache, TargetingService

    datasets = DiskDatasets(workdir / "datasets")
    dataset = datasets.current(ORG)
    bundle_path = workdir / "purchase-bundle.npz"
    if dataset is None or not bundle_path.exists():
        raise RuntimeError("run the sync and train_purchase paths first")
    blobs = DiskBlobs(workdir / "blobs")
    # As the function's bundle cache loads it: the state at the precision the serving shards store.
    bundle = load_bundle(bundle_path.read_bytes(), at_shard_precision=True)
    now = datetime.now(UTC)
    record = ModelRecord(
        org_id=ORG,
        name="shop-purchase",
        type="purchase",
        version="m1",
        trained_at=now,
        training_cutoff=now,
        training_user_count=int(bundle.user_ids.size),
        bundle_key="purchase-bundle.npz",
        bundle_sha256="scale",
        dataset_version=dataset.version,
    )

    class _One:
        def get(self, org_id: str, name: str) -> ModelRecord:
            return record

    class _Datasets:
        def current(self, org_id: str) -> Any:
            return dataset

        def get(self, org_id: str, version: str) -> Any:
            return dataset

    class _Bundles:
        def bundle_for(self, model: ModelRecord) -> Any:
            return bundle

    service = TargetingService(
        models=_One(),
        datasets=_Datasets(),
        bundles=_Bundles(),
        coverages=CoverageCache(blobs),
        blobs=blobs,
        rules=FreshnessRules(),
        clock=lambda: now,
    )
    import io

    with np.load(io.BytesIO(blobs.get(dataset.keys["aggregates"])), allow_pickle=False) as aggregates:
        product = str(aggregates["product_ids"][int(np.argmax(np.diff(aggregates["line_offsets"])))])
    request = PreviewRequest.model_validate(
        {
            "modelName": "shop-purchase",
            "productId": product,
            "rule": "top_percent",
            "value": 20,
            "objective": "prospecting",
            "lookalikeCountry": "GB",
        }
    )
    blobs.calls = 0
    started = time.perf_counter()
    first = service.preview(ORG, request)
    first_seconds = time.perf_counter() - started
    warm = []
    cpu = cpu_seconds()
    for _ in range(5):
        started = time.perf_counter()
        service.preview(ORG, request)
        warm.append(time.perf_counter() - started)
    warm_cpu = (cpu_seconds() - cpu) / len(warm)
    matched = int(np.count_nonzero(service.coverages.positions(record, bundle, dataset) >= 0))
    return Measured(
        seconds=statistics.median(warm),
        calls=blobs.calls,
        notes=f"warm median of 5 ({warm_cpu:.2f} s of CPU each); first {first_seconds:.2f} s "
        "(reads identifiers.npz, joins); "
        f"{first.scored_users:,} scored, segment {first.size:,}, {first.coverage.usable:,} usable; "
        f"{matched:,} of the bundle's users have a customer row",
    )


PATHS.append(ScalePath("preview", "TargetingPreviewFunction", max_orders=10_000_000, measure=measure_preview))
