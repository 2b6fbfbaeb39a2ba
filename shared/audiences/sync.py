"""Audience sync while connected (issue 12, item 4; docs/service-contract.md §3).

An audience made from a predictive segment is re-scored on a schedule its user chooses (daily by
default, weekly, or off): the current version of its model scores every user again, the segment's rule
cuts anew, the users are joined to their identifiers in the dataset in force, and the platform's
audience gets exactly those members through ``usersreplace`` (docs/platform-notes.md §3.6), which,
unlike removing and re-adding people, keeps the learning of the ad sets that target it. Each run
records the model and dataset versions, the segment's size, the members sent and the size before.

A run is refused when the model is stale (``shared.ml.freshness``), unless the user allowed stale
models for this audience. Only connected organizations sync: the scheduler looks at active
connections only, and a run whose account is disconnected midway stops (the platform keeps the old
members: a replace changes nothing until its last batch). Reconnecting makes every missed sync due
at the next scheduled tick.

The work runs in the audience sync state machine, one bounded ``step`` at a time: the first step
scores and stores the new members (so later steps rebuild the same rows), every step sends at most
``max_batches_per_step`` batches of the replace session and records each acknowledgement, and
throttling becomes the state machine's ``Wait``. A replace session lives 90 minutes on the platform;
one older than ``replace_window`` is started again from batch 1 (the platform kept the old members).
"""

from __future__ import annotations

import csv
import io
import json
import math
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Protocol

from pydantic import BaseModel

from shared.audiences.batching import iter_batches, new_upload_session
from shared.audiences.drift import (
    DELETED_ON_PLATFORM,
    deleted_on_platform,
    gone_on_platform,
    mark_deleted_on_platform,
)
from shared.audiences.holdout import GROUP_HOLDOUT, GROUP_UPLOADED
from shared.audiences.identifiers import AudienceUser
from shared.audiences.models import (
    AudienceSyncProgress,
    AudienceSyncRequest,
    AudienceView,
    RefreshAudienceRequest,
)
from shared.audiences.preparation import PreparedAudience, prepare_audience
from shared.audiences.schedule import (
    REPLACE_WINDOW,
    SYNC_INTERVALS,
    next_sync_at,
    refresh_running,
    running_refresh,
    sync_of,
    sync_running,
)
from shared.audiences.snapshot import iter_snapshot_csv, snapshot_csv
from shared.audiences.sync_files import held_out_key, members_key, run_files, run_keys, values_key
from shared.audiences.views import audience_view
from shared.clock import Clock
from shared.errors import NotFound, PreconditionFailed, RecordGone, ServiceError
from shared.observability import logger
from shared.platform import audiences as platform
from shared.platform.client import GraphClient
from shared.platform.errors import PlatformError, PlatformThrottled, PlatformUnavailable
from shared.records.audiences import (
    AudienceRecord,
    AudienceSync,
    FailureRecord,
    SyncOutcome,
    SyncRun,
    UploadProgress,
)
from shared.records.connections import Connection
from shared.records.models import ModelRecord
from shared.targeting.models import SegmentSpec

if TYPE_CHECKING:
    from shared.ml.freshness import FreshnessRules
    from shared.targeting.service import SegmentUsers

DISCONNECTED = FailureRecord(
    code="platform_disconnected",
    message="The ad account was disconnected, so the sync stopped. The audience keeps its members on the "
    "platform and is no longer updated.",
    remedy="Reconnect the ad account: syncing resumes at the next scheduled run.",
)


class StaleModel(PreconditionFailed):
    code = "model_stale"


class _Superseded(Exception):
    """The run a step works on is no longer the audience's current run (closed, replaced, or the
    audience deleted) when the step comes to write it: the step stops, writing nothing."""


class _AlreadyRunning(Exception):
    """The scheduler meets a run started meanwhile (by "sync now" or another tick)."""


class SyncStore(Protocol):
    """The audiences (``shared.repositories.audiences.DynamoAudienceStore``): ``put`` writes only over
    the revision read, and on a conflict applies ``apply`` (the writer's own change) to the record
    read again (``RecordGone`` when it was deleted, ``RecordChanged`` without ``apply``)."""

    def get(self, org_id: str, audience_id: str) -> AudienceRecord | None: ...
    def put(self, record: AudienceRecord, apply: Callable[[AudienceRecord], None] | None = ...) -> None: ...
    def list_for_org(self, org_id: str) -> list[AudienceRecord]: ...


class ConnectionReader(Protocol):
    """The stored connections (``shared.repositories.connections.DynamoConnectionStore``)."""

    def get(self, org_id: str) -> Connection | None: ...
    def active(self) -> list[Connection]: ...


class PlatformConnections(Protocol):
    """A validated Graph client per organization (``shared.connections.lifecycle.ConnectionService``)."""

    def client_for(self, org_id: str) -> tuple[Connection, GraphClient]: ...
    def record_usage(self, org_id: str, graph: GraphClient) -> None: ...


class SegmentSource(Protocol):
    def users_for(
        self, org_id: str, spec: SegmentSpec, *, latest_identifiers: bool = ..., values: bool = ...
    ) -> SegmentUsers: ...


class ModelReader(Protocol):
    def get(self, org_id: str, name: str) -> ModelRecord | None: ...


class SyncBlobs(Protocol):
    def put(self, key: str, data: bytes, content_type: str = ...) -> None: ...
    def get(self, key: str) -> bytes: ...
    def delete(self, key: str) -> None: ...


class StartSync(Protocol):
    """Starts the audience sync state machine (``shared.repositories.activations.StepFunctionsStarter``)."""

    def __call__(self, name: str, payload: dict[str, str]) -> None: ...


@dataclass(frozen=True)
class SyncPolicy:
    max_batches_per_step: int = 20
    batch_size: int = platform.MAX_ROWS_PER_CALL
    # The platform drops a replace session after 90 minutes (docs/platform-notes.md §3.6).
    replace_window: timedelta = REPLACE_WINDOW


class DueSummary(BaseModel):
    organizations: int = 0
    due: int = 0
    started: int = 0


@dataclass
class AudienceSyncService:
    audiences: SyncStore
    blobs: SyncBlobs
    connections: PlatformConnections
    connection_store: ConnectionReader
    models: ModelReader
    # Built on first use: they load numpy (and the scoring bundles), which only a step needs.
    segments: Callable[[], SegmentSource]
    rules: Callable[[], FreshnessRules]
    start: StartSync
    clock: Clock
    policy: SyncPolicy = SyncPolicy()

    # --- the user's side -------------------------------------------------------------------------

    def configure(self, org_id: str, audience_id: str, request: AudienceSyncRequest) -> AudienceView:
        """Set how often the audience syncs (``daily``, ``weekly``, ``off``) and whether a stale model
        may be used; the next sync is due one interval after the last run (or the creation)."""
        record = self._require(org_id, audience_id)

        def schedule(target: AudienceRecord) -> None:
            # Only the schedule's own fields: a sync's run or a refresh written meanwhile is kept.
            sync = _syncable(target)
            if request.allow_stale_model is not None:
                sync.allow_stale_model = request.allow_stale_model
            if request.frequency is not None:
                sync.frequency = request.frequency
                last = sync.last_run.started_at if sync.last_run else target.created_at
                sync.next_sync_at = last + SYNC_INTERVALS[sync.frequency] if sync.frequency != "off" else None
            target.sync = sync

        schedule(record)
        self._save(record, schedule)
        return audience_view(record)

    def sync_now(self, org_id: str, audience_id: str) -> AudienceView:
        """Start a sync now (refresh now); it runs in the background and shows as ``sync.current``."""
        record = self._require(org_id, audience_id)
        _syncable(record)  # a list audience has nothing to sync: says so
        if record.status == DELETED_ON_PLATFORM:
            raise deleted_on_platform(record)
        if record.status != "active":
            raise PreconditionFailed(
                f"Audience {audience_id} is {record.status}; only an active audience can be synced.",
                remedy="Wait until it is active (or create it again if it failed).",
            )
        connection = self.connection_store.get(org_id)
        if connection is None or connection.status != "active":
            raise PreconditionFailed(
                "Syncing needs the ad account connected.",
                remedy="Reconnect the ad account from the dashboard; scheduled syncs resume too.",
            )
        now = self.clock()

        def not_running(target: AudienceRecord) -> None:
            # Asked again of the audience as stored when another writer got there first.
            sync = sync_of(target)
            current = sync.current if sync is not None else None
            if current is not None and not self._abandoned(current, now):
                raise sync_running(current, "Wait for it to finish; the audience list shows its progress.")
            refreshing = running_refresh(target, now)
            if refreshing is not None:
                # Its replace session would run beside the refresh's (AudienceService.refresh).
                raise refresh_running(
                    refreshing, "Wait for it to finish (a few minutes), then refresh now again."
                )
            if sync is None or target.status != "active":
                raise PreconditionFailed(
                    f"Audience {audience_id} is {target.status}; only an active audience can be synced.",
                    remedy="Wait until it is active (or create it again if it failed).",
                )

        not_running(record)
        self._launch(record, "now", now, not_running)
        return audience_view(record)

    # --- the schedule ----------------------------------------------------------------------------

    def start_due(self) -> DueSummary:
        """Start a sync of every due segment audience of every connected organization (the scheduled
        job). Disconnected organizations are not looked at: their audiences stay as they are."""
        now = self.clock()
        summary = DueSummary()
        for connection in self.connection_store.active():
            summary.organizations += 1
            for record in self.audiences.list_for_org(connection.org_id):
                sync = sync_of(record)
                due = next_sync_at(record)
                if sync is None or due is None or due > now or record.status != "active":
                    continue
                summary.due += 1
                try:
                    if sync.current is not None:
                        if not self._abandoned(sync.current, now):
                            continue  # still running
                        lost = FailureRecord(
                            code="sync_lost",
                            message="The sync stopped without finishing; the platform kept the previous "
                            "members.",
                            remedy="Nothing to do: the next run starts now.",
                        )
                        self._close(record, sync.current, "failed", lost)
                    self._launch(record, "schedule", now, self._none_running(now))
                except (_Superseded, _AlreadyRunning, RecordGone):
                    continue  # "sync now", another tick or a delete got there first
                summary.started += 1
        logger.info("audience syncs started", extra=summary.model_dump())
        return summary

    def _none_running(self, now: datetime) -> Callable[[AudienceRecord], None]:
        def check(target: AudienceRecord) -> None:
            sync = sync_of(target)
            if sync is None or target.status != "active":
                raise _Superseded
            if sync.current is not None and not self._abandoned(sync.current, now):
                raise _AlreadyRunning
            if running_refresh(target, now) is not None:
                raise _AlreadyRunning  # a refresh with users replaces the members: due again next tick

        return check

    def _launch(
        self, record: AudienceRecord, trigger: str, now: datetime, check: Callable[[AudienceRecord], None]
    ) -> None:
        """Record a new run as the audience's current one, then start its execution. ``check`` says
        whether a run may start on the record as stored (none running): on a conflict with another
        writer it is asked again of the record read afresh, so two "sync now" (or a tick and one)
        never both start."""
        # Unique per run (two runs can start within a second): it names the run's execution.
        run_id = f"{trigger}-{now.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:6]}"
        run = SyncRun(run_id=run_id, trigger="now" if trigger == "now" else "schedule", started_at=now)

        def begin(target: AudienceRecord) -> None:
            check(target)
            sync = sync_of(target)
            assert sync is not None
            sync.current = run
            target.sync = sync

        begin(record)
        # Saved before the start: an overlapping tick or request sees it running and leaves it alone.
        self._save(record, begin)
        self.start(
            f"{record.audience_id}-{run_id}",
            {"org_id": record.org_id, "audience_id": record.audience_id, "run_id": run_id},
        )

    # --- the state machine's steps ---------------------------------------------------------------

    def step(self, org_id: str, audience_id: str, run_id: str) -> AudienceSyncProgress:
        """Do the next piece of run ``run_id``: score and store the members (first step), then send
        at most ``max_batches_per_step`` batches of the replace, then record the result.

        Throttling answers ``waiting`` (the state machine waits); a transient platform failure
        propagates for the state machine's Retry; any other failure is recorded on the run with its
        remedy and ends it."""
        record = self.audiences.get(org_id, audience_id)
        if record is None:
            # Deleted. A delete that read the audience before this run stored its members did not know
            # their key: they go here, by the run's own keys (deleting one never stored does nothing).
            for key in run_keys(org_id, audience_id, run_id):
                self.blobs.delete(key)
            return AudienceSyncProgress(status="done")
        sync = sync_of(record)
        run = sync.current if sync else None
        if sync is None or run is None or run.run_id != run_id:
            return AudienceSyncProgress(status="done")  # finished or superseded
        try:
            return self._step(record, run)
        except (_Superseded, RecordGone):
            # Closed, replaced or deleted by another writer meanwhile: nothing of this run is written,
            # and the members it stored (its own files) go.
            self._delete_members(record, run)
            return AudienceSyncProgress(status="done")

    def _step(self, record: AudienceRecord, run: SyncRun) -> AudienceSyncProgress:
        org_id = record.org_id
        try:
            connection, graph = self.connections.client_for(org_id)
        except NotFound:
            self._close(record, run, "stopped", DISCONNECTED)
            return AudienceSyncProgress(status="done")
        except PlatformUnavailable:
            raise
        except ServiceError as exc:  # the token no longer works: the remedy says to reconnect
            failure = FailureRecord(code=exc.code, message=exc.message, remedy=exc.remedy)
            self._close(record, run, "failed", failure)
            return AudienceSyncProgress(status="done")
        try:
            return self._advance(record, run, connection, graph)
        except PlatformThrottled as exc:
            wait = max(1, math.ceil(exc.retry_after_seconds or 60))
            return AudienceSyncProgress(status="waiting", wait_seconds=wait, **_batches(run.replace))
        except (PlatformUnavailable, RecordGone):
            raise
        except ServiceError as exc:
            failure = FailureRecord(code=exc.code, message=exc.message, remedy=exc.remedy)
            if gone_on_platform(exc):
                # Deleted in the platform's ads manager: listed as such, and no sync is scheduled.
                self._close(record, run, "failed", failure, _deleted_on_platform)
            else:
                self._close(record, run, "failed", failure)
            return AudienceSyncProgress(status="done")
        finally:
            self.connections.record_usage(org_id, graph)

    def record_failure(self, org_id: str, audience_id: str, run_id: str, error: str, cause: str) -> None:
        """End run ``run_id`` as failed with what the state machine caught (Lambda's error payload)."""
        record = self.audiences.get(org_id, audience_id)
        sync = sync_of(record) if record else None
        if record is None or sync is None or sync.current is None or sync.current.run_id != run_id:
            return
        try:
            message = str(json.loads(cause).get("errorMessage") or "The sync failed.")
        except (TypeError, ValueError, AttributeError):
            message = "The sync failed."
        failure = FailureRecord(
            code=error,
            message=message,
            remedy="The platform kept the previous members. Refresh now to try again, or wait for the next "
            "scheduled sync.",
        )
        try:
            self._close(record, sync.current, "failed", failure)
        except (_Superseded, RecordGone):
            return

    def _advance(
        self,
        record: AudienceRecord,
        run: SyncRun,
        connection: Connection,
        graph: GraphClient,
    ) -> AudienceSyncProgress:
        if connection.ad_account_id != record.ad_account_id:
            raise PreconditionFailed(
                f"The audience is in ad account {record.ad_account_id}; the connection is now to "
                f"{connection.ad_account_id}.",
                remedy=f"Reconnect the ad account {record.ad_account_id} to keep this audience up to "
                "date, or turn its sync off.",
            )
        if run.replace is None:
            users, prepared = self._begin(record, run)
        else:
            assert run.source_key is not None
            users = RefreshAudienceRequest.model_validate_json(self.blobs.get(run.source_key)).users
            prepared = prepare_audience(users, values=self._stored_values(record, run, users))
        assert run.replace is not None
        now = self.clock()
        if run.replace_started_at is not None and now - run.replace_started_at > self.policy.replace_window:
            # The platform has dropped the session and kept the old members: replace from batch 1.
            run.replace = _new_replace(len(prepared.rows), self.policy.batch_size)
            run.replace_started_at = None
        if not self._send(record, run, prepared, graph):
            return AudienceSyncProgress(status="replacing", **_batches(run.replace))
        run.users_uploaded = len(prepared.rows)
        # Read before the close deletes the run's files: the snapshot lists them too.
        held_out = self._held_out_of(record, run)

        def members(target: AudienceRecord, sync: AudienceSync) -> None:
            # The run's own result: the members it sent and the versions they were scored with.
            target.user_count = len(prepared.rows)
            target.quality = prepared.report.model_dump(mode="json")
            if target.segment is not None and run.model_version and run.dataset_version:
                target.segment = target.segment.model_copy(
                    update={
                        "model_version": run.model_version,
                        "dataset_version": run.dataset_version,
                        "users_selected": run.users_selected,
                        "users_without_customer_row": run.users_without_customer_row,
                    }
                )

        self._close(record, run, "succeeded", None, members)
        # Only once the run is recorded as the audience's result: a run superseded meanwhile, or whose
        # audience was deleted, never writes the customer list again (its close raised).
        if record.snapshot_key:
            self._write_snapshot(record, record.snapshot_key, users, held_out)
        logger.info(
            "audience synced",
            extra={
                "audience_id": record.audience_id,
                "rows": run.users_uploaded,
                "previous": run.previous_size,
            },
        )
        return AudienceSyncProgress(status="done", **_batches(run.replace))

    def _held_out_of(self, record: AudienceRecord, run: SyncRun) -> list[AudienceUser] | None:
        """The segment's held-out users this run stored (None for an audience without a holdout)."""
        if record.holdout is None or run.source_key is None:
            return None
        return RefreshAudienceRequest.model_validate_json(self.blobs.get(held_out_key(run.source_key))).users

    def _write_snapshot(
        self, record: AudienceRecord, key: str, users: list[AudienceUser], held_out: list[AudienceUser] | None
    ) -> None:
        """Write the audience's CSV snapshot of ``users`` at ``key`` (with a holdout, the ``held_out``
        users too, best score first, each row's ``group`` as the activation's snapshot has it), then
        read the audience again: a delete that fell between the run's close and this write removed
        the snapshot before it was written, so it is deleted here. (A delete whose record removal
        comes after this read deletes the snapshot again itself: ``AudienceService.delete``.)"""
        if held_out is None:
            self.blobs.put(key, snapshot_csv(users), "text/csv")
        else:
            rows = sorted(
                [(user, GROUP_UPLOADED) for user in users] + [(user, GROUP_HOLDOUT) for user in held_out],
                key=lambda row: -row[0].score if row[0].score is not None else math.inf,
            )
            document = b"".join(iter_snapshot_csv((u for u, _ in rows), groups=(g for _, g in rows)))
            self.blobs.put(key, document, "text/csv")
        if self.audiences.get(record.org_id, record.audience_id) is None:
            self.blobs.delete(key)

    def _begin(self, record: AudienceRecord, run: SyncRun) -> tuple[list[AudienceUser], PreparedAudience]:
        """Score the segment with the model's current version, refusing a stale model unless allowed,
        and store the new members before anything is sent; returns them, normalised and hashed."""
        segment = record.segment
        assert segment is not None
        model = self.models.get(record.org_id, segment.model_name)
        if model is None:
            raise NotFound(
                f"Model '{segment.model_name}' no longer exists, so the segment cannot be scored.",
                remedy="Sync the data source to train it again, or turn this audience's sync off.",
            )
        from shared.ml.freshness import freshness

        status = freshness(model.trained_at, self.clock(), {}, None, self.rules())
        sync = sync_of(record)
        if status.is_stale and not (sync is not None and sync.allow_stale_model):
            raise StaleModel(
                f"The model {model.name} (version {model.version}) is stale: {'; '.join(status.reasons)}. "
                "The audience was not changed.",
                remedy="Sync the shop's latest files (or retrain on the Models page) to retrain the model, "
                'or tick "Sync even when the model is stale" in the audience\'s schedule.',
            )
        spec = SegmentSpec(
            model_name=segment.model_name,
            product_id=segment.product_id,
            rule=segment.rule,
            value=segment.value,
        )
        value_based = record.value_seed is not None
        chosen = self.segments().users_for(record.org_id, spec, latest_identifiers=True, values=value_based)
        users, held_out = self._without_holdout(record, chosen.users)
        # A value-based seed keeps its values: every replaced member carries its new predicted value.
        values = [chosen.values.get(u.user_id) for u in users] if chosen.values is not None else None
        prepared = prepare_audience(users, values=values)
        if not prepared.rows:
            raise PreconditionFailed(
                "No user of the segment has a usable e-mail or phone, so the audience was not changed.",
                remedy="Widen the segment, or check the customers file's identifiers.",
            )
        run.model_name = model.name
        run.model_version = chosen.provenance.model_version
        run.dataset_version = chosen.provenance.dataset_version
        run.stale_model_allowed = status.is_stale
        run.users_selected = chosen.provenance.users_selected
        run.users_without_customer_row = chosen.provenance.users_without_customer_row
        run.previous_size = record.user_count
        run.source_key = members_key(record.org_id, record.audience_id, run.run_id)
        pending = RefreshAudienceRequest(users=users)
        self.blobs.put(run.source_key, pending.model_dump_json(by_alias=True).encode(), "application/json")
        if values is not None:
            self.blobs.put(values_key(run.source_key), json.dumps(values).encode(), "application/json")
        if record.holdout is not None:
            held = RefreshAudienceRequest(users=held_out).model_dump_json(by_alias=True).encode()
            self.blobs.put(held_out_key(run.source_key), held, "application/json")
        run.replace = _new_replace(len(prepared.rows), self.policy.batch_size)
        self._save_run(record, run)
        return users, prepared

    def _stored_values(
        self, record: AudienceRecord, run: SyncRun, users: list[AudienceUser]
    ) -> list[float | None] | None:
        """The values stored with a value-based seed's pending members (aligned with ``users``)."""
        if record.value_seed is None or run.source_key is None:
            return None
        values: list[float | None] = json.loads(self.blobs.get(values_key(run.source_key)))
        if len(values) != len(users):
            raise PreconditionFailed(
                "The stored values of this sync do not match its members.", remedy="Sync the audience again."
            )
        return values

    def _without_holdout(
        self, record: AudienceRecord, users: list[AudienceUser]
    ) -> tuple[list[AudienceUser], list[AudienceUser]]:
        """The users minus the audience's holdout group (``shared.audiences.holdout``), and the held-out
        users among them: a sync never uploads a held-out user, or the lift report would compare
        against people who saw the ads."""
        if record.holdout is None:
            return users, []
        rows = csv.DictReader(io.StringIO(self.blobs.get(record.holdout.groups_key).decode()))
        held = {row["user_id"] for row in rows if row.get("group") == GROUP_HOLDOUT}
        return [u for u in users if u.user_id not in held], [u for u in users if u.user_id in held]

    def _send(
        self, record: AudienceRecord, run: SyncRun, prepared: PreparedAudience, graph: GraphClient
    ) -> bool:
        """Send the replace's next batches (at most ``max_batches_per_step``), saving each
        acknowledgement; True when the last batch is acknowledged."""
        progress = run.replace
        assert progress is not None
        assert record.platform_custom_audience_id is not None
        session = platform.UploadSession(
            session_id=progress.session_id, total_rows=progress.total_rows, batch_size=progress.batch_size
        )
        batches = iter_batches(prepared.rows, session, after_batch_seq=progress.batches_done)
        for sent, batch in enumerate(batches):
            if sent == self.policy.max_batches_per_step:
                return False
            if batch.batch_seq == 1:
                run.replace_started_at = self.clock()
            try:
                result = platform.replace_users(
                    graph, record.platform_custom_audience_id, prepared.schema, batch
                )
            except PlatformError as exc:
                if not (batch.last_batch_flag and _replace_finished(exc)):
                    raise
                # Our session already took its last batch: an earlier attempt of this step sent it
                # and died before saving the answer. The replace is done; nothing is sent again.
                progress.batches_done = batch.batch_seq
                self._save_run(record, run)
                continue
            progress.batches_done = batch.batch_seq
            progress.num_received = max(progress.num_received, result.num_received)
            progress.num_invalid_entries += result.num_invalid_entries
            self._save_run(record, run)
        return progress.batches_done >= progress.batches_total

    def _close(
        self,
        record: AudienceRecord,
        run: SyncRun,
        outcome: SyncOutcome,
        failure: FailureRecord | None,
        result: Callable[[AudienceRecord, AudienceSync], None] | None = None,
    ) -> None:
        """End ``run`` and schedule the next: an interval after this run started, or at once after a
        stop (it runs as soon as the account is connected again). ``result`` writes what the run
        changed on the audience besides its sync (its members, or that it is deleted on the
        platform). Written over the audience as stored: a schedule changed meanwhile is kept and
        decides the next run; ``_Superseded`` when the run is no longer the current one."""
        now = self.clock()
        run.outcome = outcome
        run.finished_at = now
        run.failure = failure

        def close(target: AudienceRecord) -> None:
            sync = _current_sync(target, run)
            if result is not None:
                result(target, sync)
            if sync.frequency == "off":
                sync.next_sync_at = None
            elif outcome == "stopped":
                sync.next_sync_at = now
            else:
                sync.next_sync_at = run.started_at + SYNC_INTERVALS[sync.frequency]
            sync.last_run = run
            sync.current = None
            target.sync = sync

        close(record)
        self._save(record, close)
        self._delete_members(record, run)
        if failure is not None:
            logger.info(
                "audience sync ended",
                extra={"audience_id": record.audience_id, "outcome": outcome, "code": failure.code},
            )

    def _delete_members(self, record: AudienceRecord, run: SyncRun) -> None:
        """Delete the members ``run`` stored (and their values), which no other run reads."""
        for key in run_files(record, run):
            self.blobs.delete(key)

    def _save_run(self, record: AudienceRecord, run: SyncRun) -> None:
        """Write the run's progress (its members' key, the replace's acknowledged batches) over the
        audience as stored: nothing else of the record is the step's to write."""

        def progress(target: AudienceRecord) -> None:
            _current_sync(target, run).current = run

        progress(record)
        self._save(record, progress)

    def _abandoned(self, run: SyncRun, now: datetime) -> bool:
        """A run older than a replace session can live has stopped for good (a lost execution)."""
        return now - (run.replace_started_at or run.started_at) > self.policy.replace_window

    def _save(self, record: AudienceRecord, apply: Callable[[AudienceRecord], None]) -> None:
        """Write ``record`` (already changed by ``apply``) if no one wrote it since it was read;
        otherwise ``apply`` again to the audience as stored now and write that (its other writers'
        changes are kept). ``record`` ends as stored."""
        record.updated_at = self.clock()
        self.audiences.put(record, apply)

    def _require(self, org_id: str, audience_id: str) -> AudienceRecord:
        record = self.audiences.get(org_id, audience_id)
        if record is None:
            raise NotFound(
                f"Audience {audience_id} was not found.", remedy="List audiences to see their ids."
            )
        return record


def _current_sync(record: AudienceRecord, run: SyncRun) -> AudienceSync:
    """The audience's sync while ``run`` is its current run; ``_Superseded`` once it is not."""
    sync = sync_of(record)
    if sync is None or sync.current is None or sync.current.run_id != run.run_id:
        raise _Superseded
    return sync


def _deleted_on_platform(record: AudienceRecord, sync: AudienceSync) -> None:
    """Deleted in the platform's ads manager: listed as such, and no sync is scheduled."""
    mark_deleted_on_platform(record)
    sync.frequency = "off"


def _syncable(record: AudienceRecord) -> AudienceSync:
    sync = sync_of(record)
    if sync is None:
        raise PreconditionFailed(
            "This audience was made from a list of users, so there is no segment to score again.",
            remedy="To keep an audience up to date, create it in the launch wizard from a model and a "
            "rule (Who should see it?): that audience is scored again on its schedule. A list you uploaded "
            "changes only when you upload the new list.",
        )
    return sync


def _new_replace(total_rows: int, batch_size: int) -> UploadProgress:
    session = new_upload_session(total_rows, batch_size=batch_size)
    return UploadProgress(
        session_id=session.session_id,
        total_rows=session.total_rows,
        batch_size=session.batch_size,
        batches_total=session.total_batches,
    )


def _batches(progress: UploadProgress | None) -> dict[str, int]:
    if progress is None:
        return {}
    return {"batches_done": progress.batches_done, "batches_total": progress.batches_total}


def _replace_finished(error: PlatformError) -> bool:
    """Whether the platform refused a replace batch because its session already received the last
    batch (2650/1870159, docs/platform-notes.md §3.6)."""
    detail = error.detail
    return detail is not None and (detail.code, detail.subcode) == (2650, 1870159)
