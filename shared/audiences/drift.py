"""An audience or advert deleted on the platform's side (in its ads manager): how the service
recognises and records it, so that the audience is listed as deleted on the platform rather than
active, refresh and sync say why they cannot run, and deleting it in the service still succeeds; and
the scheduled look for such drift (``check_drift``), so the list says so before the marketer meets it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Final, Protocol

from pydantic import BaseModel

from shared.errors import Conflict, ServiceError
from shared.observability import logger
from shared.platform.audiences import list_audience_ids
from shared.platform.campaigns import read_status
from shared.platform.client import GraphClient
from shared.platform.errors import PlatformError, object_gone
from shared.records.audiences import AudienceRecord, FailureRecord, PublicationRecord
from shared.records.connections import Connection

DELETED_ON_PLATFORM: Final = "deleted_on_platform"
_REMEDY = (
    "Remove it from the list (Delete), or create it again from its snapshot: download its CSV and "
    "create a new audience from that file."
)


def gone_on_platform(error: Exception) -> bool:
    """Whether ``error`` says the audience no longer exists on the platform."""
    return isinstance(error, PlatformError) and object_gone(error)


def mark_deleted_on_platform(record: AudienceRecord) -> None:
    """Record that the platform no longer has the audience: its status and the failure shown with it."""
    record.status = DELETED_ON_PLATFORM
    record.failure = FailureRecord(
        code="platform_audience_deleted",
        message="This audience was deleted on the platform (in its ads manager); nothing can be sent to it.",
        remedy=_REMEDY,
    )


def deleted_on_platform(record: AudienceRecord) -> Conflict:
    """The answer to a refresh or sync of an audience the platform no longer has."""
    return Conflict(
        f"Audience {record.audience_id} was deleted on the platform (in its ads manager), so its members "
        "cannot be replaced.",
        remedy=_REMEDY,
    )


# --- The scheduled look for drift ----------------------------------------------------------------

ADVERT_DELETED_REMEDY = (
    "Delete the advert here: what is left of it on the platform is removed. Then publish a new advert "
    "for the audience if you want one."
)
# The advert's objects whose deletion in the ads manager stops it delivering.
_DELIVERING_KINDS = frozenset({"campaign", "adset", "ad"})


class DriftStore(Protocol):
    """The organization's audiences (``shared.repositories.audiences.DynamoAudienceStore``)."""

    def list_for_org(self, org_id: str) -> list[AudienceRecord]: ...
    def save_unchanged(self, record: AudienceRecord, seen: datetime) -> bool:
        """Write ``record`` whole if its stored ``updated_at`` is still ``seen``; False when another
        writer (an activation, a sync, a delete) changed it meanwhile."""
        ...


class PlatformReader(Protocol):
    """The organization's Graph client (``shared.connections.lifecycle.ConnectionService``)."""

    def client_for(self, org_id: str) -> tuple[Connection, GraphClient]: ...
    def record_usage(self, org_id: str, graph: GraphClient) -> None: ...


class DriftFound(BaseModel):
    """What one organization's drift check found and recorded."""

    audiences_checked: int = 0
    audiences_deleted: int = 0
    lookalikes_deleted: int = 0
    adverts_checked: int = 0
    adverts_deleted: int = 0


def check_drift(
    org_id: str, audiences: DriftStore, platform: PlatformReader, clock: Callable[[], datetime]
) -> DriftFound:
    """Compare ``org_id``'s active audiences and published adverts with what the platform has now,
    and record what was deleted on the platform's side (in its ads manager), so the list shows it
    before the marketer's next refresh, sync or delete meets it (issue 25, item 2):

    - an active audience whose platform audience is no longer on its ad account (one paged listing
      of the account's audiences, not a read per audience) becomes ``deleted_on_platform``; one whose
      lookalike alone is gone keeps its status, and the lookalike becomes ``deleted_on_platform``;
    - a paused or active advert whose campaign, ad set or ad the platform reports ``DELETED`` or no
      longer knows becomes ``deleted_on_platform``, with what to do (delete it here).

    A record another writer changed since it was read is left for the next run (never overwritten).
    Nothing is called on the platform for an organization with nothing to check. Raises the platform's
    errors (the caller keeps going with the next organization)."""
    found = DriftFound()
    records = audiences.list_for_org(org_id)
    listed = [r for r in records if r.status == "active" and r.platform_custom_audience_id]
    published = [
        r for r in records if r.publication is not None and r.publication.state in ("paused", "active")
    ]
    if not listed and not published:
        return found
    _, graph = platform.client_for(org_id)
    try:
        on_accounts: dict[str, frozenset[str]] = {}
        for record in listed:
            account = record.ad_account_id
            if account not in on_accounts:
                on_accounts[account] = list_audience_ids(graph, account)
            found.audiences_checked += 1
            seen = record.updated_at
            lookalike = record.lookalike
            if record.platform_custom_audience_id not in on_accounts[account]:
                mark_deleted_on_platform(record)
                record.updated_at = clock()
                found.audiences_deleted += audiences.save_unchanged(record, seen)
            elif (
                lookalike is not None
                and lookalike.status == "active"
                and lookalike.platform_audience_id not in on_accounts[account]
            ):
                # The seed is there, its lookalike is not: prospecting adverts can no longer use it
                lookalike.status = DELETED_ON_PLATFORM
                record.updated_at = clock()
                found.lookalikes_deleted += audiences.save_unchanged(record, seen)
        for record in published:
            publication = record.publication
            assert publication is not None
            found.adverts_checked += 1
            deleted = [
                o.kind
                for o in publication.objects
                if o.kind in _DELIVERING_KINDS
                and o.state == "created"
                and o.platform_id
                and read_status(graph, o.platform_id) in (None, "DELETED")
            ]
            if deleted:
                seen = record.updated_at
                mark_advert_deleted_on_platform(publication, deleted)
                record.updated_at = clock()
                found.adverts_deleted += audiences.save_unchanged(record, seen)
    finally:
        platform.record_usage(org_id, graph)
    if found.audiences_deleted or found.adverts_deleted:
        logger.info("drift found on the platform", extra={"org_id": org_id, **found.model_dump()})
    return found


def mark_advert_deleted_on_platform(publication: PublicationRecord, kinds: Sequence[str]) -> None:
    """Record that the advert's ``kinds`` (campaign, adset, ad) were deleted on the platform: it no
    longer delivers, and deleting it in the service removes what is left."""
    names = {"campaign": "campaign", "adset": "ad set", "ad": "ad"}
    publication.state = DELETED_ON_PLATFORM
    publication.failure = FailureRecord(
        code="platform_advert_deleted",
        message=f"This advert's {' and '.join(names[k] for k in kinds)} were deleted on the platform (in its "
        "ads manager); it no longer delivers.",
        remedy=ADVERT_DELETED_REMEDY,
    )


class ActiveConnections(Protocol):
    def active(self) -> list[Connection]: ...


class DriftSummary(BaseModel):
    """The scheduled drift check over every connected organization."""

    organizations: int = 0
    audiences_deleted: int = 0
    lookalikes_deleted: int = 0
    adverts_deleted: int = 0
    failed: int = 0


def check_connected_drift(
    connections: ActiveConnections,
    audiences: DriftStore,
    platform: PlatformReader,
    clock: Callable[[], datetime],
) -> DriftSummary:
    """``check_drift`` for every organization with an active connection whose token is not known to
    be invalid (its calls would be refused: the token check already told the marketer). One
    organization's failure (the platform throttling, down) is counted and logged, never stops the
    others; it is looked at again on the next run."""
    summary = DriftSummary()
    for connection in connections.active():
        if connection.token_health == "invalid":
            continue
        summary.organizations += 1
        try:
            found = check_drift(connection.org_id, audiences, platform, clock)
        except ServiceError as exc:
            summary.failed += 1
            logger.warning(
                "drift check failed", extra={"org_id": connection.org_id, "error": type(exc).__name__}
            )
            continue
        summary.audiences_deleted += found.audiences_deleted
        summary.lookalikes_deleted += found.lookalikes_deleted
        summary.adverts_deleted += found.adverts_deleted
    logger.info("drift check finished", extra=summary.model_dump())
    return summary
