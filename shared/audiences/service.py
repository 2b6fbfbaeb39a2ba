"""The audience service: from predicted buyers to a Custom Audience (and lookalike) on the platform,
and the audience's life after that (activation, refresh, delete, snapshot links).

The pipeline is written to be resumed. Before anything is sent, the request's users are stored
(SSE-KMS) and the audience record is written; after each acknowledged batch the progress is saved.
A retry (same ``Idempotency-Key``) finds the record, rebuilds exactly the same rows from the stored
users, and continues after the last acknowledged batch within the same upload session, so nobody is
lost and nobody is uploaded twice.
"""

from __future__ import annotations

import csv
import hashlib
import io
import math
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Protocol

from shared.activation.checks import MIN_SEED_USERS, check_usable
from shared.activation.pipeline import (
    CHUNK_BYTES,
    PART_USERS,
    ActivationPipeline,
    ActivationStore,
    Publishing,
    SegmentSource,
)
from shared.activation.steps import (
    LEASE_SECONDS,
    SAFETY_SECONDS,
    StepFailed,
    StepResult,
    Worker,
    batch_key,
    planned_steps,
    users_part_key,
)
from shared.audiences.batching import iter_batches, new_upload_session
from shared.audiences.drift import (
    DELETED_ON_PLATFORM,
    deleted_on_platform,
    gone_on_platform,
    mark_deleted_on_platform,
    refresh_changes,
)
from shared.audiences.holdout import GROUP_HOLDOUT, GROUP_UPLOADED
from shared.audiences.models import (
    ActivationRequest,
    ActivationStatus,
    AudienceCreated,
    AudienceList,
    AudienceView,
    CreateAudienceRequest,
    RefreshAudienceRequest,
    SnapshotLink,
)
from shared.audiences.preparation import PreparedAudience, prepare_audience
from shared.audiences.schedule import refresh_running, running_refresh, running_sync, sync_of, sync_running
from shared.audiences.snapshot import iter_snapshot_csv, snapshot_csv
from shared.audiences.sync_files import run_files
from shared.audiences.uploads import UploadBlobs, check_upload
from shared.audiences.views import activation_status, audience_created, audience_view
from shared.clock import Clock
from shared.errors import (
    Conflict,
    IdempotencyKeyReused,
    NotFound,
    OutOfTime,
    PreconditionFailed,
    ServiceError,
    ValidationFailed,
)
from shared.observability import logger
from shared.platform import audiences as platform
from shared.platform.client import GraphClient
from shared.platform.errors import AudienceUnavailable, LookalikesExist, PlatformThrottled
from shared.records.audiences import (
    ActivationRecord,
    AudienceRecord,
    LookalikeRecord,
    UploadProgress,
    ValueSeedRecord,
    WorkerLease,
)
from shared.records.connections import Connection

# platform.add_users or platform.replace_users
SendBatch = Callable[[GraphClient, str, Sequence[str], platform.UploadBatch], platform.UploadResult]

SNAPSHOT_LINK_SECONDS = 300
KEY_REUSED_REMEDY = "Use a new key for a new request; repeat a request only with its original body."

# How many users of a request's list the up-front check prepares before it settles for the whole list.
USABLE_CHECK_USERS = 1_000


class StartedExecution(Protocol):
    name: str
    already_existed: bool


class ExecutionStarter(Protocol):
    """The activation state machine (``shared.repositories.activations.StepFunctionsStarter``)."""

    def __call__(self, name: str, payload: dict[str, str]) -> object: ...
    def running(self, name: str) -> bool: ...


class AudienceStore(ActivationStore, Protocol):
    def list_for_org(self, org_id: str) -> list[AudienceRecord]: ...
    def delete(self, record: AudienceRecord) -> None: ...
    def claim_key(
        self, org_id: str, idempotency_key: str, audience_id: str, request_sha256: str | None = None
    ) -> tuple[str, str | None]: ...
    def create(self, record: AudienceRecord) -> bool: ...
    def release_key(self, org_id: str, idempotency_key: str, audience_id: str) -> None: ...
    def begin_attempt(self, record: AudienceRecord, previous_attempt: int | None) -> bool: ...
    def transfer_lease(self, org_id: str, audience_id: str, owner: str, lease: WorkerLease) -> bool: ...


class PlatformConnections(Protocol):
    """The organization's platform connection (``shared.connections.lifecycle.ConnectionService``)."""

    def client_for(self, org_id: str) -> tuple[Connection, GraphClient]: ...
    def record_usage(self, org_id: str, graph: GraphClient) -> None: ...


class BlobStore(UploadBlobs, Protocol):
    def put(self, key: str, data: bytes, content_type: str = ...) -> None: ...
    def upload(self, key: str, path: Path, content_type: str = ...) -> None: ...
    def get(self, key: str) -> bytes: ...
    def delete(self, key: str) -> None: ...
    def download_url(self, key: str, filename: str, expires_seconds: int) -> str: ...
    # A large list's SelectUsers (``ActivationBlobs``): read by range, its snapshot written in parts.
    def get_range(self, key: str, start: int, end: int) -> bytes: ...
    def start_parts(self, key: str, content_type: str = ...) -> str: ...
    def put_part(self, key: str, upload: str, number: int, path: Path) -> str: ...
    def finish_parts(self, key: str, upload: str, etags: Sequence[str]) -> None: ...


def request_digest(request: CreateAudienceRequest) -> str:
    """The hash of an audience request as sent, the same on both routes: an activation that asks for
    nothing more than the audience hashes like the synchronous create of the same body."""
    body = request.model_dump_json(by_alias=True, exclude_defaults=True)
    return hashlib.sha256(body.encode()).hexdigest()


@dataclass
class AudienceService:
    audiences: AudienceStore
    blobs: BlobStore
    connections: PlatformConnections
    clock: Clock
    batch_size: int = platform.MAX_ROWS_PER_CALL
    # Built on first use (it loads numpy and the scoring bundles): only segment audiences need it.
    segments: Callable[[], SegmentSource] | None = None
    publishing: Callable[[], Publishing] | None = None
    max_batches_per_step: int = 20
    # The largest uploaded list read (``Settings.audience_upload_max_bytes``).
    max_upload_bytes: int = 4_294_967_296
    # Users a NormaliseAndHash task hashes at most (``Settings.activation_part_users``).
    part_users: int = PART_USERS
    # The activation steps' engine's fixed memory limit in MB (``Settings.engine_memory_mb``); None:
    # half the function's memory.
    engine_memory_mb: int | None = None
    # Bytes of an uploaded list a SelectUsers task reads at most (``Settings.activation_chunk_bytes``).
    chunk_bytes: int = CHUNK_BYTES

    @property
    def pipeline(self) -> ActivationPipeline:
        """The activation's steps (``shared.activation``) over this service's collaborators."""
        return ActivationPipeline(
            audiences=self.audiences,
            blobs=self.blobs,
            connections=self.connections,
            clock=self.clock,
            publishing=self.publishing,
            segments=self.segments,
            batch_size=self.batch_size,
            max_batches=self.max_batches_per_step,
            part_users=self.part_users,
            engine_memory_mb=self.engine_memory_mb,
            chunk_bytes=self.chunk_bytes,
        )

    # --- create --------------------------------------------------------------------------------

    def create(
        self,
        org_id: str,
        request: CreateAudienceRequest,
        idempotency_key: str | None = None,
        *,
        seconds_left: Callable[[], float] = lambda: math.inf,
        hand_off: ExecutionStarter | None = None,
        request_id: str | None = None,
    ) -> AudienceCreated:
        """Create the audience on the platform and upload its users now, running the activation's
        steps in this request while it has time (``seconds_left``: the function's remaining time;
        unlimited for a caller that is not a function, such as a benchmark).

        A job that does not fit (more batches than the time left, a throttle longer than it, a seed
        the platform is still processing) is handed to the state machine (``hand_off``) and the
        answer says so (``status`` not active, ``activationUrl`` to watch); without ``hand_off`` it
        fails fast with the throttle's remedy. Another worker already on the audience is not joined:
        the answer points at its progress."""
        record, created = self.accept(org_id, request, idempotency_key)
        repeated = not created
        if record.status == "active" and (
            record.activation is None or record.activation.state == "succeeded"
        ):
            return audience_created(record, _created_message(repeated))
        worker = Worker(
            owner=f"request-{request_id or uuid.uuid4()}",
            seconds_left=seconds_left,
            sleep_limit=float("inf"),
            lease_seconds=min(float(LEASE_SECONDS), max(1.0, seconds_left())),
        )
        pipeline = self.pipeline
        claimed = pipeline.claim(org_id, record.audience_id, worker)
        if claimed.outcome == "active":
            return audience_created(self._require(org_id, record.audience_id), _created_message(True))
        if claimed.outcome == "busy":
            return audience_created(
                self._require(org_id, record.audience_id),
                "Another request or the activation state machine is creating this audience; "
                "watch its progress at activationUrl.",
                background=True,
            )
        try:
            finished = _run_inline(pipeline, org_id, record.audience_id, worker)
        except StepFailed as failed:
            cause = failed.__cause__
            if isinstance(cause, OutOfTime) and hand_off is not None:
                # The platform did not answer in this request's time: the state machine goes on from
                # where the request stopped (a create whose answer was lost is looked for first).
                stopped = self._require(org_id, record.audience_id)
                stopped.failure = None
                current = self._start_attempt(stopped, hand_off, from_worker=worker)
                return audience_created(
                    current,
                    "The platform was slow to answer; the rest continues in the background. Watch its "
                    "progress at activationUrl.",
                    background=True,
                )
            pipeline.record_failure(org_id, record.audience_id, worker, type(failed).__name__, "")
            raise (cause if isinstance(cause, ServiceError) else failed) from None
        if finished is not None:
            return audience_created(self._require(org_id, record.audience_id), _created_message(repeated))
        current = self._require(org_id, record.audience_id)
        if hand_off is None:
            pipeline.release(org_id, record.audience_id, worker)
            raise PlatformThrottled(
                "The upload did not finish within this request's time (the platform throttled it or "
                "the list is large); nothing was lost.",
                remedy="Try again in a few minutes; for a list this large, use the launch wizard's "
                "Activation step, which keeps going in the background and shows its progress.",
            )
        current = self._start_attempt(current, hand_off, from_worker=worker)
        return audience_created(
            current,
            "The rest of the upload continues in the background (the platform throttled it or the "
            "list is large); watch its progress at activationUrl.",
            background=True,
        )

    def accept(
        self, org_id: str, request: CreateAudienceRequest, idempotency_key: str | None
    ) -> tuple[AudienceRecord, bool]:
        """The audience this request names: found (same Idempotency-Key, same body) or validated and
        stored now, before anything is sent; True when this request stored it.

        Raises ``IdempotencyKeyReused`` (422) for a key already used with another body, whichever
        route used it."""
        digest = request_digest(request)
        audience_id = str(uuid.uuid4())
        if idempotency_key:
            audience_id, bound = self.audiences.claim_key(org_id, idempotency_key, audience_id, digest)
            if bound is not None and bound != digest:
                raise _key_reused()
            existing = self.audiences.get(org_id, audience_id)
            if existing is not None:
                if existing.request_sha256 not in (None, digest):
                    raise _key_reused()
                return existing, False
        try:
            return self._store_new(org_id, audience_id, request, idempotency_key, digest)
        except Exception:
            self._abandon(org_id, audience_id, idempotency_key)
            raise

    def _store_new(
        self,
        org_id: str,
        audience_id: str,
        request: CreateAudienceRequest,
        idempotency_key: str | None,
        digest: str,
    ) -> tuple[AudienceRecord, bool]:
        self._validate(org_id, request)
        connection, _ = self.connections.client_for(org_id)
        now = self.clock()
        base = CreateAudienceRequest.model_validate(
            request.model_dump(by_alias=True, exclude={"publish", "generate_campaign"})
        )
        record = AudienceRecord(
            org_id=org_id,
            audience_id=audience_id,
            name=request.name,
            product_id=request.product_id or (request.segment.product_id if request.segment else None),
            model_id=request.model_id or (request.segment.model_name if request.segment else None),
            objective=request.objective,
            daily_budget=request.daily_budget,
            status="creating",
            ad_account_id=connection.ad_account_id or "",
            lookalike=(
                LookalikeRecord(size_percent=request.lookalike_size, country=request.lookalike_country)
                if request.lookalike_size and request.lookalike_country
                else None
            ),
            value_seed=(
                ValueSeedRecord(
                    source="column" if request.value_column else "predicted_spend",
                    column=request.value_column,
                )
                if request.value_based
                else None
            ),
            snapshot_key=f"snapshots/{org_id}/{audience_id}.csv",
            source_key=f"sources/{org_id}/{audience_id}.json",
            idempotency_key=idempotency_key,
            created_at=now,
            updated_at=now,
            request_sha256=digest,
        )
        assert record.source_key is not None
        self.blobs.put(record.source_key, base.model_dump_json(by_alias=True).encode(), "application/json")
        if not self.audiences.create(record):
            # Another request with the same key stored it first: that one is the audience.
            return self._require(org_id, audience_id), False
        return record, True

    def _abandon(self, org_id: str, audience_id: str, idempotency_key: str | None) -> None:
        """Nothing half-written: undo what a failed ``accept`` wrote (the users' source object, raw
        identifiers, and the Idempotency-Key's claim, which would refuse the corrected request as a
        reused key), unless the record was stored after all (a write whose answer was lost): then the
        audience exists and a retry resumes it. Best effort: the caller sees the original error."""
        try:
            if self.audiences.get(org_id, audience_id) is not None:
                return
            self.blobs.delete(f"sources/{org_id}/{audience_id}.json")
            if idempotency_key:
                self.audiences.release_key(org_id, idempotency_key, audience_id)
        except Exception:
            logger.exception("audience cleanup failed", extra={"audience_id": audience_id})

    def _validate(self, org_id: str, request: CreateAudienceRequest) -> None:
        """What can be refused before anything is stored: an unreadable upload, a list nobody in it
        can be matched from (uploads and segments are checked by their steps)."""
        if request.upload_id:
            check_upload(
                org_id,
                request.upload_id,
                self.blobs,
                self.max_upload_bytes,
                value_column=request.value_column,
            )
        elif request.users:
            # Adding users never lowers the usable count, so enough of them at the list's start
            # settles it without hashing a large list here and again in NormaliseAndHash; only a
            # list that falls short there is prepared whole, for the exact count.
            start = request.users[:USABLE_CHECK_USERS]
            usable = len(prepare_audience(start, default_country=request.country).rows)
            if usable < MIN_SEED_USERS and len(start) < len(request.users):
                usable = len(prepare_audience(request.users, default_country=request.country).rows)
            check_usable(usable, request.objective)

    # --- activation (Step Functions) -------------------------------------------------------------

    def start_activation(
        self,
        org_id: str,
        request: CreateAudienceRequest,
        idempotency_key: str | None,
        start: ExecutionStarter,
    ) -> AudienceView:
        """Accept the audience and hand the work to the activation state machine; returns at once.

        A repeat (same key, same body) returns the audience as it stands; when its last attempt
        failed, it starts a new attempt (a new execution, named ``<audienceId>-<attempt>``) that
        resumes after the last batch the platform acknowledged."""
        record, _ = self.accept(org_id, request, idempotency_key)
        if isinstance(request, ActivationRequest):
            record = self._start_attempt(record, start, options=request)
        else:
            record = self._start_attempt(record, start)
        return audience_view(record)

    def retry_activation(self, org_id: str, audience_id: str, start: ExecutionStarter) -> AudienceView:
        """Start a new attempt of a failed activation (after the user fixed the cause)."""
        record = self._require(org_id, audience_id)
        if record.status != "failed":
            raise Conflict(
                f"Audience {audience_id} is {record.status}; only a failed activation can be retried.",
                remedy="Watch the activation's progress; retry it if it fails.",
            )
        return audience_view(self._start_attempt(record, start))

    def resume_stranded(self, record: AudienceRecord, start: ExecutionStarter) -> AudienceRecord:
        """Start a new attempt of an audience a worker left mid-way (the stranded-upload sweeper,
        ``shared.audiences.stranded``); it resumes after the last acknowledged batch. An attempt
        still running (its execution, or a request's unexpired lease) is left to finish."""
        return self._start_attempt(record, start)

    def activation_status(self, org_id: str, audience_id: str) -> ActivationStatus:
        """Where the audience's activation stands: what the dashboard's progress bar reads."""
        return activation_status(self._require(org_id, audience_id))

    def _start_attempt(
        self,
        record: AudienceRecord,
        start: ExecutionStarter,
        *,
        options: ActivationRequest | None = None,
        from_worker: Worker | None = None,
    ) -> AudienceRecord:
        """A new attempt in the state machine unless the audience is active or an attempt is running."""
        current = record.activation
        now = self.clock()
        if from_worker is None:
            if record.status == "active" and (current is None or current.state == "succeeded"):
                return record
            running = current is not None and current.state in ("running", "waiting")
            if running and current is not None and current.execution_name:
                if start.running(current.execution_name):
                    return record
            elif running and record.lease is not None and record.lease.until > now:
                # A request is creating it in-process: it finishes, or hands over to the state
                # machine itself. One worker at a time.
                return record
        previous = current.attempt if current is not None else None
        attempt = (previous or 0) + 1
        if from_worker is not None and current is not None and current.execution_name is None:
            # A request handing over its own attempt: the execution continues it.
            attempt = current.attempt
        name = f"{record.audience_id}-{attempt}"
        activation = ActivationRecord(
            attempt=attempt,
            execution_name=name,
            state="running",
            step="queued",
            started_at=now,
            updated_at=now,
        )
        if current is not None:
            # What earlier attempts did stays done: the new one resumes after it.
            activation.users_total = current.users_total
            activation.users_key = current.users_key
            activation.users_parts = current.users_parts
            activation.users_chunks = current.users_chunks
            activation.selection = current.selection
            activation.countries = current.countries
            activation.hashing = current.hashing
            activation.rows_total = current.rows_total
            activation.batch_keys_prefix = current.batch_keys_prefix
            activation.publish = current.publish
            activation.generate_campaign = current.generate_campaign
        if options is not None and current is None:
            activation.publish = (
                options.publish.model_dump(mode="json", by_alias=True) if options.publish else None
            )
            activation.generate_campaign = options.generate_campaign
        record.activation = activation
        activation.steps = planned_steps(record)
        if record.status == "failed":
            record.status = "uploading" if record.platform_custom_audience_id else "creating"
        record.updated_at = now
        if not self.audiences.begin_attempt(record, previous):
            # Another request started an attempt meanwhile: that one runs.
            return self._require(record.org_id, record.audience_id)
        if from_worker is not None:
            lease = WorkerLease(owner=name, until=now + timedelta(seconds=LEASE_SECONDS))
            self.audiences.transfer_lease(record.org_id, record.audience_id, from_worker.owner, lease)
        start(name, {"org_id": record.org_id, "audience_id": record.audience_id})
        logger.info("activation started", extra={"audience_id": record.audience_id, "attempt": attempt})
        return self._require(record.org_id, record.audience_id)

    # --- refresh -------------------------------------------------------------------------------

    def refresh(self, org_id: str, audience_id: str, request: RefreshAudienceRequest) -> AudienceCreated:
        """Replace the members of an active audience with ``request.users`` in one replace session.

        ``usersreplace`` keeps the ad sets' learning phase, unlike removing and re-adding people. A
        replace session cannot be resumed half-way (the platform restarts it only from batch 1), so a
        failed refresh is reported and can be repeated once the platform's session has ended.

        ``ValidationFailed`` on ``users`` for an empty list: replacing the members with nobody is
        never what was meant (a refresh from the segment sends no users at all).
        """
        if not request.users:
            raise ValidationFailed(
                "users is empty: a refresh with users replaces the audience's members with that list, "
                "and an empty list would leave it with nobody.",
                field="users",
                remedy="Send the users to replace the members with; or, to score an audience made from a "
                "segment again now (Refresh now), send no body.",
            )
        record = self._require(org_id, audience_id)
        if record.status == DELETED_ON_PLATFORM:
            raise deleted_on_platform(record)
        if record.status != "active" or record.platform_custom_audience_id is None:
            raise PreconditionFailed(
                f"Audience {audience_id} is {record.status}; only an active audience can be refreshed.",
                remedy="Retry the creation with its Idempotency-Key first.",
            )
        if record.value_seed is not None:
            raise ValidationFailed(
                "This audience is a value-based seed: its members carry customer values, and a list of "
                "users has none (the platform refuses members without LOOKALIKE_VALUE on it).",
                field="users",
                remedy="Refresh without users to re-score a segment audience (values included), or create "
                "a new value-based audience from an uploaded list with a value column.",
            )
        _refuse_while_replacing(record, self.clock())
        # A holdout stays held out: its users are never uploaded, whatever list a refresh sends.
        held_out = _held_out_ids(self.blobs.get(record.holdout.groups_key)) if record.holdout else frozenset()
        uploaded = [u for u in request.users if u.user_id not in held_out]
        prepared = prepare_audience(uploaded, default_country=request.country)
        if not prepared.rows:
            raise ValidationFailed(
                "No user has a usable e-mail address or phone number.",
                field="users",
                remedy="Send users with a valid email or phone.",
            )
        self._claim_replace(record)
        try:
            _, graph = self.connections.client_for(org_id)
        except BaseException:
            self._release_replace(record)
            raise
        progress = _new_progress(len(prepared.rows), self.batch_size)
        try:
            # What the marketer changed on the platform (a new name) is recorded and shown, never
            # written back; an audience deleted there is found before anything is sent.
            refresh_changes(record, graph, self.clock())
            for _ in _send_batches(
                platform.replace_users, graph, record.platform_custom_audience_id, prepared, progress
            ):
                pass
        except ServiceError as exc:
            if not gone_on_platform(exc):
                self._release_replace(record)
                raise
            mark_deleted_on_platform(record)
            record.refresh_started_at = None
            self._save(record, "status", "failure", "platform_changes", "refresh_started_at")
            raise deleted_on_platform(record) from exc
        except BaseException:
            self._release_replace(record)
            raise
        finally:
            self.connections.record_usage(org_id, graph)
        if record.snapshot_key and record.holdout is not None:
            groups = [GROUP_HOLDOUT if u.user_id in held_out else GROUP_UPLOADED for u in request.users]
            self.blobs.put(
                record.snapshot_key, b"".join(iter_snapshot_csv(request.users, groups=groups)), "text/csv"
            )
        elif record.snapshot_key:
            self.blobs.put(record.snapshot_key, snapshot_csv(request.users), "text/csv")
        record.upload = progress
        record.user_count = progress.total_rows
        record.quality = prepared.report.model_dump(mode="json")
        record.refresh_started_at = None
        self._save(record, "upload", "user_count", "quality", "platform_changes", "refresh_started_at")
        return audience_created(record, "Audience members replaced.")

    def _claim_replace(self, record: AudienceRecord) -> None:
        """Record that this refresh replaces the members, on the audience's revision as read: when a
        sync (or another refresh) started meanwhile, the claim is checked again on the audience as
        stored and refused (409), so two replace sessions never run at once. A sync checks the claim
        before it starts (``shared.audiences.sync``)."""
        now = self.clock()

        def claim(target: AudienceRecord) -> None:
            _refuse_while_replacing(target, now)
            target.refresh_started_at = now

        claim(record)
        record.updated_at = now
        self.audiences.put(record, claim)

    def _release_replace(self, record: AudienceRecord) -> None:
        """Take back the claim of a refresh that failed; left in place, it lapses after a replace
        session (the audience deleted meanwhile, or the write refused)."""
        record.refresh_started_at = None
        try:
            self._save(record, "refresh_started_at")
        except ServiceError:
            logger.warning("refresh claim not released", extra={"audience_id": record.audience_id})

    def _save(self, record: AudienceRecord, *own: str) -> None:
        """Write ``record`` over the revision it was read at. When another writer (a sync, a schedule
        change, a drift check) wrote it meanwhile, the fields ``own`` (what this change set) are
        written over the audience as stored, keeping the other change."""
        record.updated_at = self.clock()
        mine = {name: getattr(record, name) for name in own}

        def apply(target: AudienceRecord) -> None:
            for name, value in mine.items():
                setattr(target, name, value)

        self.audiences.put(record, apply)

    # --- read, delete, snapshot ----------------------------------------------------------------

    def list(self, org_id: str) -> AudienceList:
        records = sorted(self.audiences.list_for_org(org_id), key=lambda r: r.created_at, reverse=True)
        return AudienceList(audiences=[audience_view(r) for r in records])

    def delete(self, org_id: str, audience_id: str, *, confirm: bool) -> None:
        """Delete the audience (and its lookalike) on the platform and in the service. Irreversible."""
        if not confirm:
            raise ValidationFailed(
                "Deleting an audience removes it from the platform and the service and cannot be undone.",
                field="confirm",
                remedy="Send confirm=true to delete it.",
            )
        record = self._require(org_id, audience_id)
        if record.publication is not None and record.publication.on_platform:
            # Its ad set targets the audience: deleting the audience alone would leave the advert
            # on the platform without it, and no longer listed anywhere.
            raise Conflict(
                "This audience has an advert on the platform, which targets it, so it cannot be deleted "
                "alone.",
                remedy="Delete its advert first (the campaign, ad set, creative and ad), then the audience.",
                action="delete_advert",
            )
        _, graph = self.connections.client_for(org_id)
        if record.lookalike and record.lookalike.platform_audience_id:
            _delete_on_platform(graph, record.lookalike.platform_audience_id)
        if record.platform_custom_audience_id:
            try:
                _delete_on_platform(graph, record.platform_custom_audience_id)
            except LookalikesExist as exc:
                raise LookalikesExist(
                    "This audience is the seed of lookalike audiences created outside the service.",
                    remedy="Delete those lookalikes in the platform's ads manager, then this audience.",
                ) from exc
        for key in (record.snapshot_key, record.source_key, *_activation_files(record), *_sync_files(record)):
            if key:
                self.blobs.delete(key)
        self.audiences.delete(record)
        if record.snapshot_key:
            # Again: a sync run that closed before the record went may have written the snapshot since
            # the first delete. It reads the audience after writing and deletes the snapshot if it is
            # gone; a run that read it before this removal wrote before it, so this delete takes it.
            self.blobs.delete(record.snapshot_key)
        logger.info("audience deleted", extra={"audience_id": audience_id})

    def snapshot_link(self, org_id: str, audience_id: str) -> SnapshotLink:
        """A short-lived download link for the CSV snapshot taken at creation."""
        record = self._require(org_id, audience_id)
        if record.snapshot_key is None:
            raise NotFound(
                "This audience was created before CSV snapshots existed, so it has no snapshot to download.",
                remedy="Create the audience again to get a snapshot.",
            )
        filename = f"audience-{audience_id}.csv"
        url = self.blobs.download_url(record.snapshot_key, filename, SNAPSHOT_LINK_SECONDS)
        return SnapshotLink(url=url, expires_in_seconds=SNAPSHOT_LINK_SECONDS, filename=filename)

    def _require(self, org_id: str, audience_id: str) -> AudienceRecord:
        record = self.audiences.get(org_id, audience_id)
        if record is None:
            raise NotFound(
                f"Audience {audience_id} was not found.", remedy="List audiences to see their ids."
            )
        return record


def _refuse_while_replacing(record: AudienceRecord, now: datetime) -> None:
    """409 while a sync of the audience or another refresh with users replaces its members: two
    replace sessions at once leave the platform with whichever ends last, and the sync's close would
    record its own members over this list's."""
    running = running_sync(record, now)
    if running is not None:
        raise sync_running(
            running, "Wait for it to finish (the audience list shows its progress), then send the list again."
        )
    refreshing = running_refresh(record, now)
    if refreshing is not None:
        raise refresh_running(refreshing, "Wait for it to finish (a few minutes), then send the list again.")


def _held_out_ids(groups_file: bytes) -> frozenset[str]:
    """The user ids a holdout's groups file (``user_id,score,group``) marks as held out."""
    rows = csv.DictReader(io.StringIO(groups_file.decode("utf-8")))
    return frozenset(row["user_id"] for row in rows if row["group"] == GROUP_HOLDOUT)


def _activation_files(record: AudienceRecord) -> list[str]:
    """The files the activation wrote: the selected users (not an upload: that is the user's) and
    the batches of hashed rows."""
    activation, upload = record.activation, record.upload
    if activation is None:
        return []
    files = (
        [activation.users_key]
        if activation.users_key and activation.users_key.startswith("activations/")
        else []
    )
    files += [
        users_part_key(record.org_id, record.audience_id, part) for part in range(activation.users_parts)
    ]
    if activation.batch_keys_prefix and upload is not None:
        files += [batch_key(activation.batch_keys_prefix, seq) for seq in range(1, upload.batches_total + 1)]
    if record.holdout is not None:
        files.append(record.holdout.groups_key)
    return files


def _sync_files(record: AudienceRecord) -> list[str]:
    """The files a sync running now stored (its step finds the audience gone and writes nothing more)."""
    sync = sync_of(record)
    return run_files(record, sync.current) if sync is not None and sync.current is not None else []


def _key_reused() -> IdempotencyKeyReused:
    return IdempotencyKeyReused(
        "This Idempotency-Key was already used with a different request body.",
        field="Idempotency-Key",
        remedy=KEY_REUSED_REMEDY,
    )


def _created_message(repeated: bool) -> str:
    if repeated:
        return "This request was already handled; here is the audience it created."
    return "Audience created and users uploaded."


def _run_inline(
    pipeline: ActivationPipeline, org_id: str, audience_id: str, worker: Worker
) -> StepResult | None:
    """The activation's steps in this request, in order, while it has time; None when what is left
    has to wait (a throttle, the platform still processing the seed, the time running out)."""
    while pipeline.run("select_users", org_id, audience_id, worker).outcome == "more":
        if worker.seconds_left() < 2 * SAFETY_SECONDS:
            return None
    while pipeline.run("normalise_and_hash", org_id, audience_id, worker).outcome == "more":
        if worker.seconds_left() < 2 * SAFETY_SECONDS:
            return None
    pipeline.run("create_custom_audience", org_id, audience_id, worker)
    while True:
        uploaded = pipeline.run("upload_batches", org_id, audience_id, worker)
        if uploaded.outcome == "done":
            break
        if uploaded.outcome == "throttled" or uploaded.batches_sent == 0:
            return None
        if worker.seconds_left() < 2 * SAFETY_SECONDS:
            return None
    seed = pipeline.run("check_seed", org_id, audience_id, worker)
    if seed.outcome != "ready":
        return None
    if seed.next == "create_lookalike":
        pipeline.run("create_lookalike", org_id, audience_id, worker)
    return pipeline.run("mark_active", org_id, audience_id, worker)


def _new_progress(total_rows: int, batch_size: int) -> UploadProgress:
    """A new upload session (random id) for ``total_rows`` rows, with nothing sent yet."""
    session = new_upload_session(total_rows, batch_size=batch_size)
    return UploadProgress(
        session_id=session.session_id,
        total_rows=session.total_rows,
        batch_size=session.batch_size,
        batches_total=session.total_batches,
    )


def _send_batches(
    send: SendBatch,
    graph: GraphClient,
    platform_id: str,
    prepared: PreparedAudience,
    progress: UploadProgress,
) -> Iterator[int]:
    """Send the batches after ``progress.batches_done`` within ``progress``'s session, recording each
    acknowledgement in ``progress``; yields each acknowledged ``batch_seq`` so the caller can save."""
    session = platform.UploadSession(
        session_id=progress.session_id, total_rows=progress.total_rows, batch_size=progress.batch_size
    )
    for batch in iter_batches(prepared.rows, session, after_batch_seq=progress.batches_done):
        result = send(graph, platform_id, prepared.schema, batch)
        progress.batches_done = batch.batch_seq
        progress.num_received = max(progress.num_received, result.num_received)
        progress.num_invalid_entries += result.num_invalid_entries
        yield batch.batch_seq


def _delete_on_platform(graph: GraphClient, platform_id: str) -> None:
    # Already gone on the platform (deleted in its ads manager, say): the goal is reached.
    try:
        platform.delete_custom_audience(graph, platform_id)
    except AudienceUnavailable:
        pass
    except ServiceError as exc:
        if not gone_on_platform(exc):
            raise
