"""Events sent by the service's own client and sender (``shared.events``, ``shared.platform.events``) to
the platform sandbox over real HTTP (docs/platform-notes.md §11): batches of the documented maximum,
a resend counted once, a refused batch split, a lost answer retried without counting twice."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator, Sequence
from typing import Any

import httpx
import pytest

from platform_sandbox import SandboxConfig, SandboxServer
from platform_sandbox.scenarios import PIXEL_ID
from shared.audiences.preparation import IdentifierColumns
from shared.events.building import ActionSource, Content, ServerEvent, customers, purchase_event
from shared.events.sending import send_checked
from shared.platform.client import GraphClient
from shared.platform.events import EventsReceived, send_events

pytestmark = pytest.mark.integration


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
def client(sandbox: SandboxServer, admin: httpx.Client) -> Iterator[GraphClient]:
    token = admin.post("/tokens", json={}).json()["access_token"]
    with GraphClient(
        base_url=sandbox.url,
        version="v25.0",
        app_id=sandbox.config.app_id,
        app_secret=sandbox.config.app_secret,
        access_token=token,
        backoff_base_seconds=0.01,
    ) as graph:
        yield graph


def purchases(count: int, *, start: int = 0) -> list[ServerEvent]:
    """``count`` in-store purchases of distinct customers, built as the sync builds them."""
    user_ids = [f"c-{order}" for order in range(start, start + count)]
    shop = IdentifierColumns(
        user_ids=user_ids,
        emails=[f"buyer{order}@example.com" for order in range(start, start + count)],
        phones=[None] * count,
        first_names=["Ana"] * count,
        last_names=[None] * count,
        countries=["GB"] * count,
    )
    matched = customers(shop)
    now = int(time.time())
    return [
        purchase_event(
            order_id=f"order-{order}",
            event_time=now - 3600,
            action_source=ActionSource.PHYSICAL_STORE,
            customer=matched[f"c-{order}"],
            value=20.0 + order % 7,
            currency="GBP",
            contents=[Content(f"sku-{order % 13}", 1, 20.0 + order % 7)],
        )
        for order in range(start, start + count)
    ]


def sender(client: GraphClient) -> Any:
    def send(batch: Sequence[ServerEvent]) -> EventsReceived:
        return send_events(client, PIXEL_ID, batch)

    return send


def pixel(admin: httpx.Client) -> dict[str, Any]:
    body: dict[str, Any] = admin.get(f"/pixels/{PIXEL_ID}/events").raise_for_status().json()
    return body


def events_calls(admin: httpx.Client) -> list[dict[str, Any]]:
    calls: list[dict[str, Any]] = admin.get("/requests", params={"path": "/events$"}).json()["requests"]
    return calls


def test_a_stream_arrives_in_batches_of_1000_and_a_resend_counts_once(
    client: GraphClient, admin: httpx.Client
) -> None:
    # Given 2,500 purchases
    events = purchases(2_500)
    # When they are sent, then sent again (a sync retried from the start)
    first = send_checked(sender(client), iter(events), now=time.time)
    second = send_checked(sender(client), iter(events), now=time.time)
    # Then each run took three calls of at most 1,000 events, and the platform received all each time
    assert (first.calls, first.sent, second.calls, second.sent) == (3, 2_500, 3, 2_500)
    assert [call["params"]["data"] for call in events_calls(admin)] == [
        "<1000 events>",
        "<1000 events>",
        "<500 events>",
    ] * 2
    # And the pixel counts each purchase once
    held = pixel(admin)
    assert (held["counts"], held["received"], held["deduplicated"]) == ({"Purchase": 2_500}, 5_000, 2_500)


def test_a_batch_the_platform_refuses_is_split_and_all_of_it_arrives(
    client: GraphClient, admin: httpx.Client
) -> None:
    # Given the platform refuses the first events call once, as it does a batch with a bad event
    admin.post(
        "/faults",
        json={"kind": "error", "method": "POST", "path": "/events$", "code": 100, "subcode": 2804019},
    ).raise_for_status()
    # When a batch of 1,000 is sent
    report = send_checked(sender(client), iter(purchases(1_000)), now=time.time)
    # Then it was halved once, both halves went through, and nothing is reported lost
    assert (report.calls, report.sent, report.rejected) == (3, 1_000, 0)
    assert pixel(admin)["counts"] == {"Purchase": 1_000}


def test_a_lost_answer_is_retried_and_the_batch_counts_once(client: GraphClient, admin: httpx.Client) -> None:
    # Given the platform keeps a batch but its answer is lost (a 500 after the work was done)
    admin.post(
        "/faults", json={"kind": "lost_answer", "method": "POST", "path": "/events$"}
    ).raise_for_status()
    # When the batch is sent
    report = send_checked(sender(client), iter(purchases(10)), now=time.time)
    # Then the client sent it again, and the pixel counts each purchase once
    assert report.sent == 10
    assert len(events_calls(admin)) == 2
    held = pixel(admin)
    assert (held["counts"], held["deduplicated"]) == ({"Purchase": 10}, 10)


def test_what_the_sandbox_holds_is_hashed_by_the_audiences_normaliser(
    client: GraphClient, admin: httpx.Client
) -> None:
    send_checked(sender(client), iter(purchases(1, start=7)), now=time.time)
    held = pixel(admin)["events"][0]["event"]
    assert held["user_data"] == {
        "external_id": ["c-7"],
        "em": [hashlib.sha256(b"buyer7@example.com").hexdigest()],
        "fn": [hashlib.sha256(b"ana").hexdigest()],
        "country": [hashlib.sha256(b"gb").hexdigest()],
    }
    assert held["custom_data"]["contents"] == [{"id": "sku-7", "quantity": 1, "item_price": 20.0}]
