"""The audience service: create, activate, refresh, delete and snapshot an audience on the platform.

The service's own collaborators are in-memory fakes of its protocols (the store keeps copies, as
DynamoDB does); the platform is the sandbox in process, reached through a real Graph client.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, BinaryIO

import pytest

from shared import deadline
from shared.activation import users_files
from shared.activation.list_chunks import RECORD_BYTES
from shared.activation.steps import StepFailed, StepResult, Worker, batch_key
from shared.activation.users_files import groups_csv
from shared.audiences.identifiers import AudienceUser
from shared.audiences.models import ActivationError, CreateAudienceRequest, RefreshAudienceRequest
from shared.audiences.preparation import PreparedAudience, prepare_audience
from shared.audiences.service import AudienceService
from shared.audiences.snapshot import snapshot_row
from shared.errors import (
    Conflict,
    IdempotencyKeyReused,
    NotFound,
    PreconditionFailed,
    RecordGone,
    ValidationFailed,
)
from shared.platform import audiences as platform_audiences
from shared.platform.client import GraphClient
from shared.platform.errors import (
    TOKEN_INVALID,
    AudienceUpdateFailed,
    LookalikeRejected,
    LookalikesExist,
    PlatformThrottled,
    ReconnectRequired,
    build_error,
)
from shared.records.audiences import AudienceRecord, AudienceSync, HoldoutRecord, SyncRun, WorkerLease
from shared.records.connections import Connection
from shared.records.uploads import UploadForm
from shared.repositories.audiences import WRITE_ATTEMPTS, adopt, changed
from tests.unit.sandbox_platform import AD_ACCOUNT_ID, SandboxPlatform

ORG = "org-1"
KEY = "create-0001"
START = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)


class MemoryAudiences:
    """``AudienceStore`` in memory. Stores and returns copies, so only what is put is kept; every write
    moves the record's ``revision`` and a whole-record write is refused over another revision than
    the one read, as DynamoAudienceStore's conditions do."""

    def __init__(self) -> None:
        self.items: dict[tuple[str, str], AudienceRecord] = {}
        self.keys: dict[tuple[str, str], str] = {}
        self.digests: dict[tuple[str, str], str | None] = {}
        self.after_put: Callable[[AudienceRecord], None] = lambda record: None
        # Called with the record before each whole-record write is checked (a test's other writer).
        self.before_put: Callable[[AudienceRecord], None] = lambda record: None

    def _write(self, record: AudienceRecord, owner: str | None = None) -> bool:
        self.before_put(record)
        stored = self.items.get((record.org_id, record.audience_id))
        if stored is None or stored.revision != record.revision:
            return False
        if owner is not None and (stored.lease is None or stored.lease.owner != owner):
            return False
        record.revision += 1
        self.items[(record.org_id, record.audience_id)] = record.model_copy(deep=True)
        self.after_put(record)
        return True

    def put(self, record: AudienceRecord, apply: Callable[[AudienceRecord], None] | None = None) -> None:
        for _ in range(WRITE_ATTEMPTS):
            if self._write(record):
                return
            if apply is None:
                raise changed(record.audience_id)
            stored = self.get(record.org_id, record.audience_id)
            if stored is None:
                raise RecordGone("deleted meanwhile", remedy="List audiences.")
            stored.updated_at = record.updated_at
            apply(stored)
            adopt(record, stored)
        raise changed(record.audience_id)

    def save_unchanged(self, record: AudienceRecord) -> bool:
        return self._write(record)

    def get(self, org_id: str, audience_id: str) -> AudienceRecord | None:
        record = self.items.get((org_id, audience_id))
        return record.model_copy(deep=True) if record else None

    def list_for_org(self, org_id: str) -> list[AudienceRecord]:
        return [r.model_copy(deep=True) for (org, _), r in self.items.items() if org == org_id]

    def delete(self, record: AudienceRecord) -> None:
        self.items.pop((record.org_id, record.audience_id), None)
        if record.idempotency_key:
            self.keys.pop((record.org_id, record.idempotency_key), None)

    def claim_key(
        self, org_id: str, idempotency_key: str, audience_id: str, request_sha256: str | None = None
    ) -> tuple[str, str | None]:
        bound = self.keys.setdefault((org_id, idempotency_key), audience_id)
        self.digests.setdefault((org_id, idempotency_key), request_sha256)
        return bound, self.digests[(org_id, idempotency_key)]

    def release_key(self, org_id: str, idempotency_key: str, audience_id: str) -> None:
        if self.keys.get((org_id, idempotency_key)) == audience_id:
            del self.keys[(org_id, idempotency_key)]
            self.digests.pop((org_id, idempotency_key), None)

    def create(self, record: AudienceRecord) -> bool:
        if (record.org_id, record.audience_id) in self.items:
            return False
        self.items[(record.org_id, record.audience_id)] = record.model_copy(deep=True)
        self.after_put(record)
        return True

    # The lease and the attempt: the conditions DynamoAudienceStore writes with (each moves the revision).
    def acquire_lease(self, org_id: str, audience_id: str, lease: WorkerLease, now: datetime) -> bool:
        record = self.items[(org_id, audience_id)]
        held = record.lease
        if held is not None and held.until >= now and held.owner != lease.owner:
            return False
        record.lease = lease.model_copy()
        record.revision += 1
        return True

    def release_lease(self, org_id: str, audience_id: str, owner: str) -> None:
        record = self.items[(org_id, audience_id)]
        if record.lease is not None and record.lease.owner == owner:
            record.lease = None
            record.revision += 1

    def transfer_lease(self, org_id: str, audience_id: str, owner: str, lease: WorkerLease) -> bool:
        record = self.items[(org_id, audience_id)]
        if record.lease is None or record.lease.owner != owner:
            return False
        record.lease = lease.model_copy()
        record.revision += 1
        return True

    def save_leased(self, record: AudienceRecord, owner: str) -> bool:
        for _ in range(WRITE_ATTEMPTS):
            if self._write(record, owner):
                return True
            stored = self.items.get((record.org_id, record.audience_id))
            if stored is None or stored.lease is None or stored.lease.owner != owner:
                return False
            for name in ("sync", "publication", "platform_changes"):
                setattr(record, name, getattr(stored.model_copy(deep=True), name))
            record.revision = stored.revision
        raise changed(record.audience_id)

    def begin_attempt(self, record: AudienceRecord, previous_attempt: int | None) -> bool:
        stored = self.items[(record.org_id, record.audience_id)]
        recorded = stored.activation.attempt if stored.activation else None
        if recorded != previous_attempt:
            return False
        stored.activation = record.activation.model_copy(deep=True) if record.activation else None
        stored.status = record.status
        stored.failure = None
        stored.revision += 1
        if stored.revision == record.revision + 1:
            record.revision = stored.revision
        return True


class MemoryBlobs:
    """``BlobStore`` in memory; a missing key raises ``KeyError`` on read, deleting one is a no-op."""

    def __init__(self) -> None:
        self.objects: dict[str, tuple[bytes, str]] = {}
        self.uploads: dict[str, tuple[str, str, dict[int, bytes]]] = {}

    def put(self, key: str, data: bytes, content_type: str = "application/octet-stream") -> None:
        self.objects[key] = (data, content_type)

    def get(self, key: str) -> bytes:
        return self.objects[key][0]

    def delete(self, key: str) -> None:
        self.objects.pop(key, None)

    def exists(self, key: str) -> bool:
        return key in self.objects

    def size(self, key: str) -> int | None:
        return len(self.objects[key][0]) if key in self.objects else None

    def open(self, key: str) -> BinaryIO:
        return io.BytesIO(self.objects[key][0])

    def upload(self, key: str, path: Path, content_type: str = "application/octet-stream") -> None:
        self.put(key, path.read_bytes(), content_type)

    def get_range(self, key: str, start: int, end: int) -> bytes:
        return self.objects[key][0][start : end + 1]

    def start_parts(self, key: str, content_type: str = "application/octet-stream") -> str:
        upload = f"upload-{len(self.uploads)}"
        self.uploads[upload] = (key, content_type, {})
        return upload

    def put_part(self, key: str, upload: str, number: int, path: Path) -> str:
        self.uploads[upload][2][number] = path.read_bytes()
        return f"etag-{upload}-{number}-{len(self.uploads[upload][2][number])}"

    def finish_parts(self, key: str, upload: str, etags: Sequence[str]) -> None:
        """As S3 completes a multipart upload: the parts named, in order; each but the last 5 MiB."""
        stored, content_type, parts = self.uploads.pop(upload)
        assert stored == key
        chosen = [parts[number] for number in range(1, len(etags) + 1)]
        assert all(len(part) >= 5 << 20 for part in chosen[:-1]), "EntityTooSmall"
        self.objects[key] = (b"".join(chosen), content_type)

    def upload_form(self, key: str, content_type: str, max_bytes: int, expires_seconds: int) -> UploadForm:
        return UploadForm(f"https://blobs.test/{key}", {"key": key, "max": str(max_bytes)})

    def download_url(self, key: str, filename: str, expires_seconds: int) -> str:
        return f"https://blobs.test/{key}?filename={filename}&expires={expires_seconds}"


class SandboxConnections:
    """``PlatformConnections``: the organization's active connection, a marketer's sandbox token."""

    def __init__(self, platform: SandboxPlatform) -> None:
        self.token = platform.user_token()
        self.platform = platform
        self.graph = platform.graph(self.token)
        self.refusal: Exception | None = None
        self.usage_recorded_for: list[str] = []

    def client_for(self, org_id: str) -> tuple[Connection, GraphClient]:
        if self.refusal is not None:
            raise self.refusal
        # A client per use, as each function invocation gets one (nothing carried between steps).
        return Connection(org_id=org_id, status="active", ad_account_id=AD_ACCOUNT_ID), self.platform.graph(
            self.token
        )

    def record_usage(self, org_id: str, graph: GraphClient) -> None:
        self.usage_recorded_for.append(org_id)


class Ticking:
    """A clock that moves one second per reading."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


@pytest.fixture
def platform() -> SandboxPlatform:
    return SandboxPlatform()


@pytest.fixture
def audiences() -> MemoryAudiences:
    return MemoryAudiences()


@pytest.fixture
def blobs() -> MemoryBlobs:
    return MemoryBlobs()


@pytest.fixture
def connections(platform: SandboxPlatform) -> SandboxConnections:
    return SandboxConnections(platform)


@pytest.fixture
def service(
    audiences: MemoryAudiences, blobs: MemoryBlobs, connections: SandboxConnections
) -> AudienceService:
    # Batches of 10 rows, so a few dozen users make a multi-batch session.
    return AudienceService(
        audiences=audiences, blobs=blobs, connections=connections, clock=Ticking(), batch_size=10
    )


def buyers(count: int, *, first: int = 0) -> list[AudienceUser]:
    return [
        AudienceUser(user_id=f"u{i}", email=f"buyer{i}@example.com", phone=f"07700 900{i:03d}", country="GB")
        for i in range(first, first + count)
    ]


def request(count: int, **fields: object) -> CreateAudienceRequest:
    return CreateAudienceRequest(name="Likely buyers", product_id="sku-1", users=buyers(count), **fields)  # type: ignore[arg-type]


def refuse_the_next_upload_after(platform: SandboxPlatform, audiences: MemoryAudiences, batches: int) -> None:
    """Once the store holds ``batches`` acknowledged batches, the platform refuses the next upload
    (2650/1870145: another update of the audience is in progress), once."""
    armed = [True]

    def check(record: AudienceRecord) -> None:
        if armed[0] and record.upload is not None and record.upload.batches_done == batches:
            platform.fault(kind="error", method="POST", path="/users$", code=2650, subcode=1870145)
            armed[0] = False

    audiences.after_put = check


# --- create ----------------------------------------------------------------------------------------


def test_an_audience_is_uploaded_in_batches_of_one_session_and_becomes_active(
    service: AudienceService,
    platform: SandboxPlatform,
    audiences: MemoryAudiences,
    blobs: MemoryBlobs,
    connections: SandboxConnections,
) -> None:
    # Given 25 users and batches of 10
    # When
    created = service.create(ORG, request(25))

    # Then three batches of one session reached the platform, and all 25 people are in the audience
    assert (created.status, created.user_count) == ("active", 25)
    assert created.platform_custom_audience_id is not None
    sessions = platform.upload_sessions()
    assert [seq for _, seq in sessions] == [1, 2, 3]
    assert len({session_id for session_id, _ in sessions}) == 1
    assert platform.member_count(created.platform_custom_audience_id) == 25
    # And the record, its users and its snapshot are kept; the connection's usage is recorded
    stored = audiences.get(ORG, created.audience_id)
    assert stored is not None
    assert stored.upload is not None
    assert (stored.status, stored.upload.batches_done, stored.upload.batches_total) == ("active", 3, 3)
    assert {stored.source_key, stored.snapshot_key} <= set(blobs.objects)
    assert set(connections.usage_recorded_for) == {ORG}


def test_a_refused_batch_fails_the_audience_with_the_platforms_reason_and_keeps_what_was_acknowledged(
    service: AudienceService, platform: SandboxPlatform, audiences: MemoryAudiences
) -> None:
    # Given the platform refuses the second batch
    refuse_the_next_upload_after(platform, audiences, batches=1)

    # When
    with pytest.raises(AudienceUpdateFailed) as raised:
        service.create(ORG, request(25))

    # Then the audience is failed with the platform's reason, and the first batch is counted
    [stored] = audiences.items.values()
    assert stored.status == "failed"
    assert stored.failure is not None
    assert (stored.failure.code, stored.failure.message) == (raised.value.code, raised.value.message)
    assert stored.upload is not None
    assert stored.upload.batches_done == 1
    assert stored.user_count == 10
    assert stored.platform_custom_audience_id is not None
    assert platform.member_count(stored.platform_custom_audience_id) == 10


def test_retrying_a_failed_creation_with_its_key_resumes_after_the_last_acknowledged_batch(
    service: AudienceService, platform: SandboxPlatform, audiences: MemoryAudiences
) -> None:
    # Given a creation that failed at its second batch
    refuse_the_next_upload_after(platform, audiences, batches=1)
    with pytest.raises(AudienceUpdateFailed):
        service.create(ORG, request(25), idempotency_key=KEY)

    # When the same request is repeated with the same key
    created = service.create(ORG, request(25), idempotency_key=KEY)

    # Then it continues the same audience and session: every batch accepted exactly once, nobody lost
    assert (created.status, created.user_count) == ("active", 25)
    assert len(audiences.items) == 1
    assert len(platform.calls(r"/customaudiences$", method="POST")) == 1
    sessions = platform.upload_sessions()
    assert [seq for _, seq in sessions] == [1, 2, 3]
    assert len({session_id for session_id, _ in sessions}) == 1
    assert created.platform_custom_audience_id is not None
    assert platform.member_count(created.platform_custom_audience_id) == 25


def test_repeating_a_finished_request_returns_its_audience_without_calling_the_platform(
    service: AudienceService, platform: SandboxPlatform
) -> None:
    # Given a creation that finished
    first = service.create(ORG, request(12), idempotency_key=KEY)
    platform.forget_calls()

    # When it is repeated with its key
    again = service.create(ORG, request(12), idempotency_key=KEY)

    # Then the same audience is returned, saying so, and the platform was not called
    assert (again.audience_id, again.status, again.user_count) == (first.audience_id, "active", 12)
    assert again.message == "This request was already handled; here is the audience it created."
    assert platform.calls() == []


def test_a_list_without_a_usable_identifier_is_refused_before_anything_is_stored_or_sent(
    service: AudienceService, platform: SandboxPlatform, audiences: MemoryAudiences, blobs: MemoryBlobs
) -> None:
    # Given users whose e-mails and phones cannot be matched
    unusable = CreateAudienceRequest(
        name="Nobody", users=[AudienceUser(user_id="u1", email="not-an-email"), AudienceUser(user_id="u2")]
    )

    # When / Then
    with pytest.raises(ValidationFailed) as raised:
        service.create(ORG, unusable)
    assert raised.value.field == "users"
    assert (audiences.items, blobs.objects, platform.calls()) == ({}, {}, [])


def test_a_prospecting_seed_needs_a_hundred_usable_users(service: AudienceService) -> None:
    # Given a prospecting list of 99 users
    seed = request(99, objective="prospecting", lookalike_size=1, lookalike_country="GB")

    # When / Then
    with pytest.raises(ValidationFailed, match="at least 100 users") as raised:
        service.create(ORG, seed)
    assert raised.value.field == "users"


def test_the_up_front_check_of_a_large_list_prepares_only_its_start(
    service: AudienceService, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a 5,000-user list, every user usable, and a count of the users the create prepares
    prepared: list[int] = []

    def counted(users: list[AudienceUser], **options: Any) -> PreparedAudience:
        prepared.append(len(users))
        return prepare_audience(users, **options)

    monkeypatch.setattr("shared.audiences.service.prepare_audience", counted)

    # When it is created
    service.create(ORG, request(5_000))

    # Then the check before anything is stored prepared its first 1,000 users, not all 5,000 a second
    # time (the pipeline's NormaliseAndHash prepares them all)
    assert prepared[0] == 1_000


def test_a_list_whose_usable_users_come_late_is_counted_whole_before_it_is_refused_or_accepted(
    service: AudienceService,
) -> None:
    # Given prospecting lists whose first 1,000 users have no identifier, then 99 or 100 usable ones
    def late(usable: int) -> CreateAudienceRequest:
        nobody = [AudienceUser(user_id=f"n{i}") for i in range(1_000)]
        return CreateAudienceRequest(
            name="Late",
            users=nobody + buyers(usable),
            objective="prospecting",
            lookalike_size=1,
            lookalike_country="GB",
        )

    # When / Then: 99 are refused with their exact count, 100 are enough
    with pytest.raises(ValidationFailed, match="this list has 99"):
        service.create(ORG, late(99))
    assert service.create(ORG, late(100)).status == "active"


def test_a_prospecting_audience_gets_its_lookalike_once_the_seed_is_uploaded(
    service: AudienceService, platform: SandboxPlatform
) -> None:
    # Given
    seed = request(120, objective="prospecting", lookalike_size=2, lookalike_country="GB")

    # When
    created = service.create(ORG, seed)

    # Then
    assert created.lookalike is not None
    assert (created.lookalike.size_percent, created.lookalike.country) == (2, "GB")
    assert created.lookalike.status == "active"
    assert created.lookalike.platform_audience_id is not None
    assert platform.audience_exists(created.lookalike.platform_audience_id)
    [lookalike_call] = [
        c
        for c in platform.calls(r"/customaudiences$", method="POST")
        if c["params"]["subtype"] == "LOOKALIKE"
    ]
    assert lookalike_call["params"]["origin_audience_id"] == created.platform_custom_audience_id


def test_a_connection_that_must_be_renewed_stops_the_creation_before_anything_is_stored(
    service: AudienceService,
    connections: SandboxConnections,
    platform: SandboxPlatform,
    audiences: MemoryAudiences,
    blobs: MemoryBlobs,
) -> None:
    # Given the connection's token no longer works
    connections.refusal = build_error(TOKEN_INVALID)

    # When / Then
    with pytest.raises(ReconnectRequired):
        service.create(ORG, request(5))
    assert (audiences.items, blobs.objects, platform.calls()) == ({}, {}, [])


def test_an_uploaded_csv_is_used_in_place_of_users(service: AudienceService, blobs: MemoryBlobs) -> None:
    # Given a CSV uploaded through an upload link
    link_key = "uploads/org-1/0b6f1c9e-2a43-4a7e-9d1f-5e0c2b7a8d34.csv"
    blobs.put(link_key, b"user_id,email\nu1,one@example.com\nu2,two@example.com\n", "text/csv")

    # When
    created = service.create(
        ORG, CreateAudienceRequest(name="From a file", upload_id="0b6f1c9e-2a43-4a7e-9d1f-5e0c2b7a8d34")
    )

    # Then
    assert (created.status, created.user_count) == ("active", 2)


def test_a_bad_row_of_an_uploaded_csv_fails_select_users_naming_line_and_column_and_writes_nothing(
    service: AudienceService, blobs: MemoryBlobs, platform: SandboxPlatform
) -> None:
    # Given a CSV whose header is right (the POST accepts it) and whose lines 3 and 5 are bad
    upload_id = "0b6f1c9e-2a43-4a7e-9d1f-5e0c2b7a8d34"
    lines = [
        "user_id,email,score",
        "u1,one@example.com,0.5",
        "u2,two@example.com,high",
        "u3,,0.1",
        ",x@e.com,1",
    ]
    blobs.put(f"uploads/{ORG}/{upload_id}.csv", "\n".join(lines).encode(), "text/csv")
    executions = Executions()
    accepted = service.start_activation(
        ORG, CreateAudienceRequest(name="From a file", upload_id=upload_id), None, executions
    )
    worker = execution_worker(executions.started[0][0])
    run_steps(service, accepted.audience_id, worker, "claim")

    # When
    with pytest.raises(StepFailed) as raised:
        service.pipeline.run("select_users", ORG, accepted.audience_id, worker)

    # Then the step fails as bad input, naming each bad row by line and column, never its value
    assert type(raised.value).__name__ == "validation_error"
    failure = service.activation_status(ORG, accepted.audience_id).error
    assert failure is not None
    assert (failure.code, failure.step) == ("validation_error", "select_users")
    assert "line 3: score" in failure.message
    assert "line 5: user_id" in failure.message
    assert "high" not in failure.message
    assert failure.remedy is not None
    assert "upload the file again" in failure.remedy
    # and no snapshot was written, nothing reached the platform
    record = service.pipeline.audiences.get(ORG, accepted.audience_id)
    assert record is not None
    assert record.snapshot_key is not None
    assert not blobs.exists(record.snapshot_key)
    assert platform.calls(r"/customaudiences$", method="POST") == []


def test_the_synchronous_create_answers_a_bad_row_of_an_upload_with_its_line_and_records_the_failure(
    service: AudienceService, blobs: MemoryBlobs, audiences: MemoryAudiences
) -> None:
    # Given an uploaded CSV whose line 2 has no user_id
    upload_id = "0b6f1c9e-2a43-4a7e-9d1f-5e0c2b7a8d34"
    blobs.put(f"uploads/{ORG}/{upload_id}.csv", b"user_id,email\n,one@example.com\n", "text/csv")

    # When
    with pytest.raises(ValidationFailed) as refused:
        service.create(ORG, CreateAudienceRequest(name="From a file", upload_id=upload_id))

    # Then the answer names the line and column, and the audience shows the failure with its remedy
    assert refused.value.field == "uploadId"
    assert "line 2: user_id" in refused.value.message
    (record,) = audiences.items.values()
    assert record.status == "failed"
    assert record.failure is not None
    assert (record.failure.code, record.failure.step) == ("validation_error", "select_users")


# --- activation (the state machine's steps) --------------------------------------------------------


class Executions:
    """``ExecutionStarter``: the executions started (name, input); none of them is running."""

    def __init__(self) -> None:
        self.started: list[tuple[str, dict[str, str]]] = []

    def __call__(self, name: str, payload: dict[str, str]) -> None:
        self.started.append((name, payload))

    def running(self, name: str) -> bool:
        return False


def execution_worker(name: str) -> Worker:
    """A state machine task of execution ``name`` with minutes to go."""
    return Worker(owner=name, seconds_left=lambda: 300.0)


def run_steps(service: AudienceService, audience_id: str, worker: Worker, *steps: str) -> list[StepResult]:
    return [service.pipeline.run(step, ORG, audience_id, worker) for step in steps]


def test_activation_sends_at_most_the_given_batches_per_step_and_resumes_where_it_stopped(
    service: AudienceService, platform: SandboxPlatform
) -> None:
    # Given an accepted activation of 25 users in batches of 10, one batch per step
    executions = Executions()
    accepted = service.start_activation(ORG, request(25), None, executions)
    name = f"{accepted.audience_id}-1"
    assert executions.started == [(name, {"org_id": ORG, "audience_id": accepted.audience_id})]
    assert accepted.status == "creating"
    service.max_batches_per_step = 1
    worker = execution_worker(name)
    run_steps(service, accepted.audience_id, worker, "claim", "select_users", "normalise_and_hash")
    run_steps(service, accepted.audience_id, worker, "create_custom_audience")

    # When the state machine runs the upload step three times
    steps = run_steps(service, accepted.audience_id, worker, *["upload_batches"] * 3)

    # Then each step sends the next batch and the last one says all are sent
    assert [(s.outcome, s.batches_sent) for s in steps] == [("more", 1), ("more", 1), ("done", 1)]
    assert [seq for _, seq in platform.upload_sessions()] == [1, 2, 3]
    status = service.activation_status(ORG, accepted.audience_id)
    assert (status.step, status.progress.batches_done, status.progress.users_uploaded) == (
        "upload_batches",
        3,
        25,
    )


def test_batches_hashed_one_at_a_time_are_the_rows_and_report_of_the_whole_list(
    service: AudienceService, blobs: MemoryBlobs
) -> None:
    # Given 25 users, three of them repeating a user_id of an earlier batch, one without identifier
    users = buyers(22) + buyers(3, first=2) + [AudienceUser(user_id="nobody")]
    whole = CreateAudienceRequest(name="Chunked", users=users)
    executions = Executions()
    accepted = service.start_activation(ORG, whole, None, executions)

    # When the activation hashes them into batches of 7, one batch per engine query
    service.batch_size = 7
    pipeline = service.pipeline
    pipeline.batches_per_query = 1
    worker = execution_worker(executions.started[0][0])
    for step in ("claim", "select_users", "normalise_and_hash"):
        pipeline.run(step, ORG, accepted.audience_id, worker)

    # Then the stored batches hold exactly the rows of the whole list prepared at once, in order
    expected = prepare_audience(users)
    stored = service.audiences.get(ORG, accepted.audience_id)
    assert stored is not None
    assert stored.upload is not None
    assert stored.activation is not None
    prefix = stored.activation.batch_keys_prefix
    assert prefix is not None
    rows = [
        tuple(row)
        for seq in range(1, stored.upload.batches_total + 1)
        for row in json.loads(blobs.get(batch_key(prefix, seq)))
    ]
    assert rows == expected.rows
    # And the quality report adds up to the whole list's
    assert stored.quality == expected.report.model_dump(mode="json")


def test_a_throttled_upload_step_asks_the_state_machine_to_wait_as_long_as_the_platform_asks(
    service: AudienceService, platform: SandboxPlatform
) -> None:
    # Given an activation whose uploads are throttled for 5 minutes, beyond what a task may sleep
    executions = Executions()
    accepted = service.start_activation(ORG, request(15), None, executions)
    worker = execution_worker(executions.started[0][0])
    run_steps(service, accepted.audience_id, worker, "claim", "select_users", "normalise_and_hash")
    run_steps(service, accepted.audience_id, worker, "create_custom_audience")
    platform.fault(kind="throttle", method="POST", path="/users$", code=80003, regain_minutes=5)

    # When the step runs, the state machine waits as asked, and the step runs again
    [waiting] = run_steps(service, accepted.audience_id, worker, "upload_batches")
    platform.admin("POST", "/clock", {"seconds": waiting.wait_seconds})
    [done] = run_steps(service, accepted.audience_id, worker, "upload_batches")

    # Then the first step returns the wait for WaitForThrottle, without failing; the next finishes
    assert (waiting.outcome, waiting.wait_seconds, waiting.batches_sent) == ("throttled", 300, 0)
    assert (done.outcome, done.batches_sent) == ("done", 2)
    status = service.activation_status(ORG, accepted.audience_id)
    assert status.progress.batches_done == 2


def test_a_failing_step_records_code_message_remedy_and_step_then_raises_the_code(
    service: AudienceService, platform: SandboxPlatform
) -> None:
    # Given an ad account whose Custom Audience terms were never accepted
    executions = Executions()
    accepted = service.start_activation(ORG, request(5), None, executions)
    worker = execution_worker(executions.started[0][0])
    run_steps(service, accepted.audience_id, worker, "claim", "select_users", "normalise_and_hash")
    platform.fault(kind="error", method="POST", path="/customaudiences$", code=200, subcode=1870090)

    # When
    with pytest.raises(StepFailed) as raised:
        service.pipeline.run("create_custom_audience", ORG, accepted.audience_id, worker)

    # Then Lambda would report errorType = the code, and the audience already holds the failure
    assert type(raised.value).__name__ == "platform_terms_not_accepted"
    failure = service.activation_status(ORG, accepted.audience_id).error
    assert failure is not None
    assert (failure.code, failure.step) == ("platform_terms_not_accepted", "create_custom_audience")
    assert failure.remedy
    assert "terms" in failure.remedy


def test_record_failure_keeps_what_the_step_recorded_and_records_a_crash_it_could_not(
    service: AudienceService,
) -> None:
    # Given an activation whose worker was killed during the upload (nothing recorded by the step)
    executions = Executions()
    accepted = service.start_activation(ORG, request(5), None, executions)
    worker = execution_worker(executions.started[0][0])
    run_steps(service, accepted.audience_id, worker, "claim", "select_users")
    cause = json.dumps({"errorType": "Runtime.ExitError", "errorMessage": "Runtime exited: signal: killed"})

    # When RecordFailure gets what Step Functions caught
    service.pipeline.record_failure(ORG, accepted.audience_id, worker, "Runtime.ExitError", cause)

    # Then the attempt failed with that error and the remedy to retry; the lease is given up
    status = service.activation_status(ORG, accepted.audience_id)
    assert (status.status, status.state) == ("failed", "failed")
    assert status.error is not None
    assert (status.error.code, status.error.message) == (
        "Runtime.ExitError",
        "Runtime exited: signal: killed",
    )
    assert status.error.remedy is not None
    assert "Retry" in status.error.remedy
    stored = service.audiences.get(ORG, accepted.audience_id)
    assert stored is not None
    assert stored.lease is None


def test_claiming_an_active_audience_changes_nothing(
    service: AudienceService, platform: SandboxPlatform
) -> None:
    # Given an active audience
    created = service.create(ORG, request(5))
    platform.forget_calls()

    # When
    [claimed] = run_steps(service, created.audience_id, execution_worker("late-1"), "claim")

    # Then
    assert claimed.outcome == "active"
    assert platform.calls() == []


def test_the_synchronous_create_never_sleeps_past_its_time_and_hands_the_rest_to_the_state_machine(
    service: AudienceService, platform: SandboxPlatform
) -> None:
    # Given a request with 20 s left, and a platform that throttles uploads for a minute
    platform.fault(kind="throttle", method="POST", path="/users$", code=80003, regain_minutes=1, count=3)
    executions = Executions()

    # When
    created = service.create(ORG, request(25), KEY, seconds_left=lambda: 20.0, hand_off=executions)

    # Then nothing slept past the time left; the rest runs in the state machine, where to watch it said
    assert all(pause <= 20.0 for pause in platform.sleeps), platform.sleeps
    assert created.status == "uploading"
    assert created.activation_url == f"/platform-ads/activations/{created.audience_id}"
    assert executions.started == [
        (f"{created.audience_id}-1", {"org_id": ORG, "audience_id": created.audience_id})
    ]
    # And the execution holds the audience: it can carry on where the request stopped
    stored = service.audiences.get(ORG, created.audience_id)
    assert stored is not None
    assert stored.lease is not None
    assert stored.lease.owner == f"{created.audience_id}-1"


class NearlySpentContext:
    """A Lambda context with 3.5 s left: after the platform reserve, too little for any platform call."""

    def get_remaining_time_in_millis(self) -> int:
        return 3500


def test_a_synchronous_create_the_platform_cannot_answer_in_time_continues_in_the_state_machine(
    service: AudienceService, platform: SandboxPlatform
) -> None:
    # Given a request whose function has too little time left for the platform to answer
    executions = Executions()

    # When
    with deadline.invocation(NearlySpentContext()):
        created = service.create(ORG, request(25), KEY, seconds_left=lambda: 3.5, hand_off=executions)

    # Then nothing was sent in the request; the state machine goes on from there, no failure shown
    assert platform.calls() == []
    assert created.activation_url == f"/platform-ads/activations/{created.audience_id}"
    assert executions.started == [
        (f"{created.audience_id}-1", {"org_id": ORG, "audience_id": created.audience_id})
    ]
    stored = service.audiences.get(ORG, created.audience_id)
    assert stored is not None
    assert stored.failure is None
    assert stored.lease is not None
    assert stored.lease.owner == f"{created.audience_id}-1"


def test_without_the_state_machine_the_synchronous_create_fails_fast_with_the_throttles_remedy(
    service: AudienceService, platform: SandboxPlatform
) -> None:
    # Given a platform that throttles uploads for a minute, and 20 s left
    platform.fault(kind="throttle", method="POST", path="/users$", code=80003, regain_minutes=1, count=3)

    # When
    with pytest.raises(PlatformThrottled) as raised:
        service.create(ORG, request(25), KEY, seconds_left=lambda: 20.0)

    # Then at once, with what to do
    assert all(pause <= 20.0 for pause in platform.sleeps)
    assert raised.value.remedy is not None
    assert raised.value.remedy.startswith("Try again in a few minutes")
    assert "launch wizard's Activation step" in raised.value.remedy


def test_one_worker_advances_an_audience_at_a_time(
    service: AudienceService, platform: SandboxPlatform
) -> None:
    # Given an execution working on an audience
    executions = Executions()
    accepted = service.start_activation(ORG, request(25), None, executions)
    first = execution_worker(executions.started[0][0])
    run_steps(service, accepted.audience_id, first, "claim", "select_users")

    # When another worker claims it, or tries a step
    other = execution_worker("intruder-1")
    [claimed] = run_steps(service, accepted.audience_id, other, "claim")
    with pytest.raises(StepFailed) as raised:
        service.pipeline.run("create_custom_audience", ORG, accepted.audience_id, other)

    # Then it is told to wait for the first, and does nothing on the platform
    assert (claimed.outcome, claimed.wait_seconds > 0) == ("busy", True)
    assert type(raised.value).__name__ == "activation_lease_lost"
    assert platform.calls(r"/customaudiences$", method="POST") == []


def test_a_key_reused_with_another_body_is_refused_on_either_route(service: AudienceService) -> None:
    # Given an activation accepted with a key
    service.start_activation(ORG, request(5), KEY, Executions())

    # When the same key comes with another list, on either route
    with pytest.raises(IdempotencyKeyReused) as on_create:
        service.create(ORG, request(6), KEY)
    with pytest.raises(IdempotencyKeyReused) as on_activation:
        service.start_activation(ORG, request(6), KEY, Executions())

    # Then both are refused the same way (422, the header named)
    assert on_create.value.status == on_activation.value.status == 422
    assert on_create.value.field == "Idempotency-Key"


# --- refresh, delete, snapshot ---------------------------------------------------------------------


def test_refreshing_replaces_the_members_in_one_replace_session(
    service: AudienceService, platform: SandboxPlatform, blobs: MemoryBlobs, audiences: MemoryAudiences
) -> None:
    # Given an active audience of 25
    created = service.create(ORG, request(25))
    assert created.platform_custom_audience_id is not None

    # When its members are replaced by 12 others
    refreshed = service.refresh(ORG, created.audience_id, RefreshAudienceRequest(users=buyers(12, first=100)))

    # Then the platform holds exactly the 12, sent in one replace session, and the snapshot follows
    assert (refreshed.status, refreshed.user_count, refreshed.message) == (
        "active",
        12,
        "Audience members replaced.",
    )
    assert platform.member_count(created.platform_custom_audience_id) == 12
    replaced = platform.upload_sessions(r"/usersreplace$")
    assert [seq for _, seq in replaced] == [1, 2]
    assert len({session_id for session_id, _ in replaced}) == 1
    stored = audiences.get(ORG, created.audience_id)
    assert stored is not None
    assert stored.snapshot_key is not None
    assert blobs.get(stored.snapshot_key).decode().count("\n") == 1 + 12


def test_a_refresh_with_an_empty_list_is_refused_on_users_and_sends_nothing(
    service: AudienceService, platform: SandboxPlatform
) -> None:
    # Given an active audience of 25
    created = service.create(ORG, request(25))
    assert created.platform_custom_audience_id is not None

    # When its members would be replaced by nobody
    with pytest.raises(ValidationFailed, match="users is empty") as refused:
        service.refresh(ORG, created.audience_id, RefreshAudienceRequest(users=[]))

    # Then the refusal names users and says what to send, and the platform keeps the 25
    assert refused.value.field == "users"
    assert "send no body" in (refused.value.remedy or "")
    assert platform.upload_sessions(r"/usersreplace$") == []
    assert platform.member_count(created.platform_custom_audience_id) == 25


def test_only_an_active_audience_can_be_refreshed(
    service: AudienceService, platform: SandboxPlatform, audiences: MemoryAudiences
) -> None:
    # Given an audience whose creation failed
    refuse_the_next_upload_after(platform, audiences, batches=1)
    with pytest.raises(AudienceUpdateFailed):
        service.create(ORG, request(25))
    [failed] = audiences.items.values()

    # When / Then
    with pytest.raises(PreconditionFailed, match="only an active audience can be refreshed"):
        service.refresh(ORG, failed.audience_id, RefreshAudienceRequest(users=buyers(3)))


def test_deleting_asks_for_confirmation_and_then_removes_the_audience_everywhere(
    service: AudienceService, platform: SandboxPlatform, audiences: MemoryAudiences, blobs: MemoryBlobs
) -> None:
    # Given a prospecting audience with its lookalike, created with a key
    created = service.create(
        ORG,
        request(120, objective="prospecting", lookalike_size=1, lookalike_country="GB"),
        idempotency_key=KEY,
    )
    assert created.platform_custom_audience_id is not None
    assert created.lookalike is not None
    lookalike_id = created.lookalike.platform_audience_id
    assert lookalike_id is not None

    # When deletion is not confirmed, nothing is deleted
    with pytest.raises(ValidationFailed) as raised:
        service.delete(ORG, created.audience_id, confirm=False)
    assert raised.value.field == "confirm"
    assert platform.audience_exists(created.platform_custom_audience_id)

    # When it is confirmed
    service.delete(ORG, created.audience_id, confirm=True)

    # Then the seed and its lookalike are gone on the platform, and the record, files and key here
    assert not platform.audience_exists(created.platform_custom_audience_id)
    assert not platform.audience_exists(lookalike_id)
    assert (audiences.items, audiences.keys, blobs.objects) == ({}, {}, {})


def test_a_seed_of_lookalikes_made_outside_the_service_is_kept_and_says_what_to_delete_first(
    service: AudienceService,
    connections: SandboxConnections,
    platform: SandboxPlatform,
    audiences: MemoryAudiences,
) -> None:
    # Given a seed from which someone made a lookalike in the platform's ads manager
    created = service.create(ORG, request(120))
    seed_id = created.platform_custom_audience_id
    assert seed_id is not None
    outside = platform_audiences.create_lookalike(
        connections.graph, AD_ACCOUNT_ID, "By hand", seed_id, 0.01, "GB"
    )

    # When / Then
    with pytest.raises(LookalikesExist) as raised:
        service.delete(ORG, created.audience_id, confirm=True)
    assert raised.value.remedy == "Delete those lookalikes in the platform's ads manager, then this audience."
    assert platform.audience_exists(seed_id)
    assert platform.audience_exists(outside.id)
    assert list(audiences.items) == [(ORG, created.audience_id)]


def test_an_audience_the_platform_reports_deleted_is_still_deleted_here(
    service: AudienceService, platform: SandboxPlatform, audiences: MemoryAudiences
) -> None:
    # Given an audience the platform answers for with 1487366, "Custom Audience Has Been Deleted"
    created = service.create(ORG, request(5))
    assert created.platform_custom_audience_id is not None
    platform.fault(kind="error", method="DELETE", path=created.platform_custom_audience_id, code=1487366)

    # When
    service.delete(ORG, created.audience_id, confirm=True)

    # Then
    assert audiences.items == {}


def test_an_unknown_audience_is_not_found_with_a_remedy(service: AudienceService) -> None:
    with pytest.raises(NotFound) as raised:
        service.snapshot_link(ORG, "no-such-audience")
    assert raised.value.remedy == "List audiences to see their ids."


def test_the_snapshot_link_is_valid_for_five_minutes(
    service: AudienceService, audiences: MemoryAudiences
) -> None:
    # Given
    created = service.create(ORG, request(3))

    # When
    link = service.snapshot_link(ORG, created.audience_id)

    # Then
    stored = audiences.get(ORG, created.audience_id)
    assert stored is not None
    assert link.filename == f"audience-{created.audience_id}.csv"
    assert link.expires_in_seconds == 300
    assert link.url == f"https://blobs.test/{stored.snapshot_key}?filename={link.filename}&expires=300"


def test_an_audience_from_before_snapshots_has_no_link(
    service: AudienceService, audiences: MemoryAudiences
) -> None:
    # Given an audience record without a snapshot
    created = service.create(ORG, request(3))
    stored = audiences.get(ORG, created.audience_id)
    assert stored is not None
    audiences.put(stored.model_copy(update={"snapshot_key": None}))

    # When / Then
    with pytest.raises(NotFound, match="before CSV snapshots existed"):
        service.snapshot_link(ORG, created.audience_id)


def test_the_snapshot_of_an_uploaded_csv_is_what_the_model_would_write_for_every_row() -> None:
    # Given rows a spreadsheet could misread, scores in several spellings, a blank score
    lines = [
        "user_id,email,firstName,lastName,phone,score,country",
        "u1,a@example.com,=SUM(A1),-Smith,+447700900001,0.5,GB",
        "u2,b@example.com,Ana,Silva,,1e3,",
        "u3,,,,07700 900003,-2,GB",
        "u4,c@example.com,,,, 3 ,",
        "u5,d@example.com,Zoë,Ó Briain,,,IE",
    ]
    data = "\n".join(lines).encode()

    # When the SelectUsers step writes its snapshot rows (the fast path where it can)
    rows = list(users_files.snapshot_rows_of_csv(io.BytesIO(data)))

    # Then each row is exactly what the model's snapshot_row writes
    header = lines[0].split(",")
    expected = []
    for line in lines[1:]:
        cells = {k: v for k, v in zip(header, line.split(","), strict=True) if v.strip()}
        expected.append(snapshot_row(AudienceUser.model_validate(cells)))
    assert rows == expected


def test_an_uploaded_csv_that_is_not_utf8_fails_its_snapshot_as_bad_input() -> None:
    # Given a file whose second row is Latin-1
    data = b"user_id,email\nu1,one@example.com\nu2,caf\xe9@example.com\n"
    # When / Then
    with pytest.raises(ValidationFailed, match="not UTF-8") as refused:
        list(users_files.snapshot_rows_of_csv(io.BytesIO(data)))
    assert refused.value.field == "uploadId"


def test_a_refresh_keeps_the_holdout_out_of_the_upload(
    service: AudienceService, platform: SandboxPlatform, blobs: MemoryBlobs, audiences: MemoryAudiences
) -> None:
    # Given an active audience of 25 whose users u3 and u13 were held out at activation
    created = service.create(ORG, request(25))
    stored = audiences.get(ORG, created.audience_id)
    assert stored is not None
    assert created.platform_custom_audience_id is not None
    users = buyers(25)
    groups = ["holdout" if u.user_id in {"u3", "u13"} else "uploaded" for u in users]
    blobs.put("activations/groups.csv", groups_csv(users, groups))
    stored.holdout = HoldoutRecord(
        percent=10, seed=7, uploaded_users=23, holdout_users=2, groups_key="activations/groups.csv"
    )
    audiences.put(stored)

    # When it is refreshed with the same 25 users
    refreshed = service.refresh(ORG, created.audience_id, RefreshAudienceRequest(users=users))

    # Then the two held-out users stay off the platform, and the snapshot marks their group
    assert refreshed.user_count == 23
    assert platform.member_count(created.platform_custom_audience_id) == 23
    assert stored.snapshot_key is not None
    rows = list(csv.reader(io.StringIO(blobs.get(stored.snapshot_key).decode("utf-8-sig"))))
    assert rows[0][-1] == "group"
    assert {row[0] for row in rows[1:] if row[-1] == "holdout"} == {"u3", "u13"}


@pytest.fixture
def with_sync(service: AudienceService, audiences: MemoryAudiences) -> Callable[[SyncRun], tuple[str, str]]:
    """Makes an active audience of 25 (buyers u0..u24) whose record holds ``run`` as its current sync
    run, as a sync in progress (or one lost before its close) leaves it; gives the audience's id and
    its platform id."""

    def make(run: SyncRun) -> tuple[str, str]:
        created = service.create(ORG, request(25))
        stored = audiences.get(ORG, created.audience_id)
        assert stored is not None
        assert stored.platform_custom_audience_id is not None
        stored.sync = AudienceSync(current=run)
        audiences.put(stored)
        return stored.audience_id, stored.platform_custom_audience_id

    return make


def test_a_refresh_with_users_is_refused_while_a_sync_of_the_audience_runs(
    service: AudienceService, platform: SandboxPlatform, with_sync: Callable[[SyncRun], tuple[str, str]]
) -> None:
    # Given an active audience of 25 whose sync (refresh now) started a minute ago and still runs
    audience_id, on_platform = with_sync(
        SyncRun(run_id="now-1", trigger="now", started_at=START - timedelta(minutes=1))
    )

    # When a list of 3 users is sent to replace the members
    with pytest.raises(Conflict) as refused:
        service.refresh(ORG, audience_id, RefreshAudienceRequest(users=buyers(3, first=100)))

    # Then it is refused naming the run, and nothing is sent: the two replace sessions ran at once,
    # and the sync's close recorded its 710 members over the 1 the platform kept (walking make dev)
    assert "A sync of this audience is already running" in refused.value.message
    assert "now-1" in refused.value.message
    assert refused.value.remedy
    assert platform.member_count(on_platform) == 25


def test_a_refresh_with_users_goes_ahead_past_a_sync_lost_longer_than_a_replace_session(
    service: AudienceService, platform: SandboxPlatform, with_sync: Callable[[SyncRun], tuple[str, str]]
) -> None:
    # Given an audience whose recorded sync started 3 hours ago and never finished (a lost execution)
    audience_id, on_platform = with_sync(
        SyncRun(run_id="schedule-lost", trigger="schedule", started_at=START - timedelta(hours=3))
    )

    # When a list of 3 users is sent to replace the members
    refreshed = service.refresh(ORG, audience_id, RefreshAudienceRequest(users=buyers(3, first=100)))

    # Then the list replaces them
    assert refreshed.user_count == 3
    assert platform.member_count(on_platform) == 3


# --- value-based seeds (issue 15, item 3) ----------------------------------------------------------

UPLOAD_ID = "0b6f1c9e-2a43-4a7e-9d1f-5e0c2b7a8d34"
VALUE_BASED = {"objective": "prospecting", "lookalikeSize": 1, "lookalikeCountry": "GB", "valueBased": True}


def test_a_value_based_upload_becomes_a_value_based_seed_with_each_rows_value_and_its_lookalike(
    service: AudienceService, blobs: MemoryBlobs, platform: SandboxPlatform
) -> None:
    # Given 120 customers with their value in a column named ltv
    lines = ["user_id,email,ltv"] + [f"v{i},valued{i}@example.com,{i}.25" for i in range(120)]
    blobs.put(f"uploads/{ORG}/{UPLOAD_ID}.csv", "\n".join(lines).encode(), "text/csv")
    # When the audience is created as a value-based prospecting seed
    created = service.create(
        ORG,
        CreateAudienceRequest.model_validate(
            {"name": "Own values", "uploadId": UPLOAD_ID, "valueColumn": "ltv", **VALUE_BASED}
        ),
    )
    # Then the platform holds it as value-based, each member with its row's value, and its lookalike
    assert created.status == "active"
    assert created.platform_custom_audience_id is not None
    held = platform.admin("GET", f"/audiences/{created.platform_custom_audience_id}/members")
    assert held["is_value_based"] is True
    (group,) = held["members"]
    assert dict(zip((row[0] for row in group["rows"]), group["values"], strict=True)) == {
        f"v{i}": i + 0.25 for i in range(120)
    }
    assert created.lookalike is not None
    assert created.lookalike.platform_audience_id is not None


def test_a_bad_value_of_an_uploaded_list_fails_select_users_naming_line_and_column_not_the_value(
    service: AudienceService, blobs: MemoryBlobs, platform: SandboxPlatform
) -> None:
    # Given a list whose ltv is negative on line 3 and text on line 4 (the POST reads only the header)
    lines = ["user_id,email,ltv"] + [f"v{i},valued{i}@example.com,{i}" for i in range(120)]
    lines[2], lines[3] = "v1,valued1@example.com,-4", "v2,valued2@example.com,lots"
    blobs.put(f"uploads/{ORG}/{UPLOAD_ID}.csv", "\n".join(lines).encode(), "text/csv")
    # When
    with pytest.raises(ValidationFailed) as refused:
        service.create(
            ORG,
            CreateAudienceRequest.model_validate(
                {"name": "Bad values", "uploadId": UPLOAD_ID, "valueColumn": "ltv", **VALUE_BASED}
            ),
        )
    # Then the lines and the column are named with the reason, never the cell; nothing reached the platform
    assert "line 3: ltv: must be a number of at least 0" in refused.value.message
    assert "line 4: ltv: must be a number such as 12.50" in refused.value.message
    assert "lots" not in refused.value.message
    assert platform.calls(r"/customaudiences$", method="POST") == []


def test_a_value_based_audience_refuses_a_refresh_with_a_list_of_users(
    service: AudienceService, blobs: MemoryBlobs
) -> None:
    # Given an active value-based seed
    lines = ["user_id,email,ltv"] + [f"v{i},valued{i}@example.com,{i}" for i in range(120)]
    blobs.put(f"uploads/{ORG}/{UPLOAD_ID}.csv", "\n".join(lines).encode(), "text/csv")
    created = service.create(
        ORG,
        CreateAudienceRequest.model_validate(
            {"name": "Own values", "uploadId": UPLOAD_ID, "valueColumn": "ltv", **VALUE_BASED}
        ),
    )
    # When it is refreshed with users, who carry no values, then it is refused with what to do
    with pytest.raises(ValidationFailed) as refused:
        service.refresh(ORG, created.audience_id, RefreshAudienceRequest(users=buyers(120)))
    assert refused.value.field == "users"
    assert "value-based" in refused.value.message


def test_the_platforms_refusal_of_a_value_based_lookalike_fails_with_the_values_remedy(
    service: AudienceService, blobs: MemoryBlobs, audiences: MemoryAudiences, platform: SandboxPlatform
) -> None:
    # Given a value-based list, and a platform that refuses its lookalike with 2654 (it matched none
    # of the people who had values): the seed is created (the first POST), the lookalike is not
    lines = ["user_id,email,ltv"] + [f"v{i},valued{i}@example.com,{i}" for i in range(120)]
    blobs.put(f"uploads/{ORG}/{UPLOAD_ID}.csv", "\n".join(lines).encode(), "text/csv")
    platform.fault(kind="error", method="POST", path="/customaudiences$", after=1, code=2654)
    # When
    with pytest.raises(LookalikeRejected) as refused:
        service.create(
            ORG,
            CreateAudienceRequest.model_validate(
                {"name": "Refused", "uploadId": UPLOAD_ID, "valueColumn": "ltv", **VALUE_BASED}
            ),
        )
    # Then the failure names the value-based seed's cause and remedy, at the lookalike step
    assert "value-based lookalike" in refused.value.message
    assert "120 of the uploaded rows had one" in refused.value.message
    assert refused.value.remedy is not None
    assert "value (a number of at least 0)" in refused.value.remedy
    (record,) = audiences.items.values()
    assert record.failure is not None
    assert (record.failure.code, record.failure.step) == ("platform_audience_rejected", "create_lookalike")


# --- a large list read in chunks (SelectUsers one chunk a task) ------------------------------------


def _large_list(users: int) -> bytes:
    """A list whose names hold commas, quotes and line breaks; past the first 10,001 rows one in 50
    user ids is a repeat of the one 10,001 rows earlier (so repeats meet across chunks)."""
    lines = ["user_id,email,firstName,phone,country"]
    for i in range(users):
        user = i - 10_001 if i % 50 == 49 and i > 10_001 else i
        name = '"Ana, ""the\nsecond"""' if i % 7 == 0 else "Ben"
        lines.append(f"c{user},shopper{i}@example.com,{name},07700 9{i % 100_000:05d},GB")
    return ("\r\n".join(lines) + "\r\n").encode()


def _created_record(service: AudienceService, request: CreateAudienceRequest) -> AudienceRecord:
    created = service.create(ORG, request)
    record = service.pipeline.audiences.get(ORG, created.audience_id)
    assert record is not None
    return record


def _service_reading(blobs: MemoryBlobs, platform: SandboxPlatform, chunk_bytes: int) -> AudienceService:
    return AudienceService(
        audiences=MemoryAudiences(),
        blobs=blobs,
        connections=SandboxConnections(platform),
        clock=Ticking(),
        batch_size=10_000,
        part_users=15_000,
        chunk_bytes=chunk_bytes,
    )


def _read_whole_and_in_chunks(
    blobs: MemoryBlobs, platform: SandboxPlatform, users: int, name: str, chunk_bytes: int
) -> tuple[AudienceRecord, AudienceService, str, Worker]:
    """An uploaded ``_large_list`` of ``users`` created as audience ``name`` by a service that reads it
    whole, and the same request's activation started and claimed by a service that reads the list in
    chunks of ``chunk_bytes``: the whole-read audience's record, the chunked service, the activation's
    audience id and its task's worker."""
    blobs.put(f"uploads/{ORG}/{UPLOAD_ID}.csv", _large_list(users), "text/csv")
    request = CreateAudienceRequest(name=name, upload_id=UPLOAD_ID)
    whole = _created_record(_service_reading(blobs, platform, 1 << 30), request)
    chunked_service, audience_id, worker, _ = _started_in_chunks(blobs, platform, request, chunk_bytes)
    return whole, chunked_service, audience_id, worker


def _started_in_chunks(
    blobs: MemoryBlobs, platform: SandboxPlatform, request: CreateAudienceRequest, chunk_bytes: int
) -> tuple[AudienceService, str, Worker, Executions]:
    """The activation of ``request`` (its list already uploaded) started and claimed by a service that
    reads the list in chunks of ``chunk_bytes``: the service, the audience id, the task's worker and
    the executions started."""
    service = _service_reading(blobs, platform, chunk_bytes)
    executions = Executions()
    accepted = service.start_activation(ORG, request, None, executions)
    worker = execution_worker(executions.started[0][0])
    run_steps(service, accepted.audience_id, worker, "claim")
    return service, accepted.audience_id, worker, executions


def _run_while_more(service: AudienceService, audience_id: str, worker: Worker, *steps: str) -> None:
    """Each step in turn, again while it answers "more" (as the state machine loops on it)."""
    for step in steps:
        while service.pipeline.run(step, ORG, audience_id, worker).outcome == "more":
            pass


def _refused_whole_and_in_chunks(
    blobs: MemoryBlobs, platform: SandboxPlatform, request: CreateAudienceRequest, chunk_bytes: int
) -> tuple[ValidationFailed, StepFailed, ActivationError]:
    """``request`` (its list already uploaded) created by a service that reads the list whole, which
    must refuse it (ValidationFailed), and its activation run by a service that reads the list in
    chunks of ``chunk_bytes``, whose SelectUsers must fail (StepFailed): the whole read's error, the
    chunked step's exception and the failure the activation records."""
    with pytest.raises(ValidationFailed) as whole:
        _service_reading(blobs, platform, 1 << 30).create(ORG, request)
    service, audience_id, worker, _ = _started_in_chunks(blobs, platform, request, chunk_bytes)
    with pytest.raises(StepFailed) as chunked:
        _run_while_more(service, audience_id, worker, "select_users")
    failure = service.activation_status(ORG, audience_id).error
    assert failure is not None
    return whole.value, chunked.value, failure


def test_a_list_read_in_chunks_stores_and_uploads_what_the_list_read_whole_does(
    blobs: MemoryBlobs, platform: SandboxPlatform
) -> None:
    # Given a list of 60,000 users (about 3.9 MB), read whole by one service and in chunks of
    # 700 kB by another (its snapshot lines wait for the next chunks until they make a 5 MiB part)
    whole, chunked_service, audience_id, worker = _read_whole_and_in_chunks(
        blobs, platform, 60_000, "Large", 700_000
    )

    # When SelectUsers runs as the state machine runs it, again while it answers "more"
    outcomes = [chunked_service.pipeline.run("select_users", ORG, audience_id, worker).outcome]
    while outcomes[-1] == "more":
        outcomes.append(chunked_service.pipeline.run("select_users", ORG, audience_id, worker).outcome)
    _run_while_more(
        chunked_service, audience_id, worker, "normalise_and_hash", "create_custom_audience", "upload_batches"
    )

    # Then it took a task per chunk, and the snapshot, the countries and the users uploaded are the
    # whole list's: every user once (the first of each user_id), none lost at a chunk's edge
    assert len(outcomes) >= 5
    assert outcomes[-1] == "done"
    record = chunked_service.pipeline.audiences.get(ORG, audience_id)
    assert record is not None
    assert record.activation is not None
    assert record.activation.users_chunks == len(outcomes)
    assert record.activation.users_parts > 1
    assert record.activation.countries == ["GB"]
    assert record.snapshot_key is not None
    assert whole.snapshot_key is not None
    assert blobs.get(record.snapshot_key) == blobs.get(whole.snapshot_key)
    assert record.activation.users_total == 60_000
    assert whole.platform_custom_audience_id is not None
    assert record.platform_custom_audience_id is not None
    assert record.upload is not None
    assert record.upload.total_rows == whole.user_count == 60_000 - 1_000
    members = platform.admin("GET", f"/audiences/{record.platform_custom_audience_id}/members")["members"]
    expected = platform.admin("GET", f"/audiences/{whole.platform_custom_audience_id}/members")["members"]
    assert members == expected
    assert sum(len(group["rows"]) for group in members) == 60_000 - 1_000


def test_the_activation_s_progress_counts_the_users_selected_so_far_while_a_list_is_read_in_chunks(
    blobs: MemoryBlobs, platform: SandboxPlatform
) -> None:
    # Given a list of 20,000 users read in chunks of 200 kB
    _, service, audience_id, worker = _read_whole_and_in_chunks(blobs, platform, 20_000, "Counted", 200_000)

    # When SelectUsers reads chunk after chunk, the activation's status read after each
    totals: list[int] = []
    outcome = "more"
    while outcome == "more":
        outcome = service.pipeline.run("select_users", ORG, audience_id, worker).outcome
        totals.append(service.activation_status(ORG, audience_id).progress.users_total)

    # Then usersTotal counts the users of the chunks read so far: more after each, all at the end
    assert len(totals) >= 5
    assert 0 < totals[0] < totals[-2] < 20_000
    assert totals == sorted(set(totals))
    assert totals[-1] == 20_000


def test_a_chunk_killed_midway_is_read_again_and_the_list_stays_whole(
    blobs: MemoryBlobs, platform: SandboxPlatform
) -> None:
    # Given a list read in chunks, whose third chunk's task dies as it stores its second part
    whole, service, audience_id, worker = _read_whole_and_in_chunks(
        blobs, platform, 20_000, "Killed", 200_000
    )
    run_steps(service, audience_id, worker, "select_users", "select_users")
    upload = blobs.upload

    def dies(key: str, path: Path, content_type: str = "application/octet-stream") -> None:
        if key.endswith("part-00001/chunk-00002.parquet"):
            raise SystemExit("killed")
        upload(key, path, content_type)

    blobs.upload = dies  # type: ignore[method-assign]
    with pytest.raises(SystemExit):
        service.pipeline.run("select_users", ORG, audience_id, worker)
    blobs.upload = upload  # type: ignore[method-assign]

    # When the task is retried and the steps carry on
    _run_while_more(
        service,
        audience_id,
        worker,
        "select_users",
        "normalise_and_hash",
        "create_custom_audience",
        "upload_batches",
    )

    # Then the snapshot and the users uploaded are the whole list's, each user once
    record = service.pipeline.audiences.get(ORG, audience_id)
    assert record is not None
    assert record.snapshot_key is not None
    assert whole.snapshot_key is not None
    assert blobs.get(record.snapshot_key) == blobs.get(whole.snapshot_key)
    members = platform.admin("GET", f"/audiences/{record.platform_custom_audience_id}/members")["members"]
    expected = platform.admin("GET", f"/audiences/{whole.platform_custom_audience_id}/members")["members"]
    assert members == expected
    assert sum(len(group["rows"]) for group in members) == 20_000 - 200


def test_a_bad_row_in_a_later_chunk_is_named_by_its_line_in_the_file(
    blobs: MemoryBlobs, platform: SandboxPlatform
) -> None:
    # Given a list read in chunks of a few hundred bytes whose line 169 has a score that is no number
    # (line numbers count the line breaks inside quoted names)
    lines = ["user_id,email,firstName,score"]
    lines += [f"u{i},u{i}@example.com,{'"Two\nlines"' if i % 10 == 0 else 'Ana'},0.5" for i in range(200)]
    text = "\n".join(lines) + "\n"
    bad_line = text[: text.index("u151,")].count("\n") + 1
    text = text.replace("u151,u151@example.com,Ana,0.5", "u151,u151@example.com,Ana,high")
    blobs.put(f"uploads/{ORG}/{UPLOAD_ID}.csv", text.encode(), "text/csv")
    request = CreateAudienceRequest(name="Bad", upload_id=UPLOAD_ID)
    service, audience_id, worker, _ = _started_in_chunks(blobs, platform, request, 300)

    # When SelectUsers reads chunk after chunk
    with pytest.raises(StepFailed) as raised:
        _run_while_more(service, audience_id, worker, "select_users")

    # Then the step fails naming the row's line in the whole file, never its value
    assert type(raised.value).__name__ == "validation_error"
    failure = service.activation_status(ORG, audience_id).error
    assert failure is not None
    assert f"line {bad_line}: score" in failure.message
    assert "high" not in failure.message
    assert bad_line == 169


def test_a_list_read_in_chunks_names_the_first_bad_row_the_whole_read_names_and_says_where_it_stopped(
    blobs: MemoryBlobs, platform: SandboxPlatform
) -> None:
    # Given a list with no bad row in its first chunks, two bad scores side by side further on and
    # another far later, read whole by one service and in chunks of a few hundred bytes by another
    lines = ["user_id,email,firstName,score"]
    lines += [f"u{i},u{i}@example.com,{'"Two\nlines"' if i % 10 == 0 else 'Ana'},0.5" for i in range(200)]
    text = "\n".join(lines) + "\n"
    for bad in ("u51", "u52", "u181"):
        text = text.replace(f"{bad},{bad}@example.com,Ana,0.5", f"{bad},{bad}@example.com,Ana,high")
    blobs.put(f"uploads/{ORG}/{UPLOAD_ID}.csv", text.encode(), "text/csv")
    request = CreateAudienceRequest(name="Bad", upload_id=UPLOAD_ID)

    # When it is read whole, and in chunks (SelectUsers reading chunk after chunk)
    whole, chunked, failure = _refused_whole_and_in_chunks(blobs, platform, request, 300)

    # Then both name the same first bad rows, in file order; the chunked read stops at the chunk
    # holding them and says the lines after it were not checked (it names no count it has not read)
    assert type(chunked).__name__ == "validation_error"
    line_of = {bad: text[: text.index(f"{bad},")].count("\n") + 1 for bad in ("u51", "u52", "u181")}
    first_two = f"line {line_of['u51']}: score: "
    assert whole.message.startswith(f"The uploaded CSV has invalid rows: {first_two}")
    assert failure.message.startswith(f"The uploaded CSV has invalid rows: {first_two}")
    assert f"line {line_of['u52']}: score" in failure.message
    assert f"line {line_of['u181']}: score" in whole.message
    stopped = re.search(r"\(up to line (\d+); the lines after it were not checked\)\.$", failure.message)
    assert stopped is not None
    assert line_of["u52"] <= int(stopped.group(1)) < line_of["u181"]
    assert "not checked" not in whole.message


def test_an_unbalanced_quote_in_a_list_read_in_chunks_fails_naming_its_line_and_what_to_do(
    blobs: MemoryBlobs, platform: SandboxPlatform
) -> None:
    # Given a list read in chunks of a few kilobytes, with literal quotes inside unquoted names (rows
    # the whole read takes as they are) and, on line 1,502, a quoted name that never closes, followed
    # by more than the longest record the engine reads
    lines = ["user_id,email,firstName"] + [f'u{i},u{i}@example.com,Jo"e' for i in range(1_500)]
    lines += ['u1500,u1500@example.com,"Ana'] + [f"u{i},u{i}@example.com,Ben" for i in range(1_501, 70_000)]
    text = "\n".join(lines) + "\n"
    blobs.put(f"uploads/{ORG}/{UPLOAD_ID}.csv", text.encode(), "text/csv")
    service, audience_id, worker, _ = _started_in_chunks(
        blobs, platform, CreateAudienceRequest(name="Unbalanced", upload_id=UPLOAD_ID), 5_000
    )
    outcomes: list[str] = []

    def select_every_chunk() -> None:
        while not outcomes or outcomes[-1] == "more":
            outcomes.append(service.pipeline.run("select_users", ORG, audience_id, worker).outcome)

    # When SelectUsers reads chunk after chunk
    with pytest.raises(StepFailed) as raised:
        select_every_chunk()

    # Then the chunks before it were read (a literal quote cut nothing short), and the step fails
    # naming the quote's line and byte, the reason and the remedy, never a value, as the whole read does
    assert type(raised.value).__name__ == "validation_error"
    assert len(outcomes) >= 8
    failure = service.activation_status(ORG, audience_id).error
    assert failure is not None
    byte = text.index('"Ana') + 1
    assert f"unbalanced quote at line 1502 (byte {byte:,})" in failure.message
    assert "Ana" not in failure.message
    assert failure.remedy is not None
    assert "Fix the quoting on that line" in failure.remedy
    assert "upload the file again" in failure.remedy
    # and the same list read whole is refused with the same message and remedy
    with pytest.raises(ValidationFailed) as whole:
        _service_reading(blobs, platform, 1 << 30).create(
            ORG, CreateAudienceRequest(name="Whole", upload_id=UPLOAD_ID)
        )
    assert (whole.value.message, whole.value.remedy) == (failure.message, failure.remedy)


_TEXT_AFTER = "text follows the quote that closes a quoted field"
_AFTER_SPACE = "a field starts with a space and then a quote"


@pytest.mark.parametrize(
    ("row", "named", "reason", "fix"),
    [
        # the engine read abc@example.co
        ('u1500,"ab"c@example.com,Ana', 1, _TEXT_AFTER, "quote the whole field and double each quote"),
        # the engine read " Be"
        ('u1500,a@example.com," "Ben', 1, _TEXT_AFTER, "quote the whole field and double each quote"),
        # the engine read one record, Python two
        ('u1500,a@example.com, "Al\nx"', 0, _AFTER_SPACE, "remove the space before the quote"),
        # the engine read on into the next line
        ('u1500,a@example.com,"ab"c"d', 1, _TEXT_AFTER, "quote the whole field and double each quote"),
    ],
)
def test_a_quote_csv_readers_read_differently_fails_naming_its_line_read_whole_or_in_chunks(
    blobs: MemoryBlobs, platform: SandboxPlatform, row: str, named: int, reason: str, fix: str
) -> None:
    # Given a list with literal quotes inside unquoted names (rows both readers take as they are) and,
    # on line 1,502, a quote the engine reads otherwise than Python's csv module
    lines = ["user_id,email,firstName"] + [f'u{i},u{i}@example.com,Jo"e' for i in range(1_500)]
    lines += [row] + [f"u{i},u{i}@example.com,Ben" for i in range(1_501, 1_600)]
    text = "\n".join(lines) + "\n"
    blobs.put(f"uploads/{ORG}/{UPLOAD_ID}.csv", text.encode(), "text/csv")
    request = CreateAudienceRequest(name="Quoted", upload_id=UPLOAD_ID)

    # When it is read whole, and in chunks of a few kilobytes
    whole, chunked, failure = _refused_whole_and_in_chunks(blobs, platform, request, 5_000)

    # Then both refuse the list naming the quote's line and byte (the closing quote text follows, or
    # the quote after the space), the reason and the remedy (never a value), instead of uploading the
    # engine's reading of the row
    assert type(chunked).__name__ == "validation_error"
    byte = text.index(row) + [at for at, c in enumerate(row) if c == '"'][named] + 1
    assert (
        f"a quote at line 1502 (byte {byte:,}) that CSV readers read differently: {reason}." in whole.message
    )
    assert "Ben" not in whole.message
    assert whole.remedy is not None
    assert whole.remedy.startswith(f"Fix the quoting on that line: {fix}")
    assert (failure.message, failure.remedy) == (whole.message, whole.remedy)


@pytest.mark.parametrize("chunk_bytes", [3_000, 4_099, 7_919])
def test_a_record_longer_than_the_engine_reads_fails_a_list_read_in_chunks_as_it_fails_the_whole_read(
    blobs: MemoryBlobs, platform: SandboxPlatform, chunk_bytes: int
) -> None:
    # Given a list whose line 1,002 opens a quoted name that closes only after more than the engine
    # reads (the engine refuses the list read whole), read in chunks cut at a few places
    lines = ["user_id,email,firstName"] + [f"u{i},u{i}@example.com,Ben" for i in range(1_000)]
    lines += ['u1000,u1000@example.com,"Ana' + "\n" * (RECORD_BYTES + 10) + 'x"']
    lines += [f"u{i},u{i}@example.com,Ben" for i in range(1_001, 1_100)]
    text = "\n".join(lines) + "\n"
    blobs.put(f"uploads/{ORG}/{UPLOAD_ID}.csv", text.encode(), "text/csv")
    request = CreateAudienceRequest(name="Long", upload_id=UPLOAD_ID)

    # When it is read whole, and in chunks (SelectUsers reading chunk after chunk)
    whole, chunked, failure = _refused_whole_and_in_chunks(blobs, platform, request, chunk_bytes)

    # Then both name the quote that opens the field, by line and byte, with the same remedy
    assert type(chunked).__name__ == "validation_error"
    byte = text.index('"Ana') + 1
    assert f"unbalanced quote at line 1002 (byte {byte:,})" in whole.message
    assert (failure.message, failure.remedy) == (whole.message, whole.remedy)


def test_a_field_over_the_csv_module_s_limit_fails_naming_its_line_read_whole_or_in_chunks(
    blobs: MemoryBlobs, platform: SandboxPlatform
) -> None:
    # Given a list whose line 53 opens a quoted name of 200 lines of 1,000 characters (a record the
    # engine reads, a field over Python's csv limit of 131,072) and which has a row without user_id
    # (so the Python path checks its rows)
    lines = ["user_id,email,firstName"] + [f"u{i},u{i}@example.com,Ben" for i in range(50)]
    lines += [",nobody@example.com,Ben", 'u50,u50@example.com,"' + "\n".join(["a" * 1_000] * 200) + '"']
    lines += [f"u{i},u{i}@example.com,Ben" for i in range(51, 100)]
    blobs.put(f"uploads/{ORG}/{UPLOAD_ID}.csv", ("\n".join(lines) + "\n").encode(), "text/csv")
    request = CreateAudienceRequest(name="Wide", upload_id=UPLOAD_ID)

    # When it is read whole, and in chunks
    whole, chunked, failure = _refused_whole_and_in_chunks(blobs, platform, request, 1_000)

    # Then both fail as a validation error naming the line where the csv module stopped, never a crash
    assert type(chunked).__name__ == "validation_error"
    # (line 183: the 131st line of the name, where the field passed 131,072 characters)
    assert whole.message == (
        "The uploaded CSV cannot be read as CSV at line 183: field larger than field limit (131072)."
    )
    assert (failure.message, failure.remedy) == (whole.message, whole.remedy)


def test_a_retried_attempt_hashes_the_parts_of_a_list_an_earlier_attempt_read_in_chunks(
    blobs: MemoryBlobs, platform: SandboxPlatform
) -> None:
    # Given a list read in chunks by an attempt that then failed (its task timed out after SelectUsers)
    blobs.put(f"uploads/{ORG}/{UPLOAD_ID}.csv", _large_list(20_000), "text/csv")
    request = CreateAudienceRequest(name="Retried", upload_id=UPLOAD_ID)
    service, audience_id, first, executions = _started_in_chunks(blobs, platform, request, 200_000)
    _run_while_more(service, audience_id, first, "select_users")
    service.pipeline.record_failure(ORG, audience_id, first, "Sandbox.Timedout", "")

    # When the marketer retries it and the new attempt runs its steps
    service.retry_activation(ORG, audience_id, executions)
    second = execution_worker(executions.started[-1][0])
    _run_while_more(
        service,
        audience_id,
        second,
        *("claim", "select_users", "normalise_and_hash", "create_custom_audience", "upload_batches"),
    )

    # Then it hashes the parts the first attempt stored, chunk files and all: everyone once
    record = service.pipeline.audiences.get(ORG, audience_id)
    assert record is not None
    assert record.activation is not None
    assert record.activation.attempt == 2
    assert record.activation.users_chunks > 1
    members = platform.admin("GET", f"/audiences/{record.platform_custom_audience_id}/members")["members"]
    assert sum(len(group["rows"]) for group in members) == 20_000 - 200
