"""The stranded-upload sweeper's choices: resume, leave to a running execution, or fail with the reason.

Its collaborators are in-memory fakes of its protocols; the end-to-end runs (a killed create resumed
through the state machine, the sandbox's members compared) are in
``tests/integration/test_stranded_uploads.py``.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from shared.audiences.stranded import StrandedUploadSweeper, SweepPolicy
from shared.records.audiences import ActivationRecord, AudienceRecord, RecoveryRecord, UploadProgress
from shared.records.connections import Connection

NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)
ORG = "org-1"


class Store:
    def __init__(self, records: list[AudienceRecord]) -> None:
        self.records = {r.audience_id: r for r in records}

    def idle_in_progress(self, before: datetime) -> list[AudienceRecord]:
        return [
            r.model_copy(deep=True)
            for r in self.records.values()
            if r.status in ("creating", "uploading") and r.updated_at < before
        ]

    def mark_recovery(self, record: AudienceRecord) -> bool:
        self.records[record.audience_id].recovery = record.recovery
        self.records[record.audience_id].updated_at = record.updated_at
        return True

    def put(self, record: AudienceRecord) -> None:
        self.records[record.audience_id] = record.model_copy(deep=True)


class Connections:
    def __init__(self, status: str = "active") -> None:
        self.status = status

    def get(self, org_id: str) -> Connection | None:
        return Connection(org_id=org_id, status=self.status, ad_account_id="act_1")  # type: ignore[arg-type]


class Blobs:
    def exists(self, key: str) -> bool:
        return True


class Executions:
    def __init__(self, running: set[str] | None = None) -> None:
        self.names = running or set()

    def running(self, name: str) -> bool:
        return name in self.names


class Resume:
    """Starts a new attempt (its number one more), as ``AudienceService.resume_stranded`` does."""

    def __init__(self) -> None:
        self.resumed: list[str] = []

    def __call__(self, record: AudienceRecord) -> AudienceRecord:
        self.resumed.append(record.audience_id)
        attempt = (record.activation.attempt if record.activation else 0) + 1
        return record.model_copy(
            update={"activation": ActivationRecord(attempt=attempt, started_at=NOW, updated_at=NOW)}
        )


def stranded(audience_id: str = "a1", *, execution: str | None = None, resumes: int = 0) -> AudienceRecord:
    """An audience uploading batch 2 of 3 since two hours ago."""
    then = NOW - timedelta(hours=2)
    return AudienceRecord(
        org_id=ORG,
        audience_id=audience_id,
        name="Likely buyers",
        objective="retargeting",
        status="uploading",
        ad_account_id="act_1",
        platform_custom_audience_id="9001",
        upload=UploadProgress(
            session_id=7, total_rows=25_000, batch_size=10_000, batches_total=3, batches_done=1
        ),
        source_key=f"sources/{ORG}/{audience_id}.json",
        created_at=then,
        updated_at=then,
        activation=ActivationRecord(
            attempt=1, execution_name=execution, step="upload_batches", started_at=then, updated_at=then
        ),
        recovery=RecoveryRecord(attempts=resumes, last_attempt_at=then, reason="earlier")
        if resumes
        else None,
    )


def sweeper(
    store: Store, *, connection: str = "active", running: set[str] | None = None
) -> tuple[StrandedUploadSweeper, Resume]:
    resume = Resume()
    return (
        StrandedUploadSweeper(
            audiences=store,
            connections=Connections(connection),
            blobs=Blobs(),
            executions=Executions(running),
            resume=resume,
            clock=lambda: NOW,
            policy=SweepPolicy(stranded_after=timedelta(minutes=60), max_resumes=3),
        ),
        resume,
    )


def test_a_stranded_upload_is_resumed_and_the_resume_recorded() -> None:
    # Given
    store = Store([stranded()])
    sweep, resume = sweeper(store)
    # When
    summary = sweep.sweep()
    # Then
    assert (summary.stranded, summary.resumed, summary.failed) == (1, 1, 0)
    assert resume.resumed == ["a1"]
    recovery = store.records["a1"].recovery
    assert recovery is not None
    assert recovery.attempts == 1
    assert "stopped after batch 1 of 3" in recovery.reason
    assert store.records["a1"].updated_at == NOW


def test_an_audience_whose_execution_still_runs_is_left_to_it() -> None:
    # Given: idle for two hours, but its execution is in a long Wait
    store = Store([stranded(execution="a1-1")])
    sweep, resume = sweeper(store, running={"a1-1"})
    # When
    summary = sweep.sweep()
    # Then
    assert (summary.running, summary.resumed, summary.failed) == (1, 0, 0)
    assert resume.resumed == []
    assert store.records["a1"].status == "uploading"


@pytest.mark.parametrize(
    ("connection", "resumes", "reason", "remedy"),
    [
        (
            "inactive",
            0,
            "the ad account is disconnected",
            "Reconnect the ad account, then create the audience",
        ),
        ("active", 3, "resumed 3 times without finishing", "Create the audience again"),
    ],
)
def test_an_upload_that_cannot_resume_is_failed_with_the_reason_and_remedy(
    connection: str, resumes: int, reason: str, remedy: str
) -> None:
    # Given
    store = Store([stranded(resumes=resumes)])
    sweep, resume = sweeper(store, connection=connection)
    # When
    summary = sweep.sweep()
    # Then
    assert (summary.failed, summary.resumed) == (1, 0)
    assert resume.resumed == []
    failed = store.records["a1"]
    assert failed.status == "failed"
    assert failed.failure is not None
    assert failed.failure.code == "upload_stranded"
    assert reason in failed.failure.message
    assert "stopped after batch 1 of 3" in failed.failure.message
    assert failed.failure.remedy is not None
    assert failed.failure.remedy.startswith(remedy)
    assert failed.failure.step == "upload_batches"
    assert failed.activation is not None
    assert failed.activation.state == "failed"
