"""When a segment audience's next sync is due (its frequency, from its last run or its creation)."""

from __future__ import annotations

from datetime import datetime, timedelta

from shared.records.audiences import AudienceRecord, AudienceSync, SyncFrequency

SYNC_INTERVALS: dict[SyncFrequency, timedelta] = {"daily": timedelta(days=1), "weekly": timedelta(days=7)}


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
