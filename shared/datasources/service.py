"""The data source: a shop's customers, products and orders in, an immutable dataset version out, and
both models retrained from it.

1. ``upload_links``: three presigned PUT links (customers, products, orders) under the organization's
   prefix of the data bucket (SSE-KMS by bucket default).
2. ``start_sync``: checks the files exist and are under the size cap, records the sync as
   ``validating`` and starts the sync state machine; returns at once.
3. ``run_sync`` (the state machine's first step): validates every row of the three files
   (:func:`shared.ml.datasets.validate_shop_files`). A problem of a whole file fails the sync with its
   message; rejected rows put it in ``review`` unless the request accepted them. Otherwise the good
   rows, the identifier coverage and the full rejection report are written under
   ``datasets/<org>/<version>/`` and the version is stored, not yet in force. A version's objects are
   never rewritten.
4. The state machine then trains both models from the version; each training job records its progress
   on the version (``record_training``). The version is published (atomically made the data in force
   for audiences, segments, targeting and Retrain) when its purchase model is trained, in the write
   that records that training's outcome (``PUBLISHED_BY``), unless the training refused the data (too
   few orders, say). Until then, and for good if it refused the data, the previous version stays in
   force; a refused version stays listed with the failure and its remedy. Refused data goes in force
   only where nothing better is: with nothing in force (a young shop's first sync, whose catalog,
   audiences and readiness would otherwise read nothing) or in place of refused data with no more
   customers (``shared.repositories.datasources``). Before the first version's training ends nothing
   is in force.
"""

from __future__ import annotations

import secrets
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, get_args

from shared.clock import Clock
from shared.datasources.catalog import read_catalog, search_catalog
from shared.datasources.models import (
    DatasetVersionView,
    DataSourceView,
    ExportLayoutView,
    FileFormat,
    FileUploadLink,
    MatchKeyView,
    ModelTrainingView,
    ProductMatch,
    ProductSearchView,
    RejectedRow,
    ServiceColumn,
    SyncRequest,
    SyncView,
    UploadLinks,
    UploadLinksRequest,
)
from shared.datasources.shop_exports import LAYOUTS
from shared.errors import Conflict, NotFound, ValidationFailed
from shared.ml.datasets import CustomerRecord, OrderRecord, ProductRecord, columns_of
from shared.observability import logger
from shared.payments.order_files import CheckoutOrderFiles
from shared.records.datasources import (
    FILE_KINDS,
    PUBLISHED_BY,
    DatasetVersion,
    FileKind,
    ModelTraining,
    SyncRecord,
)
from shared.records.uploads import UploadForm

if TYPE_CHECKING:
    from shared.datasources.sync import ShopCheck, VersionObjects

UPLOAD_LINK_SECONDS = 900
MAX_COLUMNS = 1_000  # a mapping's header cells at most (the reader's own limit on a header)
REJECTED_ROWS_SHOWN = 100
SYNCS_SHOWN = 10
# The models a sync trains, by type: the names they are registered (and predicted) under.
MODEL_NAMES = {"purchase": "shop-purchase", "recommendation": "shop-recommendations"}
_CONTENT_TYPES = {"csv": "text/csv", "jsonl": "application/x-ndjson"}
_OBJECT_TYPES = {".json": "application/json", ".parquet": "application/vnd.apache.parquet"}
_RECORD_TYPES: dict[str, type[CustomerRecord | ProductRecord | OrderRecord]] = {
    "customers": CustomerRecord,
    "products": ProductRecord,
    "orders": OrderRecord,
}

StartExecution = Callable[[str, dict[str, str]], None]


class DataBlobs(Protocol):
    def put(self, key: str, data: bytes, content_type: str = ...) -> None: ...
    def get(self, key: str) -> bytes: ...
    def download(self, key: str, path: Path) -> None: ...
    def keys(self, prefix: str) -> list[str]: ...
    def upload(self, key: str, path: Path, content_type: str = ...) -> None: ...
    def delete(self, key: str) -> None: ...
    def download_all(self, targets: Sequence[tuple[str, Path]]) -> None: ...
    def fetch_into(self, keys: Sequence[str], path: Path, separator: bytes = b"\n") -> None: ...
    def delete_all(self, keys: Sequence[str]) -> None: ...
    def size(self, key: str) -> int | None: ...
    def upload_form(
        self, key: str, content_type: str, max_bytes: int, expires_seconds: int
    ) -> UploadForm: ...


class CheckoutRefunds(Protocol):
    """What the provider has refunded of the hosted checkout's orders (``DynamoPaymentsStore``)."""

    def refunded_orders(self, org_id: str) -> dict[str, int]: ...


class NoRefunds:
    """No order refunded (a service without the payments store: the benchmarks)."""

    def refunded_orders(self, org_id: str) -> dict[str, int]:
        return {}


class DatasetStore(Protocol):
    def store(self, record: DatasetVersion) -> None: ...
    def get(self, org_id: str, version: str) -> DatasetVersion | None: ...
    def current(self, org_id: str) -> DatasetVersion | None: ...
    def latest(self, org_id: str) -> DatasetVersion | None: ...
    def list_versions(self, org_id: str) -> list[DatasetVersion]: ...
    def put_sync(self, record: SyncRecord) -> None: ...
    def get_sync(self, org_id: str, sync_id: str) -> SyncRecord | None: ...
    def list_syncs(self, org_id: str) -> list[SyncRecord]: ...


def upload_prefix(org_id: str) -> str:
    """Where an organization's own files may be named from (uploads and objects placed there)."""
    return f"data-sources/{org_id}/"


@dataclass(frozen=True)
class DataSourceService:
    datasets: DatasetStore
    blobs: DataBlobs
    refunds: CheckoutRefunds
    clock: Clock
    max_file_bytes: int
    # The sync's engine's fixed memory limit in MB (``Settings.engine_memory_mb``); None: half the
    # function's memory.
    engine_memory_mb: int | None = None

    @property
    def checkout_orders(self) -> CheckoutOrderFiles:
        """The hosted checkout's paid orders in the data bucket (read and compacted at each sync)."""
        return CheckoutOrderFiles(self.blobs)

    def upload_links(self, org_id: str, request: UploadLinksRequest) -> UploadLinks:
        """Three 15-minute presigned POSTs, one per file, under a new upload id; S3 refuses a file
        over ``max_file_bytes``."""
        upload_id = str(uuid.uuid4())
        links = []
        for kind in FILE_KINDS:
            key = _upload_key(org_id, upload_id, kind, request.format)
            content_type = _CONTENT_TYPES[request.format]
            form = self.blobs.upload_form(key, content_type, self.max_file_bytes, UPLOAD_LINK_SECONDS)
            links.append(
                FileUploadLink(
                    kind=kind,
                    key=key,
                    url=form.url,
                    fields=form.fields,
                    content_type=content_type,
                    expires_in_seconds=UPLOAD_LINK_SECONDS,
                )
            )
        return UploadLinks(
            upload_id=upload_id,
            files=links,
            columns={kind: sorted(_columns(kind)) for kind in FILE_KINDS},
            max_file_bytes=self.max_file_bytes,
        )

    def start_sync(self, org_id: str, request: SyncRequest, start: StartExecution) -> SyncView:
        """Check the files are there and small enough, record the sync, and start validating it in
        the background (the sync state machine, execution named after the sync)."""
        keys = self._file_keys(org_id, request)
        mappings = _checked_mappings(request.mappings or {})
        for kind, key in keys.items():
            size = self.blobs.size(key)
            if size is None and request.upload_id is not None and request.format is not None:
                # Links made for another format than the one the sync names.
                other = next(
                    (
                        fmt
                        for fmt in get_args(FileFormat)
                        if fmt != request.format
                        and self.blobs.size(_upload_key(org_id, request.upload_id, kind, fmt)) is not None
                    ),
                    None,
                )
                if other is not None:
                    raise ValidationFailed(
                        f"The upload holds {kind}.{other}, but the sync asks for {request.format} files.",
                        field="format",
                        remedy=f'Send "format": "{other}" with the sync, as with the upload links, or leave '
                        "it out: the sync then reads the upload's files as they were sent.",
                    )
            if size is None:
                raise NotFound(
                    f"The {kind} file was not found ({key.rsplit('/', 1)[-1]}).",
                    field=f"files.{kind}" if request.files else "uploadId",
                    remedy=f"Upload the {kind} file to its link (links expire after 15 minutes), then sync.",
                )
            if size == 0:
                raise ValidationFailed(
                    f"The {kind} file is empty.",
                    field=kind,
                    remedy=f"Upload the {kind} file with its header and rows.",
                )
            if size > self.max_file_bytes:
                raise ValidationFailed(
                    f"The {kind} file is {size:,} bytes; the limit is {self.max_file_bytes:,}.",
                    field=kind,
                    remedy="Split the shop's history (keep the recent orders) or contact the operator.",
                )
        now = self.clock()
        record = SyncRecord(
            org_id=org_id,
            sync_id=_time_ordered_id(now),
            keys=keys,
            accept_rejected_rows=request.accept_rejected_rows,
            horizon_days=request.horizon_days,
            mappings=mappings,
            created_at=now,
            updated_at=now,
        )
        self.datasets.put_sync(record)
        start(record.sync_id, {"org_id": org_id, "sync_id": record.sync_id})
        return _sync_view(record)

    def retrain(self, org_id: str, start: StartExecution) -> SyncView:
        """Retrain both models on the data in force: sync the current version's stored files again
        (they hold only good rows), with the horizon its models were trained for. The new version
        is the same data; the state machine trains both models from it, as after any sync. A newer
        sync whose training failed is not what this retrains on: it never was in force."""
        # A training under way on the newest version (a sync's, not yet in force) counts too.
        newest = self.datasets.latest(org_id)
        busy = (
            [t.model_name for t in newest.training.values() if t.state in ("pending", "running")]
            if newest
            else []
        )
        latest = next(iter(self.datasets.list_syncs(org_id)), None)
        if busy or (latest is not None and latest.state == "validating"):
            raise Conflict(
                f"A training is already under way ({', '.join(busy) or 'a sync is being checked'}).",
                remedy="Wait for it to finish (the Models page shows it), then retrain if still needed.",
            )
        current = self.datasets.current(org_id)
        if current is None:
            raise NotFound(
                "No synced data is in force yet: the purchase model could not be trained on the files "
                "synced so far, so there is nothing to retrain on."
                if newest
                else "No data is synced yet, so there is nothing to retrain on.",
                remedy="Sync the shop's customers, products and orders first (the wizard's first step)."
                if newest is None
                else "Sync corrected files in the launch wizard (its sync step says what training needs).",
            )
        refusal = current.training.get(PUBLISHED_BY)
        if refusal is not None and refusal.refused:
            # The same rows, the same checks: a retrain would only refuse them again.
            raise Conflict(
                f"The data in force (version {current.version}) cannot train a model: "
                f"{refusal.error or 'its purchase training refused it.'} A retrain of the same data would "
                "refuse it again.",
                remedy=refusal.remedy or "Sync corrected files in the launch wizard.",
            )
        previous = self.datasets.get_sync(org_id, current.version)
        now = self.clock()
        record = SyncRecord(
            org_id=org_id,
            sync_id=_time_ordered_id(now),
            keys={kind: current.keys[kind] for kind in FILE_KINDS},
            horizon_days=previous.horizon_days if previous else None,
            created_at=now,
            updated_at=now,
        )
        self.datasets.put_sync(record)
        start(record.sync_id, {"org_id": org_id, "sync_id": record.sync_id})
        logger.info("retrain started", extra={"from_version": current.version, "sync_id": record.sync_id})
        return _sync_view(record)

    def run_sync(self, org_id: str, sync_id: str) -> SyncRecord:
        """Validate a sync's files and, when it may, store the dataset version, to be published once its
        purchase model is trained (see the module docstring). Returns the sync as it ended:
        ``synced``, ``review`` or ``failed``."""
        # The engine is imported here: only the sync job carries it (its own layer).
        from shared.dataplane.engine import session
        from shared.dataplane.reader import FileOptions
        from shared.datasources import sync as engine_sync

        record = self.datasets.get_sync(org_id, sync_id)
        if record is None:
            raise NotFound(f"Sync {sync_id} was not found.", field="syncId")
        if record.state != "validating":
            return record  # a repeated step: the outcome is already recorded
        with session(memory_limit_mb=self.engine_memory_mb) as workspace:
            files = {}
            for kind, key in record.keys.items():
                name = key.rsplit("/", 1)[-1]
                path = workspace.path(f"upload-{kind}-{name}")
                self.blobs.download(key, path)
                options = FileOptions(columns=record.mappings.get(kind, {}))
                files[kind] = engine_sync.SyncFile(path=path, name=name, options=options)
            try:
                check = engine_sync.check_shop(workspace, files, self.clock(), REJECTED_ROWS_SHOWN)
            except ValidationFailed as exc:
                error = {"message": exc.message, "field": exc.field or "", "remedy": exc.remedy or ""}
                return self._save(record, state="failed", error=error)
            report = {
                "rows_read": check.rows_read,
                "rejected_count": check.rejected_count,
                "rejected_rows": check.rejected_rows,
                "recognised": check.recognised,
            }
            if check.rejected_count and not record.accept_rejected_rows:
                return self._save(record, state="review", **report)
            if not check.row_counts["orders"]:
                error = {
                    "message": "No order is left to train on after the rejected rows.",
                    "field": "orders",
                    "remedy": "Fix the rejected rows and sync again.",
                }
                return self._save(record, state="failed", error=error, **report)
            # The hosted checkout's orders join every version (the files are a whole export each time).
            directory = workspace.path("checkout-orders")
            directory.mkdir()
            found = self.checkout_orders.gather(org_id, directory)
            if found.parts or found.singles:
                # A refunded order is not a purchase the models learn from, or not all of one.
                days = engine_sync.read_checkout_orders(
                    workspace, found.part_paths, found.single_paths, self.refunds.refunded_orders(org_id)
                )
                check = engine_sync.add_checkout_orders(workspace, check)
                # Before the version is published: a failed compaction fails the step, which is run
                # again whole (the objects it had not yet replaced are still there).
                compacted = self.checkout_orders.compact(
                    org_id, found, engine_sync.write_checkout_order_days(workspace, days)
                )
                logger.info(
                    "checkout orders compacted",
                    extra={
                        "days": compacted.days,
                        "parts_replaced": compacted.parts_deleted,
                        "orders_compacted": compacted.singles_deleted,
                        # A backlog beyond one sync's share waits in the bucket for the next.
                        "orders_left_for_next_sync": found.singles_left,
                    },
                )
            written = engine_sync.write_version(workspace, files, check)
            version = self._store_version(record, check, written)
        logger.info(
            "dataset synced",
            extra={
                "version": version.version,
                "rows": version.row_counts,
                "rejected": version.rejected_count,
                "checkout_orders": check.from_checkout.get("orders", 0),
            },
        )
        return self._save(record, state="synced", dataset_version=version.version, **report)

    def view(self, org_id: str) -> DataSourceView:
        """The dataset in force, every version, the latest syncs, and what the wizard needs to read a
        file: the service's columns, the shop exports read as they are, the columns last matched."""
        # Read in the order the jobs write backwards: a sync is marked synced only after its version
        # is stored, and the pointer moves to a version only in the write that records its purchase
        # model trained, so the syncs are read first, then the versions, then the pointer. A sync this
        # answer shows as synced has its version in the list, and a version it lists with its purchase
        # model trained is in force in it (or a newer one is); the other orders could show a sync
        # synced with no version, or a training succeeded beside the previous data in force, when a
        # job ended between the reads.
        syncs = self.datasets.list_syncs(org_id)
        saved: dict[str, dict[str, str]] = {}
        for sync in syncs:  # newest first: each file's latest mapping
            for kind, mapping in sync.mappings.items():
                saved.setdefault(kind, mapping)
        versions = self.datasets.list_versions(org_id)
        current = self.datasets.current(org_id)
        # The version in force is shown as the list shows it, so the answer says one thing of it (a
        # training that ends between the reads would otherwise read two ways); one published after the
        # list was read is shown as the pointer's read found it.
        if current is not None:
            current = next((v for v in versions if v.version == current.version), current)
        return DataSourceView(
            current=_version_view(current) if current else None,
            versions=[_version_view(v) for v in versions],
            syncs=[_sync_view(s) for s in syncs[:SYNCS_SHOWN]],
            columns={kind: _service_columns(kind) for kind in FILE_KINDS},
            layouts=[
                ExportLayoutView(
                    system=layout.system,
                    kind=layout.kind,
                    title=layout.title,
                    signature=sorted(layout.signature),
                )
                for layout in LAYOUTS
            ],
            mappings=saved,
        )

    def search_products(self, org_id: str, text: str, limit: int) -> ProductSearchView:
        """The products of the dataset in force whose id or name contains ``text`` (case ignored), best
        first, at most ``limit`` (``shared.datasources.catalog``). Nothing synced yet, or a version
        stored before its catalog was kept: no product (sync again to search)."""
        current = self.datasets.current(org_id)
        key = current.keys.get("catalog") if current else None
        if current is None or key is None:
            version = current.version if current else None
            return ProductSearchView(products=[], matches=0, catalog_size=0, dataset_version=version)
        catalog = read_catalog(self.blobs.get(key))
        found = search_catalog(catalog, text, limit)
        at = found.positions
        return ProductSearchView(
            products=[
                ProductMatch(product_id=product, name=name or None, category=category or None)
                for product, name, category in zip(
                    catalog.product_ids[at].tolist(),
                    catalog.names[at].tolist(),
                    catalog.categories[at].tolist(),
                    strict=True,
                )
            ],
            matches=found.matches,
            catalog_size=int(catalog.product_ids.size),
            dataset_version=current.version,
        )

    def _upload_format(self, org_id: str, upload_id: str) -> FileFormat:
        """The format of the files sent to an upload's links: the first whose customers file is there
        (one HEAD a format), CSV when none is (the missing file is then named as the CSV it would be)."""
        return next(
            (
                fmt
                for fmt in get_args(FileFormat)
                if self.blobs.size(_upload_key(org_id, upload_id, "customers", fmt)) is not None
            ),
            "csv",
        )

    def _file_keys(self, org_id: str, request: SyncRequest) -> dict[str, str]:
        if request.upload_id is not None:
            try:
                uuid.UUID(request.upload_id)
            except ValueError as exc:
                raise ValidationFailed("uploadId is not an upload id.", field="uploadId") from exc
            fmt = request.format or self._upload_format(org_id, request.upload_id)
            return {kind: _upload_key(org_id, request.upload_id, kind, fmt) for kind in FILE_KINDS}
        assert request.files is not None
        prefix = upload_prefix(org_id)
        for kind, key in request.files.items():
            if not key.startswith(prefix) or ".." in key:
                raise ValidationFailed(
                    f"files.{kind} must name an object under {prefix} in the data bucket.",
                    field=f"files.{kind}",
                    remedy=f"Copy the file under {prefix}, or upload it in the launch wizard's first "
                    "step (Your shop's data).",
                )
        return {str(kind): key for kind, key in request.files.items()}

    def _store_version(
        self,
        record: SyncRecord,
        check: ShopCheck,
        written: VersionObjects,
    ) -> DatasetVersion:
        """Upload the version's objects under its own prefix, then store it (one conditional write), not
        in force: its purchase training publishes it. Nothing it names is half-written."""
        version = record.sync_id
        prefix = f"datasets/{record.org_id}/{version}/"
        keys: dict[str, str] = {}
        for name, path in written.paths.items():
            # A table in a folder of its own: a Glue table's location (docs/scaling.md).
            folder = f"{name}/" if path.suffix == ".parquet" else ""
            keys[name] = f"{prefix}{folder}{path.name}"
            self.blobs.upload(keys[name], path, _OBJECT_TYPES.get(path.suffix, "application/octet-stream"))
        now = self.clock()
        dataset = DatasetVersion(
            org_id=record.org_id,
            version=version,
            created_at=now,
            keys=keys,
            row_counts=check.row_counts,
            rows_read=check.rows_read,
            rejected_count=check.rejected_count,
            rejected_rows_accepted=bool(check.rejected_count),
            orders_end=check.orders_end,
            from_checkout=check.from_checkout,
            match_keys=written.match_keys,
            matchable_customers=written.matchable_customers,
            training={
                model_type: ModelTraining(model_name=name, updated_at=now)
                for model_type, name in MODEL_NAMES.items()
            },
        )
        published = self.datasets.get(record.org_id, version)
        if published is not None:
            # An earlier attempt of this step stored it and died before recording the sync: the
            # objects it names were just written again, the same; a version is never written twice.
            return published
        self.datasets.store(dataset)
        return dataset

    def _save(self, record: SyncRecord, **changes: object) -> SyncRecord:
        updated = record.model_copy(update={**changes, "updated_at": self.clock()})
        updated = SyncRecord.model_validate(updated.model_dump())
        self.datasets.put_sync(updated)
        return updated


def _columns(kind: str) -> set[str]:
    return columns_of(_RECORD_TYPES[kind])


def _service_columns(kind: str) -> list[ServiceColumn]:
    """A file kind's columns in the record model's order, required first as the model has them."""
    columns = []
    for name, info in _RECORD_TYPES[kind].model_fields.items():
        alias = info.validation_alias
        aliases = [str(c) for c in getattr(alias, "choices", []) if c != name]
        columns.append(ServiceColumn(name=name, required=info.is_required(), aliases=aliases))
    return columns


def _checked_mappings(mappings: dict[FileKind, dict[str, str]]) -> dict[str, dict[str, str]]:
    """The merchant's column mappings, each header cell read as one of its file's service columns (or
    not read, ""), no service column twice; else ``ValidationFailed`` naming the file."""
    checked: dict[str, dict[str, str]] = {}
    for kind, mapping in mappings.items():
        names = {column.name for column in _service_columns(kind)}
        if len(mapping) > MAX_COLUMNS:
            raise ValidationFailed(
                f"The {kind} file's mapping has more than {MAX_COLUMNS:,} columns.", field=f"mappings.{kind}"
            )
        unknown = sorted({column for column in mapping.values() if column and column not in names})
        if unknown:
            raise ValidationFailed(
                f"The {kind} file has no column {unknown[0]}.",
                field=f"mappings.{kind}",
                remedy=f"Match each column to one of {', '.join(sorted(names))}, or leave it not read.",
            )
        if any(not cell.strip() or len(cell) > 256 for cell in mapping):
            raise ValidationFailed(
                f"The {kind} file's mapping names an empty or overlong header cell.", field=f"mappings.{kind}"
            )
        chosen = [column for column in mapping.values() if column]
        twice = sorted({column for column in chosen if chosen.count(column) > 1})
        if twice:
            raise ValidationFailed(
                f"Two columns of the {kind} file are matched to {twice[0]}.",
                field=f"mappings.{kind}",
                remedy=f"Match one column to {twice[0]} and choose another (or none) for the other.",
            )
        checked[kind] = {cell.strip(): column for cell, column in mapping.items()}
    return checked


def _upload_key(org_id: str, upload_id: str, kind: str, fmt: str) -> str:
    return f"{upload_prefix(org_id)}uploads/{upload_id}/{kind}.{fmt}"


def _time_ordered_id(now: datetime) -> str:
    """An id that sorts by creation time: ``20261122T234501Z-1a2b3c4d``."""
    return f"{now.strftime('%Y%m%dT%H%M%SZ')}-{secrets.token_hex(4)}"


def _sync_view(record: SyncRecord) -> SyncView:
    return SyncView(
        sync_id=record.sync_id,
        state=record.state,
        accept_rejected_rows=record.accept_rejected_rows,
        horizon_days=record.horizon_days,
        rows_read=record.rows_read,
        rejected_count=record.rejected_count,
        rejected_rows=[RejectedRow.model_validate(row) for row in record.rejected_rows],
        recognised=record.recognised,
        dataset_version=record.dataset_version,
        error=record.error,
        created_at=record.created_at,
        updated_at=record.updated_at,
    )


def _version_view(record: DatasetVersion) -> DatasetVersionView:
    return DatasetVersionView(
        version=record.version,
        created_at=record.created_at,
        row_counts=record.row_counts,
        rows_read=record.rows_read,
        rejected_count=record.rejected_count,
        rejected_rows_accepted=record.rejected_rows_accepted,
        orders_end=record.orders_end,
        from_checkout=record.from_checkout,
        training={kind: ModelTrainingView.of(t) for kind, t in record.training.items()},
        match_keys={
            key: MatchKeyView(given=coverage.given, usable=coverage.usable)
            for key, coverage in record.match_keys.items()
        },
        matchable_customers=record.matchable_customers,
    )
