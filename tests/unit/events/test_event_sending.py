"""Sending a stream of events in batches (docs/platform-notes.md §11.1, §11.6): checked before they
leave, a refused batch split down to what the platform refuses, a report of everything."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from shared.events.checks import DAY_SECONDS
from shared.events.sending import MAX_SPLIT_CALLS, SendReport, send_checked
from shared.platform.errors import (
    EVENT_TOO_OLD,
    EVENTS_REFUSED,
    GraphErrorDetail,
    PlatformUnavailable,
    build_error,
)
from shared.platform.events import EventsReceived

NOW = 1_790_000_000.0


def event(order: int, *, age_days: float = 0) -> dict[str, Any]:
    return {
        "event_name": "Purchase",
        "event_time": int(NOW - age_days * DAY_SECONDS),
        "event_id": f"order-{order}",
        "action_source": "other",
        "user_data": {"external_id": [f"c-{order}"]},
        "custom_data": {"value": 10.0, "currency": "GBP"},
    }


class FakePlatform:
    """Takes batches like the platform: a batch holding a poisoned event is refused whole."""

    def __init__(self, poisoned: set[str] | None = None) -> None:
        self.poisoned = poisoned or set()
        self.batches: list[list[str]] = []
        self.kept: list[str] = []

    def __call__(self, batch: Sequence[dict[str, Any]]) -> EventsReceived:
        ids = [str(item["event_id"]) for item in batch]
        self.batches.append(ids)
        bad = [position for position, item in enumerate(ids) if item in self.poisoned]
        if bad:
            detail = GraphErrorDetail(
                http_status=400,
                message="Invalid parameter",
                code=100,
                subcode=2804019,
                user_title="Server-side API parameter error",
                user_message=f"The parameter $['data'][{bad[0]}]['custom_data'] is invalid.",
                fbtrace_id="Tr4ce",
            )
            raise build_error(EVENTS_REFUSED, detail)
        self.kept.extend(ids)
        return EventsReceived(events_received=len(ids), fbtrace_id="ok")


def stream(count: int) -> Iterator[dict[str, Any]]:
    return (event(order) for order in range(count))


def test_a_stream_goes_in_batches_of_the_documented_maximum() -> None:
    platform = FakePlatform()
    report = send_checked(platform, stream(2_500), now=lambda: NOW)
    assert [len(batch) for batch in platform.batches] == [1000, 1000, 500]
    assert (report.sent, report.calls, report.processed) == (2_500, 3, 2_500)
    assert platform.kept == [f"order-{order}" for order in range(2_500)]


def test_events_too_old_are_skipped_and_never_sent() -> None:
    # Given a stream where every tenth order is eight days old
    events = (event(order, age_days=8 if order % 10 == 0 else 0) for order in range(100))
    platform = FakePlatform()
    # When it is sent
    report = send_checked(platform, events, now=lambda: NOW)
    # Then those are reported as skipped, and only the others reach the platform, in one call
    assert (report.skipped_too_old, report.sent, report.rejected, report.calls) == (10, 90, 0, 1)
    assert report.reasons == {"too_old": 10}
    assert all(int(order.split("-")[1]) % 10 for order in platform.kept)
    assert report.processed == 100


def test_a_malformed_event_is_rejected_with_its_reason_and_the_rest_sent() -> None:
    events = [event(1), {**event(2), "custom_data": {"value": "ten", "currency": "GBP"}}, event(3)]
    platform = FakePlatform()
    report = send_checked(platform, events, now=lambda: NOW)
    assert platform.kept == ["order-1", "order-3"]
    assert report.rejected == 1
    rejection = report.rejections[0]
    assert (rejection.event_id, rejection.field) == ("order-2", "custom_data.value")
    assert rejection.platform_code is None


def test_a_refused_batch_is_split_until_the_refused_event_stands_alone() -> None:
    # Given a batch of 1,000 of which the platform refuses one our checks did not catch
    platform = FakePlatform(poisoned={"order-617"})
    # When it is sent
    report = send_checked(platform, stream(1_000), now=lambda: NOW)
    # Then the other 999 arrive, each once, and the refused one is reported with the platform's words
    assert sorted(platform.kept) == sorted(f"order-{order}" for order in range(1_000) if order != 617)
    assert len(set(platform.kept)) == len(platform.kept)
    assert (report.sent, report.rejected) == (999, 1)
    rejection = report.rejections[0]
    assert rejection.event_id == "order-617"
    assert (rejection.platform_code, rejection.platform_subcode, rejection.fbtrace_id) == (
        100,
        2804019,
        "Tr4ce",
    )
    assert "custom_data" in rejection.reason
    assert rejection.remedy
    # And finding it took one call per halving: 1 + 2 x 10 (1,000 halves to 1 in ten steps)
    assert report.calls == 21
    assert report.reasons == {"refused:100/2804019": 1}


def test_a_batch_the_platform_refuses_whole_is_given_up_after_a_bounded_number_of_calls() -> None:
    # Given a platform refusing every one of 1,000 events (a systematic problem, not one bad order)
    platform = FakePlatform(poisoned={f"order-{order}" for order in range(1_000)})
    # When the batch is sent
    report = send_checked(platform, stream(1_000), now=lambda: NOW)
    # Then it stops splitting after the bound, and every event is reported refused
    assert report.calls <= 1 + MAX_SPLIT_CALLS
    assert (report.sent, report.rejected, report.processed) == (0, 1_000, 1_000)


def test_an_interruption_leaves_the_report_at_the_last_whole_batch() -> None:
    # Given a platform that becomes unreachable after two batches
    platform = FakePlatform()
    report = SendReport()

    def sender(batch: Sequence[dict[str, Any]]) -> EventsReceived:
        if len(platform.batches) == 2:  # the platform kept failing past the client's retries
            raise PlatformUnavailable("The advertising platform could not be reached or kept failing.")
        return platform(batch)

    # When 3,000 events are sent
    with pytest.raises(PlatformUnavailable):
        send_checked(sender, stream(3_000), now=lambda: NOW, report=report)
    # Then the report says 2,000 are done, and a run resumed after them sends exactly the rest
    assert (report.processed, report.sent) == (2_000, 2_000)
    resumed = FakePlatform()
    send_checked(resumed, (event(order) for order in range(report.processed, 3_000)), now=lambda: NOW)
    assert platform.kept + resumed.kept == [f"order-{order}" for order in range(3_000)]


def test_the_report_keeps_a_hundred_rejections_and_counts_the_rest() -> None:
    events = ({**event(order), "event_time": "yesterday"} for order in range(250))
    report = send_checked(FakePlatform(), events, now=lambda: NOW)
    assert report.rejected == 250
    assert len(report.rejections) == 100
    assert report.reasons == {"malformed:event_time": 250}


def test_an_event_too_old_for_the_platform_is_refused_with_the_windows_remedy() -> None:
    # Given a platform refusing as too old an event our clock thought fresh (clocks disagree)
    def platform(batch: Sequence[dict[str, Any]]) -> EventsReceived:
        raise build_error(
            EVENT_TOO_OLD,
            GraphErrorDetail(http_status=400, message="Invalid parameter", code=100, subcode=2804003),
        )

    report = send_checked(platform, [event(1)], now=lambda: NOW)
    assert report.rejected == 1
    assert "7 days" in report.rejections[0].remedy
