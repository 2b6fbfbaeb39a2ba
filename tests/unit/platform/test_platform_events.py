"""The client's Conversions API request (docs/platform-notes.md §11): one batch to a pixel's ``/events``."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from shared.errors import ValidationFailed
from shared.platform.client import GraphClient
from shared.platform.errors import (
    EventsRefused,
    PlatformRequestFailed,
    PlatformThrottled,
    PlatformUnavailable,
)
from shared.platform.events import MAX_EVENTS_PER_CALL, send_events
from tests.unit.platform.fake_graph import PROOF, FakeGraph, buc_header, graph_error

PIXEL = "30000000000000001"


def purchase(order_id: str | None = "order-1") -> dict[str, Any]:
    event: dict[str, Any] = {
        "event_name": "Purchase",
        "event_time": 1_790_000_000,
        "action_source": "other",
        "user_data": {"external_id": ["c-1"]},
        "custom_data": {"value": 12.5, "currency": "GBP"},
    }
    if order_id is not None:
        event["event_id"] = order_id
    return event


def answer(count: int) -> dict[str, Any]:
    return {"events_received": count, "messages": [], "fbtrace_id": "AbC123"}


def test_events_go_to_the_pixels_events_edge_as_one_json_body(
    client: GraphClient, fake_graph: FakeGraph
) -> None:
    # Given two events and a test event code
    fake_graph.reply(answer(2))
    # When they are sent
    send_events(client, PIXEL, [purchase("order-1"), purchase("order-2")], test_event_code="TEST9")
    # Then one POST carries them as objects in a JSON body, with the proof and the test code
    request = fake_graph.last
    assert (request.method, request.url.path) == ("POST", f"/v25.0/{PIXEL}/events")
    body = fake_graph.json_body()
    assert [event["event_id"] for event in body["data"]] == ["order-1", "order-2"]
    assert body["test_event_code"] == "TEST9"
    assert body["appsecret_proof"] == PROOF
    assert "access_token" not in request.url.params


def test_no_test_event_code_means_none_is_sent(client: GraphClient, fake_graph: FakeGraph) -> None:
    fake_graph.reply(answer(1))
    send_events(client, PIXEL, [purchase()])
    assert "test_event_code" not in fake_graph.json_body()


def test_the_answer_is_read_as_the_platform_gives_it(client: GraphClient, fake_graph: FakeGraph) -> None:
    fake_graph.reply({"events_received": 3, "messages": ["note"], "fbtrace_id": "Zz9"})
    received = send_events(client, PIXEL, [purchase("a"), purchase("b"), purchase("c")])
    assert (received.events_received, received.messages, received.fbtrace_id) == (3, ("note",), "Zz9")


@pytest.mark.parametrize("count", [0, MAX_EVENTS_PER_CALL + 1])
def test_a_batch_must_hold_1_to_1000_events(client: GraphClient, fake_graph: FakeGraph, count: int) -> None:
    with pytest.raises(ValidationFailed):
        send_events(client, PIXEL, [purchase(f"o{i}") for i in range(count)])
    assert fake_graph.requests == []


def test_a_batch_whose_events_all_have_ids_is_retried_after_a_transient_failure(
    client: GraphClient, fake_graph: FakeGraph, sleeps: list[float]
) -> None:
    # Given the platform fails once with a transient 500, then accepts
    fake_graph.reply(graph_error(2, is_transient=True), status=500)
    fake_graph.reply(answer(1))
    # When an event with an id is sent
    received = send_events(client, PIXEL, [purchase("order-1")])
    # Then it is sent again (the platform keeps one per event id) and succeeds
    assert received.events_received == 1
    assert len(fake_graph.requests) == 2
    assert len(sleeps) == 1


def test_a_batch_with_an_event_without_id_is_not_resent_when_it_may_have_counted(
    client: GraphClient, fake_graph: FakeGraph
) -> None:
    fake_graph.fail(httpx.ReadTimeout)
    with pytest.raises(PlatformUnavailable):
        send_events(client, PIXEL, [purchase("order-1"), purchase(None)])
    assert len(fake_graph.requests) == 1


def test_an_event_too_old_is_a_refusal_of_the_events(client: GraphClient, fake_graph: FakeGraph) -> None:
    # Given the platform's answer to an event older than 7 days
    fake_graph.reply(
        graph_error(100, 2804003, error_user_title="Event Timestamp Too Old", fbtrace_id="T1"), status=400
    )
    # When the batch is sent
    with pytest.raises(EventsRefused) as raised:
        send_events(client, PIXEL, [purchase()])
    # Then it is the events' refusal, saying what to do, with the platform's own words kept
    assert "older than" in raised.value.message
    assert raised.value.remedy is not None
    assert "7 days" in raised.value.remedy
    assert raised.value.detail is not None
    assert raised.value.detail.user_title == "Event Timestamp Too Old"
    assert raised.value.details["fbtrace_id"] == "T1"
    assert len(fake_graph.requests) == 1


def test_an_undocumented_invalid_parameter_subcode_is_still_a_refusal_of_the_events(
    client: GraphClient, fake_graph: FakeGraph
) -> None:
    fake_graph.reply(graph_error(100, 2804999), status=400)
    with pytest.raises(EventsRefused):
        send_events(client, PIXEL, [purchase()])


def test_a_pixel_the_token_cannot_see_is_not_a_refusal_of_the_events(
    client: GraphClient, fake_graph: FakeGraph
) -> None:
    fake_graph.reply(graph_error(100, 33), status=400)
    with pytest.raises(PlatformRequestFailed) as raised:
        send_events(client, PIXEL, [purchase()])
    assert not isinstance(raised.value, EventsRefused)


def test_throttling_is_waited_out_and_the_usage_headers_read(
    client: GraphClient, fake_graph: FakeGraph, sleeps: list[float]
) -> None:
    # Given a throttled answer whose usage header says access returns in 2 minutes, then success
    fake_graph.reply(graph_error(80004), status=400, headers=buc_header(100, regain_minutes=2))
    fake_graph.reply(answer(1), headers=buc_header(40))
    # When the batch is sent
    send_events(client, PIXEL, [purchase()])
    # Then the client waited as long as the platform said, and kept the latest usage
    assert sleeps == [120.0]
    assert client.last_usage is not None
    assert client.last_usage.max_utilisation_pct == 40


def test_throttling_beyond_the_retries_is_handed_to_the_caller(
    client: GraphClient, fake_graph: FakeGraph
) -> None:
    for _ in range(4):
        fake_graph.reply(graph_error(4), status=400)
    with pytest.raises(PlatformThrottled):
        send_events(client, PIXEL, [purchase()])
