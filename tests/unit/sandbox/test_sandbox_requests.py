"""Request plumbing every Graph call shares: token forms, appsecret_proof, versions, headers, fields."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from platform_sandbox import SandboxConfig, SandboxState, create_app
from platform_sandbox.tokens import appsecret_proof
from tests.unit.sandbox.samples import ACCOUNT, error_of

AUDIENCE = {"name": "Buyers", "subtype": "CUSTOM", "customer_file_source": "USER_PROVIDED_ONLY"}
CREATE = f"/v25.0/{ACCOUNT}/customaudiences"


@pytest.mark.parametrize(
    "send",
    [
        pytest.param(
            lambda c, t: c.post(CREATE, data=AUDIENCE, headers={"Authorization": f"Bearer {t}"}), id="bearer"
        ),
        pytest.param(
            lambda c, t: c.post(CREATE, data=AUDIENCE, query_string={"access_token": t}), id="query"
        ),
        pytest.param(lambda c, t: c.post(CREATE, data={**AUDIENCE, "access_token": t}), id="form"),
        pytest.param(lambda c, t: c.post(CREATE, json={**AUDIENCE, "access_token": t}), id="json"),
    ],
)
def test_access_token_is_accepted_in_every_form_clients_use(
    client: FlaskClient, token: str, send: Callable[[FlaskClient, str], TestResponse]
) -> None:
    # When the token travels as a header, query, form field or JSON field
    response = send(client, token)
    # Then the call is authenticated and does its work
    assert response.status_code == 200
    assert response.get_json()["id"]


def test_missing_token_is_refused(client: FlaskClient) -> None:
    # When a call carries no token
    response = client.get("/v25.0/me")
    # Then the platform asks for one
    assert error_of(response)["code"] == 104


def test_unknown_token_fails_with_190(client: FlaskClient) -> None:
    # When a made-up token is used
    response = client.get("/v25.0/me", headers={"Authorization": "Bearer EAAnotatoken"})
    # Then it is an OAuthException 190 with HTTP 400
    assert response.status_code == 400
    assert (error_of(response)["type"], error_of(response)["code"]) == ("OAuthException", 190)


def test_expired_token_fails_with_190_463(client: FlaskClient, state: SandboxState) -> None:
    # Given a token past its expiry
    token = client.post("/_admin/tokens", json={"expires_in": 10}).get_json()["access_token"]
    state.clock.advance(11)
    # When it is used
    response = client.get("/v25.0/me", headers={"Authorization": f"Bearer {token}"})
    # Then the error says the session expired
    error = error_of(response)
    assert (error["code"], error["error_subcode"]) == (190, 463)
    assert error["message"].startswith("Error validating access token: Session has expired on")


def test_error_envelope_carries_trace_id_and_transient_flag(client: FlaskClient) -> None:
    # When any call fails
    response = client.get("/v25.0/me")
    # Then the envelope has Meta's fields and the trace id is also a header
    error = error_of(response)
    assert error["is_transient"] is False
    assert response.headers["x-fb-trace-id"] == error["fbtrace_id"]


class TestAppsecretProof:
    @pytest.fixture
    def config(self) -> SandboxConfig:
        return SandboxConfig(require_appsecret_proof=True)

    def test_call_without_proof_is_refused(self, client: FlaskClient, token: str) -> None:
        # When an app that requires the proof is called without it
        response = client.get("/v25.0/me", query_string={"access_token": token})
        # Then the call fails
        assert "require an appsecret_proof" in error_of(response)["message"]

    def test_wrong_proof_is_refused(self, client: FlaskClient, token: str) -> None:
        # When the proof is keyed with another secret
        proof = appsecret_proof("another-secret", token)
        response = client.get("/v25.0/me", query_string={"access_token": token, "appsecret_proof": proof})
        # Then the call fails
        assert error_of(response)["message"] == "Invalid appsecret_proof provided in the API argument"

    def test_correct_proof_is_accepted(self, client: FlaskClient, token: str, config: SandboxConfig) -> None:
        # When the proof is HMAC-SHA256(app_secret, token)
        proof = appsecret_proof(config.app_secret, token)
        response = client.get("/v25.0/me", query_string={"access_token": token, "appsecret_proof": proof})
        # Then the call succeeds
        assert response.status_code == 200

    def test_time_bound_proof_is_accepted(
        self, client: FlaskClient, token: str, config: SandboxConfig
    ) -> None:
        # When the proof covers token|appsecret_time
        proof = appsecret_proof(config.app_secret, f"{token}|1767225600")
        query = {"access_token": token, "appsecret_proof": proof, "appsecret_time": "1767225600"}
        response = client.get("/v25.0/me", query_string=query)
        # Then the call succeeds
        assert response.status_code == 200


def test_proof_matches_reference_test_vector() -> None:
    # Given the test vector of docs/platform-notes.md §1.6 Then the proof function reproduces it
    assert appsecret_proof("app_secret", "access_token") == (
        "d52ddf968d622d8af8677906b7fbae09ac1f89f7cd5c1584b27544624cc23e5a"
    )


@pytest.mark.parametrize(("path", "code"), [("/v24.0/me", 2635), ("/me", 2635), ("/v27.0/me", 2500)])
def test_versions_outside_the_accepted_range_fail(
    client: FlaskClient, token: str, path: str, code: int
) -> None:
    # When a call names an old version, no version, or a version newer than the sandbox knows
    response = client.get(path, headers={"Authorization": f"Bearer {token}"})
    # Then it fails with the version error
    assert error_of(response)["code"] == code


def test_versions_inside_the_range_are_served(client: FlaskClient, token: str) -> None:
    # When a call names the newest accepted version
    response = client.get("/v26.0/me", headers={"Authorization": f"Bearer {token}"})
    # Then it is served
    assert response.status_code == 200


def test_account_calls_carry_all_three_usage_headers(graph: Callable[..., TestResponse]) -> None:
    # When an ad-account call is made
    response = graph("GET", f"/{ACCOUNT}?fields=name")
    # Then the app, ad-account and business-use-case usage headers are JSON strings
    # (one call of the default 200 000 an hour, rounded up to a whole percent)
    assert json.loads(response.headers["X-App-Usage"])["call_count"] == 1
    assert json.loads(response.headers["X-Ad-Account-Usage"])["ads_api_access_tier"] == "standard_access"
    buc = json.loads(response.headers["X-Business-Use-Case-Usage"])
    assert buc["100000000000001"][0]["type"] == "ads_management"


def test_unknown_field_is_refused(graph: Callable[..., TestResponse]) -> None:
    # When a call asks for a field the node does not have
    response = graph("GET", f"/{ACCOUNT}?fields=name,favourite_colour")
    # Then the platform names it
    assert "nonexisting field (favourite_colour)" in error_of(response)["message"]


def test_request_log_never_holds_tokens(client: FlaskClient, token: str) -> None:
    # Given a call with the token in the query string
    client.get("/v25.0/me", query_string={"access_token": token, "fields": "name"})
    # When the log is read
    entries = client.get("/_admin/requests").get_json()["requests"]
    # Then the call is there without its token
    assert entries[-1]["params"] == {"access_token": "[redacted]", "fields": "name"}
    assert token not in json.dumps(entries)


def test_admin_api_refuses_remote_callers(state: SandboxState) -> None:
    # Given a caller that is not on loopback
    client = create_app(state).test_client()
    # When it calls the admin API
    response = client.get("/_admin/state", environ_base={"REMOTE_ADDR": "10.0.0.8"})
    # Then it is forbidden
    assert response.status_code == 403
