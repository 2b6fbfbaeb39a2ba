"""The Events page's report (issue 21, item 6): the events sent to the pixel per UTC day, source and
event name over the last 14 or 28 days, and the latest rejected events in words a marketer acts on.

It reads what the senders stored as they went, and nothing else: the per-day counts (``EVENTSDAY#``:
the synced orders' purchases batch by batch, the shop's pages' events per request, the hosted
checkout's purchases), the site's latest rejections (``EVENTREJ#``), and the first rejections of the
latest sync's purchases (kept on that version's purchases record). Every day of the period is listed,
with zeros for a day without events, so a gap shows as a gap. A hosted checkout's order is sent by
its webhook and again by the next sync, with the same event id; the platform keeps one, and the
senders count it once, under the one that sent it first (``shared.events.purchases``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Protocol

from pydantic import Field

from shared.errors import ValidationFailed
from shared.records.events import EventDay, EventRejection, PurchaseSend, StoredRejection
from shared.wire_models import CamelModel

PERIODS = (14, 28)
MAX_REJECTIONS = 20
# How the page names each source of events; a source the service starts counting later shows by its name.
SOURCE_LABELS = {
    "sync": "Synced orders",
    "site": "The shop's pages",
    "checkout": "Hosted checkout",
}
# "failed" is what the senders store for events that could not be sent at all (no connection, access
# lost, the platform down): the page calls them "not sent".
OUTCOMES = ("sent", "rejected", "skipped", "failed")


class DayCounts(Protocol):
    """``shared.repositories.events.DynamoEventSiteStore``: the per-day counts and site rejections."""

    def days(self, org_id: str, first: str, last: str) -> list[EventDay]: ...
    def latest_rejections(self, org_id: str, limit: int) -> list[StoredRejection]: ...


class SyncPurchases(Protocol):
    """``shared.repositories.events.DynamoEventStore``: each dataset version's purchases."""

    def pointers(self, org_id: str) -> tuple[str | None, str | None]: ...
    def get_purchases(self, org_id: str, version: str) -> PurchaseSend | None: ...


class Counts(CamelModel):
    """Events by outcome: ``sent`` (the platform said it received them), ``rejected`` (refused, by our
    check or the platform), ``skipped`` (older than the platform's window: nothing to correct),
    ``not_sent`` (the shop's pages' events that arrived while the ad account was not connected, its
    access was lost or the platform was down: never sent, and the snippet does not send them again; the
    hosted checkout's purchases paid while no ad account or pixel could take them, which the next sync
    sends while they are inside the platform's 7 days)."""

    sent: int = 0
    rejected: int = 0
    skipped: int = 0
    not_sent: int = Field(
        default=0,
        description="Arrived while no ad account could take them (not connected, access lost, platform "
        "down); the hosted checkout's are sent by the next sync while inside the platform's 7 days",
    )

    def add(self, outcomes: dict[str, int]) -> None:
        self.sent += outcomes.get("sent", 0)
        self.rejected += outcomes.get("rejected", 0)
        self.skipped += outcomes.get("skipped", 0)
        self.not_sent += outcomes.get("failed", 0)

    def merge(self, other: Counts) -> None:
        """Add ``other``'s counts to these."""
        self.sent += other.sent
        self.rejected += other.rejected
        self.skipped += other.skipped
        self.not_sent += other.not_sent


class EventCounts(Counts):
    """One source's events of one name (``Purchase``, ``AddToCart``, ...)."""

    source: str = Field(description="sync (synced orders), site (the shop's pages) or checkout.")
    source_label: str = Field(description="The source in the page's words.")
    event_name: str


class DayReport(CamelModel):
    """One UTC day: its totals and its counts per source and event name (none on a quiet day)."""

    date: str = Field(description="UTC date, YYYY-MM-DD.")
    total: Counts
    events: list[EventCounts]


class RejectionView(CamelModel):
    """A rejected event: what the platform (or the service's own check) said, and in plain words what
    happened and what to do. Never a customer's identifier."""

    at: datetime
    source: str
    source_label: str
    event_id: str | None = None
    event_name: str | None = None
    reason: str = Field(description="As recorded: the platform's own message, or the check that failed.")
    explanation: str = Field(description="What happened, in plain words.")
    remedy: str = Field(description="What to do about it.")
    platform_code: int | None = None
    platform_subcode: int | None = None
    fbtrace_id: str | None = Field(default=None, description="The platform's reference, for its support.")


class EventsReport(CamelModel):
    """The Events page's report for ``days`` days ending today (UTC)."""

    days: int
    first_day: str
    last_day: str
    total: Counts
    by_source: list[EventCounts] = Field(description="The period's counts per source and event name.")
    per_day: list[DayReport] = Field(description="Every day of the period, oldest first.")
    rejections: list[RejectionView] = Field(description="The latest rejected events, newest first.")


@dataclass
class EventsOverview:
    """Reads the Events page's report from what the senders stored."""

    counts: DayCounts
    purchases: SyncPurchases
    clock: Callable[[], datetime]

    def report(self, org_id: str, days: int = 14) -> EventsReport:
        """The organization's events over the ``days`` (14 or 28) UTC days ending today, and its latest
        rejections. Raises ``ValidationFailed`` for another period."""
        if days not in PERIODS:
            raise ValidationFailed(
                f"The period is {days} days; the Events page shows 14 or 28.",
                field="days",
                remedy="Ask for days=14 or days=28.",
            )
        last = self.clock().date()
        first = last - timedelta(days=days - 1)
        stored = {day.date: day for day in self.counts.days(org_id, first.isoformat(), last.isoformat())}
        per_day = [_day_report(stored.get(day.isoformat()), day) for day in _dates(first, last)]
        total = Counts()
        by_source: dict[tuple[str, str], EventCounts] = {}
        for day in per_day:
            total.merge(day.total)
            for row in day.events:
                kept = by_source.setdefault(
                    (row.source, row.event_name), _event_counts(row.source, row.event_name)
                )
                kept.merge(row)
        first_moment = datetime.combine(first, time.min, tzinfo=UTC)
        return EventsReport(
            days=days,
            first_day=first.isoformat(),
            last_day=last.isoformat(),
            total=total,
            by_source=sorted(by_source.values(), key=_row_order),
            per_day=per_day,
            rejections=self._rejections(org_id, since=first_moment),
        )

    def _rejections(self, org_id: str, since: datetime) -> list[RejectionView]:
        """The site's latest rejections and those of the latest sync's purchases, newest first."""
        found: list[StoredRejection] = list(self.counts.latest_rejections(org_id, MAX_REJECTIONS))
        sync = self._latest_sync(org_id)
        if sync is not None and sync.rejections and sync.updated_at >= since:
            found += [
                StoredRejection(**item.model_dump(), source="sync", at=sync.updated_at)
                for item in sync.rejections[:MAX_REJECTIONS]
            ]
        found = [item for item in found if item.at >= since]
        found.sort(key=lambda item: item.at, reverse=True)
        return [rejection_view(item) for item in found[:MAX_REJECTIONS]]

    def _latest_sync(self, org_id: str) -> PurchaseSend | None:
        """The purchases record of the latest version whose purchases were sent (in full or part)."""
        sent, part = self.purchases.pointers(org_id)
        versions = [version for version in (sent, part) if version]
        # Versions are named so that they sort by time.
        return self.purchases.get_purchases(org_id, max(versions)) if versions else None


def _dates(first: date, last: date) -> Iterable[date]:
    day = first
    while day <= last:
        yield day
        day += timedelta(days=1)


def _event_counts(source: str, event_name: str) -> EventCounts:
    return EventCounts(source=source, source_label=SOURCE_LABELS.get(source, source), event_name=event_name)


def _row_order(row: EventCounts) -> tuple[int, str, str]:
    known = list(SOURCE_LABELS)
    return (known.index(row.source) if row.source in known else len(known), row.source, row.event_name)


def _day_report(stored: EventDay | None, day: date) -> DayReport:
    total = Counts()
    rows = []
    for source, names in (stored.counts if stored else {}).items():
        for event_name, outcomes in names.items():
            row = _event_counts(source, event_name)
            row.add(outcomes)
            total.add(outcomes)
            rows.append(row)
    return DayReport(date=day.isoformat(), total=total, events=sorted(rows, key=_row_order))


# --- In plain words -----------------------------------------------------------------------------------

# What a failed check of the service means, by the field it names (the longest prefix that matches),
# and what to do about it where the event came from: the shop's pages (the snippet's shopEvent calls),
# or the synced orders (the shop's files).
_PLAIN: tuple[tuple[str, str, str, str], ...] = (
    (
        "url",
        "The event came from a page that is not on the shop's declared domains.",
        "Add that page's domain under Declared domains on this page, or take the snippet off pages that are "
        "not the shop's.",
        "Sync the shop's files again; if it happens again, report it to us with the event id.",
    ),
    (
        "event_name",
        "The event's name is not one the platform knows.",
        "Use the snippet's event names: ViewContent, AddToCart, InitiateCheckout or Purchase.",
        "Sync the shop's files again; if it happens again, report it to us with the event id.",
    ),
    (
        "event_id",
        "The event had no id, so the platform could not tell it apart from a repeat of it.",
        "Give each shopEvent call on the shop's pages an id (the order number for a purchase).",
        "Make sure every order in the orders file has an order id, then sync again.",
    ),
    (
        "event_time",
        "The event's time was wrong: in the future, or not a time at all.",
        "Leave the time out of the shop's shopEvent calls: the service stamps each event as it arrives.",
        "Check the order dates in the orders file (a date in the future, or in another format), then sync "
        "again.",
    ),
    (
        "event_source_url",
        "The event did not say which page of the shop it happened on.",
        "Keep the snippet in the page itself (not in a frame or an app): it sends the page's address.",
        "Sync the shop's files again; if it happens again, report it to us with the event id.",
    ),
    (
        "user_data.client_user_agent",
        "The event did not say which browser it came from.",
        "Keep the snippet in the page itself: it sends from the shopper's browser.",
        "Sync the shop's files again; if it happens again, report it to us with the event id.",
    ),
    (
        "user_data",
        "The event had nothing the platform can match to a person, so it cannot be counted for an advert.",
        "Keep the snippet on every page of the shop, with the platform's own pixel, so each event carries "
        "the shopper's browser cookie.",
        "Fill in the customers' e-mail addresses or phone numbers in the customers file, then sync again.",
    ),
    (
        "custom_data.currency",
        "The purchase's currency is not a three-letter currency code such as GBP, EUR or USD.",
        "Pass the currency as a three-letter code in the shop's shopEvent call.",
        "Correct the currency in the orders file (a three-letter code such as GBP), then sync again.",
    ),
    (
        "custom_data.content_ids",
        "The products in the event were not listed as product ids.",
        "Pass the product ids as a list of text in the shop's shopEvent call, e.g. content_ids: ['p1'].",
        "Check the product ids in the orders file, then sync again.",
    ),
    (
        "custom_data.contents",
        "A product in the event had no id, or a quantity or price that is not a number.",
        "Pass each product with its id, a whole quantity and a price in the shop's shopEvent call.",
        "Check the product ids, quantities and prices in the orders file, then sync again.",
    ),
    (
        "custom_data.num_items",
        "The number of items in the event is not a whole number.",
        "Pass num_items as a whole number in the shop's shopEvent call, or leave it out.",
        "Check the quantities in the orders file, then sync again.",
    ),
    (
        "custom_data",
        "The purchase's value was missing or not a number, so the platform cannot say what adverts earned.",
        "Pass the order's total as a number and its currency in the thank-you page's shopEvent call.",
        "Fill in each order's amount and currency in the orders file, then sync again.",
    ),
)


def rejection_view(rejection: StoredRejection) -> RejectionView:
    """``rejection`` with what it means and what to do in plain words: by the field the service's own
    check named, else (the platform refused it) the platform's message and its remedy as recorded."""
    explanation, remedy = _plain_words(rejection, rejection.source)
    return RejectionView(
        at=rejection.at,
        source=rejection.source,
        source_label=SOURCE_LABELS.get(rejection.source, rejection.source),
        event_id=rejection.event_id,
        event_name=rejection.event_name,
        reason=rejection.reason,
        explanation=explanation,
        remedy=remedy,
        platform_code=rejection.platform_code,
        platform_subcode=rejection.platform_subcode,
        fbtrace_id=rejection.fbtrace_id,
    )


def _refused_whole(field: str | None) -> bool:
    """Whether a site rejection's ``field`` is one the relay's 400 names for a body it cannot take
    (``body``, ``events``, ``events.0.eventName``): the request was refused whole."""
    return field is not None and (field in ("body", "events") or field.startswith("events."))


def _plain_words(rejection: EventRejection, source: str) -> tuple[str, str]:
    if rejection.platform_code is None and rejection.field and source == "checkout":
        # The service built the checkout's purchase itself: nothing on the merchant's side to correct.
        for field, explanation, *_ in _PLAIN:
            if rejection.field == field or rejection.field.startswith(field + "."):
                return explanation, rejection.remedy
    if source == "site" and rejection.platform_code is None and _refused_whole(rejection.field):
        return (
            "The shop's page sent a request the service could not take: none of its events was sent.",
            rejection.remedy,
        )
    if rejection.platform_code is None and rejection.field:
        for field, explanation, on_site, on_sync in _PLAIN:
            if rejection.field == field or rejection.field.startswith(field + "."):
                return explanation, on_site if source == "site" else on_sync
    if rejection.platform_code is not None:
        return (
            "The advertising platform refused the event; its own words are below.",
            rejection.remedy,
        )
    return "The event was not sent.", rejection.remedy
