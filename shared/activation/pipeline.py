"""The activation pipeline: one method per state of ``statemachine/activation.asl.json``.

    ClaimAudience -> SelectUsers -> NormaliseAndHash -> CreateCustomAudience -> UploadBatches (loop,
    WaitForThrottle) -> CheckSeedProcessed (loop, WaitForSeed) -> CreateLookalike -> PublishAdvert
    (loop) or GenerateCampaign -> MarkActive;  any failure -> RecordFailure -> Failed

Every step is bounded (at most ``max_batches`` batches, never a sleep longer than the worker's
``wait_limit``) and safe to repeat: it reads the audience record, skips what is already done, and
saves its progress before returning. The synchronous route (``POST /platform-ads/audiences``) runs
the same steps in-process until its own time runs short, then hands the rest to the state machine.

**One worker at a time.** A worker (an execution, named per attempt, or a synchronous request) first
claims the audience's lease with a conditional write; every save is conditional on still holding
it, so two workers can never both create the platform audience or send the same batch. A retried
task of the same execution takes its own lease back (its previous try is over: Step Functions runs
one task at a time); anyone else waits for the lease to end (``WaitForWorker``).

**Failures** are recorded by the step that meets them, with the error's code, message, remedy and the
step, before it raises. The exception it raises is named after the same code, which is what Step
Functions sees as ``errorType`` (Lambda passes nothing else through: docs/aws-facts in the handbook).
``RecordFailure`` then only marks the attempt failed; for a crash the step could not record
(a killed worker, a timeout) it records the error Step Functions saw.
"""

from __future__ import annotations

import csv
import json
import math
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Protocol

from shared import deadline
from shared.activation.checks import check_usable, check_values
from shared.activation.steps import (
    LEASE_SECONDS,
    SAFETY_SECONDS,
    STEP_ACTIONS,
    TASK_SLEEP_LIMIT_SECONDS,
    LeaseLost,
    StepResult,
    Worker,
    batch_key,
    groups_csv_key,
    planned_steps,
    snapshot_carry_key,
    step_failure,
    users_chunk_part_key,
    users_csv_key,
    users_part_key,
)
from shared.activation.users_files import (
    VALUE_CSV_COLUMN,
    groups_csv,
    snapshot_rows_of_csv,
    users_csv,
)
from shared.audiences.batching import new_session_id
from shared.audiences.holdout import GROUP_HOLDOUT, GROUP_UPLOADED, held_ranks, new_seed, split_holdout
from shared.audiences.identifiers import SCHEMA, AudienceUser
from shared.audiences.snapshot import GROUP_COLUMN, SNAPSHOT_COLUMNS, SNAPSHOT_START, snapshot_row
from shared.audiences.uploads import misread_quote, record_without_end, upload_key
from shared.clock import Clock
from shared.errors import PreconditionFailed, ServiceError, ValidationFailed
from shared.observability import logger
from shared.platform import audiences as platform
from shared.platform.client import GraphClient
from shared.platform.errors import LookalikeRejected, PlatformThrottled
from shared.records.audiences import (
    ActivationRecord,
    ActivationStep,
    AudienceRecord,
    FailureRecord,
    HashingProgress,
    HoldoutRecord,
    SelectionProgress,
    UploadProgress,
    WorkerLease,
)
from shared.records.connections import Connection
from shared.targeting.models import SegmentSpec

if TYPE_CHECKING:
    from shared.activation.hashing import UsersInEngine
    from shared.dataplane.runner import QueryRunner
    from shared.targeting.service import SegmentColumns, SegmentUsers

# operation_status codes meaning "still processing the upload" (docs/platform-notes.md §2.4).
SEED_PROCESSING_CODES = frozenset({410, 414, 441})
SEED_POLL_SECONDS = 15
# Batches the engine hashes per query (bounds NormaliseAndHash's memory: about 4 MB of JSON each),
# and the threads writing them to S3 meanwhile.
BATCHES_PER_QUERY = 16
BATCH_WRITERS = 4
COPY_BUFFER_BYTES = 8 << 20
# Users one NormaliseAndHash task hashes at most (about 12 us of CPU a user: 25 s here, well inside a
# task's 300 s on Lambda's share of a core at 1,024 MB); a larger list is split into parts of about
# this many users by a hash of user_id, hashed one part a task (docs/data-plane.md, "Activation").
PART_USERS = 2_000_000
# Bytes of an uploaded list one SelectUsers task reads (whole records: up to the next record's start):
# a larger list is read in chunks, one a task, each checked, snapshotted and split into the parts of
# its users (``_select_chunk``). About 1.9M users of seven columns: 128 MiB a chunk kept the task at
# about 15 s of CPU (docs/scaling.md).
CHUNK_BYTES = 128 << 20
# S3's smallest part of a multipart upload but the last: shorter snapshot lines wait for the next chunk.
MIN_PART_BYTES = 5 << 20

__all__ = [
    "LEASE_SECONDS",
    "SAFETY_SECONDS",
    "TASK_SLEEP_LIMIT_SECONDS",
    "ActivationPipeline",
    "LeaseLost",
    "StepResult",
    "Worker",
]


class ActivationStore(Protocol):
    def get(self, org_id: str, audience_id: str) -> AudienceRecord | None: ...
    def acquire_lease(self, org_id: str, audience_id: str, lease: WorkerLease, now: datetime) -> bool: ...
    def release_lease(self, org_id: str, audience_id: str, owner: str) -> None: ...
    def save_leased(self, record: AudienceRecord, owner: str) -> bool: ...
    def put(self, record: AudienceRecord, apply: Callable[[AudienceRecord], None] | None = ...) -> None:
        """Write over the revision read; on a conflict ``apply`` (this writer's change) to the record
        as stored and write that, or ``RecordChanged`` without it."""
        ...


class ActivationBlobs(Protocol):
    def put(self, key: str, data: bytes, content_type: str = ...) -> None: ...
    def get(self, key: str) -> bytes: ...
    def open(self, key: str) -> BinaryIO: ...
    def upload(self, key: str, path: Path, content_type: str = ...) -> None: ...
    def size(self, key: str) -> int | None: ...
    def get_range(self, key: str, start: int, end: int) -> bytes: ...
    def start_parts(self, key: str, content_type: str = ...) -> str: ...
    def put_part(self, key: str, upload: str, number: int, path: Path) -> str: ...
    def finish_parts(self, key: str, upload: str, etags: Sequence[str]) -> None: ...


class PlatformConnections(Protocol):
    def client_for(self, org_id: str) -> tuple[Connection, GraphClient]: ...
    def record_usage(self, org_id: str, graph: GraphClient) -> None: ...


class Publishing(Protocol):
    """Publish advert and Generate campaign (``shared.publishing.service.PublishingService``)."""

    def start_for_activation(self, org_id: str, audience_id: str, request: dict[str, Any]) -> None: ...
    def advance(self, org_id: str, audience_id: str) -> Any: ...
    def campaign_link(self, org_id: str, audience_id: str) -> str: ...


class SegmentSource(Protocol):
    """Turns a predictive segment into users (``shared.targeting.service.TargetingService``)."""

    def users_for(self, org_id: str, spec: SegmentSpec, *, values: bool = ...) -> SegmentUsers: ...
    def segment_columns(self, org_id: str, spec: SegmentSpec, *, values: bool = ...) -> SegmentColumns: ...


@dataclass
class ActivationPipeline:
    audiences: ActivationStore
    blobs: ActivationBlobs
    connections: PlatformConnections
    clock: Clock
    publishing: Callable[[], Publishing] | None = None
    segments: Callable[[], SegmentSource] | None = None
    batch_size: int = platform.MAX_ROWS_PER_CALL
    max_batches: int = 20
    batches_per_query: int = BATCHES_PER_QUERY
    part_users: int = PART_USERS
    # The columnar engine's fixed memory limit in MB (``Settings.engine_memory_mb``); None: half the
    # function's memory (``shared.dataplane.engine``).
    engine_memory_mb: int | None = None
    chunk_bytes: int = CHUNK_BYTES
    # Source requests are read as ``CreateAudienceRequest`` JSON (``shared.audiences.models``).
    _graphs: dict[str, GraphClient] = field(default_factory=dict, repr=False)

    # --- claiming --------------------------------------------------------------------------------

    def claim(self, org_id: str, audience_id: str, worker: Worker) -> StepResult:
        """``ClaimAudience``: take the audience's lease, or say how long to wait for its holder."""
        now = self.clock()
        lease = WorkerLease(owner=worker.owner, until=now + timedelta(seconds=worker.lease_seconds))
        if not self.audiences.acquire_lease(org_id, audience_id, lease, now):
            record = self._require(org_id, audience_id)
            held = record.lease
            wait = (held.until - now).total_seconds() if held else 1
            self._note_wait(record, worker, "worker_busy", wait, save=False)
            return StepResult(outcome="busy", wait_seconds=max(1, min(60, math.ceil(wait))))
        record = self._require(org_id, audience_id)
        if record.status == "active" and (
            record.activation is None or record.activation.state == "succeeded"
        ):
            self.audiences.release_lease(org_id, audience_id, worker.owner)
            return StepResult(outcome="active")
        activation = self._activation(record)
        activation.state = "running"
        activation.steps = planned_steps(record)
        record.failure = None
        if record.status == "failed":
            record.status = "uploading" if record.platform_custom_audience_id else "creating"
        self._save(record, worker)
        return StepResult(outcome="claimed")

    def release(self, org_id: str, audience_id: str, worker: Worker) -> None:
        self.audiences.release_lease(org_id, audience_id, worker.owner)

    def run(self, step: str, org_id: str, audience_id: str, worker: Worker) -> StepResult:
        """Run the step named ``step`` (a task's ``action``). A ``ServiceError`` is recorded on the
        audience with the step, then raised as ``step_failure`` (errorType = its code)."""
        method: Callable[[str, str, Worker], StepResult] = getattr(self, STEP_ACTIONS[step])
        try:
            return method(org_id, audience_id, worker)
        except LeaseLost as exc:
            raise step_failure(exc.code, exc.message) from exc
        except ServiceError as exc:
            record = self._require(org_id, audience_id)
            raise self._failed(record, worker, exc.code, exc.message, exc.remedy) from exc
        finally:
            self.flush_usage(org_id)

    # --- select users, normalise and hash ---------------------------------------------------------

    def select_users(self, org_id: str, audience_id: str, worker: Worker) -> StepResult:
        """``SelectUsers``: the users of a segment (scored now, joined to the customers' identifiers),
        of an uploaded CSV, or of the request, stored as CSV with the audience's snapshot."""
        record = self._begin(org_id, audience_id, worker, "select_users")
        activation = self._activation(record)
        if activation.users_total == 0:
            request = self._request(record)
            if request.upload_id:
                key = upload_key(record.org_id, request.upload_id)
                if activation.selection is not None or (self.blobs.size(key) or 0) > self.chunk_bytes:
                    return self._select_chunk(record, worker, key, request.value_column)
            activation.users_parts, activation.countries, activation.hashing = 0, None, None
            activation.users_chunks = 0
            users_key, count = self._select(record)
            activation.users_total = count
            activation.batch_keys_prefix = None
            activation.users_key = users_key
            self._save(record, worker)
        return StepResult(outcome="done")

    def _select(self, record: AudienceRecord) -> tuple[str, int]:
        request = self._request(record)
        users_key = users_csv_key(record.org_id, record.audience_id)
        if request.upload_id:
            # Only its header was checked when the activation was accepted: its rows are checked here,
            # as the snapshot is written (a bad row fails the step naming its line and column).
            users_key = upload_key(record.org_id, request.upload_id)
            return users_key, self._select_list(record, users_key, request.value_column)
        users: list[AudienceUser] = list(request.users)
        values: dict[str, float] | None = None
        if request.segment is not None:
            if self.segments is None:
                raise PreconditionFailed("Segments are not available in this function.")
            selected = self._select_segment(record, request)
            if selected is not None:
                return users_key, selected
            # A version synced before the engine keeps its customers as CSV: read the segment's
            # (such versions are the demo's size).
            chosen = self.segments().users_for(record.org_id, request.segment, values=request.value_based)
            record.segment = chosen.provenance
            users = chosen.users
            values = chosen.values
            if request.holdout_percent > 0:
                return users_key, self._hold_out(
                    record, users, request.holdout_percent, request.holdout_seed, values
                )
        self.blobs.put(users_key, users_csv(users, values), "text/csv")
        self._write_snapshot(record, (snapshot_row(user) for user in users))
        return users_key, len(users)

    def _select_segment(self, record: AudienceRecord, request: Any) -> int | None:
        """A segment's users joined to their customers in the engine (``shared.activation.segment_files``):
        the users file of those to upload, and with a holdout of ``percent`` % (stratified by score, from
        the recorded ``seed``) the groups file; the snapshot of every user (with their group under a
        holdout). Each is written from the engine in chunks and stored from a local file, so no step
        holds the segment as Python objects. The number of users to upload; None for a dataset
        version synced before the engine (its customers a CSV file), which the caller reads as before."""
        from shared.activation import segment_files

        assert self.segments is not None
        columns: SegmentColumns | None = self.segments().segment_columns(
            record.org_id, request.segment, values=request.value_based
        )
        assert columns is not None
        if not columns.customers_key.endswith(".parquet"):
            return None
        percent, seed = float(request.holdout_percent), request.holdout_seed
        provenance = columns.provenance
        with self.open_engine() as engine:
            customers = engine.path("customers.parquet")
            self._copy(columns.customers_key, customers)
            segment = segment_files.load_segment(
                engine, customers, columns.user_ids, columns.scores, columns.values
            )
            columns = None  # the engine holds the segment now: its arrays go before the files come out
            customers.unlink()
            record.segment = provenance.model_copy(
                update={"users_without_customer_row": provenance.users_selected - segment.users}
            )
            if segment.users == 0:
                raise PreconditionFailed(
                    "The segment has no user with a customer row to upload.",
                    field="segment",
                    remedy="Widen the segment (a larger N or percentage, a lower threshold); preview it "
                    "first.",
                )
            split_seed = new_seed() if seed is None else seed
            if percent > 0:
                segment = segment_files.hold_out(
                    engine, segment, held_ranks(segment.users, percent, split_seed)
                )
            users_file = engine.path("users.csv")
            segment_files.write_users_file(engine, segment, users_file)
            self.blobs.upload(users_csv_key(record.org_id, record.audience_id), users_file, "text/csv")
            if segment.uploaded > self.part_users:
                # Hashed in parts, as a list of this size is (``_store_parts``): read back as a list is.
                from shared.activation.hashing import csv_header, load_users_file

                value_column = VALUE_CSV_COLUMN if segment.values else None
                load_users_file(engine, users_file, csv_header(users_file), value_column)
                self._activation(record).users_parts = self._store_parts(engine, record, segment.uploaded)
            users_file.unlink()
            if percent > 0:
                groups_key = groups_csv_key(record.org_id, record.audience_id)
                groups_file = engine.path("groups.csv")
                segment_files.write_groups_file(engine, groups_file)
                self.blobs.upload(groups_key, groups_file, "text/csv")
                groups_file.unlink()
                record.holdout = HoldoutRecord(
                    percent=percent,
                    seed=split_seed,
                    uploaded_users=segment.uploaded,
                    holdout_users=segment.held,
                    groups_key=groups_key,
                )
            if record.snapshot_key:
                snapshot = engine.path("snapshot.csv")
                segment_files.write_snapshot_file(engine, segment, snapshot, with_group=percent > 0)
                self.blobs.upload(record.snapshot_key, snapshot, "text/csv")
                snapshot.unlink()
        return segment.uploaded

    def _select_list(self, record: AudienceRecord, users_key: str, value_column: str | None) -> int:
        """An uploaded list's snapshot, its rows checked: in the engine when every row is plainly valid
        (the common case; the snapshot is written as it streams out), else by the Python path, which
        names the line and column of each bad row. Also the list's countries, and a list of more than
        ``part_users`` users split into parts for NormaliseAndHash (``_store_parts``). The number of
        users."""
        from shared.activation.hashing import (
            count_users,
            csv_header,
            unsure_rows,
            users_countries,
            write_snapshot,
        )

        with self.open_engine() as engine:
            path = engine.path("upload.csv")
            self._copy(users_key, path)
            header = csv_header(path)
            _load_list(engine, path, header, value_column if value_column in header else None)
            if unsure_rows(engine):
                with path.open("rb") as stream:
                    count = self._write_snapshot(record, snapshot_rows_of_csv(stream, value_column))
            else:
                snapshot = engine.path("snapshot.csv")
                count = write_snapshot(engine, snapshot)
                if record.snapshot_key:
                    self.blobs.upload(record.snapshot_key, snapshot, "text/csv")
                snapshot.unlink()
            path.unlink()  # the engine holds the list now; /tmp holds the parts next
            activation = self._activation(record)
            activation.countries = users_countries(engine)
            loaded = count_users(engine)
            if loaded > self.part_users:
                activation.users_parts = self._store_parts(engine, record, loaded)
            return count

    def _select_chunk(
        self, record: AudienceRecord, worker: Worker, users_key: str, value_column: str | None
    ) -> StepResult:
        """One chunk of a large uploaded list (``chunk_bytes``, to the end of its last record:
        ``shared.activation.list_chunks``), as ``_select_list`` reads a whole one: its rows checked,
        its snapshot lines sent as the next part of the snapshot's multipart upload, its countries
        added, and its users split by a hash of user_id into the list's parts (one Parquet file per
        part and chunk, numbered on after the chunks before). Progress is saved once the chunk is
        stored, so a task killed midway reads its chunk again (its objects are written over).
        ``more`` until the last chunk, which finishes the snapshot and the selection."""
        from shared.activation.hashing import (
            count_users,
            csv_header,
            unsure_rows,
            users_countries,
            write_parts,
            write_snapshot,
        )
        from shared.activation.list_chunks import RECORD_BYTES, NoRecordEnd, copy_records

        activation = self._activation(record)
        progress = activation.selection

        def read(start: int, end: int) -> bytes:
            return self.blobs.get_range(users_key, start, end)

        with self.open_engine() as engine:
            path = engine.path("chunk.csv")
            # Line numbers as the whole read names them: the header is line 1, a chunk's lines follow
            # the line breaks of the chunks before.
            first_line = 1
            try:
                with path.open("wb") as file:
                    if progress is None:
                        size = self.blobs.size(users_key) or 0
                        header_end = copy_records(read, 0, 1, size, file).end
                        progress = SelectionProgress(offset=header_end, data_start=header_end, size=size)
                    else:
                        file.write(read(0, progress.data_start - 1))
                    first_line = progress.lines + 2
                    target = progress.offset + self.chunk_bytes
                    copied = copy_records(read, progress.offset, target, progress.size, file)
            except NoRecordEnd as exc:
                # Named from the chunk's first record on, as the whole read names it (the bound may
                # fall past the end of the record's quoted field).
                long = (
                    _long_record(path, progress.data_start, progress.offset, progress.lines)
                    if progress
                    else None
                )
                raise long or record_without_end(
                    first_line + exc.lines, exc.at, exc.unbalanced, RECORD_BYTES
                ) from None
            header = csv_header(path)
            _load_list(
                engine,
                path,
                header,
                value_column if value_column in header else None,
                data_start=progress.data_start,
                offset=progress.offset,
                line_offset=progress.lines,
            )
            first = progress.chunks_done == 0
            snapshot = engine.path("snapshot.csv")
            if unsure_rows(engine):
                with path.open("rb") as stream:
                    rows = snapshot_rows_of_csv(
                        stream,
                        value_column,
                        line_offset=progress.lines,
                        more_after=copied.end < progress.size,
                    )
                    _write_snapshot_file(snapshot, rows, with_header=first)
            else:
                write_snapshot(engine, snapshot, with_header=first)
            path.unlink()
            loaded = count_users(engine)
            if first:
                # The parts are chosen now, for the whole list: its users guessed from this chunk's
                # (the list's size over this chunk's bytes per user). Not exact: bytes per user vary
                # (ids and e-mails grow by a digit, optional cells, quoted line breaks), and the count
                # cannot wait for the last chunk, since every chunk's users are split into the parts
                # as it is read (changing the count later would split the chunks stored again). A
                # guess over gives one more part, each smaller (a 30M list, exactly 15 x 2M users, got
                # 16); one under makes parts larger than ``part_users`` by the same ratio.
                users = loaded * progress.size / max(1, copied.end)
                progress.parts = max(1, math.ceil(users / self.part_users))
            last = copied.end >= progress.size
            countries = set(progress.countries) | set(users_countries(engine))
            progress.countries = sorted(countries)[:250]
            if record.snapshot_key:
                self._send_snapshot_part(record, progress, snapshot, last)
            snapshot.unlink()
            for part, part_path in enumerate(
                write_parts(engine, engine.path("parts"), progress.parts, pos_before=progress.rows)
            ):
                key = users_chunk_part_key(record.org_id, record.audience_id, part, progress.chunks_done)
                self.blobs.upload(key, part_path)
                part_path.unlink()
        progress.offset = copied.end
        progress.chunks_done += 1
        progress.rows += loaded
        progress.lines += copied.lines
        activation.selection = progress
        if not last:
            self._save(record, worker)
            return StepResult(outcome="more")
        if record.snapshot_key and progress.snapshot_upload:
            self.blobs.finish_parts(record.snapshot_key, progress.snapshot_upload, progress.snapshot_etags)
        activation.countries = progress.countries
        activation.users_parts = progress.parts
        activation.users_chunks = progress.chunks_done
        activation.hashing = None
        activation.batch_keys_prefix = None
        activation.users_key = users_key
        activation.users_total = progress.rows
        self._save(record, worker)
        return StepResult(outcome="done")

    def _send_snapshot_part(
        self, record: AudienceRecord, progress: SelectionProgress, snapshot: Path, last: bool
    ) -> None:
        """A chunk's snapshot lines as the next part of the snapshot's multipart upload (started by the
        first chunk), after the lines an earlier chunk left waiting (a part but the last must be
        ``MIN_PART_BYTES``); lines still too short for a part wait in turn."""
        assert record.snapshot_key is not None
        if progress.carry is not None:
            joined = snapshot.with_name("joined.csv")
            waiting_key = snapshot_carry_key(record.org_id, record.audience_id, progress.carry)
            with joined.open("wb") as file, snapshot.open("rb") as lines:
                with self.blobs.open(waiting_key) as waiting:
                    shutil.copyfileobj(waiting, file, COPY_BUFFER_BYTES)
                shutil.copyfileobj(lines, file, COPY_BUFFER_BYTES)
            joined.replace(snapshot)
        if not last and snapshot.stat().st_size < MIN_PART_BYTES:
            # Under a key of this chunk's own: a retried chunk never reads what it wrote itself.
            chunk = progress.chunks_done
            self.blobs.upload(
                snapshot_carry_key(record.org_id, record.audience_id, chunk), snapshot, "text/csv"
            )
            progress.carry = chunk
            return
        if progress.snapshot_upload is None:
            progress.snapshot_upload = self.blobs.start_parts(record.snapshot_key, "text/csv")
        number = len(progress.snapshot_etags) + 1
        etag = self.blobs.put_part(record.snapshot_key, progress.snapshot_upload, number, snapshot)
        progress.snapshot_etags.append(etag)
        progress.carry = None

    def _store_parts(self, engine: QueryRunner, record: AudienceRecord, users: int) -> int:
        """The loaded list (``users`` rows) as parts of about ``part_users`` users each, split by a
        hash of user_id (every record of one user in one part, so each part is de-duplicated alone),
        stored for NormaliseAndHash. The number of parts."""
        from shared.activation.hashing import write_parts

        parts = math.ceil(users / self.part_users)
        for part, path in enumerate(write_parts(engine, engine.path("parts"), parts)):
            self.blobs.upload(users_part_key(record.org_id, record.audience_id, part), path)
            path.unlink()
        return parts

    def _copy(self, key: str, path: Path) -> None:
        """An object into a local file, as it streams in (never whole in memory)."""
        with self.blobs.open(key) as stream, path.open("wb") as file:
            shutil.copyfileobj(stream, file, COPY_BUFFER_BYTES)

    def _hold_out(
        self,
        record: AudienceRecord,
        users: list[AudienceUser],
        percent: float,
        seed: int | None,
        values: dict[str, float] | None = None,
    ) -> int:
        """Keep ``percent`` % of a segment's users out of the upload (stratified by score, from a
        recorded seed): the users file holds the uploaded group only; the snapshot and the groups
        file hold everyone with their group. Returns the uploaded count."""
        split = split_holdout(
            [u.user_id for u in users],
            [u.score if u.score is not None else 0.0 for u in users],
            percent,
            new_seed() if seed is None else seed,
        )
        held = split.held_out
        groups = [GROUP_HOLDOUT if h else GROUP_UPLOADED for h in held]
        uploaded = [u for u, h in zip(users, held, strict=True) if not h]
        users_key = users_csv_key(record.org_id, record.audience_id)
        groups_key = groups_csv_key(record.org_id, record.audience_id)
        self.blobs.put(users_key, users_csv(uploaded, values), "text/csv")
        self.blobs.put(groups_key, groups_csv(users, groups), "text/csv")
        self._write_snapshot(
            record,
            ((*snapshot_row(u), g) for u, g in zip(users, groups, strict=True)),
            (*SNAPSHOT_COLUMNS, GROUP_COLUMN),
        )
        record.holdout = HoldoutRecord(
            percent=percent,
            seed=split.seed,
            uploaded_users=split.uploaded_count,
            holdout_users=split.holdout_count,
            groups_key=groups_key,
        )
        return len(uploaded)

    def _write_snapshot(
        self,
        record: AudienceRecord,
        rows: Iterator[tuple[str, ...]],
        columns: tuple[str, ...] = SNAPSHOT_COLUMNS,
    ) -> int:
        """Store the audience's CSV snapshot (``shared.audiences.snapshot``) of ``rows``; their number.
        A holdout's snapshot adds the ``group`` column (``columns``). Written to a local file as the rows
        come and uploaded from it, so a large list is never whole in memory."""
        with tempfile.TemporaryDirectory(prefix="snapshot-") as folder:
            path = Path(folder) / "snapshot.csv"
            count = _write_snapshot_file(path, rows, columns)
            if record.snapshot_key:
                self.blobs.upload(record.snapshot_key, path, "text/csv")
        return count

    def normalise_and_hash(self, org_id: str, audience_id: str, worker: Worker) -> StepResult:
        """``NormaliseAndHash``: normalise and hash the users file in the engine
        (``shared.activation.hashing``): each user's identifiers into one row, the first usable
        record of each user_id kept, and the rows stored as the upload session's batches (batch
        ``n`` always holds the same rows, so an upload resumes after the last acknowledged batch).
        The file is copied to the engine's scratch folder as it streams in; the batches are written a
        few at a time, so memory stays bounded whatever the list's size.

        A list SelectUsers split into parts is hashed one part a task: each returns ``more`` until
        the last, its batches numbered after the previous parts' and its counts added to theirs
        (``ActivationRecord.hashing``), so no task holds more than one part."""
        # The engine and numpy ship with the functions that run this step (the activation step and
        # the synchronous create), not with every function that reads an audience.
        from shared.activation.hashing import (
            added_counts,
            csv_header,
            hash_users,
            load_users_file,
            load_users_part,
            quality_report,
        )

        record = self._begin(org_id, audience_id, worker, "normalise_and_hash")
        activation = self._activation(record)
        if record.upload is not None and activation.batch_keys_prefix:
            return StepResult(outcome="done")
        assert activation.users_key is not None, "SelectUsers stores the users first"
        request = self._request(record)
        progress = activation.hashing
        if progress is None:
            session_id = new_session_id()
            progress = HashingProgress(
                session_id=session_id,
                batch_keys_prefix=f"activations/{org_id}/{audience_id}/batches/{session_id}",
            )
        parts = max(1, activation.users_parts)
        last_part = progress.parts_done + 1 == parts
        value_seed = record.value_seed
        # A segment's users file holds the predicted values; an uploaded list, the column it names.
        value_column = (value_seed.column or VALUE_CSV_COLUMN) if value_seed is not None else None
        with self.open_engine() as engine:
            if activation.users_parts and activation.users_chunks:
                # A list read in chunks: the part is a file of each chunk's users, read in chunk order.
                with self.blobs.open(activation.users_key) as stream:
                    header = csv_header(stream)
                folder = engine.path("part")
                folder.mkdir()
                for chunk in range(activation.users_chunks):
                    key = users_chunk_part_key(org_id, audience_id, progress.parts_done, chunk)
                    self._copy(key, folder / f"chunk-{chunk:05d}.parquet")
                users = load_users_part(engine, folder / "*.parquet", header, value_column)
                shutil.rmtree(folder)
            elif activation.users_parts:
                with self.blobs.open(activation.users_key) as stream:
                    header = csv_header(stream)
                path = engine.path("part.parquet")
                self._copy(users_part_key(org_id, audience_id, progress.parts_done), path)
                users = load_users_part(engine, path, header, value_column)
                path.unlink()
            else:
                path = engine.path("users.csv")
                self._copy(activation.users_key, path)
                users = load_users_file(engine, path, csv_header(path), value_column)
                path.unlink()  # the engine holds the users now; the scratch folder is small in Lambda
            first = progress.batches + 1
            hashed = hash_users(
                engine, users, default_country=request.country, batch_size=self.batch_size, first_batch=first
            )
            rows, with_value = progress.rows + hashed.rows, progress.with_value + hashed.with_value
            if last_part:  # before writing: a list that cannot be used leaves no batches behind
                check_usable(rows, record.objective)
                if value_seed is not None:
                    check_values(with_value, rows, value_seed.column)
            self._write_batches(engine, users, progress.batch_keys_prefix, first, hashed.batches)
        progress.parts_done += 1
        progress.rows, progress.with_value = rows, with_value
        progress.batches += hashed.batches
        progress.counts = added_counts(progress.counts, hashed.counts)
        activation.hashing = progress
        if not last_part:
            self._save(record, worker)
            return StepResult(outcome="more")
        report, _ = quality_report(progress.counts)
        if value_seed is not None:
            value_seed.rows_with_value = progress.with_value
        record.quality = report.model_dump(mode="json")
        record.upload = UploadProgress(
            session_id=progress.session_id,
            total_rows=progress.rows,
            batch_size=self.batch_size,
            batches_total=progress.batches,
        )
        activation.rows_total = progress.rows
        activation.batch_keys_prefix = progress.batch_keys_prefix
        activation.upload_schema = list(hashed.schema)
        self._save(record, worker)
        return StepResult(outcome="done")

    def _write_batches(
        self, engine: QueryRunner, users: UsersInEngine, prefix: str, first_batch: int, batches: int
    ) -> None:
        """Store ``batches`` batches from ``first_batch`` as JSON, ``batches_per_query`` hashed at a time
        by the engine while the previous ones are being written to S3 (a few writers, a bounded
        queue)."""
        from shared.activation.hashing import batch_documents

        with ThreadPoolExecutor(max_workers=BATCH_WRITERS, thread_name_prefix="batch-writer") as writers:
            pending: list[Future[None]] = []
            end = first_batch + batches - 1
            for first in range(first_batch, end + 1, self.batches_per_query):
                last = min(end, first + self.batches_per_query - 1)
                for number, document in batch_documents(engine, users, first, last):
                    pending.append(
                        writers.submit(
                            deadline.carry(self.blobs.put),
                            batch_key(prefix, number),
                            document,
                            "application/json",
                        )
                    )
                # Hold at most one query's documents beyond what is being written.
                while len(pending) > self.batches_per_query:
                    pending.pop(0).result()
            for future in pending:
                future.result()

    # --- the platform's objects -------------------------------------------------------------------

    def create_custom_audience(self, org_id: str, audience_id: str, worker: Worker) -> StepResult:
        """``CreateCustomAudience``: the empty customer-list audience, once (under the lease)."""
        record = self._begin(org_id, audience_id, worker, "create_custom_audience")
        if record.platform_custom_audience_id is None:
            graph = self._graph(org_id, worker)
            marker = platform_marker(record.audience_id, "audience")
            found = self._created_before(graph, record, record.platform_create_sent, marker)
            if found is None:
                # Saved before sending: if the answer is lost, the next attempt looks for the marker.
                record.platform_create_sent = True
                self._save(record, worker)
                description = (
                    f"Predicted buyers of {record.product_id}" if record.product_id else "Predicted buyers"
                )
                found = platform.create_custom_audience(
                    graph,
                    record.ad_account_id,
                    record.name,
                    description,
                    value_based=record.value_seed is not None,
                    marker=marker,
                ).id
            record.platform_custom_audience_id = found
            record.status = "uploading"
            self._save(record, worker)
        return StepResult(outcome="done")

    def _created_before(
        self, graph: GraphClient, record: AudienceRecord, sent: bool, marker: str
    ) -> str | None:
        """The id of the audience an earlier attempt created with ``marker`` (its answer lost), when a
        create was ``sent`` and the platform lists one; else None (nothing to adopt: create it)."""
        if not sent:
            return None
        found = platform.find_marked(graph, record.ad_account_id, marker)
        if not found:
            return None
        logger.info("adopted a platform audience whose create answer was lost", extra={"marker": marker})
        return found[0].id

    def upload_batches(self, org_id: str, audience_id: str, worker: Worker) -> StepResult:
        """``UploadBatches``: send the batches after the last acknowledged one, at most
        ``max_batches`` and only while the worker has time; each acknowledgement is saved before the
        next batch is sent. Throttling ends the step with the wait (``WaitForThrottle``)."""
        record = self._begin(org_id, audience_id, worker, "upload_batches")
        progress, prefix = record.upload, self._activation(record).batch_keys_prefix
        assert progress is not None, "NormaliseAndHash starts the upload session"
        assert prefix is not None, "NormaliseAndHash stores the batches"
        assert record.platform_custom_audience_id, "CreateCustomAudience comes first"
        # A list hashed in parts has a short batch at the end of each part: the session counts the
        # batches stored, not the rows over the batch size.
        session = platform.UploadSession(
            session_id=progress.session_id,
            total_rows=progress.total_rows,
            batch_size=progress.batch_size,
            batches=progress.batches_total,
        )
        if progress.batches_done >= progress.batches_total:
            # Every batch was acknowledged (a retry after a later step failed): nothing needs the
            # platform here, so a token refused now fails the step that calls it, not this one.
            return StepResult(outcome="done")
        graph = self._graph(org_id, worker)
        schema = tuple(self._activation(record).upload_schema or SCHEMA)
        sent, slowest = 0, 0.0
        # The next batch is read from S3 while this one is with the platform (one read ahead).
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="batch-reader") as reader:

            def read(seq: int) -> Future[Any] | None:
                if seq > progress.batches_total:
                    return None
                return reader.submit(
                    deadline.carry(lambda: json.loads(self.blobs.get(batch_key(prefix, seq))))
                )

            upcoming = read(progress.batches_done + 1)
            try:
                while progress.batches_done < progress.batches_total:
                    if sent >= self.max_batches or worker.seconds_left() < SAFETY_SECONDS + 2 * slowest:
                        return StepResult(outcome="more", batches_sent=sent)
                    seq = progress.batches_done + 1
                    started = time.monotonic()
                    assert upcoming is not None, "a batch is read ahead while one is left"
                    rows = upcoming.result()
                    # Not past what this task sends: the next task reads its own first batch.
                    upcoming = read(seq + 1) if sent + 1 < self.max_batches else None
                    batch = platform.UploadBatch(session=session, batch_seq=seq, rows=rows)
                    result = platform.add_users(graph, record.platform_custom_audience_id, schema, batch)
                    progress.batches_done = seq
                    progress.num_received = max(progress.num_received, result.num_received)
                    progress.num_invalid_entries += result.num_invalid_entries
                    record.user_count = min(progress.total_rows, seq * progress.batch_size)
                    self._save(record, worker)
                    sent += 1
                    slowest = max(slowest, time.monotonic() - started)
            except PlatformThrottled as exc:
                wait = _wait_seconds(exc)
                self._note_wait(record, worker, "throttled", wait)
                return StepResult(outcome="throttled", wait_seconds=wait, batches_sent=sent)
        return StepResult(outcome="done", batches_sent=sent)

    def check_seed(self, org_id: str, audience_id: str, worker: Worker) -> StepResult:
        """``CheckSeedProcessed``: read the audience's ``operation_status``; while the platform is
        still processing the upload, ask the state machine to wait (``WaitForSeed``) and ask again."""
        record = self._begin(org_id, audience_id, worker, "wait_for_seed")
        assert record.platform_custom_audience_id is not None
        graph = self._graph(org_id, worker)
        try:
            node = graph.get(record.platform_custom_audience_id, {"fields": "operation_status"}).body
        except PlatformThrottled as exc:
            wait = _wait_seconds(exc)
            self._note_wait(record, worker, "throttled", wait)
            return StepResult(outcome="processing", wait_seconds=wait)
        status = node.get("operation_status") or {}
        code = int(status.get("code") or 200)
        if code in SEED_PROCESSING_CODES:
            self._note_wait(record, worker, "seed_processing", SEED_POLL_SECONDS)
            return StepResult(outcome="processing", wait_seconds=SEED_POLL_SECONDS)
        if code >= 400:
            raise PreconditionFailed(
                f"The platform could not use the uploaded list: {status.get('description') or code}.",
                remedy="Check the audience in the platform's ads manager; upload a list with more "
                "valid e-mails or phone numbers, then retry the activation.",
            )
        return StepResult(outcome="ready", next=self._after("wait_for_seed", record))

    def create_lookalike(self, org_id: str, audience_id: str, worker: Worker) -> StepResult:
        """``CreateLookalike`` (prospecting): the lookalike of the seed, once."""
        record = self._begin(org_id, audience_id, worker, "create_lookalike")
        lookalike = record.lookalike
        if lookalike is not None and not lookalike.platform_audience_id:
            assert record.platform_custom_audience_id is not None
            seed = record.platform_custom_audience_id
            graph = self._graph(org_id, worker)
            marker = platform_marker(record.audience_id, "lookalike")
            found = self._created_before(graph, record, lookalike.create_sent, marker)
            if found is None:
                lookalike.create_sent = True
                self._save(record, worker)
                try:
                    found = platform.create_lookalike(
                        graph,
                        record.ad_account_id,
                        platform.lookalike_name(record.name, lookalike.size_percent, lookalike.country),
                        seed,
                        lookalike.size_percent / 100,
                        lookalike.country,
                        value_based=record.value_seed is not None,
                        marker=marker,
                    ).id
                except LookalikeRejected as exc:
                    raise _value_seed_refusal(record, exc) from exc
            lookalike.platform_audience_id = found
            lookalike.status = "active"
            self._save(record, worker)
        return StepResult(outcome="done", next=self._after("create_lookalike", record))

    def publish_advert(self, org_id: str, audience_id: str, worker: Worker) -> StepResult:
        """``PublishAdvert``: one object of the advert per call (``PublishingService.advance``);
        a refused create is rolled back by the next calls, then fails the activation with its remedy."""
        record = self._begin(org_id, audience_id, worker, "publish_advert")
        activation = self._activation(record)
        assert activation.publish is not None, "only an activation asked to publish comes here"
        assert self.publishing is not None, "the wiring gives the pipeline Publish advert"
        publishing = self.publishing()
        if record.publication is None or record.publication.state == "rolled_back":
            publishing.start_for_activation(org_id, audience_id, activation.publish)
        progress = publishing.advance(org_id, audience_id)
        if not progress.done:
            if progress.wait_seconds:
                record = self._require(org_id, audience_id)
                self._note_wait(record, worker, "throttled", progress.wait_seconds)
                return StepResult(outcome="throttled", wait_seconds=progress.wait_seconds)
            return StepResult(outcome="more")
        if progress.failure is not None:
            failure = progress.failure
            raise self._failed(
                self._require(org_id, audience_id), worker, failure.code, failure.message, failure.remedy
            )
        return StepResult(outcome="done")

    def generate_campaign(self, org_id: str, audience_id: str, worker: Worker) -> StepResult:
        """``GenerateCampaign``: the ads manager link with the audience (and lookalike) selected."""
        record = self._begin(org_id, audience_id, worker, "generate_campaign")
        assert self.publishing is not None
        self._activation(record).ads_manager_url = self.publishing().campaign_link(org_id, audience_id)
        self._save(record, worker)
        return StepResult(outcome="done")

    def mark_active(self, org_id: str, audience_id: str, worker: Worker) -> StepResult:
        """``MarkActive``: the audience is live; record the result and let go of it."""
        record = self._begin(org_id, audience_id, worker, "mark_active")
        activation = self._activation(record)
        record.status = "active"
        record.failure = None
        if record.upload is not None:
            record.user_count = record.upload.total_rows
        activation.step = "done"
        activation.state = "succeeded"
        activation.wait_reason = None
        activation.waiting_until = None
        activation.finished_at = self.clock()
        record.lease = None
        self._save(record, worker)
        logger.info(
            "audience activated",
            extra={"audience_id": audience_id, "rows": record.user_count, "objective": record.objective},
        )
        return StepResult(outcome="done")

    def record_failure(self, org_id: str, audience_id: str, worker: Worker, error: str, cause: str) -> None:
        """``RecordFailure``: mark the attempt failed. The failing step recorded its code, message
        and remedy; a crash it could not record (a killed worker, a timeout) is recorded here from
        what Step Functions caught (``error`` is the errorType, ``cause`` Lambda's error payload)."""
        record = self._require(org_id, audience_id)
        activation = self._activation(record)
        if record.failure is None or record.failure.code != error:
            record.failure = FailureRecord(
                code=error,
                message=_crash_message(cause),
                remedy="Retry the activation: it resumes after the last batch the platform acknowledged.",
                step=activation.step,
            )
        record.status = "failed"
        activation.state = "failed"
        activation.wait_reason = None
        activation.waiting_until = None
        activation.finished_at = self.clock()
        if record.lease is not None and record.lease.owner == worker.owner:
            record.lease = None
        # Written whoever holds the lease: the attempt is over either way.
        record.updated_at = self.clock()
        activation.updated_at = record.updated_at
        status, failure = record.status, record.failure

        def fail(target: AudienceRecord) -> None:
            # The attempt's outcome over the audience as stored (a sync's or a check's change stays).
            target.status, target.failure, target.activation = status, failure, activation
            if target.lease is not None and target.lease.owner == worker.owner:
                target.lease = None

        self.audiences.put(record, fail)

    # --- helpers ----------------------------------------------------------------------------------

    def _begin(self, org_id: str, audience_id: str, worker: Worker, step: ActivationStep) -> AudienceRecord:
        """The record, with ``step`` as the current one, once this worker holds the lease."""
        record = self._require(org_id, audience_id)
        if record.lease is None or record.lease.owner != worker.owner:
            now = self.clock()
            lease = WorkerLease(owner=worker.owner, until=now + timedelta(seconds=worker.lease_seconds))
            if not self.audiences.acquire_lease(org_id, audience_id, lease, now):
                raise LeaseLost(
                    "Another worker is activating this audience.",
                    remedy="Nothing to do: the other worker carries on; watch the activation's progress.",
                )
            record = self._require(org_id, audience_id)
        activation = self._activation(record)
        activation.step = step
        activation.state = "running"
        activation.wait_reason = None
        activation.waiting_until = None
        if not activation.steps:
            activation.steps = planned_steps(record)
        self._save(record, worker)  # the current step shows while it works
        return record

    def _activation(self, record: AudienceRecord) -> ActivationRecord:
        if record.activation is None:
            now = self.clock()
            record.activation = ActivationRecord(started_at=now, updated_at=now)
        return record.activation

    def _after(self, step: ActivationStep, record: AudienceRecord) -> ActivationStep:
        steps = self._activation(record).steps or planned_steps(record)
        return steps[steps.index(step) + 1]

    def _save(self, record: AudienceRecord, worker: Worker) -> None:
        now = self.clock()
        record.updated_at = now
        self._activation(record).updated_at = now
        if record.lease is not None and record.lease.owner == worker.owner:
            record.lease.until = now + timedelta(seconds=worker.lease_seconds)
        if not self.audiences.save_leased(record, worker.owner):
            raise LeaseLost(
                "Another worker took over this audience's activation.",
                remedy="Nothing to do: the other worker carries on; watch the activation's progress.",
            )

    def _note_wait(
        self, record: AudienceRecord, worker: Worker, reason: str, seconds: float, *, save: bool = True
    ) -> None:
        activation = self._activation(record)
        activation.state = "waiting"
        activation.wait_reason = reason
        activation.waiting_until = self.clock() + timedelta(seconds=seconds)
        if save:
            self._save(record, worker)

    def _failed(
        self, record: AudienceRecord, worker: Worker, code: str, message: str, remedy: str | None
    ) -> Exception:
        """Record the failure on the audience (code, message, remedy, step) while this worker holds
        it, then the exception to raise (named after ``code``)."""
        activation = self._activation(record)
        record.failure = FailureRecord(code=code, message=message, remedy=remedy, step=activation.step)
        if record.lease is not None and record.lease.owner == worker.owner:
            self._save(record, worker)
        logger.warning(
            "activation step failed",
            extra={"audience_id": record.audience_id, "step": activation.step, "code": code},
        )
        return step_failure(code, message)

    def _graph(self, org_id: str, worker: Worker) -> GraphClient:
        _, graph = self.connections.client_for(org_id)
        graph.limit_waits(worker.wait_limit)
        self._graphs[org_id] = graph
        return graph

    def flush_usage(self, org_id: str) -> None:
        """Record the platform usage the steps of this invocation saw (once, at its end)."""
        graph = self._graphs.pop(org_id, None)
        if graph is not None:
            self.connections.record_usage(org_id, graph)

    def _request(self, record: AudienceRecord) -> Any:
        from shared.audiences.models import CreateAudienceRequest

        assert record.source_key is not None
        return CreateAudienceRequest.model_validate(json.loads(self.blobs.get(record.source_key)))

    def open_engine(self) -> AbstractContextManager[QueryRunner]:
        """The columnar engine for one step (``shared.dataplane.runner``), its memory limit the fixed
        one where this pipeline has it. Imported here: only the steps that select and hash load it."""
        from shared.dataplane.runner import query_runner

        return query_runner(memory_limit_mb=self.engine_memory_mb)

    def _require(self, org_id: str, audience_id: str) -> AudienceRecord:
        record = self.audiences.get(org_id, audience_id)
        if record is None:
            from shared.errors import NotFound

            raise NotFound(
                f"Audience {audience_id} was not found.", remedy="List audiences to see their ids."
            )
        return record


def _load_list(
    engine: QueryRunner,
    path: Path,
    header: Sequence[str],
    value_column: str | None,
    *,
    data_start: int = 0,
    offset: int = 0,
    line_offset: int = 0,
) -> None:
    """An uploaded list in ``path`` (or a chunk of one: its header, ``data_start`` bytes, then records
    from byte ``offset`` of the upload, after ``line_offset`` line breaks) loaded into the engine. When
    the engine refuses it for a record longer than it reads, the error names that record
    (``_long_record``); else the engine's error stands. A list with a quote the engine reads otherwise
    than Python's csv module (``list_chunks.first_misread_quote``) is refused naming the first, as the
    whole read and a chunk name it: the engine's reading of its row would be uploaded."""
    from shared.activation.hashing import load_users_file
    from shared.activation.list_chunks import first_misread_quote

    try:
        load_users_file(engine, path, header, value_column)
    except ValidationFailed:
        long = _long_record(path, data_start, offset, line_offset)
        if long is None:
            raise
        raise long from None
    with path.open("rb") as file:

        def read(start: int, end: int) -> bytes:
            file.seek(start)
            return file.read(end - start + 1)

        misread = first_misread_quote(read, 0, path.stat().st_size)
    if misread is not None:
        at = misread.at
        upload_at = at if at < data_start else offset + at - data_start
        raise misread_quote(line_offset + 1 + misread.lines, upload_at, misread.reason, misread.fix)


def _long_record(path: Path, data_start: int, offset: int, line_offset: int) -> ValidationFailed | None:
    """The error for the first record of the list (or chunk) in ``path`` longer than the engine reads
    (``list_chunks.RECORD_BYTES``), named as a chunk's bound names it (an unbalanced quote, or a line with
    no end, by line and byte of the upload: see ``_load_list``), so a list read whole and in chunks
    fail alike wherever the chunks are cut; None when every record is shorter."""
    from shared.activation.list_chunks import RECORD_BYTES, first_long_record

    with path.open("rb") as file:

        def read(start: int, end: int) -> bytes:
            file.seek(start)
            return file.read(end - start + 1)

        long = first_long_record(read, 0, path.stat().st_size)
    if long is None:
        return None
    at = long.at if long.at < data_start else offset + long.at - data_start
    return record_without_end(line_offset + 1 + long.lines, at, long.unbalanced, RECORD_BYTES)


def _write_snapshot_file(
    path: Path,
    rows: Iterator[tuple[str, ...]],
    columns: tuple[str, ...] = SNAPSHOT_COLUMNS,
    *,
    with_header: bool = True,
) -> int:
    """The snapshot's ``rows`` (``shared.audiences.snapshot``) into ``path`` as they come, after its byte
    order mark and header (unless ``with_header`` is false: a later chunk of a list); their number."""
    count = 0
    with path.open("w", encoding="utf-8", newline="") as file:
        writer = csv.writer(file, lineterminator="\r\n")
        if with_header:
            file.write(SNAPSHOT_START.decode("utf-8"))
            writer.writerow(columns)
        for row in rows:
            writer.writerow(row)
            count += 1
    return count


def platform_marker(audience_id: str, kind: str) -> str:
    """What a create of ``kind`` (``audience``, ``lookalike``) for the audience carries in its
    description, chosen before it is sent: unique to the audience and the kind, so that after a lost
    answer the object is found by it (``platform.find_marked``) and not created twice."""
    return f"sam-{kind}-{audience_id}"


def _value_seed_refusal(record: AudienceRecord, exc: LookalikeRejected) -> LookalikeRejected:
    """The platform's 2654 on a value-based seed, said for a value-based seed: the platform counts only
    the people it matched, so rows sent with values may still leave it none (§4.1)."""
    seed = record.value_seed
    if seed is None:
        return exc
    return LookalikeRejected(
        f"The platform refused the value-based lookalike: the seed is too small in "
        f"{record.lookalike.country if record.lookalike else 'the chosen country'}, or none of the "
        f"people it matched carries a customer value ({seed.rows_with_value} of the uploaded rows had one).",
        remedy="Give more of the seed's customers a value (a number of at least 0), or more of them a "
        "usable e-mail or phone, then retry the activation; or leave valueBased out.",
        detail=exc.detail,
    )


def _wait_seconds(exc: PlatformThrottled) -> int:
    return max(1, math.ceil(exc.retry_after_seconds or 60))


def _crash_message(cause: str) -> str:
    """The message of a caught Lambda error (its payload's ``errorMessage``), or the cause as is."""
    try:
        payload = json.loads(cause)
    except (TypeError, ValueError):
        return cause or "The activation step failed."
    if isinstance(payload, dict) and payload.get("errorMessage"):
        return str(payload["errorMessage"])
    return "The activation step failed."
