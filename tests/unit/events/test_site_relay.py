"""The site events relay when the platform fails (issue 21, "Errors and bad input"): a failure that waiting
cures is answered 503 with Retry-After, so the page may send its events again (they keep their ids); a
refusal the page cannot cure by waiting is a 409. Never a 500."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from shared.errors import Conflict
from shared.events.site_events import EventsNotRelayed, RelayTargets, SiteEventBatch, SiteEvents
from shared.platform.client import GraphClient
from shared.records.connections import Connection
from shared.records.events import SiteAdmission, StoredRejection

NOW = datetime(2026, 11, 28, 12, 0, tzinfo=UTC)
SHOP = "https://shop.example.com"


class Admissions:
    def admit(self, key: str, events: int, now: float, limit: int, window_seconds: int) -> SiteAdmission:
        return SiteAdmission(org_id="org-1", domains=["shop.example.com"])

    def key_domains(self, key: str, now: float) -> list[str]:
        return ["shop.example.com"]


class Tally:
    def __init__(self) -> None:
        self.counts: dict[tuple[str, str, str], int] = {}

    def add_counts(self, org_id: str, day: str, counts: dict[tuple[str, str, str], int]) -> None:
        for key, value in counts.items():
            self.counts[key] = self.counts.get(key, 0) + value

    def mark_counted(self, org_id: str, markers: Sequence[str], at: datetime, keep_seconds: int) -> list[str]:
        return list(markers)

    def add_rejections(self, org_id: str, rejections: Sequence[StoredRejection]) -> None:
        pass


class Platform:
    """The Graph API's answers: the ad account's pixel, and (status, error) to each events call."""

    def __init__(self, status: int, error: dict[str, Any]) -> None:
        self.status, self.error = status, error
        self.event_calls = 0

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/adspixels"):
            return httpx.Response(200, json={"data": [{"id": "px1", "name": "Shop"}]})
        self.event_calls += 1
        return httpx.Response(self.status, json={"error": {"fbtrace_id": "Atrace", **self.error}})


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
            max_retries=2,
            backoff_base_seconds=0.0,
            sleep=lambda seconds: None,
            transport=httpx.MockTransport(self.platform),
        )
        return Connection(org_id=org_id, status="active", ad_account_id="act_1"), graph


def relay(platform: Platform) -> tuple[SiteEvents, Tally]:
    tally = Tally()
    service = SiteEvents(
        admissions=Admissions(),
        tally=tally,
        targets=RelayTargets(Connections(platform)),
        clock=lambda: NOW,
    )
    return service, tally


def purchase() -> SiteEventBatch:
    event = {
        "eventName": "Purchase",
        "eventId": "order-1",
        "eventTime": int(NOW.timestamp()),
        "url": f"{SHOP}/thanks",
        "customData": {"value": 24, "currency": "GBP"},
    }
    return SiteEventBatch.model_validate(json.loads(json.dumps({"events": [event]})))


def send(service: SiteEvents) -> None:
    admission = service.admit("sk_key", 1, SHOP)
    service.receive(
        admission, purchase(), client_ip="203.0.113.9", user_agent="Browser", seconds_left=lambda: 20.0
    )


TRANSIENT = {
    # What the platform answers when it failed on its side and says so: HTTP 500, code 2, is_transient.
    "unexpected_error_is_transient": (
        500,
        {
            "message": "An unexpected error has occurred. Please retry your request later.",
            "type": "OAuthException",
            "code": 2,
            "is_transient": True,
        },
    ),
    "service_unavailable_code_1": (500, {"message": "An unknown error occurred", "code": 1}),
    "bare_5xx": (503, {"message": "Service temporarily unavailable"}),
}


@pytest.mark.parametrize("answer", TRANSIENT.values(), ids=TRANSIENT.keys())
def test_a_platform_failure_that_waiting_cures_is_a_503_with_retry_after(
    answer: tuple[int, dict[str, Any]],
) -> None:
    # Given a platform that keeps failing the events call on its side
    platform = Platform(*answer)
    service, tally = relay(platform)
    # When a page's purchase is relayed
    with pytest.raises(EventsNotRelayed) as raised:
        send(service)
    # Then the client tried it again first, and the page is told to send it again after the wait
    assert platform.event_calls == 3
    assert raised.value.status == 503
    assert raised.value.retry_after_seconds >= 1
    assert tally.counts == {("site", "Purchase", "failed"): 1}


def test_a_refusal_waiting_does_not_cure_is_a_409_with_the_platforms_reference() -> None:
    # Given a platform that refuses the call for a reason of its own (a permission, say), not transient
    platform = Platform(400, {"message": "(#200) Permissions error", "code": 200})
    service, tally = relay(platform)
    # When a page's purchase is relayed
    with pytest.raises(Conflict) as raised:
        send(service)
    # Then it was sent once, and the answer is a conflict with what to do, not a wait
    assert platform.event_calls == 1
    assert (raised.value.status, raised.value.retry_after_seconds) == (409, None)
    assert "Permissions" in raised.value.message
    assert raised.value.remedy
    assert tally.counts == {("site", "Purchase", "failed"): 1}
