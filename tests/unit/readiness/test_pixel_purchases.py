"""Publish advert's readiness item "the pixel has received purchase events in the last 7 days" (issue
21, item 6): from the events the service sent, or the platform's own last_fired_time."""

from __future__ import annotations

from datetime import UTC, datetime

from shared.platform.accounts import Pixel
from shared.readiness.service import purchases_item
from shared.records.events import EventDay

NOW = datetime(2026, 11, 25, 18, 0, tzinfo=UTC)
PIXEL = Pixel.model_validate({"id": "px1", "name": "Shop pixel"})


def day(date: str, source: str, name: str, outcome: str, count: int) -> EventDay:
    return EventDay(date=date, counts={source: {name: {outcome: count}}})


def test_purchases_the_service_sent_pass_and_are_counted_by_where_they_came_from() -> None:
    days = [
        day("2026-11-20", "sync", "Purchase", "sent", 40),
        day("2026-11-24", "site", "Purchase", "sent", 2),
        day("2026-11-24", "site", "AddToCart", "sent", 9),
    ]
    item = purchases_item(days, [PIXEL], NOW)
    assert item.status == "pass"
    assert item.evidence.startswith("42 purchase event(s)")
    assert "40 from the synced orders, 2 from the shop's pages" in item.evidence


def test_other_events_or_refused_purchases_are_not_purchases_received() -> None:
    days = [
        day("2026-11-24", "site", "AddToCart", "sent", 9),
        day("2026-11-24", "sync", "Purchase", "rejected", 3),
    ]
    item = purchases_item(days, [PIXEL], NOW)
    assert item.status == "fail"
    assert item.remedy is not None
    assert "snippet from the Events page" in item.remedy


def test_the_platforms_last_fired_time_in_the_window_passes_and_an_older_one_does_not() -> None:
    recent = Pixel.model_validate({"id": "px1", "last_fired_time": "2026-11-23T09:30:00+0000"})
    old = Pixel.model_validate({"id": "px2", "last_fired_time": "2026-11-01T09:30:00+0000"})
    assert purchases_item([], [old, recent], NOW).status == "pass"
    assert "2026-11-23 09:30" in purchases_item([], [old, recent], NOW).evidence
    assert purchases_item([], [old], NOW).status == "fail"


def test_without_a_pixel_it_is_not_checked_and_says_what_it_waits_for() -> None:
    item = purchases_item([day("2026-11-24", "sync", "Purchase", "sent", 1)], [], NOW)
    assert item.status == "unknown"
    assert item.evidence == "Not checked until “pixel linked” above passes: it needs that first."
