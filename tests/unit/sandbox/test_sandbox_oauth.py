"""OAuth dialog, code exchange and debug_token (docs/platform-notes.md §1.1-§1.5)."""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import parse_qs, urlsplit

from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from platform_sandbox import SandboxConfig, SandboxState
from tests.unit.sandbox.samples import error_of

REDIRECT = "http://localhost:3000/platform-ads/connect/callback"


def dialog_form(config: SandboxConfig, decision: str, redirect_uri: str = REDIRECT) -> dict[str, str]:
    return {
        "client_id": config.app_id,
        "redirect_uri": redirect_uri,
        "state": "csrf-123",
        "scope": "ads_management,ads_read,business_management",
        "decision": decision,
    }


def approved_code(client: FlaskClient, config: SandboxConfig) -> str:
    response = client.post("/v25.0/dialog/oauth", data=dialog_form(config, "approve"))
    return parse_qs(urlsplit(response.headers["Location"]).query)["code"][0]


def exchange(
    client: FlaskClient, config: SandboxConfig, code: str, redirect_uri: str = REDIRECT
) -> TestResponse:
    query = {
        "client_id": config.app_id,
        "client_secret": config.app_secret,
        "redirect_uri": redirect_uri,
        "code": code,
    }
    return client.get("/v25.0/oauth/access_token", query_string=query)


def test_dialog_page_offers_approve_and_deny(client: FlaskClient, config: SandboxConfig) -> None:
    # Given a well-formed dialog request
    query = {k: v for k, v in dialog_form(config, "").items() if k != "decision"}
    # When the browser opens the dialog
    response = client.get("/v25.0/dialog/oauth", query_string=query)
    # Then it shows both choices to the user
    page = response.get_data(as_text=True)
    assert response.status_code == 200
    assert 'value="approve"' in page
    assert 'value="deny"' in page


def test_approving_redirects_with_code_and_state(client: FlaskClient, config: SandboxConfig) -> None:
    # When the user approves
    response = client.post("/v25.0/dialog/oauth", data=dialog_form(config, "approve"))
    # Then the browser goes back to the redirect_uri with a code and the same state
    location = urlsplit(response.headers["Location"])
    assert response.status_code == 302
    assert f"{location.scheme}://{location.netloc}{location.path}" == REDIRECT
    query = parse_qs(location.query)
    assert query["state"] == ["csrf-123"]
    assert query["code"][0]


def test_denying_redirects_with_documented_error(client: FlaskClient, config: SandboxConfig) -> None:
    # When the user denies
    response = client.post("/v25.0/dialog/oauth", data=dialog_form(config, "deny"))
    # Then the redirect carries the platform's cancel parameters
    query = parse_qs(urlsplit(response.headers["Location"]).query)
    assert query["error"] == ["access_denied"]
    assert query["error_reason"] == ["user_denied"]
    assert query["state"] == ["csrf-123"]


def test_code_exchange_returns_a_working_token(client: FlaskClient, config: SandboxConfig) -> None:
    # Given an approved code
    code = approved_code(client, config)
    # When the server exchanges it
    body = exchange(client, config, code).get_json()
    # Then the token works on the Graph API
    assert body["token_type"] == "bearer"
    assert body["expires_in"] == config.short_lived_token_seconds
    me = client.get("/v25.0/me", headers={"Authorization": f"Bearer {body['access_token']}"})
    assert me.get_json()["name"] == "Sandbox Marketer"


def test_code_exchange_with_other_redirect_uri_fails_36008(
    client: FlaskClient, config: SandboxConfig
) -> None:
    # Given an approved code
    code = approved_code(client, config)
    # When it is exchanged with a redirect_uri that differs from the dialog's (a trailing slash)
    response = exchange(client, config, code, redirect_uri=REDIRECT + "/")
    # Then the platform refuses it
    assert response.status_code == 400
    assert (error_of(response)["code"], error_of(response)["error_subcode"]) == (100, 36008)


def test_code_is_single_use_36009(client: FlaskClient, config: SandboxConfig) -> None:
    # Given a code already exchanged once
    code = approved_code(client, config)
    exchange(client, config, code)
    # When it is exchanged again
    response = exchange(client, config, code)
    # Then the second exchange fails
    assert error_of(response)["error_subcode"] == 36009


def test_expired_code_fails_36007(client: FlaskClient, config: SandboxConfig, state: SandboxState) -> None:
    # Given a code older than its lifetime
    code = approved_code(client, config)
    state.clock.advance(config.code_ttl_seconds + 1)
    # When it is exchanged
    response = exchange(client, config, code)
    # Then it has expired
    assert error_of(response)["error_subcode"] == 36007


def test_wrong_client_secret_is_rejected(client: FlaskClient, config: SandboxConfig) -> None:
    # Given an approved code
    code = approved_code(client, config)
    # When the exchange presents a wrong secret
    query = {"client_id": config.app_id, "client_secret": "nope", "redirect_uri": REDIRECT, "code": code}
    response = client.get("/v25.0/oauth/access_token", query_string=query)
    # Then the client is not authenticated
    assert error_of(response)["message"] == "Error validating client secret."


def test_fb_exchange_token_gives_a_long_lived_token(client: FlaskClient, config: SandboxConfig) -> None:
    # Given a short-lived token from a code exchange
    short = exchange(client, config, approved_code(client, config)).get_json()["access_token"]
    # When it is exchanged for a long-lived one
    query = {
        "grant_type": "fb_exchange_token",
        "client_id": config.app_id,
        "client_secret": config.app_secret,
        "fb_exchange_token": short,
    }
    body = client.get("/v25.0/oauth/access_token", query_string=query).get_json()
    # Then it lives about 60 days and is a different token
    assert body["expires_in"] == 5_184_000
    assert body["access_token"] != short


def test_refused_domain_shows_cant_load_url(
    client: FlaskClient, config: SandboxConfig, use_scenario: Callable[[str], None]
) -> None:
    # Given an app whose domains do not include the service's redirect_uri
    use_scenario("app_domain_missing")
    # When the dialog is opened
    query = {k: v for k, v in dialog_form(config, "").items() if k != "decision"}
    response = client.get("/v25.0/dialog/oauth", query_string=query)
    # Then the page explains it and nothing redirects
    assert response.status_code == 400
    assert "Can&#x27;t load URL" in response.get_data(as_text=True)
    assert "Location" not in response.headers


def test_admin_approve_returns_the_redirect_location(client: FlaskClient) -> None:
    # When a test approves through the admin shortcut
    response = client.post("/_admin/oauth/approve", json={"redirect_uri": REDIRECT, "state": "s-1"})
    # Then it receives the location the browser would have been sent to
    location = response.get_json()["location"]
    assert location.startswith(REDIRECT + "?code=")
    assert location.endswith("&state=s-1")


def test_debug_token_describes_a_valid_token(client: FlaskClient, config: SandboxConfig, token: str) -> None:
    # When the app inspects a user token with its app token
    query = {"input_token": token, "access_token": f"{config.app_id}|{config.app_secret}"}
    data = client.get("/v25.0/debug_token", query_string=query).get_json()["data"]
    # Then it is valid, belongs to the app and lists its scopes per ad account
    assert data["is_valid"] is True
    assert data["app_id"] == config.app_id
    assert data["type"] == "USER"
    assert "ads_management" in data["scopes"]
    assert {"scope": "ads_management", "target_ids": ["100000000000001"]} in data["granular_scopes"]


def test_debug_token_reports_an_expired_token(
    client: FlaskClient, config: SandboxConfig, state: SandboxState
) -> None:
    # Given a token that expired
    token = client.post("/_admin/tokens", json={"expires_in": 60}).get_json()["access_token"]
    state.clock.advance(61)
    # When the app inspects it
    query = {"input_token": token, "access_token": f"{config.app_id}|{config.app_secret}"}
    data = client.get("/v25.0/debug_token", query_string=query).get_json()["data"]
    # Then it is invalid with the expiry subcode
    assert data["is_valid"] is False
    assert (data["error"]["code"], data["error"]["subcode"]) == (190, 463)


def test_debug_token_needs_an_app_token(client: FlaskClient, token: str) -> None:
    # When a user token tries to inspect itself
    response = client.get("/v25.0/debug_token", query_string={"input_token": token, "access_token": token})
    # Then the call is refused
    assert error_of(response)["code"] == 100
