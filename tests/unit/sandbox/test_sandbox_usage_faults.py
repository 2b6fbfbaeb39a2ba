"""Rate limits, usage headers and injected faults (docs/platform-notes.md §8)."""

from __future__ import annotations

import json
from collections.abc import Callable

from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from tests.unit.sandbox.samples import ACCOUNT, error_of, hashed_emails

Graph = Callable[..., TestResponse]


def buc_entry(response: TestResponse) -> dict[str, object]:
    usage = json.loads(response.headers["X-Business-Use-Case-Usage"])
    entry: dict[str, object] = usage["100000000000001"][0]
    return entry


def test_spent_custom_audience_quota_throttles_with_80003(client: FlaskClient, graph: Graph) -> None:
    # Given a quota of two custom-audience calls per hour, both used
    client.put("/_admin/quotas", json={"custom_audience": 2})
    graph("GET", f"/{ACCOUNT}/customaudiences")
    graph("GET", f"/{ACCOUNT}/customaudiences")
    # When a third call is made
    response = graph("GET", f"/{ACCOUNT}/customaudiences")
    # Then it is throttled and the header says when access returns
    assert (error_of(response)["code"], error_of(response)["error_subcode"]) == (80003, 2446079)
    entry = buc_entry(response)
    assert entry["call_count"] == 100
    assert entry["estimated_time_to_regain_access"] == 60


def test_usage_percentage_grows_with_calls(client: FlaskClient, graph: Graph) -> None:
    # Given a quota of four ads-management calls per hour
    client.put("/_admin/quotas", json={"ads_management": 4})
    # When the account is read once
    response = graph("GET", f"/{ACCOUNT}")
    # Then a quarter of the quota is used
    assert buc_entry(response)["call_count"] == 25
    assert json.loads(response.headers["X-Ad-Account-Usage"])["acc_id_util_pct"] == 25.0


def test_injected_throttle_fires_count_times_then_stops(client: FlaskClient, graph: Graph) -> None:
    # Given a throttle fault on account reads, for one call, regaining access in 5 minutes
    fault = {"kind": "throttle", "path": "^/act_", "code": 80004, "regain_minutes": 5, "count": 1}
    assert client.post("/_admin/faults", json=fault).status_code == 201
    # When the account is read twice
    throttled, next_call = graph("GET", f"/{ACCOUNT}"), graph("GET", f"/{ACCOUNT}")
    # Then only the first is throttled, and its header carries the regain estimate
    assert error_of(throttled)["code"] == 80004
    assert buc_entry(throttled)["estimated_time_to_regain_access"] == 5
    assert next_call.status_code == 200


def test_transient_fault_is_a_500_marked_transient(client: FlaskClient, graph: Graph) -> None:
    # Given a transient fault on uploads
    client.post("/_admin/faults", json={"kind": "transient", "path": "/users$", "method": "POST"})
    audience_id = graph(
        "POST",
        f"/{ACCOUNT}/customaudiences",
        data={"name": "A", "subtype": "CUSTOM", "customer_file_source": "USER_PROVIDED_ONLY"},
    ).get_json()["id"]
    # When users are uploaded
    response = graph(
        "POST",
        f"/{audience_id}/users",
        json={"payload": {"schema": "EMAIL_SHA256", "data": hashed_emails(1)}},
    )
    # Then the call failed as a retryable platform error, and nobody was added
    assert response.status_code == 500
    assert (error_of(response)["code"], error_of(response)["is_transient"]) == (2, True)
    assert client.get(f"/_admin/audiences/{audience_id}/members").get_json()["count"] == 0


def test_revoked_token_keeps_failing_with_460(client: FlaskClient, token: str) -> None:
    # Given a fault that revokes the caller's token (password changed)
    client.post("/_admin/faults", json={"kind": "revoke_token", "subcode": 460})
    headers = {"Authorization": f"Bearer {token}"}
    # When the token is used twice
    first, second = client.get("/v25.0/me", headers=headers), client.get("/v25.0/me", headers=headers)
    # Then both calls fail with 190/460: the revocation outlives the fault
    assert (error_of(first)["code"], error_of(first)["error_subcode"]) == (190, 460)
    assert error_of(second)["error_subcode"] == 460


def test_expire_token_fault_expires_the_callers_token(client: FlaskClient, token: str) -> None:
    # Given a fault that expires the caller's token
    client.post("/_admin/faults", json={"kind": "expire_token"})
    # When the token is used
    response = client.get("/v25.0/me", headers={"Authorization": f"Bearer {token}"})
    # Then the session has expired
    assert error_of(response)["error_subcode"] == 463


def test_invalid_fault_is_refused(client: FlaskClient) -> None:
    # When a fault of an unknown kind is queued
    response = client.post("/_admin/faults", json={"kind": "meteor"})
    # Then the admin API refuses it and queues nothing
    assert response.status_code == 400
    assert client.get("/_admin/faults").get_json() == {"faults": []}


def test_a_fault_can_let_some_matching_calls_through_first(client: FlaskClient, token: str) -> None:
    # Given a transient fault that lets two matching calls through
    client.post("/_admin/faults", json={"kind": "transient", "path": "/me$", "after": 2})
    headers = {"Authorization": f"Bearer {token}"}
    # When the path is called three times
    statuses = [client.get("/v25.0/me", headers=headers).status_code for _ in range(3)]
    # Then the third call meets the fault
    assert statuses == [200, 200, 500]
