"""The sandbox's Conversions API driven by Meta's own server-side classes (`facebook_business.adobjects.
serverside`: `EventRequest`, `Event`, `UserData`, `CustomData`), unpatched, over real HTTP.

The SDK posts the events as a form field holding a JSON array of JSON strings, hashes and normalises
the customer information itself and reads `events_received`, `messages` and `fbtrace_id` from the
answer (docs/platform-notes.md §11.1, §11.4, §11.8).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from facebook_business.adobjects.adspixel import AdsPixel
from facebook_business.adobjects.serverside.action_source import ActionSource
from facebook_business.adobjects.serverside.content import Content
from facebook_business.adobjects.serverside.custom_data import CustomData
from facebook_business.adobjects.serverside.event import Event
from facebook_business.adobjects.serverside.event_request import EventRequest
from facebook_business.adobjects.serverside.user_data import UserData
from facebook_business.api import FacebookAdsApi
from facebook_business.exceptions import FacebookRequestError

from platform_sandbox import SandboxConfig, SandboxServer
from platform_sandbox.scenarios import PIXEL_ID
from tests.integration.test_platform_sdk import sdk_api

pytestmark = pytest.mark.integration

# docs/platform-notes.md §3.7: sha256("mary@example.com").
MARY_EMAIL_SHA256 = "f1904cf1a9d73a55fa5de0ac823c4403ded71afd4c3248d00bdcd0866552bb79"
DAY = 86_400


@pytest.fixture(scope="module")
def sandbox() -> Iterator[SandboxServer]:
    with SandboxServer(SandboxConfig(require_appsecret_proof=True)) as server:
        yield server


@pytest.fixture
def admin(sandbox: SandboxServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=f"{sandbox.url}/_admin", timeout=10) as client:
        client.post("/reset").raise_for_status()
        yield client


@pytest.fixture
def api(sandbox: SandboxServer, admin: httpx.Client) -> FacebookAdsApi:
    token: str = admin.post("/tokens", json={}).json()["access_token"]
    return sdk_api(sandbox, token)


def purchase(order_id: str, *, event_time: int | None = None) -> Event:
    """A website purchase as the SDK's own example builds it: raw customer information it hashes."""
    user = UserData(
        emails=["Mary@Example.com"],
        phones=["+1 (555) 987-6543"],
        client_ip_address="203.0.113.7",
        client_user_agent="Mozilla/5.0 (X11; Linux x86_64)",
        fbc="fb.1.1554763741205.AbCdEfGhIjKlMnOpQrStUvWxYz1234567890",
        fbp="fb.1.1558571054389.1098115397",
    )
    custom = CustomData(
        value=123.45,
        currency="usd",
        content_ids=["sku-1"],
        contents=[Content(product_id="sku-1", quantity=2, item_price=61.725)],
    )
    return Event(
        event_name="Purchase",
        event_time=event_time or int(time.time()),
        event_id=order_id,
        user_data=user,
        custom_data=custom,
        event_source_url="https://shop.example.com/checkout/done",
        action_source=ActionSource.WEBSITE,
    )


def pixel_events(admin: httpx.Client) -> dict[str, Any]:
    body: dict[str, Any] = admin.get(f"/pixels/{PIXEL_ID}/events").raise_for_status().json()
    return body


def test_the_sdk_sends_purchases_and_reads_the_answer(api: FacebookAdsApi, admin: httpx.Client) -> None:
    # Given two purchases built with the SDK's server-side classes
    request = EventRequest(pixel_id=PIXEL_ID, events=[purchase("order-1"), purchase("order-2")])
    # When the SDK executes the request against the sandbox
    response = request.execute()
    # Then it reads the platform's answer
    assert response.events_received == 2
    assert response.messages == []
    assert response.fbtrace_id
    # And the sandbox holds both, hashed by the SDK as the rules say, the rest as sent
    held = pixel_events(admin)
    assert held["counts"] == {"Purchase": 2}
    event = held["events"][0]["event"]
    assert event["event_id"] == "order-1"
    assert event["user_data"]["em"] == [MARY_EMAIL_SHA256]
    assert event["user_data"]["ph"] == [hashlib.sha256(b"15559876543").hexdigest()]
    assert event["user_data"]["client_ip_address"] == "203.0.113.7"
    assert event["custom_data"]["contents"] == [{"id": "sku-1", "quantity": 2, "item_price": 61.725}]


def test_the_sdks_test_event_code_tags_events_without_firing_the_pixel(
    api: FacebookAdsApi, admin: httpx.Client
) -> None:
    # When the SDK sends a purchase with a test event code
    EventRequest(pixel_id=PIXEL_ID, events=[purchase("order-t")], test_event_code="TEST4521").execute()
    # Then the sandbox counts it as a test event, and the pixel has still not fired
    held = pixel_events(admin)
    assert (held["counts"], held["test_counts"]) == ({}, {"Purchase": 1})
    assert held["events"][0]["test_event_code"] == "TEST4521"
    assert held["last_fired_time"] is None


def test_the_sdk_gets_the_refusal_of_an_event_older_than_seven_days(
    api: FacebookAdsApi, admin: httpx.Client
) -> None:
    # Given a fresh purchase and one eight days old in the same request
    events = [purchase("order-new"), purchase("order-old", event_time=int(time.time()) - 8 * DAY)]
    # When the SDK sends them
    with pytest.raises(FacebookRequestError) as raised:
        EventRequest(pixel_id=PIXEL_ID, events=events).execute()
    # Then the whole request is refused with the platform's code, and nothing was kept
    assert (raised.value.api_error_code(), raised.value.api_error_subcode()) == (100, 2804003)
    assert raised.value.body()["error"]["error_user_title"] == "Event Timestamp Too Old"
    assert pixel_events(admin)["received"] == 0


def test_the_sdk_reads_the_pixels_last_fired_time(api: FacebookAdsApi, admin: httpx.Client) -> None:
    # Given a pixel that never received an event (api_get fills the SDK object in place)
    before = AdsPixel(PIXEL_ID, api=api).api_get(fields=[AdsPixel.Field.name, AdsPixel.Field.last_fired_time])
    assert before[AdsPixel.Field.last_fired_time] is None
    # When the SDK sends a purchase
    EventRequest(pixel_id=PIXEL_ID, events=[purchase("order-9")]).execute()
    # Then the pixel's last_fired_time is the time it arrived, as the platform writes times
    after = AdsPixel(PIXEL_ID, api=api).api_get(fields=[AdsPixel.Field.last_fired_time])
    assert after[AdsPixel.Field.last_fired_time] == pixel_events(admin)["last_fired_time"]
    assert after[AdsPixel.Field.last_fired_time].endswith("+0000")
