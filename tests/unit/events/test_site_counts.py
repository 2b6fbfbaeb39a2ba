"""The shop's pages' events on the Events page, through the real store on moto's DynamoDB and the page's
report (shared/events/overview.py):

- counted as the platform keeps them: once per event name and event id within the platform's 48 hours.
  A thank-you page reloaded sends its purchase again with the order's id; the platform keeps one, and
  walking make dev the Events page said "Sent 2";
- never a failed request for the counting once the events were sent (a transaction on the day's one item
  per event, reverted in 14e0d67, would have failed concurrent requests of one shop);
- a request refused whole (400) kept as a rejection with the reason and what to do: the snippet swallows
  the 400, so the page is the merchant's only way to learn their shopEvent call is wrong."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import httpx
import pytest

from shared.errors import ValidationFailed
from shared.events.overview import EventsOverview
from shared.events.site_events import RelayTargets, SiteEventBatch, SiteEvents
from shared.platform.client import GraphClient
from shared.records.connections import Connection
from shared.repositories.events import DynamoEventSiteStore, DynamoEventStore
from tests.unit.events.test_site_relay import SHOP, Admissions
from tests.unit.moto_aws import REGION, offline_aws, table

NOW = datetime(2026, 11, 28, 12, 0, tzinfo=UTC)


class Platform:
    """The Graph API taking every event it is sent (it keeps one per name and id, as the sandbox does)."""

    def __init__(self) -> None:
        self.received: list[tuple[str, str]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/adspixels"):
            return httpx.Response(200, json={"data": [{"id": "px1", "name": "Shop"}]})
        events = json.loads(request.content)["data"]
        self.received.extend((event["event_name"], event["event_id"]) for event in events)
        return httpx.Response(200, json={"events_received": len(events), "fbtrace_id": "Atrace"})


class Connections:
    def __init__(self, platform: Platform) -> None:
        self.platform = platform

    def client_for(self, org_id: str) -> tuple[Connection, GraphClient]:
        graph = GraphClient(
            base_url="https://graph.example.test",
            version="v21.0",
            app_id="app",
            app_secret="secret",
            access_token="token",
            transport=httpx.MockTransport(self.platform),
        )
        return Connection(org_id=org_id, status="active", ad_account_id="act_1"), graph


@pytest.fixture
def stores(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[DynamoEventSiteStore, DynamoEventStore]]:
    with offline_aws(monkeypatch):
        client = boto3.client("dynamodb", region_name=REGION)
        main = table()
        yield DynamoEventSiteStore(main, client), DynamoEventStore(main, client)


def relay(counts: DynamoEventSiteStore, platform: Platform, clock: Callable[[], datetime]) -> SiteEvents:
    return SiteEvents(
        admissions=Admissions(), tally=counts, targets=RelayTargets(Connections(platform)), clock=clock
    )


def page_event(name: str, event_id: str, at: datetime) -> dict[str, Any]:
    return {
        "eventName": name,
        "eventId": event_id,
        "eventTime": int(at.timestamp()),
        "url": f"{SHOP}/thanks",
        "customData": {"value": 24, "currency": "GBP", "content_ids": ["p1"]},
    }


def post(service: SiteEvents, *events: dict[str, Any]) -> int:
    """What the endpoint does with one request of ``events``: the number it answers as sent."""
    admission = service.admit("sk_key", len(events), SHOP)
    batch = SiteEventBatch.model_validate({"events": list(events)})
    answer = service.receive(
        admission, batch, client_ip="203.0.113.9", user_agent="Browser", seconds_left=lambda: 20.0
    )
    return answer.sent


def sent_by_event(overview: EventsOverview) -> dict[str, int]:
    report = overview.report("org-1", 14)
    return {row.event_name: row.sent for row in report.by_source if row.source == "site"}


def failing(store: DynamoEventSiteStore, operation: str, code: str, **extra: Any) -> None:
    """Make DynamoDB answer ``operation`` with the error ``code`` from now on (what moto never does:
    a transaction cancelled by a concurrent writer, a throttled write)."""

    for client in (store._client, store._table.meta.client):

        def refuse(client: Any = client, **_: Any) -> None:
            error = client.exceptions.from_code(code)
            raise error({"Error": {"Code": code, "Message": code}, **extra}, operation)

        client.meta.events.register(f"before-call.dynamodb.{operation}", refuse)


def test_a_purchase_sent_again_by_a_reloaded_thank_you_page_is_counted_once(
    stores: tuple[DynamoEventSiteStore, DynamoEventStore],
) -> None:
    # Given a shop's site events relayed to a platform that takes them, counted in the real store
    counts, purchases = stores
    platform = Platform()
    clock = [NOW]
    service = relay(counts, platform, lambda: clock[0])
    overview = EventsOverview(counts=counts, purchases=purchases, clock=lambda: clock[0])
    purchase = page_event("Purchase", "order-1", NOW)
    # When the thank-you page sends its purchase, is reloaded (the same order id), and the next day
    # a page sends it again with an add-to-cart of the same id (another event name) in one request
    assert post(service, purchase) == 1
    assert post(service, purchase) == 1
    clock[0] = NOW + timedelta(days=1)
    assert post(service, purchase, page_event("AddToCart", "order-1", clock[0])) == 2
    # Then the platform was given the purchase three times (it keeps one), and the Events page counts
    # one purchase and the add-to-cart: one per event name and id, as the platform keeps them
    assert platform.received.count(("Purchase", "order-1")) == 3
    assert sent_by_event(overview) == {"Purchase": 1, "AddToCart": 1}
    # And another purchase of the same page is counted: the id is the order's, not the page's
    assert post(service, page_event("Purchase", "order-2", clock[0])) == 1
    assert sent_by_event(overview) == {"Purchase": 2, "AddToCart": 1}


def test_the_same_event_twice_in_one_request_is_counted_once(
    stores: tuple[DynamoEventSiteStore, DynamoEventStore],
) -> None:
    # Given the site events relay counting in the real store
    counts, purchases = stores
    service = relay(counts, Platform(), lambda: NOW)
    # When one request carries the same add-to-cart twice (a double click)
    event = page_event("AddToCart", "cart-7", NOW)
    post(service, event, event)
    # Then the Events page counts it once
    overview = EventsOverview(counts=counts, purchases=purchases, clock=lambda: NOW)
    assert sent_by_event(overview) == {"AddToCart": 1}


def test_an_event_sent_again_after_the_platforms_48_hours_is_counted_again_as_the_platform_keeps_it(
    stores: tuple[DynamoEventSiteStore, DynamoEventStore],
) -> None:
    # Given the site events relay counting in the real store
    counts, purchases = stores
    clock = [NOW]
    service = relay(counts, Platform(), lambda: clock[0])
    overview = EventsOverview(counts=counts, purchases=purchases, clock=lambda: clock[0])
    # When the same purchase is sent, again 47 hours later, and again 49 hours after the first
    for hours in (0, 47, 49):
        clock[0] = NOW + timedelta(hours=hours)
        post(service, page_event("Purchase", "order-1", clock[0]))
    # Then it is counted twice: the platform keeps one per name and id within 48 hours of the first,
    # so the second is a duplicate and the third is kept again
    assert sent_by_event(overview) == {"Purchase": 2}


def test_a_request_is_never_failed_by_a_cancelled_transaction_on_the_days_counts(
    stores: tuple[DynamoEventSiteStore, DynamoEventStore],
) -> None:
    # Given DynamoDB cancelling every transaction for a conflict, as it does when concurrent requests of
    # one shop's pages write the organization's one day item at once (moto never does)
    counts, purchases = stores
    failing(
        counts,
        "TransactWriteItems",
        "TransactionCanceledException",
        CancellationReasons=[{"Code": "None"}, {"Code": "TransactionConflict"}],
    )
    service = relay(counts, Platform(), lambda: NOW)
    # When a page sends a purchase and an add-to-cart, and the purchase again
    assert post(service, page_event("Purchase", "order-1", NOW), page_event("AddToCart", "cart-1", NOW)) == 2
    assert post(service, page_event("Purchase", "order-1", NOW)) == 1
    # Then each request is answered sent, and each event counted once
    overview = EventsOverview(counts=counts, purchases=purchases, clock=lambda: NOW)
    assert sent_by_event(overview) == {"Purchase": 1, "AddToCart": 1}


def test_a_count_meeting_a_checkouts_transaction_on_the_day_is_written_once_it_ends(
    stores: tuple[DynamoEventSiteStore, DynamoEventStore],
) -> None:
    # Given DynamoDB refusing the day's update twice for a transaction in progress on that item (a
    # hosted checkout's or a sync's purchases, written with their markers in one transaction), as it
    # refuses a plain write to an item a transaction holds, then taking it (moto never does)
    counts, purchases = stores
    refusals = {"left": 2}

    def conflict(**_: Any) -> None:
        if refusals["left"]:
            refusals["left"] -= 1
            code = "TransactionConflictException"
            raise counts._table.meta.client.exceptions.from_code(code)(
                {"Error": {"Code": code, "Message": "Transaction is ongoing for the item"}}, "UpdateItem"
            )

    counts._table.meta.client.meta.events.register("before-call.dynamodb.UpdateItem", conflict)
    service = relay(counts, Platform(), lambda: NOW)
    # When a page sends a purchase
    assert post(service, page_event("Purchase", "order-1", NOW)) == 1
    # Then it is counted (the refused write was tried again), once
    overview = EventsOverview(counts=counts, purchases=purchases, clock=lambda: NOW)
    assert refusals["left"] == 0
    assert sent_by_event(overview) == {"Purchase": 1}


def test_events_sent_whose_count_cannot_be_written_are_answered_sent(
    stores: tuple[DynamoEventSiteStore, DynamoEventStore],
) -> None:
    # Given a table that throttles every update (past the client's retries)
    counts, _ = stores
    failing(counts, "UpdateItem", "ProvisionedThroughputExceededException")
    platform = Platform()
    service = relay(counts, platform, lambda: NOW)
    # When a page sends a purchase
    sent = post(service, page_event("Purchase", "order-1", NOW))
    # Then the platform has it and the page is told so: sending it again would change nothing
    assert (sent, platform.received) == (1, [("Purchase", "order-1")])


def refused(service: SiteEvents, *events: dict[str, Any]) -> ValidationFailed:
    """What the endpoint does with a request of ``events`` refused whole (400): the error it answers."""
    body = {"events": list(events)}
    admission = service.admit("sk_key", len(events), SHOP)
    with pytest.raises(ValidationFailed) as raised:
        service.batch_of(admission, json.dumps(body), body)
    return raised.value


def test_a_request_refused_whole_is_on_the_events_page_with_why_and_what_to_do(
    stores: tuple[DynamoEventSiteStore, DynamoEventStore],
) -> None:
    # Given the site events relay counting in the real store
    counts, purchases = stores
    service = relay(counts, Platform(), lambda: NOW)
    overview = EventsOverview(counts=counts, purchases=purchases, clock=lambda: NOW)
    # When a page's shopEvent call names an event the relay does not take ("Lead"), and another sends
    # a purchase whose value is no number (walking make dev, both were a 400 the snippet swallowed)
    lead = refused(service, {**page_event("Purchase", "lead-1", NOW), "eventName": "Lead"})
    bad_value = page_event("Purchase", "order-9", NOW)
    bad_value["customData"]["value"] = "abc"
    value = refused(service, bad_value)
    # Then the page was answered 400 naming the field, as before
    assert (lead.status, lead.field) == (400, "events.0.eventName")
    assert value.field == "events.0.customData.value"
    # And the Events page lists both with the reason and what to do
    report = overview.report("org-1", 14)
    listed = [(r.event_id, r.event_name, r.reason, r.remedy) for r in report.rejections]
    assert sorted(listed) == sorted(
        [
            ("lead-1", "Lead", lead.message, lead.remedy),
            ("order-9", "Purchase", value.message, value.remedy),
        ]
    )
    assert all("shopEvent" in r.remedy for r in report.rejections)
    assert all("none of its events was sent" in r.explanation for r in report.rejections)
    # And counts them rejected: the purchase under its name, the unknown name under Other
    rows = {(row.event_name, row.rejected, row.sent) for row in report.by_source if row.source == "site"}
    assert rows == {("Other", 1, 0), ("Purchase", 1, 0)}


def test_a_request_refused_for_a_later_event_is_listed_under_that_event_not_the_first(
    stores: tuple[DynamoEventSiteStore, DynamoEventStore],
) -> None:
    # Given the site events relay counting in the real store
    counts, purchases = stores
    service = relay(counts, Platform(), lambda: NOW)
    overview = EventsOverview(counts=counts, purchases=purchases, clock=lambda: NOW)
    # When a request holds a good purchase, then an event the relay does not take (walking make dev,
    # the Events page listed this as the purchase's rejection, with the second event's reason)
    error = refused(
        service,
        page_event("Purchase", "order-2", NOW),
        {**page_event("Purchase", "lead-1", NOW), "eventName": "Lead"},
    )
    # Then the rejection names the event the failed check is about
    assert error.field == "events.1.eventName"
    [rejection] = overview.report("org-1", 14).rejections
    assert (rejection.event_id, rejection.event_name) == ("lead-1", "Lead")


def test_a_refused_body_with_what_dynamodb_cannot_store_is_still_answered_400_and_kept(
    stores: tuple[DynamoEventSiteStore, DynamoEventStore],
) -> None:
    # Given the site events relay counting in the real store
    counts, purchases = stores
    service = relay(counts, Platform(), lambda: NOW)
    # When a body names its event with a lone surrogate (valid JSON, no UTF-8) and an id with a line break
    event = {**page_event("Purchase", "x", NOW), "eventName": "\ud800Lead", "eventId": "a\nb"}
    error = refused(service, event)
    # Then the page is answered 400 all the same, and the rejection is kept without those values
    assert error.status == 400
    [kept] = (
        EventsOverview(counts=counts, purchases=purchases, clock=lambda: NOW).report("org-1", 14).rejections
    )
    assert (kept.event_id, kept.event_name, kept.reason) == (None, None, error.message)


def test_a_refused_request_whose_rejection_cannot_be_kept_is_still_answered_400(
    stores: tuple[DynamoEventSiteStore, DynamoEventStore],
) -> None:
    # Given a table that throttles every write (past the client's retries)
    counts, _ = stores
    failing(counts, "UpdateItem", "ProvisionedThroughputExceededException")
    failing(counts, "PutItem", "ProvisionedThroughputExceededException")
    service = relay(counts, Platform(), lambda: NOW)
    # When a page sends an event the relay does not take
    error = refused(service, {**page_event("Purchase", "lead-1", NOW), "eventName": "Lead"})
    # Then the page is answered the 400 naming the field, not a failure of the service
    assert (error.status, error.field) == (400, "events.0.eventName")
