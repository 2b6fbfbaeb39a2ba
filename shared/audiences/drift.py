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
from shared.platform.accounts import list_pixels, list_promotable_pages
from shared.platform.audiences import list_audience_names, lookalike_name, read_audience_node
from shared.platform.campaigns import read_object
from shared.platform.client import GraphClient
from shared.platform.errors import PlatformError, object_gone
from shared.records.audiences import (
    AudienceRecord,
    FailureRecord,
    PlatformChange,
    PlatformObjectKind,
    PublicationRecord,
)
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
    def save_unchanged(self, record: AudienceRecord) -> bool:
        """Write ``record`` whole if it is still at the revision it was read at (``revision``: every
        write moves it, ``updated_at`` has whole seconds only); False when another writer (an
        activation, a sync, a schedule change, a delete) changed it meanwhile: the next check sees it
        again."""
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
    # Audiences whose recorded platform changes (renamed, paused, a budget, a pixel or Page no longer
    # seen) differ from what was recorded before, and were written.
    audiences_changed: int = 0


def check_drift(
    org_id: str, audiences: DriftStore, platform: PlatformReader, clock: Callable[[], datetime]
) -> DriftFound:
    """Compare ``org_id``'s active audiences and published adverts with what the platform has now,
    and record what was deleted or changed on the platform's side (in its ads manager, or its business
    settings), so the list shows it before the marketer's next refresh, sync or delete meets it
    (issue 25, item 2):

    - an active audience whose platform audience is no longer on its ad account (one paged listing
      of the account's audiences, not a read per audience) becomes ``deleted_on_platform``; one whose
      lookalike alone is gone keeps its status, and the lookalike becomes ``deleted_on_platform``;
    - a paused or active advert whose campaign, ad set or ad the platform reports ``DELETED`` or no
      longer knows becomes ``deleted_on_platform``, with what to do (delete it here);
    - what was changed there is recorded in ``platform_changes``: an audience or lookalike renamed
      (from the same listing), a campaign, ad set or ad renamed, paused or activated, a budget changed
      (one read of each), and the advert's pixel or Page the ad account no longer has (one listing of
      each per ad account). The service keeps the platform's values and never writes them back.

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
        names: dict[str, dict[str, str]] = {}
        assets: dict[str, tuple[frozenset[str], frozenset[str]]] = {}
        for record in listed:
            account = record.ad_account_id
            if account not in names:
                names[account] = list_audience_names(graph, account)
            found.audiences_checked += 1
            lookalike = record.lookalike
            if record.platform_custom_audience_id not in names[account]:
                mark_deleted_on_platform(record)
                record.updated_at = clock()
                found.audiences_deleted += audiences.save_unchanged(record)
            elif (
                lookalike is not None
                and lookalike.status == "active"
                and lookalike.platform_audience_id not in names[account]
            ):
                # The seed is there, its lookalike is not: prospecting adverts can no longer use it
                lookalike.status = DELETED_ON_PLATFORM
                record.updated_at = clock()
                found.lookalikes_deleted += audiences.save_unchanged(record)
        published_ids = frozenset(r.audience_id for r in published)
        for record in records:
            if record.status != "active" and record.audience_id not in published_ids:
                continue
            now = clock()
            changes = audience_changes(record, names.get(record.ad_account_id, {}), now)
            publication = record.publication
            if record.audience_id in published_ids and publication is not None:
                found.adverts_checked += 1
                account = publication.ad_account_id
                if account not in assets:
                    assets[account] = (
                        frozenset(p.id for p in list_pixels(graph, account) if not p.is_unavailable),
                        frozenset(p.id for p in list_promotable_pages(graph, account)),
                    )
                deleted, advert_changes = _advert_drift(publication, graph, assets[account], now)
                if deleted:
                    mark_advert_deleted_on_platform(publication, deleted)
                    record.updated_at = now
                    found.adverts_deleted += audiences.save_unchanged(record)
                    continue
                changes += advert_changes
            checked = _checked_kinds(record, names, record.audience_id in published_ids)
            if record_changes(record, changes, checked=checked):
                record.updated_at = now
                found.audiences_changed += audiences.save_unchanged(record)
    finally:
        platform.record_usage(org_id, graph)
    if found.audiences_deleted or found.adverts_deleted or found.audiences_changed:
        logger.info("drift found on the platform", extra={"org_id": org_id, **found.model_dump()})
    return found


# --- Changes made on the platform's side ----------------------------------------------------------

_KIND_WORDS: Final = {
    "audience": "custom audience",
    "lookalike": "lookalike audience",
    "campaign": "campaign",
    "adset": "ad set",
    "adcreative": "ad creative",
    "ad": "ad",
}
_KEPT = (
    "The service keeps what the platform has and does not change it back; if the change was not "
    "intended, change it back in the ads manager."
)
# The fields of a campaign, ad set or ad compared with what the service sent (an ad has no budget).
_COMPARED: Final = {
    "campaign": ("name", "status", "daily_budget", "lifetime_budget"),
    "adset": ("name", "status", "daily_budget", "lifetime_budget"),
    "ad": ("name", "status"),
}


def audience_changes(record: AudienceRecord, names: dict[str, str], now: datetime) -> list[PlatformChange]:
    """The custom audience and lookalike of ``record`` renamed on the platform, from ``names`` (the ad
    account's audiences by id, as listed now; an id not in it is not compared)."""
    changes: list[PlatformChange] = []
    platform_id = record.platform_custom_audience_id
    if platform_id and platform_id in names and names[platform_id] != record.name:
        changes.append(_change("audience", platform_id, "name", record.name, names[platform_id], now))
    lookalike = record.lookalike
    if lookalike is not None and lookalike.platform_audience_id in names:
        assert lookalike.platform_audience_id is not None
        ours = lookalike_name(record.name, lookalike.size_percent, lookalike.country)
        theirs = names[lookalike.platform_audience_id]
        if theirs != ours:
            changes.append(_change("lookalike", lookalike.platform_audience_id, "name", ours, theirs, now))
    return changes


def record_changes(
    record: AudienceRecord, changes: Sequence[PlatformChange], *, checked: frozenset[str]
) -> bool:
    """Replace ``record``'s platform changes of the ``checked`` kinds with ``changes`` (a change seen
    before keeps when it was first seen); whether anything differs from what was recorded."""
    before = {_identity(c): c for c in record.platform_changes}
    kept = [c for c in record.platform_changes if c.kind not in checked]
    now_found = [before.get(_identity(c), c) for c in changes]
    updated = kept + now_found
    if [_identity(c) for c in updated] == [_identity(c) for c in record.platform_changes]:
        return False
    record.platform_changes = updated
    return True


def refresh_changes(record: AudienceRecord, graph: GraphClient, now: datetime) -> bool:
    """On a refresh: read the custom audience's name on the platform (one read; raises the platform's
    "does not exist" for the caller to mark it deleted) and record whether it was renamed there.
    Whether the recorded changes differ."""
    assert record.platform_custom_audience_id is not None
    node = read_audience_node(graph, record.platform_custom_audience_id, "id,name")
    names = {record.platform_custom_audience_id: str(node.get("name") or "")}
    changes = [c for c in audience_changes(record, names, now) if c.kind == "audience"]
    return record_changes(record, changes, checked=frozenset({"audience"}))


def _checked_kinds(
    record: AudienceRecord, names: dict[str, dict[str, str]], published: bool
) -> frozenset[str]:
    kinds: set[str] = set()
    if record.ad_account_id in names:
        kinds |= {"audience", "lookalike"}
    if published:
        kinds |= {"campaign", "adset", "ad", "pixel", "page"}
    return frozenset(kinds)


def _advert_drift(
    publication: PublicationRecord,
    graph: GraphClient,
    assets: tuple[frozenset[str], frozenset[str]],
    now: datetime,
) -> tuple[list[str], list[PlatformChange]]:
    """The advert's delivering objects deleted on the platform, and what was changed there."""
    deleted: list[str] = []
    changes: list[PlatformChange] = []
    expected = {"status": "ACTIVE" if publication.state == "active" else "PAUSED"}
    for o in publication.objects:
        if o.kind not in _DELIVERING_KINDS or o.state != "created" or not o.platform_id:
            continue
        compared = _COMPARED[o.kind]
        node = read_object(graph, o.platform_id, ",".join((*compared, "effective_status")))
        status = None if node is None else (node.get("effective_status") or node.get("status"))
        if node is None or status == "DELETED" or node.get("status") == "DELETED":
            deleted.append(o.kind)
            continue
        ours = {field: o.params.get(field) for field in compared} | expected
        for field in compared:
            theirs = node.get(field)
            if ours[field] is None and theirs is None:
                continue
            if _text(ours[field]) != _text(theirs):
                changes.append(_change(o.kind, o.platform_id, field, _text(ours[field]), _text(theirs), now))
    pixels, pages = assets
    for o in publication.objects:
        if o.state != "created":
            continue
        if o.kind == "adset":
            pixel_id = _text((o.params.get("promoted_object") or {}).get("pixel_id"))
            if pixel_id and pixel_id not in pixels:
                changes.append(_unseen("pixel", pixel_id, now))
        if o.kind == "adcreative":
            page_id = _text((o.params.get("object_story_spec") or {}).get("page_id"))
            if page_id and page_id not in pages:
                changes.append(_unseen("page", page_id, now))
    return deleted, changes


def _change(
    kind: PlatformObjectKind,
    platform_id: str,
    field: str,
    ours: str | None,
    theirs: str | None,
    now: datetime,
) -> PlatformChange:
    word = _KIND_WORDS[kind]
    if field == "name":
        message = f"The {word} was renamed on the platform to “{theirs}” (the service named it “{ours}”)."
    elif field == "status":
        message = f"The {word} was set to {theirs} on the platform (the service left it {ours})" + (
            "; it does not deliver while paused." if theirs == "PAUSED" else "."
        )
    else:
        budget = field.replace("_", " ")
        before = f"{ours}" if ours is not None else "none"
        message = (
            f"The {word}'s {budget} was changed on the platform to {theirs} (the service set {before}), "
            "in the account currency's minor units."
        )
    return PlatformChange(
        kind=kind,
        platform_id=platform_id,
        field=field,
        service_value=ours,
        platform_value=theirs,
        message=message,
        remedy=_KEPT,
        seen_at=now,
    )


def _unseen(kind: PlatformObjectKind, platform_id: str, now: datetime) -> PlatformChange:
    if kind == "pixel":
        message = (
            f"The pixel {platform_id} this advert optimises for is no longer linked to the ad account, or "
            "the connected user lost access to it: the platform cannot count the advert's purchases."
        )
        remedy = (
            "Link the pixel to the ad account again in the platform's business settings, or delete the "
            "advert here and publish it again with a pixel the ad account has (the readiness checklist "
            "shows them)."
        )
    else:
        message = (
            f"The Page {platform_id} this advert is posted as can no longer be promoted by the ad account "
            "(it left the business, or the connected user lost their role on it): the ad cannot deliver."
        )
        remedy = (
            "Give the connected user a role on the Page again in the platform's business settings, or "
            "delete the advert here and publish it again as a Page the ad account can promote."
        )
    return PlatformChange(
        kind=kind,
        platform_id=platform_id,
        field="access",
        service_value=platform_id,
        platform_value=None,
        message=message,
        remedy=remedy,
        seen_at=now,
    )


def _identity(change: PlatformChange) -> tuple[str, str, str, str | None, str | None]:
    return (change.kind, change.platform_id, change.field, change.service_value, change.platform_value)


def _text(value: object) -> str | None:
    return None if value is None else str(value)


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
    audiences_changed: int = 0
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
        summary.audiences_changed += found.audiences_changed
    logger.info("drift check finished", extra=summary.model_dump())
    return summary
