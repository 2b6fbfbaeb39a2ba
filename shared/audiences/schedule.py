"""When a segment audience's next sync is due (its frequency, from its last run or its creation)."""

from __future__ import annotations

from datetime import datetime, timedelta

from shared.clock import iso
from shared.errors import Conflict
from shared.records.audiences import AudienceRecord, AudienceSync, SyncFrequency, SyncRun

SYNC_INTERVALS: dict[SyncFrequency, timedelta] = {"daily": timedelta(days=1), "weekly": timedelta(days=7)}
# The platform drops a replace session after 90 minutes (docs/platform-notes.md §3.6): a sync run
# older than this has stopped for good (a lost execution).
REPLACE_WINDOW = timedelta(minutes=85)


def sync_of(record: AudienceRecord) -> AudienceSync | None:
    """The audience's sync settings (the defaults when never set); None for a list audience, which
    has no segment to re-score."""
    if record.segment is None:
        return None
    return record.sync or AudienceSync()


def next_sync_at(record: AudienceRecord) -> datetime | None:
    """When the next scheduled sync is due; None when the audience does not sync."""
    sync = sync_of(record)
    if sync is None or sync.frequency == "off":
        return None
    if sync.next_sync_at is not None:
        return sync.next_sync_at
    return record.created_at + SYNC_INTERVALS[sync.frequency]


def running_sync(record: AudienceRecord, now: datetime) -> SyncRun | None:
    """The audience's sync run in progress at ``now``; None when there is none, or when the recorded
    one started longer than a replace session ago (lost: the next sync closes it)."""
    current = record.sync.current if record.sync is not None else None
    if current is None or now - (current.replace_started_at or current.started_at) > REPLACE_WINDOW:
        return None
    return current


def running_refresh(record: AudienceRecord, now: datetime) -> datetime | None:
    """When the refresh with a list of users replacing the audience's members at ``now`` started;
    None when there is none, or when it started longer than a replace session ago (lost)."""
    started = record.refresh_started_at
    if started is None or now - started > REPLACE_WINDOW:
        return None
    return started


def sync_running(run: SyncRun, remedy: str) -> Conflict:
    """409 for a change that would run beside the sync run ``run`` (two replace sessions at once: the
    platform keeps whichever ends last), naming the run and what started it; ``remedy`` says what to do."""
    started_by = "Sync now" if run.trigger == "now" else "the schedule"
    return Conflict(
        f"A sync of this audience is already running (started {iso(run.started_at)} by {started_by}, "
        f"run {run.run_id}).",
        remedy=remedy,
    )


def refresh_running(started: datetime, remedy: str) -> Conflict:
    """409 for a change that would run beside a refresh with a list of users started at ``started``."""
    return Conflict(
        f"A refresh of this audience with a list of users is replacing its members (started {iso(started)}).",
        remedy=remedy,
    )
