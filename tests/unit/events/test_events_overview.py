"""The Events page's report (shared/events/overview.py) read from moto's DynamoDB through the stores
the senders write (shared/repositories/events.py): per-day counts by source and event name over 14 or
28 days, and the latest rejections in plain words."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import boto3
import pytest

from shared.errors import ValidationFailed
from shared.events.overview import EventsOverview
from shared.payments.pixel import CHECKOUT_REMEDY
from shared.records.events import EventRejection, PurchaseSend, StoredRejection
from shared.repositories.events import DynamoEventSiteStore, DynamoEventStore
from tests.unit.moto_aws import REGION, offline_aws, table

NOW = datetime(2026, 11, 28, 15, 30, tzinfo=UTC)
TODAY = NOW.date()


def day(days_ago: int) -> str:
    return (TODAY - timedelta(days=days_ago)).isoformat()


@pytest.fixture
def stores(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[DynamoEventSiteStore, DynamoEventStore]]:
    with offline_aws(monkeypatch):
        client = boto3.client("dynamodb", region_name=REGION)
        main = table()
        yield DynamoEventSiteStore(main, client), DynamoEventStore(main, client)


@pytest.fixture
def overview(stores: tuple[DynamoEventSiteStore, DynamoEventStore]) -> EventsOverview:
    counts, purchases = stores
    return EventsOverview(counts=counts, purchases=purchases, clock=lambda: NOW)


def test_every_day_of_the_period_is_listed_with_its_counts_by_source_and_event(
    stores: tuple[DynamoEventSiteStore, DynamoEventStore], overview: EventsOverview
) -> None:
    # Given a sync's purchases two days ago, the shop's pages' events today and yesterday, a checkout's
    counts, _ = stores
    counts.add_counts(
        "org-1", day(2), {("sync", "Purchase", "sent"): 120, ("sync", "Purchase", "rejected"): 3}
    )
    counts.add_counts("org-1", day(1), {("site", "AddToCart", "sent"): 4, ("site", "Purchase", "skipped"): 1})
    counts.add_counts(
        "org-1", day(0), {("site", "AddToCart", "sent"): 2, ("checkout", "Purchase", "sent"): 1}
    )
    # When the page asks for the last 14 days
    report = overview.report("org-1", 14)
    # Then every day is there, oldest first, the quiet ones with zeros
    assert (report.first_day, report.last_day) == (day(13), day(0))
    assert [entry.date for entry in report.per_day] == [day(n) for n in range(13, -1, -1)]
    totals = {
        entry.date: (entry.total.sent, entry.total.rejected, entry.total.skipped) for entry in report.per_day
    }
    assert totals[day(2)] == (120, 3, 0)
    assert totals[day(1)] == (4, 0, 1)
    assert totals[day(0)] == (3, 0, 0)
    assert totals[day(5)] == (0, 0, 0)
    assert [entry.events for entry in report.per_day if entry.date == day(5)] == [[]]
    # And the period's counts per source (synced orders, the shop's pages, checkout) and event name
    assert [
        (row.source_label, row.event_name, row.sent, row.rejected, row.skipped) for row in report.by_source
    ] == [
        ("Synced orders", "Purchase", 120, 3, 0),
        ("The shop's pages", "AddToCart", 6, 0, 0),
        ("The shop's pages", "Purchase", 0, 0, 1),
        ("Hosted checkout", "Purchase", 1, 0, 0),
    ]
    assert (report.total.sent, report.total.rejected, report.total.skipped) == (127, 3, 1)


def test_days_before_the_period_are_left_out_and_28_days_reach_them(
    stores: tuple[DynamoEventSiteStore, DynamoEventStore], overview: EventsOverview
) -> None:
    counts, _ = stores
    counts.add_counts("org-1", day(14), {("sync", "Purchase", "sent"): 50})
    counts.add_counts("org-1", day(27), {("sync", "Purchase", "sent"): 7})
    counts.add_counts("org-1", day(28), {("sync", "Purchase", "sent"): 1000})
    assert overview.report("org-1", 14).total.sent == 0
    month = overview.report("org-1", 28)
    assert len(month.per_day) == 28
    assert month.total.sent == 57


def test_another_organizations_events_are_not_counted(
    stores: tuple[DynamoEventSiteStore, DynamoEventStore], overview: EventsOverview
) -> None:
    counts, _ = stores
    counts.add_counts("org-2", day(0), {("site", "ViewContent", "sent"): 9})
    counts.add_rejections("org-2", [StoredRejection(reason="bad", remedy="fix", source="site", at=NOW)])
    report = overview.report("org-1", 14)
    assert report.total.sent == 0
    assert report.rejections == []


@pytest.mark.parametrize("days", [0, 7, 15, 30])
def test_a_period_other_than_14_or_28_days_is_refused(overview: EventsOverview, days: int) -> None:
    with pytest.raises(ValidationFailed) as refused:
        overview.report("org-1", days)
    assert refused.value.field == "days"


def test_rejections_come_newest_first_in_plain_words_with_the_platforms_own_message(
    stores: tuple[DynamoEventSiteStore, DynamoEventStore], overview: EventsOverview
) -> None:
    # Given a page's purchase without a value an hour ago, a platform refusal now, and the latest sync's
    # purchases with an order whose currency is not a code (two days ago)
    counts, purchases = stores
    counts.add_rejections(
        "org-1",
        [
            StoredRejection(
                event_id="order-9",
                event_name="Purchase",
                reason="custom_data a purchase needs its value and currency",
                remedy="Correct the call on the shop's page (the event's parameters).",
                field="custom_data",
                source="site",
                at=NOW - timedelta(hours=1),
            ),
            StoredRejection(
                event_id="cart-1",
                event_name="AddToCart",
                reason="The platform refused the events. The platform said: Invalid parameter",
                remedy="Report this exact message to support.",
                platform_code=100,
                platform_subcode=2804019,
                fbtrace_id="AbC123",
                source="site",
                at=NOW,
            ),
        ],
    )
    purchases.finish_purchases(
        PurchaseSend(
            org_id="org-1",
            dataset_version="20261126T100000Z",
            state="sent",
            rejected=1,
            rejections=[
                EventRejection(
                    event_id="o-77",
                    event_name="Purchase",
                    reason="custom_data.currency is not a three-letter ISO 4217 code",
                    remedy="Correct the order's data in the shop's export; the next sync sends it.",
                    field="custom_data.currency",
                )
            ],
            created_at=NOW - timedelta(days=2),
            updated_at=NOW - timedelta(days=2),
        )
    )
    # When the page reads the report
    rejections = overview.report("org-1", 14).rejections
    # Then the three come newest first, each from where it came
    assert [(r.event_id, r.source_label) for r in rejections] == [
        ("cart-1", "The shop's pages"),
        ("order-9", "The shop's pages"),
        ("o-77", "Synced orders"),
    ]
    refused, no_value, currency = rejections
    # And the platform's refusal keeps its own words, its codes and its support reference
    assert "Invalid parameter" in refused.reason
    assert (refused.platform_code, refused.platform_subcode, refused.fbtrace_id) == (100, 2804019, "AbC123")
    assert refused.remedy == "Report this exact message to support."
    # And the service's own checks are said in plain words, with what to do where the event came from
    assert "value" in no_value.explanation
    assert "custom_data" not in no_value.explanation
    assert "thank-you page" in no_value.remedy
    assert "three-letter currency code" in currency.explanation
    assert "orders file" in currency.remedy


def test_rejections_before_the_period_are_left_out(
    stores: tuple[DynamoEventSiteStore, DynamoEventStore], overview: EventsOverview
) -> None:
    counts, purchases = stores
    counts.add_rejections(
        "org-1",
        [StoredRejection(reason="old", remedy="fix", source="site", at=NOW - timedelta(days=20))],
    )
    purchases.finish_purchases(
        PurchaseSend(
            org_id="org-1",
            dataset_version="20261101T100000Z",
            state="sent",
            rejections=[EventRejection(reason="old", remedy="fix", field="event_id")],
            created_at=NOW - timedelta(days=27),
            updated_at=NOW - timedelta(days=27),
        )
    )
    assert overview.report("org-1", 14).rejections == []
    assert [r.source for r in overview.report("org-1", 28).rejections] == ["site", "sync"]


def test_a_checkout_purchase_kept_back_is_explained_without_asking_the_merchant_to_fix_a_file(
    stores: tuple[DynamoEventSiteStore, DynamoEventStore], overview: EventsOverview
) -> None:
    # Given the hosted checkout's purchase, built by the service, kept back by its own check
    counts, _ = stores
    counts.add_rejections(
        "org-1",
        [
            StoredRejection(
                event_id="cs_1",
                event_name="Purchase",
                reason="custom_data.currency is not a three-letter ISO 4217 code",
                remedy=CHECKOUT_REMEDY,
                field="custom_data.currency",
                source="checkout",
                at=NOW,
            )
        ],
    )
    # Then the page says what was wrong in plain words, and that it is ours to fix
    [rejection] = overview.report("org-1", 14).rejections
    assert rejection.source_label == "Hosted checkout"
    assert "three-letter currency code" in rejection.explanation
    assert rejection.remedy == CHECKOUT_REMEDY


def test_the_pages_events_not_sent_for_want_of_a_connection_are_counted_not_sent(
    stores: tuple[DynamoEventSiteStore, DynamoEventStore], overview: EventsOverview
) -> None:
    # Given the shop's pages sent two purchases while the ad account was disconnected (the site
    # endpoint answers 409 and counts them "failed"; walking make dev, the page then showed a row
    # "The shop's pages Purchase 0 0 0" and said nothing of the lost purchases) and one after
    counts, _ = stores
    counts.add_counts("org-1", day(0), {("site", "Purchase", "failed"): 2})
    counts.add_counts("org-1", day(0), {("site", "Purchase", "sent"): 1})
    # When the page asks for the last 14 days
    report = overview.report("org-1", 14)
    # Then the two are counted as not sent, in the row, the day and the period
    [row] = report.by_source
    assert (row.sent, row.rejected, row.skipped, row.not_sent) == (1, 0, 0, 2)
    assert report.per_day[-1].total.not_sent == 2
    assert report.total.not_sent == 2
    assert report.model_dump(by_alias=True)["total"]["notSent"] == 2
