"""The audience service: from predicted buyers to a Custom Audience (and lookalike) on the platform,
and the audience's life after that (activation, refresh, delete, snapshot links).

The pipeline is written to be resumed. Before anything is sent, the request's users are stored
(SSE-KMS) and the audience record is written; after each acknowledged batch the progress is saved.
A retry (same ``Idempotency-Key``) finds the record, rebuilds exactly the same rows from the stored
users, and continues after the last acknowledged batch within the same upload session, so nobody is
lost and nobody is uploaded twice.
"""

from __future__ import annotations

import contextlib
import json
import math
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from shared.audiences.batching import iter_batches, new_upload_session
from shared.audiences.identifiers import AudienceUser
from shared.audiences.models import (
    ActivationProgress,
    AudienceCreated,
    AudienceList,
    AudienceView,
    CreateAudienceRequest,
    RefreshAudienceRequest,
    SnapshotLink,
)
from shared.audiences.preparation import PreparedAudience, prepare_audience
from shared.audiences.snapshot import snapshot_csv
from shared.audiences.uploads import UploadBlobs, users_from_upload
from shared.audiences.views import audience_created, audience_view
from shared.clock import Clock
from shared.errors import Conflict, NotFound, PreconditionFailed, ServiceError, ValidationFailed
from shared.observability import logger
from shared.platform import audiences as platform
from shared.platform.client import GraphClient
from shared.platform.errors import AudienceUnavailable, LookalikesExist, PlatformThrottled
from shared.records.audiences import (
    AudienceRecord,
    FailureRecord,
    LookalikeRecord,
    UploadProgress,
)
from shared.records.connections import Connection
from shared.targeting.models import SegmentSpec

if TYPE_CHECKING:
    from shared.targeting.service import SegmentUsers

# platform.add_users or platform.replace_users
SendBatch = Callable[[GraphClient, str, Sequence[str], platform.UploadBatch], platform.UploadResult]

MIN_SEED_USERS = 100
SNAPSHOT_LINK_SECONDS = 300


class StartExecution(Protocol):
    def __call__(self, name: str, payload: dict[str, str]) -> None: ...


class AudienceStore(Protocol):
    def put(self, record: AudienceRecord) -> None: ...
    def get(self, org_id: str, audience_id: str) -> AudienceRecord | None: ...
    def list_for_org(self, org_id: str) -> list[AudienceRecord]: ...
    def delete(self, record: AudienceRecord) -> None: ...
    def claim_key(self, org_id: str, idempotency_key: str, audience_id: str) -> str: ...


class PlatformConnections(Protocol):
    """The organization's platform connection (``shared.connections.lifecycle.ConnectionService``)."""

    def client_for(self, org_id: str) -> tuple[Connection, GraphClient]: ...
    def record_usage(self, org_id: str, graph: GraphClient) -> None: ...


class SegmentSource(Protocol):
    """Turns a predictive segment into users (``shared.targeting.service.TargetingService``)."""

    def users_for(self, org_id: str, spec: SegmentSpec) -> SegmentUsers: ...


class BlobStore(UploadBlobs, Protocol):
    def put(self, key: str, data: bytes, content_type: str = ...) -> None: ...
    def get(self, key: str) -> bytes: ...
    def delete(self, key: str) -> None: ...
    def download_url(self, key: str, filename: str, expires_seconds: int) -> str: ...


@dataclass
class AudienceService:
    audiences: AudienceStore
    blobs: BlobStore
    connections: PlatformConnections
    clock: Clock
    batch_size: int = platform.MAX_ROWS_PER_CALL
    # Built on first use (it loads numpy and the scoring bundles): only segment audiences need it.
    segments: Callable[[], SegmentSource] | None = None

    # --- create --------------------------------------------------------------------------------

    def create(
        self, org_id: str, request: CreateAudienceRequest, idempotency_key: str | None = None
    ) -> AudienceCreated:
        """Create the audience on the platform and upload its users, now; see the module docstring."""
        existing = self._existing(org_id, idempotency_key)
        if existing is not None:
            return self._finish(existing, self._load_source(existing), request_was_repeated=True)
        record, prepared, graph = self._accept(org_id, request, idempotency_key)
        return self._finish(record, (request, prepared), graph=graph)

    def _existing(self, org_id: str, idempotency_key: str | None) -> AudienceRecord | None:
        """The audience a previous request with this key started, if any (the key is claimed here,
        so ``_accept`` finds the same audience id)."""
        if not idempotency_key:
            return None
        audience_id = self.audiences.claim_key(org_id, idempotency_key, str(uuid.uuid4()))
        return self.audiences.get(org_id, audience_id)

    def _accept(
        self, org_id: str, request: CreateAudienceRequest, idempotency_key: str | None
    ) -> tuple[AudienceRecord, PreparedAudience, GraphClient]:
        """Validate the request, check the connection, and store the users, the snapshot and the
        record before anything is sent, so every later step can be resumed."""
        if request.upload_id:
            users = users_from_upload(org_id, request.upload_id, self.blobs)
            request = request.model_copy(update={"users": users, "upload_id": None})
        provenance = None
        if request.segment is not None:
            if self.segments is None:
                raise ServiceError("Segments are not available in this function.")
            chosen = self.segments().users_for(org_id, request.segment)
            provenance = chosen.provenance
            request = request.model_copy(
                update={
                    "users": chosen.users,
                    "segment": None,
                    "model_id": request.model_id or request.segment.model_name,
                    "product_id": request.product_id or request.segment.product_id,
                }
            )
        audience_id = str(uuid.uuid4())
        if idempotency_key:
            audience_id = self.audiences.claim_key(org_id, idempotency_key, audience_id)
        prepared = self._prepare(request.users, request)
        connection, graph = self.connections.client_for(org_id)
        now = self.clock()
        snapshot_key = f"snapshots/{org_id}/{audience_id}.csv"
        source_key = f"sources/{org_id}/{audience_id}.json"
        record = AudienceRecord(
            org_id=org_id,
            audience_id=audience_id,
            name=request.name,
            product_id=request.product_id,
            model_id=request.model_id,
            objective=request.objective,
            daily_budget=request.daily_budget,
            status="creating",
            ad_account_id=connection.ad_account_id or "",
            quality=prepared.report.model_dump(mode="json"),
            lookalike=(
                LookalikeRecord(size_percent=request.lookalike_size, country=request.lookalike_country)
                if request.lookalike_size and request.lookalike_country
                else None
            ),
            snapshot_key=snapshot_key,
            source_key=source_key,
            idempotency_key=idempotency_key,
            created_at=now,
            updated_at=now,
            segment=provenance,
        )
        self.blobs.put(source_key, request.model_dump_json(by_alias=True).encode(), "application/json")
        self.blobs.put(snapshot_key, snapshot_csv(request.users), "text/csv")
        self.audiences.put(record)
        return record, prepared, graph

    # --- activation (Step Functions) -------------------------------------------------------------

    def start_activation(
        self, org_id: str, request: CreateAudienceRequest, idempotency_key: str | None, start: StartExecution
    ) -> AudienceView:
        """Accept the audience and hand the work to the activation state machine (named after the
        audience, so a repeated start is a no-op). Returns at once; progress shows in the list."""
        record = self._existing(org_id, idempotency_key)
        if record is None:
            record, _, _ = self._accept(org_id, request, idempotency_key)
        start(record.audience_id, {"org_id": org_id, "audience_id": record.audience_id})
        return audience_view(record)

    def advance(self, org_id: str, audience_id: str, *, max_batches: int) -> ActivationProgress:
        """Do the next piece of an activation: create the platform audience, send up to
        ``max_batches`` batches, create the lookalike, then mark the audience active.

        Throttling is not an error here: the state machine waits ``wait_seconds`` and comes back,
        instead of a Lambda sleeping. Other errors propagate for the state machine's Retry/Catch.
        """
        record = self._require(org_id, audience_id)
        if record.status == "active":
            return ActivationProgress(status="active")
        _, prepared = self._load_source(record)
        _, graph = self.connections.client_for(org_id)
        try:
            self._ensure_platform_audience(record, graph)
            if not self._upload(record, prepared, graph, max_batches=max_batches):
                return ActivationProgress(status="uploading", **_batches(record))
            self._ensure_lookalike(record, graph)
        except PlatformThrottled as exc:
            wait = max(1, math.ceil(exc.retry_after_seconds or 60))
            return ActivationProgress(status="waiting", wait_seconds=wait, **_batches(record))
        finally:
            self.connections.record_usage(org_id, graph)
        record.status = "active"
        record.failure = None
        self._save(record)
        return ActivationProgress(status="active", **_batches(record))

    def record_failure(self, org_id: str, audience_id: str, error: str, cause: str) -> None:
        """Mark an activation failed with what the state machine caught (the cause is the error
        body the function raised, with the user-facing message and remedy)."""
        record = self._require(org_id, audience_id)
        message, remedy = _failure_text(cause)
        record.status = "failed"
        record.failure = FailureRecord(code=error, message=message, remedy=remedy)
        self._save(record)

    def _prepare(self, users: Sequence[AudienceUser], request: CreateAudienceRequest) -> PreparedAudience:
        prepared = prepare_audience(users, default_country=request.country)
        usable = len(prepared.rows)
        if usable == 0:
            raise ValidationFailed(
                "No user has a usable e-mail address or phone number, so nobody could be matched.",
                field="users",
                remedy="Send users with a valid email or phone; see the quality report from the dry run.",
            )
        if request.objective == "prospecting" and usable < MIN_SEED_USERS:
            raise ValidationFailed(
                f"A prospecting seed needs at least {MIN_SEED_USERS} users with a usable e-mail or phone; "
                f"this list has {usable}.",
                field="users",
                remedy="Add more users, or use the retargeting objective.",
            )
        return prepared

    def _load_source(self, record: AudienceRecord) -> tuple[CreateAudienceRequest, PreparedAudience]:
        assert record.source_key is not None
        request = CreateAudienceRequest.model_validate(json.loads(self.blobs.get(record.source_key)))
        return request, prepare_audience(request.users, default_country=request.country)

    def _finish(
        self,
        record: AudienceRecord,
        source: tuple[CreateAudienceRequest, PreparedAudience],
        *,
        graph: GraphClient | None = None,
        request_was_repeated: bool = False,
    ) -> AudienceCreated:
        if record.status != "active":
            if graph is None:
                _, graph = self.connections.client_for(record.org_id)
            record = self._run(record, source[1], graph)
        message = "Audience created and users uploaded."
        if request_was_repeated:
            message = "This request was already handled; here is the audience it created."
        return audience_created(record, message)

    def _run(self, record: AudienceRecord, prepared: PreparedAudience, graph: GraphClient) -> AudienceRecord:
        try:
            self._ensure_platform_audience(record, graph)
            self._upload(record, prepared, graph)
            self._ensure_lookalike(record, graph)
            record.status = "active"
            record.failure = None
            self._save(record)
            logger.info(
                "audience exported",
                extra={
                    "audience_id": record.audience_id,
                    "rows": record.user_count,
                    "objective": record.objective,
                },
            )
            return record
        except ServiceError as exc:
            record.status = "failed"
            record.failure = FailureRecord(code=exc.code, message=exc.message, remedy=exc.remedy)
            self._save(record)
            raise
        finally:
            self.connections.record_usage(record.org_id, graph)

    def _ensure_platform_audience(self, record: AudienceRecord, graph: GraphClient) -> None:
        if record.platform_custom_audience_id:
            return
        description = f"Predicted buyers of {record.product_id}" if record.product_id else "Predicted buyers"
        created = platform.create_custom_audience(graph, record.ad_account_id, record.name, description)
        record.platform_custom_audience_id = created.id
        record.status = "uploading"
        self._save(record)

    def _upload(
        self,
        record: AudienceRecord,
        prepared: PreparedAudience,
        graph: GraphClient,
        *,
        max_batches: int | None = None,
    ) -> bool:
        """Send the batches not yet acknowledged (at most ``max_batches``); True when all are sent."""
        if record.upload is None:
            record.upload = _new_progress(len(prepared.rows), self.batch_size)
            self._save(record)
        progress = record.upload
        assert record.platform_custom_audience_id is not None
        batches = _send_batches(
            platform.add_users, graph, record.platform_custom_audience_id, prepared, progress
        )
        for sent, _ in enumerate(batches, start=1):
            record.user_count = min(progress.total_rows, progress.batches_done * progress.batch_size)
            self._save(record)
            if max_batches is not None and sent >= max_batches:
                break
        return progress.batches_done >= progress.batches_total

    def _ensure_lookalike(self, record: AudienceRecord, graph: GraphClient) -> None:
        lookalike = record.lookalike
        if lookalike is None or lookalike.platform_audience_id:
            return
        assert record.platform_custom_audience_id is not None
        created = platform.create_lookalike(
            graph,
            record.ad_account_id,
            f"{record.name} - lookalike {lookalike.size_percent}% {lookalike.country}",
            record.platform_custom_audience_id,
            lookalike.size_percent / 100,
            lookalike.country,
        )
        lookalike.platform_audience_id = created.id
        lookalike.status = "active"
        self._save(record)

    def _save(self, record: AudienceRecord) -> None:
        record.updated_at = self.clock()
        self.audiences.put(record)

    # --- refresh -------------------------------------------------------------------------------

    def refresh(self, org_id: str, audience_id: str, request: RefreshAudienceRequest) -> AudienceCreated:
        """Replace the members of an active audience with ``request.users`` in one replace session.

        ``usersreplace`` keeps the ad sets' learning phase, unlike removing and re-adding people. A
        replace session cannot be resumed half-way (the platform restarts it only from batch 1), so a
        failed refresh is reported and can be repeated once the platform's session has ended.
        """
        record = self._require(org_id, audience_id)
        if record.status != "active" or record.platform_custom_audience_id is None:
            raise PreconditionFailed(
                f"Audience {audience_id} is {record.status}; only an active audience can be refreshed.",
                remedy="Retry the creation with its Idempotency-Key first.",
            )
        prepared = prepare_audience(request.users, default_country=request.country)
        if not prepared.rows:
            raise ValidationFailed(
                "No user has a usable e-mail address or phone number.",
                field="users",
                remedy="Send users with a valid email or phone.",
            )
        _, graph = self.connections.client_for(org_id)
        progress = _new_progress(len(prepared.rows), self.batch_size)
        try:
            for _ in _send_batches(
                platform.replace_users, graph, record.platform_custom_audience_id, prepared, progress
            ):
                pass
        finally:
            self.connections.record_usage(org_id, graph)
        if record.snapshot_key:
            self.blobs.put(record.snapshot_key, snapshot_csv(request.users), "text/csv")
        record.upload = progress
        record.user_count = progress.total_rows
        record.quality = prepared.report.model_dump(mode="json")
        self._save(record)
        return audience_created(record, "Audience members replaced.")

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
                "This audience has an advert on the platform, which targets it.",
                remedy="Delete the advert first (DELETE /platform-ads/audiences/{audienceId}/advert), "
                "then the audience.",
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
        for key in (record.snapshot_key, record.source_key):
            if key:
                self.blobs.delete(key)
        self.audiences.delete(record)
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


def _batches(record: AudienceRecord) -> dict[str, int]:
    upload = record.upload
    return {"batches_done": upload.batches_done, "batches_total": upload.batches_total} if upload else {}


def _failure_text(cause: str) -> tuple[str, str | None]:
    """The user-facing message and remedy from a caught Lambda error (JSON with errorMessage)."""
    try:
        payload = json.loads(cause)
    except (TypeError, ValueError):
        return cause or "The activation failed.", None
    message = str(payload.get("errorMessage") or "The activation failed.")
    return message, payload.get("remedy")


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
    # Already gone on the platform: the goal is reached.
    with contextlib.suppress(AudienceUnavailable):
        platform.delete_custom_audience(graph, platform_id)
