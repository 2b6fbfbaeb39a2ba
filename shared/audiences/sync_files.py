"""The files an audience sync run stores for itself: its scored members and, for a value-based seed,
their values (with a holdout, its held-out users), under keys named after the run (``shared.audiences.sync``).

Apart from the sync so that the audience service, which deletes a running sync's files with the
audience, does not import the sync itself (its pydantic models and the rest are not the delete's to
load at a cold start)."""

from __future__ import annotations

from shared.records.audiences import AudienceRecord, SyncRun


def members_key(org_id: str, audience_id: str, run_id: str) -> str:
    """Where sync run ``run_id`` of the audience stores its members: its own key, so that a step of an
    older run that comes back late writes its own file, never this one's."""
    return f"sources/{org_id}/{audience_id}.sync.{run_id}.json"


def values_key(members_key: str) -> str:
    """Where a value-based seed's sync keeps its members' values, next to the members."""
    return members_key.removesuffix(".json") + ".values.json"


def held_out_key(members_key: str) -> str:
    """Where the sync of an audience with a holdout keeps the segment's held-out users, next to the
    members: never uploaded, they are written to the CSV snapshot (group ``holdout``) when it ends."""
    return members_key.removesuffix(".json") + ".holdout.json"


def run_files(record: AudienceRecord, run: SyncRun) -> list[str]:
    """The files sync run ``run`` of ``record`` stored: its members and, for a value-based seed, their
    values, for an audience with a holdout its held-out users. Its own: no other run reads them, and
    they go when it ends or the audience is deleted."""
    if not run.source_key:
        return []
    return [
        run.source_key,
        *([values_key(run.source_key)] if record.value_seed is not None else []),
        *([held_out_key(run.source_key)] if record.holdout is not None else []),
    ]


def run_keys(org_id: str, audience_id: str, run_id: str) -> list[str]:
    """Every key sync run ``run_id`` of the audience may have stored (its members, their values, its
    held-out users), for a step that finds the audience deleted: no record is left to say which the
    run stored."""
    members = members_key(org_id, audience_id, run_id)
    return [members, values_key(members), held_out_key(members)]
