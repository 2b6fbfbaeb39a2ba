"""The shop's pages' events counted on the Events page as the platform keeps them: once per event name
and event id. A thank-you page reloaded sends its purchase again with the order's id; the platform keeps
one, and walking make dev the Events page said "Sent 2". Through the real store on moto's DynamoDB and
the Events page's report (shared/events/overview.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import httpx
import pytest

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


def test_a_purchase_sent_again_by_a_reloaded_thank_you_page_is_counted_once(
    stores: tuple[DynamoEventSiteStore, DynamoEventStore],
) -> None:
    # Given a shop's site events relayed to a platform that takes them, counted in the real store
    counts, purchases = stores
    platform = Platform()
    clock = [NOW]
    service = SiteEvents(
        admissions=Admissions(),
        tally=counts,
        targets=RelayTargets(Connections(platform)),
        clock=lambda: clock[0],
    )
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
    service = SiteEvents(
        admissions=Admissions(),
        tally=counts,
        targets=RelayTargets(Connections(Platform())),
        clock=lambda: NOW,
    )
    # When one request carries the same add-to-cart twice (a double click)
    event = page_event("AddToCart", "cart-7", NOW)
    post(service, event, event)
    # Then the Events page counts it once
    overview = EventsOverview(counts=counts, purchases=purchases, clock=lambda: NOW)
    assert sent_by_event(overview) == {"AddToCart": 1}
