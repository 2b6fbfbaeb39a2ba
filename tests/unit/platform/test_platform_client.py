"""GraphClient: request shape, retries and back-off, usage headers, paging."""

from __future__ import annotations

import httpx
import pytest

from shared.platform.client import GraphClient
from shared.platform.errors import (
    PlatformRequestFailed,
    PlatformThrottled,
    PlatformUnavailable,
    ReconnectRequired,
)
from tests.unit.deployment import deployed_settings
from tests.unit.platform.fake_graph import ACCESS_TOKEN, PROOF, FakeGraph, buc_header, graph_error

# --- Request shape ------------------------------------------------------------------------------


def test_calls_go_to_the_versioned_graph_root(client: GraphClient, fake_graph: FakeGraph) -> None:
    # Given
    fake_graph.reply({"id": "1"})
    # When
    client.get("/me", {"fields": "id"})
    # Then
    assert fake_graph.last.url.path == "/v25.0/me"
    assert fake_graph.last.url.host == "graph.test"


def test_access_token_travels_in_the_authorization_header_not_the_url(
    client: GraphClient, fake_graph: FakeGraph
) -> None:
    # Given
    fake_graph.reply({"id": "1"})
    # When
    client.get("me")
    # Then
    assert fake_graph.last.headers["Authorization"] == f"Bearer {ACCESS_TOKEN}"
    assert ACCESS_TOKEN not in str(fake_graph.last.url).replace(PROOF, "")


def test_get_carries_the_appsecret_proof_in_the_query(client: GraphClient, fake_graph: FakeGraph) -> None:
    # Given
    fake_graph.reply({"id": "1"})
    # When
    client.get("me")
    # Then
    assert fake_graph.query()["appsecret_proof"] == PROOF


def test_post_carries_the_appsecret_proof_in_the_body(client: GraphClient, fake_graph: FakeGraph) -> None:
    # Given
    fake_graph.reply({"id": "1"})
    # When
    client.post("act_42/campaigns", {"name": "Sales"})
    # Then
    assert fake_graph.form()["appsecret_proof"] == PROOF
    assert "appsecret_proof" not in fake_graph.query()


def test_a_json_post_sends_one_json_body_with_the_proof_and_nested_values_as_objects(
    client: GraphClient, fake_graph: FakeGraph
) -> None:
    # Given
    fake_graph.reply({"num_received": 1})
    payload = {"schema": ["EMAIL"], "is_raw": True, "data": [["a" * 64]]}
    # When
    client.post("99/users", {"payload": payload, "session": {"batch_seq": 1}, "skip": None}, json_body=True)
    # Then
    assert fake_graph.json_body() == {
        "payload": payload,
        "session": {"batch_seq": 1},
        "appsecret_proof": PROOF,
    }
    assert fake_graph.last.headers["Authorization"] == f"Bearer {ACCESS_TOKEN}"
    assert not fake_graph.query()


def test_a_client_without_token_sends_neither_header_nor_proof(
    client: GraphClient, fake_graph: FakeGraph
) -> None:
    # Given
    fake_graph.reply({"access_token": "x"})
    # When
    client.with_access_token(None).get("oauth/access_token", {"code": "abc"})
    # Then
    assert "Authorization" not in fake_graph.last.headers
    assert "appsecret_proof" not in fake_graph.query()


def test_nested_values_are_compact_sorted_json_and_booleans_are_lowercase(
    client: GraphClient, fake_graph: FakeGraph
) -> None:
    # Given
    fake_graph.reply({"id": "1"})
    # When
    client.post(
        "act_42/adsets", {"targeting": {"b": [1, 2], "a": {"y": 1, "x": 2}}, "flag": False, "skip": None}
    )
    # Then
    form = fake_graph.form()
    assert form["targeting"] == '{"a":{"x":2,"y":1},"b":[1,2]}'
    assert form["flag"] == "false"
    assert "skip" not in form


def test_delete_sends_its_data_in_the_body_not_the_url(client: GraphClient, fake_graph: FakeGraph) -> None:
    # Given
    fake_graph.reply({"num_received": 1})
    payload = {"schema": ["EMAIL"], "data": [["a" * 64]] * 500}
    # When
    client.delete("99/users", {"payload": payload})
    # Then
    assert fake_graph.last.method == "DELETE"
    assert fake_graph.json_field("payload") == payload
    assert "payload" not in fake_graph.query()


def test_a_response_comes_with_its_usage_snapshot(client: GraphClient, fake_graph: FakeGraph) -> None:
    # Given
    fake_graph.reply(
        {"id": "1"}, headers={"X-App-Usage": '{"call_count":28,"total_time":25,"total_cputime":25}'}
    )
    # When
    response = client.get("me")
    # Then
    assert response.body == {"id": "1"}
    assert response.usage.max_utilisation_pct == 28
    assert client.last_usage == response.usage


def test_from_settings_uses_the_configured_url_version_and_retries(fake_graph: FakeGraph) -> None:
    # Given
    settings = deployed_settings(
        platform_graph_url="http://127.0.0.1:8765/",
        platform_api_version="v24.0",
        platform_app_id="1",
        platform_max_retries=1,
    )
    http = httpx.Client(transport=httpx.MockTransport(fake_graph))
    sleeps: list[float] = []
    client = GraphClient.from_settings(settings, "token", app_secret="s", http=http, sleep=sleeps.append)
    fake_graph.reply(graph_error(2), status=500)
    fake_graph.reply(graph_error(2), status=500)
    # When
    with pytest.raises(PlatformRequestFailed):
        client.get("me")
    # Then
    assert str(fake_graph.requests[0].url).startswith("http://127.0.0.1:8765/v24.0/me")
    assert len(fake_graph.requests) == 2


# --- Errors -------------------------------------------------------------------------------------


def test_an_error_envelope_raises_the_classified_error(client: GraphClient, fake_graph: FakeGraph) -> None:
    # Given
    fake_graph.reply(graph_error(190, 463, fbtrace_id="TRACE"), status=400)
    # When
    with pytest.raises(ReconnectRequired) as raised:
        client.get("me")
    # Then
    assert raised.value.fbtrace_id == "TRACE"
    assert len(fake_graph.requests) == 1


def test_success_false_on_http_200_is_a_failure(client: GraphClient, fake_graph: FakeGraph) -> None:
    # Given
    fake_graph.reply({"success": False})
    # When / Then
    with pytest.raises(PlatformRequestFailed):
        client.delete("99")


# --- Retries ------------------------------------------------------------------------------------


def test_throttling_is_retried_with_exponential_back_off(
    client: GraphClient, fake_graph: FakeGraph, sleeps: list[float]
) -> None:
    # Given: two throttled answers, then success (jitter 0 gives the lower half of each window)
    fake_graph.reply(graph_error(80004), status=400)
    fake_graph.reply(graph_error(17, 2446079), status=400)
    fake_graph.reply({"id": "1"})
    # When
    response = client.get("act_42/campaigns")
    # Then
    assert response.body == {"id": "1"}
    assert sleeps == [0.5, 1.0]


def test_throttling_waits_as_long_as_the_platform_says_access_returns(
    client: GraphClient, fake_graph: FakeGraph, sleeps: list[float]
) -> None:
    # Given: throttled with two minutes to regain access
    fake_graph.reply(graph_error(80003), status=400, headers=buc_header(100, regain_minutes=2))
    fake_graph.reply({"id": "1"})
    # When
    client.get("act_42/customaudiences")
    # Then
    assert sleeps == [120.0]


def test_the_client_pauses_before_the_next_call_when_usage_exceeds_95_percent(
    client: GraphClient, fake_graph: FakeGraph, sleeps: list[float]
) -> None:
    # Given
    fake_graph.reply({"id": "1"}, headers=buc_header(96))
    fake_graph.reply({"id": "2"})
    client.get("me")
    assert sleeps == []
    # When
    client.get("me")
    # Then
    assert sleeps == [60.0]


def test_a_wait_longer_than_the_limit_is_handed_to_the_caller_instead_of_slept(
    client: GraphClient, fake_graph: FakeGraph, sleeps: list[float]
) -> None:
    # Given: an hour until access returns
    fake_graph.reply(graph_error(80004), status=400, headers=buc_header(100, regain_minutes=60))
    # When
    with pytest.raises(PlatformThrottled) as raised:
        client.get("act_42/campaigns")
    # Then
    assert raised.value.retry_after_seconds == 3600
    assert sleeps == []
    assert len(fake_graph.requests) == 1


def test_throttling_after_the_last_retry_raises_throttled_with_the_spec_text(
    client: GraphClient, fake_graph: FakeGraph
) -> None:
    # Given: max_retries is 3, so four throttled answers exhaust it
    for _ in range(4):
        fake_graph.reply(graph_error(4), status=400)
    # When
    with pytest.raises(PlatformThrottled) as raised:
        client.get("me")
    # Then
    assert len(fake_graph.requests) == 4
    assert raised.value.status == 429
    assert raised.value.message == "The advertising platform is rate limiting requests for this ad account."
    assert raised.value.retry_after_seconds == 60


@pytest.mark.parametrize(
    ("status", "body"),
    [(500, graph_error(2)), (400, graph_error(1)), (400, graph_error(100, is_transient=True))],
    ids=["service-error", "unknown-error", "is-transient"],
)
def test_reads_are_retried_on_transient_errors(
    client: GraphClient, fake_graph: FakeGraph, status: int, body: dict[str, object]
) -> None:
    # Given
    fake_graph.reply(body, status=status)
    fake_graph.reply({"id": "1"})
    # When
    response = client.get("me")
    # Then
    assert response.body == {"id": "1"}


def test_reads_are_retried_on_an_html_gateway_error(client: GraphClient, fake_graph: FakeGraph) -> None:
    # Given
    fake_graph.reply(status=502, text="<html><body>Bad Gateway</body></html>")
    fake_graph.reply({"id": "1"})
    # When
    response = client.get("me")
    # Then
    assert response.body == {"id": "1"}


def test_reads_are_retried_on_a_read_timeout(client: GraphClient, fake_graph: FakeGraph) -> None:
    # Given
    fake_graph.fail(httpx.ReadTimeout)
    fake_graph.reply({"id": "1"})
    # When
    response = client.get("me")
    # Then
    assert response.body == {"id": "1"}


def test_a_create_is_not_retried_when_it_may_have_run(client: GraphClient, fake_graph: FakeGraph) -> None:
    # Given: code 2 on a create is ambiguous: the campaign may exist
    fake_graph.reply(graph_error(2), status=500)
    # When
    with pytest.raises(PlatformRequestFailed):
        client.post("act_42/campaigns", {"name": "Sales"})
    # Then
    assert len(fake_graph.requests) == 1


def test_a_create_is_not_retried_after_a_read_timeout(client: GraphClient, fake_graph: FakeGraph) -> None:
    # Given
    fake_graph.fail(httpx.ReadTimeout)
    # When
    with pytest.raises(PlatformUnavailable):
        client.post("act_42/campaigns", {"name": "Sales"})
    # Then
    assert len(fake_graph.requests) == 1


def test_a_create_is_retried_when_the_connection_was_never_made(
    client: GraphClient, fake_graph: FakeGraph
) -> None:
    # Given
    fake_graph.fail(httpx.ConnectError)
    fake_graph.reply({"id": "7"})
    # When
    response = client.post("act_42/campaigns", {"name": "Sales"})
    # Then
    assert response.body == {"id": "7"}


def test_a_create_is_retried_on_throttling(client: GraphClient, fake_graph: FakeGraph) -> None:
    # Given: throttled calls are rejected before they run
    fake_graph.reply(graph_error(613, 1487742), status=400)
    fake_graph.reply({"id": "7"})
    # When
    response = client.post("act_42/campaigns", {"name": "Sales"})
    # Then
    assert response.body == {"id": "7"}


def test_network_failures_after_the_last_retry_raise_unavailable(
    client: GraphClient, fake_graph: FakeGraph
) -> None:
    # Given
    for _ in range(4):
        fake_graph.fail(httpx.ConnectError)
    # When
    with pytest.raises(PlatformUnavailable) as raised:
        client.get("me")
    # Then
    assert raised.value.status == 502
    assert len(fake_graph.requests) == 4


# --- Paging -------------------------------------------------------------------------------------


def test_iterate_follows_next_links_and_stops_without_next_even_with_cursors(
    client: GraphClient, fake_graph: FakeGraph
) -> None:
    # Given
    next_url = "https://graph.test/v25.0/me/adaccounts?after=c1&access_token=leaked&limit=1"
    fake_graph.reply({"data": [{"id": "a"}], "paging": {"cursors": {"after": "c1"}, "next": next_url}})
    fake_graph.reply({"data": [{"id": "b"}], "paging": {"cursors": {"before": "c1", "after": "c2"}}})
    # When
    items = list(client.iterate("me/adaccounts", {"limit": 1}))
    # Then
    assert [item["id"] for item in items] == ["a", "b"]
    assert len(fake_graph.requests) == 2


def test_paging_links_lose_their_embedded_token_and_get_a_fresh_proof(
    client: GraphClient, fake_graph: FakeGraph
) -> None:
    # Given
    next_url = "https://graph.test/v25.0/me/adaccounts?after=c1&access_token=leaked&appsecret_proof=old"
    fake_graph.reply({"data": [], "paging": {"next": next_url}})
    fake_graph.reply({"data": []})
    # When
    list(client.iterate("me/adaccounts"))
    # Then
    assert fake_graph.query() == {"after": "c1", "appsecret_proof": PROOF}


def test_paging_links_to_another_host_are_refused(client: GraphClient, fake_graph: FakeGraph) -> None:
    # Given
    fake_graph.reply(
        {"data": [{"id": "a"}], "paging": {"next": "https://evil.test/v25.0/me/adaccounts?after=c1"}}
    )
    # When / Then
    with pytest.raises(PlatformRequestFailed):
        list(client.iterate("me/adaccounts"))
    assert len(fake_graph.requests) == 1


def test_retry_logs_never_contain_secrets(
    client: GraphClient, fake_graph: FakeGraph, caplog: pytest.LogCaptureFixture
) -> None:
    # Given: a token exchange that is retried once
    fake_graph.reply(graph_error(4), status=400)
    fake_graph.reply({"access_token": "new-token"})
    # When
    client.with_access_token(None).get(
        "oauth/access_token", {"client_secret": "app_secret", "fb_exchange_token": "short-token"}
    )
    # Then
    retries = [record for record in caplog.records if record.getMessage() == "Retrying platform call"]
    assert len(retries) == 1
    logged = str(vars(retries[0]))
    assert "app_secret" not in logged
    assert "short-token" not in logged
