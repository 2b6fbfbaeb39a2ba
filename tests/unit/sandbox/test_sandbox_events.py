"""The sandbox's Conversions API, ``POST /<pixel_id>/events`` (docs/platform-notes.md §11): what it
refuses (the whole request, with the platform's code), what it answers, and what a pixel keeps."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from platform_sandbox import SandboxState
from platform_sandbox.scenarios import PIXEL_ID
from tests.unit.sandbox.samples import ACCOUNT, error_of, sha256

DAY = 86_400
Graph = Callable[..., TestResponse]


def event(state: SandboxState, **changes: Any) -> dict[str, Any]:
    """A valid website purchase at the sandbox's now, with ``changes`` applied (None removes a key)."""
    base: dict[str, Any] = {
        "event_name": "Purchase",
        "event_time": int(state.clock.now()),
        "event_id": "order-1",
        "action_source": "website",
        "event_source_url": "https://shop.example.com/checkout",
        "user_data": {
            "em": [sha256("mary@example.com")],
            "external_id": [sha256("c-1")],
            "client_ip_address": "203.0.113.7",
            "client_user_agent": "Mozilla/5.0",
            "fbp": "fb.1.1558571054389.1098115397",
        },
        "custom_data": {"value": 12.5, "currency": "GBP", "content_ids": ["sku-1"]},
    }
    for key, value in changes.items():
        if value is None:
            base.pop(key, None)
        else:
            base[key] = value
    return base


def post(graph: Graph, events: list[Any], **extra: Any) -> TestResponse:
    return graph("POST", f"/{PIXEL_ID}/events", json={"data": events, **extra})


def held(client: FlaskClient) -> dict[str, Any]:
    body: dict[str, Any] = client.get(f"/_admin/pixels/{PIXEL_ID}/events").get_json()
    return body


def refusal(response: TestResponse) -> tuple[int, int | None, str]:
    error = error_of(response)
    return error["code"], error.get("error_subcode"), error.get("error_user_msg", error["message"])


# --- What it answers and keeps -----------------------------------------------------------------------


def test_an_accepted_request_answers_the_count_and_a_trace_id(graph: Graph, state: SandboxState) -> None:
    # When two valid events are sent
    response = post(graph, [event(state), event(state, event_id="order-2")])
    # Then the platform's three fields come back
    body = response.get_json()
    assert response.status_code == 200
    assert body["events_received"] == 2
    assert body["messages"] == []
    assert isinstance(body["fbtrace_id"], str)
    assert body["fbtrace_id"]


def test_events_arrive_as_the_sdk_sends_them_a_form_field_of_json_strings(
    graph: Graph, state: SandboxState, client: FlaskClient
) -> None:
    # Given the SDK's encoding: data is a JSON array whose items are JSON strings of events
    data = json.dumps([json.dumps(event(state))])
    # When it is posted as a form field
    response = graph("POST", f"/{PIXEL_ID}/events", data={"data": data})
    # Then the event is received as an object
    assert response.get_json()["events_received"] == 1
    assert held(client)["events"][0]["event"]["event_id"] == "order-1"


def test_the_same_event_id_and_name_twice_is_received_twice_but_counted_once(
    graph: Graph, state: SandboxState, client: FlaskClient
) -> None:
    # When a purchase is sent, then sent again (a retried sync)
    post(graph, [event(state)])
    second = post(graph, [event(state)])
    # Then the platform says it received it, and keeps one
    assert second.get_json()["events_received"] == 1
    pixel = held(client)
    assert (pixel["received"], pixel["deduplicated"], pixel["counts"]) == (2, 1, {"Purchase": 1})
    assert [entry["deduplicated"] for entry in pixel["events"]] == [False, True]


def test_the_same_event_id_after_48_hours_counts_again(
    graph: Graph, state: SandboxState, client: FlaskClient
) -> None:
    # Given a purchase sent 49 hours ago
    post(graph, [event(state)])
    state.clock.advance(49 * 3600)
    # When the same id is sent again (with a fresh time)
    post(graph, [event(state)])
    # Then both count: the de-duplication window has passed
    assert held(client)["counts"] == {"Purchase": 2}


def test_test_events_are_tagged_and_do_not_fire_the_pixel(
    graph: Graph, state: SandboxState, client: FlaskClient
) -> None:
    # When a purchase is sent with a test event code
    response = post(graph, [event(state)], test_event_code="TEST123")
    # Then it is received, tagged and counted as a test, and the pixel has not fired
    assert response.get_json()["events_received"] == 1
    pixel = held(client)
    assert (pixel["counts"], pixel["test_counts"]) == ({}, {"Purchase": 1})
    assert pixel["events"][0]["test_event_code"] == "TEST123"
    assert pixel["last_fired_time"] is None


def test_a_live_event_sets_the_pixels_last_fired_time(graph: Graph, state: SandboxState) -> None:
    # Given the pixel has never fired
    before = graph("GET", f"/{ACCOUNT}/adspixels", query_string={"fields": "last_fired_time"})
    assert before.get_json()["data"][0]["last_fired_time"] is None
    # When a live event arrives
    post(graph, [event(state)])
    # Then the account's pixel and the pixel node both report the time, as the Graph writes times
    listed = graph("GET", f"/{ACCOUNT}/adspixels", query_string={"fields": "last_fired_time"})
    node = graph("GET", f"/{PIXEL_ID}", query_string={"fields": "name,last_fired_time"})
    fired = listed.get_json()["data"][0]["last_fired_time"]
    assert fired is not None
    assert fired.endswith("+0000")
    assert node.get_json()["last_fired_time"] == fired


def test_the_request_log_counts_events_instead_of_holding_them(
    graph: Graph, state: SandboxState, client: FlaskClient
) -> None:
    post(graph, [event(state), event(state, event_id="order-2")])
    logged = client.get("/_admin/requests", query_string={"path": "/events$"}).get_json()["requests"]
    assert logged[0]["params"]["data"] == "<2 events>"


# --- What it refuses: the whole request ----------------------------------------------------------


def test_more_than_1000_events_are_refused(graph: Graph, state: SandboxState, client: FlaskClient) -> None:
    events = [event(state, event_id=f"order-{i}") for i in range(1001)]
    response = post(graph, events)
    assert refusal(response)[0] == 100
    assert "at most 1000 events" in refusal(response)[2]
    assert held(client)["received"] == 0


def test_exactly_1000_events_are_taken(graph: Graph, state: SandboxState) -> None:
    events = [event(state, event_id=f"order-{i}") for i in range(1000)]
    assert post(graph, events).get_json()["events_received"] == 1000


def test_one_event_older_than_seven_days_fails_the_whole_request(
    graph: Graph, state: SandboxState, client: FlaskClient
) -> None:
    # Given a fresh event and one eight days old
    old = event(state, event_id="order-old", event_time=int(state.clock.now()) - 8 * DAY)
    # When both are sent together
    response = post(graph, [event(state), old])
    # Then the request fails with the platform's code, naming the second event, and nothing is kept
    code, subcode, message = refusal(response)
    assert (response.status_code, code, subcode) == (400, 100, 2804003)
    assert error_of(response)["error_user_title"] == "Event Timestamp Too Old"
    assert "$['data'][1]['event_time']" in message
    assert held(client)["received"] == 0


def test_a_physical_store_event_may_be_62_days_old(graph: Graph, state: SandboxState) -> None:
    now = int(state.clock.now())
    in_store = event(state, action_source="physical_store", event_source_url=None, event_time=now - 61 * DAY)
    assert post(graph, [in_store]).status_code == 200
    too_old = {**in_store, "event_time": now - 63 * DAY}
    assert refusal(post(graph, [too_old]))[:2] == (100, 2804003)


def test_a_millisecond_timestamp_is_refused_as_in_the_future(graph: Graph, state: SandboxState) -> None:
    response = post(graph, [event(state, event_time=int(state.clock.now() * 1000))])
    code, subcode, message = refusal(response)
    assert (code, subcode) == (100, 2804019)
    assert "$['data'][0]['event_time'] is in the future" in message


@pytest.mark.parametrize(
    ("missing", "path"),
    [
        ("event_name", "$['data'][0]['event_name']"),
        ("event_time", "$['data'][0]['event_time']"),
        ("action_source", "$['data'][0]['action_source']"),
        ("user_data", "$['data'][0]['user_data']"),
        ("event_source_url", "$['data'][0]['event_source_url']"),
    ],
)
def test_a_required_parameter_missing_is_named(
    graph: Graph, state: SandboxState, missing: str, path: str
) -> None:
    code, subcode, message = refusal(post(graph, [event(state, **{missing: None})]))
    assert (code, subcode) == (100, 2804019)
    assert message.startswith(f"The parameter {path} is required")


def test_a_website_event_needs_the_browsers_user_agent(graph: Graph, state: SandboxState) -> None:
    user_data = {"em": [sha256("mary@example.com")]}
    code, subcode, message = refusal(post(graph, [event(state, user_data=user_data)]))
    assert (code, subcode) == (100, 2804019)
    assert "['user_data']['client_user_agent'] is required for website events" in message


def test_an_event_outside_the_website_needs_neither_url_nor_user_agent(
    graph: Graph, state: SandboxState
) -> None:
    offline = event(state, action_source="other", event_source_url=None, user_data={"em": [sha256("a@b.co")]})
    assert post(graph, [offline]).status_code == 200


def test_an_unknown_action_source_is_refused(graph: Graph, state: SandboxState) -> None:
    code, _, message = refusal(post(graph, [event(state, action_source="web")]))
    assert code == 100
    assert "['action_source'] must be one of" in message


def test_custom_event_names_are_taken_and_overlong_ones_refused(graph: Graph, state: SandboxState) -> None:
    assert post(graph, [event(state, event_name="WishlistShared", custom_data={})]).status_code == 200
    assert refusal(post(graph, [event(state, event_name="x" * 51, custom_data={})]))[1] == 2804019


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("em", ["mary@example.com"]),
        ("ph", "15559876543"),
        ("em", [sha256("mary@example.com").upper()]),
        ("country", ["gb"]),
    ],
)
def test_customer_information_that_must_be_hashed_is_refused_in_clear(
    graph: Graph, state: SandboxState, key: str, value: Any
) -> None:
    user_data = {**event(state)["user_data"], key: value}
    code, subcode, message = refusal(post(graph, [event(state, user_data=user_data)]))
    assert (code, subcode) == (100, 2804019)
    assert f"['user_data']['{key}'] must be hashed" in message


@pytest.mark.parametrize("key", ["client_ip_address", "client_user_agent", "fbp", "fbc"])
def test_customer_information_that_must_not_be_hashed_is_refused_hashed(
    graph: Graph, state: SandboxState, key: str
) -> None:
    user_data = {**event(state)["user_data"], key: sha256("anything")}
    message = refusal(post(graph, [event(state, user_data=user_data)]))[2]
    assert f"['user_data']['{key}'] must not be hashed" in message


def test_external_id_may_be_hashed_or_not(graph: Graph, state: SandboxState) -> None:
    for external_id in (["c-1"], [sha256("c-1")], "c-1"):
        user_data = {"external_id": external_id, "client_user_agent": "Mozilla/5.0"}
        assert post(graph, [event(state, user_data=user_data)]).status_code == 200


def test_an_event_without_customer_information_is_refused(graph: Graph, state: SandboxState) -> None:
    user_data = {"client_user_agent": "Mozilla/5.0"}
    code, subcode, _ = refusal(post(graph, [event(state, user_data=user_data)]))
    assert (code, subcode) == (100, 2804050)


def test_an_invalid_ip_address_is_refused(graph: Graph, state: SandboxState) -> None:
    user_data = {**event(state)["user_data"], "client_ip_address": "999.1.1.1"}
    assert "must be an IPv4 or IPv6 address" in refusal(post(graph, [event(state, user_data=user_data)]))[2]


@pytest.mark.parametrize(
    ("custom_data", "problem"),
    [
        ({"value": "12.50", "currency": "GBP"}, "['value'] must be a number"),
        ({"value": 12.5, "currency": "pounds"}, "['currency'] must be a three-letter ISO 4217 code"),
        ({"value": 1, "currency": "GBP", "content_ids": [7]}, "['content_ids'] must be an array of strings"),
        ({"value": 1, "currency": "GBP", "contents": [{"quantity": 1}]}, "['contents'][0] must be an object"),
        ({"value": 1, "currency": "GBP", "num_items": 1.5}, "['num_items'] must be an integer"),
        ({"value": 1, "currency": "GBP", "predicted_ltv": True}, "['predicted_ltv'] must be a number"),
        ({"currency": "GBP"}, "['custom_data']['value'] is required for Purchase"),
    ],
)
def test_custom_data_of_the_wrong_type_is_refused(
    graph: Graph, state: SandboxState, custom_data: dict[str, Any], problem: str
) -> None:
    code, subcode, message = refusal(post(graph, [event(state, custom_data=custom_data)]))
    assert (code, subcode) == (100, 2804019)
    assert problem in message


def test_a_currency_is_taken_in_either_case(graph: Graph, state: SandboxState) -> None:
    # The SDK lower-cases it; ISO 4217 writes it in capitals
    assert post(graph, [event(state, custom_data={"value": 1, "currency": "usd"})]).status_code == 200


def test_limited_data_use_options_are_checked(graph: Graph, state: SandboxState) -> None:
    ldu = event(
        state,
        data_processing_options=["LDU"],
        data_processing_options_country=1,
        data_processing_options_state=1000,
    )
    assert post(graph, [ldu]).status_code == 200
    wrong = {**ldu, "data_processing_options_state": 6}
    assert "['data_processing_options_state'] must be 0 or 1000" in refusal(post(graph, [wrong]))[2]


def test_a_parameter_the_platform_does_not_know_is_refused(graph: Graph, state: SandboxState) -> None:
    message = refusal(post(graph, [event(state, value=12)]))[2]
    assert "$['data'][0]['value'] is not a server event parameter" in message


def test_a_pixel_of_an_account_the_user_cannot_see_is_100_33(graph: Graph, state: SandboxState) -> None:
    response = graph("POST", "/39999999999999999/events", json={"data": [event(state)]})
    assert refusal(response)[:2] == (100, 33)


def test_posting_events_needs_ads_management(client: FlaskClient, state: SandboxState) -> None:
    token = client.post("/_admin/tokens", json={"scopes": ["ads_read"]}).get_json()["access_token"]
    response = client.post(
        f"/v25.0/{PIXEL_ID}/events",
        json={"data": [event(state)]},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert refusal(response)[0] == 294
