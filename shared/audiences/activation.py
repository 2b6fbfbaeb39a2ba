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
import io
import json
import math
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, BinaryIO, Literal, Protocol

from pydantic import BaseModel, ValidationError

from shared.audiences.batching import new_session_id
from shared.audiences.holdout import GROUP_HOLDOUT, GROUP_UPLOADED, new_seed, split_holdout
from shared.audiences.identifiers import SCHEMA, AudienceUser
from shared.audiences.preparation import IdentifierColumns, Row, prepare_columns
from shared.audiences.quality import IdentifierQuality, QualityReport
from shared.audiences.snapshot import (
    GROUP_COLUMN,
    SNAPSHOT_COLUMNS,
    csv_safe_text,
    score_cell,
    snapshot_row,
)
from shared.audiences.uploads import customer_value, invalid_rows, plainly_valid, row_problems, upload_key
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
    HoldoutRecord,
    UploadProgress,
    WorkerLease,
)
from shared.records.connections import Connection

if TYPE_CHECKING:
    from _csv import Reader as _CsvReader

    from shared.audiences.service import SegmentSource

MIN_SEED_USERS = 100
# A worker's claim lasts this long past its last save (an execution), or its remaining time (a
# request); a worker killed without releasing it holds the audience no longer than that.
LEASE_SECONDS = 900
# A task never sleeps longer than this in-process: longer waits are the state machine's Wait states.
TASK_SLEEP_LIMIT_SECONDS = 5.0
# What a step keeps in hand for its last save after its last platform call.
SAFETY_SECONDS = 3.0
# operation_status codes meaning "still processing the upload" (docs/platform-notes.md §2.4).
SEED_PROCESSING_CODES = frozenset({410, 414, 441})
SEED_POLL_SECONDS = 15
# Users normalised and hashed at a time (bounds NormaliseAndHash's memory).
PREPARE_CHUNK_USERS = 20_000
USERS_CSV_COLUMNS = ("user_id", "email", "firstName", "lastName", "phone", "score", "country")
# Written only when some user carries a Limited Data Use flag (docs/platform-notes.md §3.8): a list
# with the limitedDataUse column sends the data processing options on every row.
LIMITED_DATA_USE_COLUMNS = ("limitedDataUse", "state")
# Written for a value-based segment seed: each user's predicted value (``shared.targeting.values``).
VALUE_CSV_COLUMN = "value"
# How pydantic reads a true boolean cell (an uploaded list was validated as AudienceUser already).
_TRUE_CELLS = frozenset({"true", "1", "yes", "y", "on", "t"})

Outcome = Literal["claimed", "busy", "active", "done", "more", "throttled", "processing", "ready"]


class StepResult(BaseModel):
    """What a task returns; the state machine's Choice states read ``outcome`` and ``next``
    (snake_case: the state machine's own document), and the Wait states ``wait_seconds``."""

    outcome: Outcome
    next: ActivationStep | None = None
    wait_seconds: int = 0
    batches_sent: int = 0


@dataclass(frozen=True)
class Worker:
    """Who is advancing the audience, and how long it may still run.

    ``owner`` names the lease (the execution's name, or ``request-<id>``); ``seconds_left`` is the
    function's remaining time (``context.get_remaining_time_in_millis() / 1000``)."""

    owner: str
    seconds_left: Callable[[], float]
    # The longest in-process sleep; a state machine task hands anything longer to a Wait state.
    sleep_limit: float = TASK_SLEEP_LIMIT_SECONDS
    lease_seconds: float = LEASE_SECONDS

    def wait_limit(self) -> float:
        return max(0.0, min(self.sleep_limit, self.seconds_left() - SAFETY_SECONDS))


class LeaseLost(ServiceError):
    """Another worker holds the audience now; this one stops without writing anything."""

    status = 409
    code = "activation_lease_lost"


class ActivationStore(Protocol):
    def get(self, org_id: str, audience_id: str) -> AudienceRecord | None: ...
    def acquire_lease(self, org_id: str, audience_id: str, lease: WorkerLease, now: datetime) -> bool: ...
    def release_lease(self, org_id: str, audience_id: str, owner: str) -> None: ...
    def save_leased(self, record: AudienceRecord, owner: str) -> bool: ...
    def put(self, record: AudienceRecord) -> None: ...


class ActivationBlobs(Protocol):
    def put(self, key: str, data: bytes, content_type: str = ...) -> None: ...
    def get(self, key: str) -> bytes: ...
    def open(self, key: str) -> BinaryIO: ...


class PlatformConnections(Protocol):
    def client_for(self, org_id: str) -> tuple[Connection, GraphClient]: ...
    def record_usage(self, org_id: str, graph: GraphClient) -> None: ...


class Publishing(Protocol):
    """Publish advert and Generate campaign (``shared.publishing.service.PublishingService``)."""

    def start_for_activation(self, org_id: str, audience_id: str, request: dict[str, Any]) -> None: ...
    def advance(self, org_id: str, audience_id: str) -> Any: ...
    def campaign_link(self, org_id: str, audience_id: str) -> str: ...


# A task's ``action`` -> the method that does it.
STEP_ACTIONS: dict[str, str] = {
    "claim": "claim",
    "select_users": "select_users",
    "normalise_and_hash": "normalise_and_hash",
    "create_custom_audience": "create_custom_audience",
    "upload_batches": "upload_batches",
    "check_seed": "check_seed",
    "create_lookalike": "create_lookalike",
    "publish_advert": "publish_advert",
    "generate_campaign": "generate_campaign",
    "mark_active": "mark_active",
}


def planned_steps(record: AudienceRecord) -> list[ActivationStep]:
    """The steps this audience's activation goes through, in order (what a progress bar shows)."""
    steps: list[ActivationStep] = [
        "select_users",
        "normalise_and_hash",
        "create_custom_audience",
        "upload_batches",
        "wait_for_seed",
    ]
    if record.lookalike is not None:
        steps.append("create_lookalike")
    activation = record.activation
    if activation is not None and activation.publish is not None:
        steps.append("publish_advert")
    elif activation is not None and activation.generate_campaign:
        steps.append("generate_campaign")
    steps.append("mark_active")
    return steps


def step_failure(code: str, message: str) -> StepFailed:
    """An exception whose class name is ``code``: Lambda reports the class name as ``errorType``,
    so Step Functions' Retry/Catch and the recorded failure use one code (``shared.errors``)."""
    named = type(code, (StepFailed,), {"__module__": "activation"})
    return named(message)


class StepFailed(Exception):
    """Base of the exceptions ``step_failure`` names after an error code."""


def users_csv_key(org_id: str, audience_id: str) -> str:
    return f"activations/{org_id}/{audience_id}/users.csv"


def groups_csv_key(org_id: str, audience_id: str) -> str:
    return f"activations/{org_id}/{audience_id}/groups.csv"


def groups_csv(users: list[AudienceUser], groups: list[str]) -> bytes:
    """The holdout's groups file: ``user_id,score,group`` per segment user (no identifiers)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(("user_id", "score", "group"))
    for user, group in zip(users, groups, strict=True):
        writer.writerow((user.user_id, "" if user.score is None else repr(user.score), group))
    return buffer.getvalue().encode()


def batch_key(prefix: str, batch_seq: int) -> str:
    return f"{prefix}/{batch_seq:06d}.json"


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
    prepare_chunk: int = PREPARE_CHUNK_USERS
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
            with self.blobs.open(users_key) as stream:  # a large list is read as it streams in
                count = self._write_snapshot(record, _snapshot_rows_of_csv(stream, request.value_column))
            return users_key, count
        users: list[AudienceUser] = list(request.users)
        values: dict[str, float] | None = None
        if request.segment is not None:
            if self.segments is None:
                raise PreconditionFailed("Segments are not available in this function.")
            chosen = self.segments().users_for(record.org_id, request.segment, values=request.value_based)
            record.segment = chosen.provenance
            users = chosen.users
            values = chosen.values
            if request.holdout_percent > 0:
                return users_key, self._hold_out(
                    record, users, request.holdout_percent, request.holdout_seed, values
                )
        self.blobs.put(users_key, _users_csv(users, values), "text/csv")
        self._write_snapshot(record, (snapshot_row(user) for user in users))
        return users_key, len(users)

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
        self.blobs.put(users_key, _users_csv(uploaded, values), "text/csv")
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
        A holdout's snapshot adds the ``group`` column (``columns``)."""
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\r\n")
        writer.writerow(columns)
        chunks: list[bytes] = []
        count = 0
        for row in rows:
            writer.writerow(row)
            count += 1
            if count % 5_000 == 0:  # encoded as it goes: never the whole file twice as text
                chunks.append(buffer.getvalue().encode())
                buffer.seek(0)
                buffer.truncate()
        chunks.append(buffer.getvalue().encode())
        if record.snapshot_key:
            self.blobs.put(record.snapshot_key, b"".join(chunks), "text/csv")
        return count

    def normalise_and_hash(self, org_id: str, audience_id: str, worker: Worker) -> StepResult:
        """``NormaliseAndHash``: join each user's identifiers into one row, normalise and hash them,
        and store the rows as the upload session's batches (batch ``n`` always holds the same rows,
        so an upload resumes after the last acknowledged batch)."""
        record = self._begin(org_id, audience_id, worker, "normalise_and_hash")
        activation = self._activation(record)
        if record.upload is not None and activation.batch_keys_prefix:
            return StepResult(outcome="done")
        assert activation.users_key is not None, "SelectUsers stores the users first"
        request = self._request(record)
        session_id = new_session_id()
        prefix = f"activations/{org_id}/{audience_id}/batches/{session_id}"
        # A chunk of users at a time, so memory stays bounded whatever the list's size; batch n is
        # written as soon as its rows exist. The first usable record of a user_id is kept (as
        # prepare_columns does within a chunk), across chunks too.
        kept: set[str] = set()
        schema: tuple[str, ...] = SCHEMA
        pending: list[Row] = []
        reports: list[QualityReport] = []
        batches = later_duplicates = rows_total = with_value = 0
        value_seed = record.value_seed
        # A segment's users file holds the predicted values; an uploaded list, the column it names.
        value_column = (value_seed.column or VALUE_CSV_COLUMN) if value_seed is not None else None
        with self.blobs.open(activation.users_key) as stream:  # read as it streams in
            for columns in _column_chunks(stream, self.prepare_chunk, value_column):
                prepared = prepare_columns(columns, default_country=request.country)
                schema = prepared.schema  # the same for every chunk (the file's columns decide it)
                reports.append(prepared.report)
                for row in prepared.rows:
                    if row[0] in kept:
                        later_duplicates += 1
                        continue
                    kept.add(row[0])
                    pending.append(row)
                    if value_column is not None and row[-1] != "":
                        with_value += 1
                    if len(pending) == self.batch_size:
                        batches += 1
                        self.blobs.put(
                            batch_key(prefix, batches), json.dumps(pending).encode(), "application/json"
                        )
                        rows_total += len(pending)
                        pending = []
        if pending:
            batches += 1
            self.blobs.put(batch_key(prefix, batches), json.dumps(pending).encode(), "application/json")
            rows_total += len(pending)
        del kept, pending
        check_usable(rows_total, record.objective)
        if value_seed is not None:
            check_values(with_value, rows_total, value_seed.column)
            value_seed.rows_with_value = with_value
        session = platform.UploadSession(
            session_id=session_id, total_rows=rows_total, batch_size=self.batch_size
        )
        record.quality = merged_report(reports, later_duplicates).model_dump(mode="json")
        record.upload = UploadProgress(
            session_id=session.session_id,
            total_rows=session.total_rows,
            batch_size=session.batch_size,
            batches_total=session.total_batches,
        )
        activation.rows_total = session.total_rows
        activation.batch_keys_prefix = prefix
        activation.upload_schema = list(schema)
        self._save(record, worker)
        return StepResult(outcome="done")

    # --- the platform's objects -------------------------------------------------------------------

    def create_custom_audience(self, org_id: str, audience_id: str, worker: Worker) -> StepResult:
        """``CreateCustomAudience``: the empty customer-list audience, once (under the lease)."""
        record = self._begin(org_id, audience_id, worker, "create_custom_audience")
        if record.platform_custom_audience_id is None:
            graph = self._graph(org_id, worker)
            description = (
                f"Predicted buyers of {record.product_id}" if record.product_id else "Predicted buyers"
            )
            created = platform.create_custom_audience(
                graph,
                record.ad_account_id,
                record.name,
                description,
                value_based=record.value_seed is not None,
            )
            record.platform_custom_audience_id = created.id
            record.status = "uploading"
            self._save(record, worker)
        return StepResult(outcome="done")

    def upload_batches(self, org_id: str, audience_id: str, worker: Worker) -> StepResult:
        """``UploadBatches``: send the batches after the last acknowledged one, at most
        ``max_batches`` and only while the worker has time; each acknowledgement is saved before the
        next batch is sent. Throttling ends the step with the wait (``WaitForThrottle``)."""
        record = self._begin(org_id, audience_id, worker, "upload_batches")
        progress, prefix = record.upload, self._activation(record).batch_keys_prefix
        assert progress is not None, "NormaliseAndHash starts the upload session"
        assert prefix is not None, "NormaliseAndHash stores the batches"
        assert record.platform_custom_audience_id, "CreateCustomAudience comes first"
        session = platform.UploadSession(
            session_id=progress.session_id, total_rows=progress.total_rows, batch_size=progress.batch_size
        )
        graph = self._graph(org_id, worker)
        schema = tuple(self._activation(record).upload_schema or SCHEMA)
        sent, slowest = 0, 0.0
        # The next batch is read from S3 while this one is with the platform (one read ahead).
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="batch-reader") as reader:

            def read(seq: int) -> Future[Any] | None:
                if seq > progress.batches_total:
                    return None
                return reader.submit(lambda: json.loads(self.blobs.get(batch_key(prefix, seq))))

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
            try:
                created = platform.create_lookalike(
                    graph,
                    record.ad_account_id,
                    f"{record.name} - lookalike {lookalike.size_percent}% {lookalike.country}",
                    seed,
                    lookalike.size_percent / 100,
                    lookalike.country,
                    value_based=record.value_seed is not None,
                )
            except LookalikeRejected as exc:
                raise _value_seed_refusal(record, exc) from exc
            lookalike.platform_audience_id = created.id
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
        self.audiences.put(record)

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

    def _require(self, org_id: str, audience_id: str) -> AudienceRecord:
        record = self.audiences.get(org_id, audience_id)
        if record is None:
            from shared.errors import NotFound

            raise NotFound(
                f"Audience {audience_id} was not found.", remedy="List audiences to see their ids."
            )
        return record


def _users_csv(users: list[AudienceUser], values: Mapping[str, float] | None = None) -> bytes:
    """The users file SelectUsers stores; with ``values`` (a value-based seed), a ``value`` column."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    limited = any(u.limited_data_use is not None for u in users)
    header = USERS_CSV_COLUMNS + LIMITED_DATA_USE_COLUMNS if limited else USERS_CSV_COLUMNS
    writer.writerow(header if values is None else (*header, VALUE_CSV_COLUMN))
    for u in users:
        row: tuple[object, ...] = (
            u.user_id,
            u.email or "",
            u.first_name or "",
            u.last_name or "",
            u.phone or "",
            u.score or "",
            u.country or "",
        )
        if limited:
            flag = "" if u.limited_data_use is None else str(u.limited_data_use).lower()
            row = (*row, flag, u.state or "")
        if values is not None:
            value = values.get(u.user_id)
            row = (*row, "" if value is None else repr(value))
        writer.writerow(row)
    return buffer.getvalue().encode()


def _csv_rows(data: BinaryIO) -> tuple[list[str], _CsvReader]:
    # Read through a wrapper over the S3 stream: a million-user file is never held whole.
    reader = csv.reader(io.TextIOWrapper(data, encoding="utf-8-sig", newline=""))
    header = next(reader, [])
    return header, reader


def _snapshot_rows_of_csv(data: BinaryIO, value_column: str | None = None) -> Iterator[tuple[str, ...]]:
    """The snapshot rows of an uploaded users CSV, checking every row as they go (the POST checked
    only the header, ``shared.audiences.uploads.check_upload``). A plainly valid row
    (``plainly_valid``) is written without building its model, with exactly what ``snapshot_row``
    would write for it; any other row goes through the model.

    With ``value_column`` (a value-based seed), each row's value is checked too
    (``uploads.customer_value``: a number of at least 0, or blank).

    Once the whole file is read, raises ``ValidationFailed`` naming the line and column of each bad
    row (never its value), or for a file that is not UTF-8; nothing is written then."""
    problems: list[str] = []
    try:
        header, rows = _csv_rows(data)
        value_at = header.index(value_column) if value_column is not None and value_column in header else None
        for row in rows:
            if not row:
                continue
            if value_at is not None and value_at < len(row):
                try:
                    customer_value(row[value_at])
                except ValueError as exc:
                    problems.append(f"line {rows.line_num}: {value_column}: {exc}")
            cells = {name: value for name, value in zip(header, row, strict=False) if name and value.strip()}
            if plainly_valid(cells):
                score = cells.get("score")
                yield (
                    csv_safe_text(cells["user_id"]),
                    csv_safe_text(cells.get("email")),
                    csv_safe_text(cells.get("firstName")),
                    csv_safe_text(cells.get("lastName")),
                    csv_safe_text(cells.get("phone")),
                    score_cell(float(score) if score is not None else None),
                )
                continue
            try:
                user = AudienceUser.model_validate(cells)
            except ValidationError as error:
                problems.extend(row_problems(error, rows.line_num))
                continue
            yield snapshot_row(user)
    except UnicodeDecodeError as exc:
        raise ValidationFailed("The uploaded file is not UTF-8 text.", field="uploadId") from exc
    if problems:
        raise invalid_rows(problems)


def _column_chunks(data: BinaryIO, size: int, value_column: str | None = None) -> Iterator[IdentifierColumns]:
    """The identifier columns of a users CSV (``USERS_CSV_COLUMNS`` header, any order), ``size``
    users at a time; blank cells are missing values. With ``value_column`` (a value-based seed), each
    user's value from that column too (``uploads.customer_value``: a blank cell is no value)."""
    header, rows = _csv_rows(data)
    index = {name: i for i, name in enumerate(header)}
    wanted = ("user_id", "email", "phone", "firstName", "lastName", "country", *LIMITED_DATA_USE_COLUMNS)
    positions = [index.get(name) for name in wanted]
    value_at = index.get(value_column) if value_column is not None else None
    if value_column is not None and value_at is None:
        raise ValidationFailed(
            f"The users file has no column named {value_column!r} for the customers' values.",
            field="valueColumn",
            remedy="Name one of the uploaded CSV's columns in valueColumn.",
        )
    chunk: list[list[str]] = []
    for row in rows:
        if row:
            chunk.append(row)
        if len(chunk) == size:
            yield _columns(chunk, positions, value_at)
            chunk = []
    if chunk:
        yield _columns(chunk, positions, value_at)


def _values(rows: list[list[str]], at: int) -> list[float | None]:
    values: list[float | None] = []
    for row in rows:
        try:
            values.append(customer_value(row[at]) if at < len(row) else None)
        except ValueError as exc:
            raise ValidationFailed(
                f"A customer value {exc}.",
                field="valueColumn",
                remedy="Give each customer a value of 0 or more (blank for no value), then retry.",
            ) from exc
    return values


def _columns(
    rows: list[list[str]], positions: list[int | None], value_at: int | None = None
) -> IdentifierColumns:
    def column(at: int | None) -> list[str | None]:
        if at is None:
            return [None] * len(rows)
        return [(row[at] if at < len(row) and row[at].strip() else None) for row in rows]

    user_ids, emails, phones, first_names, last_names, countries, flags, states = (
        column(at) for at in positions
    )
    return IdentifierColumns(
        user_ids=[u or "" for u in user_ids],
        emails=emails,
        phones=phones,
        first_names=first_names,
        last_names=last_names,
        countries=countries,
        # A list with the limitedDataUse column carries the options on every row (blank: not LDU).
        limited_data_use=None
        if positions[6] is None
        else [None if v is None else v.strip().lower() in _TRUE_CELLS for v in flags],
        states=states,
        values=None if value_at is None else _values(rows, value_at),
    )


def merged_report(reports: list[QualityReport], later_duplicates: int) -> QualityReport:
    """One report for a list prepared in chunks: the counts added up, plus the records whose user_id
    a previous chunk had kept (``later_duplicates``), dropped as duplicates."""
    identifiers: dict[str, IdentifierQuality] = {}
    for key in reports[0].identifiers if reports else ():
        parts = [r.identifiers[key] for r in reports]
        reasons: dict[str, int] = {}
        for part in parts:
            for reason, count in part.unusable_reasons.items():
                reasons[reason] = reasons.get(reason, 0) + count
        identifiers[key] = IdentifierQuality(
            present=sum(p.present for p in parts),
            usable=sum(p.usable for p in parts),
            unusable=sum(p.unusable for p in parts),
            unusable_reasons=dict(sorted(reasons.items())),
            missing=sum(p.missing for p in parts),
        )
    return QualityReport(
        total_records=sum(r.total_records for r in reports),
        identifiers=identifiers,
        dropped_no_identifier=sum(r.dropped_no_identifier for r in reports),
        duplicate_user_ids=sum(r.duplicate_user_ids for r in reports) + later_duplicates,
        rows_to_upload=sum(r.rows_to_upload for r in reports) - later_duplicates,
    )


def check_usable(usable: int, objective: str) -> None:
    if usable == 0:
        raise ValidationFailed(
            "No user has a usable e-mail address or phone number, so nobody could be matched.",
            field="users",
            remedy="Send users with a valid email or phone; see the quality report from the dry run.",
        )
    if objective == "prospecting" and usable < MIN_SEED_USERS:
        raise ValidationFailed(
            f"A prospecting seed needs at least {MIN_SEED_USERS} users with a usable e-mail or phone; "
            f"this list has {usable}.",
            field="users",
            remedy="Add more users, or use the retargeting objective.",
        )


def check_values(with_value: int, rows: int, column: str | None) -> None:
    """A value-based seed needs customers with values: the platform refuses a value-based lookalike
    of a seed without them (docs/platform-notes.md §4.1), so none at all is refused before anything
    is created on the platform."""
    if with_value == 0:
        where = f"in the column {column!r}" if column else "predicted"
        raise ValidationFailed(
            f"None of the {rows} customers to upload has a value {where}, so the platform would refuse "
            "a value-based lookalike of them (a value-based seed needs customer values).",
            field="valueColumn" if column else "valueBased",
            remedy="Fill the column with each customer's value (a number of at least 0) and upload the "
            "list again, or leave valueBased out for a regular lookalike.",
        )


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
