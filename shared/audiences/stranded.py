"""The stranded-upload sweeper: audiences a worker left ``creating`` or ``uploading`` are resumed or
failed, with the reason (issue 12, item 3).

A synchronous create without an ``Idempotency-Key`` that dies mid-upload (the function reaches its
timeout, the container is lost) leaves its record ``uploading`` and nobody to finish it: the caller got
a gateway error and has no key to retry with. Everything needed to finish is stored before the first
batch (the users, the upload session and the last acknowledged batch), so the sweeper hands such a
record to the activation state machine as a new attempt (``AudienceService.resume_stranded``), which
continues after the last acknowledged batch in the same session: nobody is lost and nobody is sent
twice. An audience whose execution is still running (a long throttle Wait) is left to it, and so is
one whose worker still holds its lease.

A record is stranded when nothing has written it for ``stranded_after`` (every acknowledged batch
does, and a synchronous request lives 29 s). It is failed instead, with the reason and the remedy,
when it cannot be finished: the ad account is disconnected, its stored users are gone, or
``max_resumes`` resumes did not finish it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from pydantic import BaseModel

from shared.clock import Clock, iso
from shared.errors import RecordChanged
from shared.observability import logger
from shared.records.audiences import AudienceRecord, FailureRecord, RecoveryRecord
from shared.records.connections import Connection

STRANDED_CODE = "upload_stranded"


class StrandedStore(Protocol):
    def idle_in_progress(self, before: datetime) -> list[AudienceRecord]: ...
    def mark_recovery(self, record: AudienceRecord) -> bool: ...
    def put(self, record: AudienceRecord, apply: Callable[[AudienceRecord], None] | None = ...) -> None:
        """Write over the revision read; on a conflict ``apply`` (this writer's change) to the record
        as stored and write that, or ``RecordChanged`` without it."""
        ...


class ConnectionReader(Protocol):
    def get(self, org_id: str) -> Connection | None: ...


class SourceBlobs(Protocol):
    def exists(self, key: str) -> bool: ...


class Executions(Protocol):
    """The activation state machine's executions
    (``shared.repositories.activations.StepFunctionsStarter``)."""

    def running(self, name: str) -> bool: ...


class ResumeActivation(Protocol):
    """Starts a new activation attempt of ``record`` unless one is running
    (``shared.audiences.service.AudienceService.resume_stranded``); returns the record as it is then."""

    def __call__(self, record: AudienceRecord) -> AudienceRecord: ...


@dataclass(frozen=True)
class SweepPolicy:
    stranded_after: timedelta = timedelta(minutes=60)
    max_resumes: int = 3


class SweepSummary(BaseModel):
    stranded: int = 0
    resumed: int = 0
    failed: int = 0
    # Idle, but its execution is still running (a long Wait): left to it.
    running: int = 0


@dataclass
class StrandedUploadSweeper:
    audiences: StrandedStore
    connections: ConnectionReader
    blobs: SourceBlobs
    executions: Executions
    resume: ResumeActivation
    clock: Clock
    policy: SweepPolicy = SweepPolicy()

    def sweep(self) -> SweepSummary:
        """Resume or fail every audience idle in ``creating``/``uploading`` for ``stranded_after``."""
        now = self.clock()
        summary = SweepSummary()
        for record in self.audiences.idle_in_progress(now - self.policy.stranded_after):
            summary.stranded += 1
            activation = record.activation
            if (
                activation is not None
                and activation.execution_name
                and self.executions.running(activation.execution_name)
            ):
                summary.running += 1
                continue
            where = _where_it_stopped(record)
            blocked = self._blocked(record)
            if blocked is not None:
                self._fail(record, f"{where} {blocked[0]}", blocked[1], now)
                summary.failed += 1
            elif self._resume(record, where, now):
                summary.resumed += 1
            else:
                summary.running += 1
        logger.info("stranded uploads swept", extra=summary.model_dump())
        return summary

    def _blocked(self, record: AudienceRecord) -> tuple[str, str] | None:
        """Why ``record`` cannot be resumed (message, remedy), or None when it can."""
        retry = _retry_remedy(record)
        connection = self.connections.get(record.org_id)
        if connection is None or connection.status != "active":
            return (
                "It cannot resume: the ad account is disconnected.",
                f"Reconnect the ad account, then {retry}",
            )
        if connection.ad_account_id != record.ad_account_id:
            return (
                "It cannot resume: the connection is now to another ad account.",
                f"Reconnect the ad account {record.ad_account_id}, or {retry}",
            )
        if not record.source_key or not self.blobs.exists(record.source_key):
            return "It cannot resume: its stored users are gone.", "Create the audience again."
        attempts = record.recovery.attempts if record.recovery else 0
        if attempts >= self.policy.max_resumes:
            return f"It was resumed {attempts} times without finishing.", retry[0].upper() + retry[1:]
        return None

    def _resume(self, record: AudienceRecord, where: str, now: datetime) -> bool:
        """Record the resume, then start the new attempt; False when the audience moved meanwhile or
        a worker still holds it (nothing was started)."""
        attempt = (record.recovery.attempts if record.recovery else 0) + 1
        record.recovery = RecoveryRecord(
            attempts=attempt,
            last_attempt_at=now,
            reason=f"{where} Resumed by the stranded-upload sweeper (resume {attempt}).",
        )
        record.updated_at = now
        # Written first, so the attempt's own writes keep it; it also moves the record out of the
        # sweep's window while the attempt runs.
        if not self.audiences.mark_recovery(record):
            return False
        before = record.activation.attempt if record.activation else 0
        resumed = self.resume(record)
        started = resumed.activation is not None and resumed.activation.attempt != before
        logger.info(
            "stranded upload resumed" if started else "stranded upload still held by its worker",
            extra={"audience_id": record.audience_id, "resume": attempt},
        )
        return started

    def _fail(self, record: AudienceRecord, message: str, remedy: str, now: datetime) -> None:
        record.status = "failed"
        record.failure = FailureRecord(code=STRANDED_CODE, message=message, remedy=remedy)
        if record.activation is not None:
            record.failure = record.failure.model_copy(update={"step": record.activation.step})
            record.activation.state = "failed"
            record.activation.finished_at = now
            record.activation.updated_at = now
        record.lease = None
        record.updated_at = now
        try:
            # Without a change to re-apply: written only over what the sweep read.
            self.audiences.put(record)
        except RecordChanged:
            # A worker (or a retry) wrote it meanwhile: it is not stranded; the next sweep looks again.
            logger.info("stranded upload moved meanwhile", extra={"audience_id": record.audience_id})
            return
        logger.info("stranded upload failed", extra={"audience_id": record.audience_id})


def _where_it_stopped(record: AudienceRecord) -> str:
    upload = record.upload
    since = iso(record.updated_at)
    if upload is None or record.platform_custom_audience_id is None:
        return f"The audience stopped before its upload began, and nothing has happened since {since}."
    return (
        f"The upload stopped after batch {upload.batches_done} of {upload.batches_total}, and nothing "
        f"has happened since {since}."
    )


def _retry_remedy(record: AudienceRecord) -> str:
    if record.idempotency_key:
        return (
            "retry the request with the same Idempotency-Key: it continues after the last acknowledged batch."
        )
    return "create the audience again (delete this one first so the platform does not keep both)."
