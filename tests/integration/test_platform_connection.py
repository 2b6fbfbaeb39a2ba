"""Connecting the ad account end to end: the dashboard, the platform's OAuth page, the callback
posted by the dashboard's page with the user's JWT, status and disconnect, through the local gateway
and the platform sandbox."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from local.platform_browser import consent, decide, post_callback
from local.seed import DemoCredentials, create_user, sign_in
from local.stack import LocalStack
from shared import wiring


@pytest.fixture
def scenario(stack: LocalStack) -> Iterator[Any]:
    """Load a sandbox scenario for one test; the default world comes back afterwards."""

    def load(name: str) -> None:
        httpx.post(f"{stack.sandbox.url}/_admin/scenario", json={"name": name}).raise_for_status()

    yield load
    load("default")


@pytest.fixture
def member(stack: LocalStack) -> dict[str, str]:
    """A fresh organization with its own signed-in dashboard user (tests stay independent)."""
    return new_member(stack)


def new_member(stack: LocalStack) -> dict[str, str]:
    import uuid

    org_id = f"org-{uuid.uuid4().hex[:8]}"
    email = f"{org_id}@example.com"
    _, password = create_user(stack, org_id, email)
    return {"org_id": org_id, "Authorization": f"Bearer {sign_in(stack, email, password)}"}


def auth(member: dict[str, str]) -> dict[str, str]:
    return {"Authorization": member["Authorization"]}


def connect(api: httpx.Client, member: dict[str, str], decision: str = "approve") -> httpx.Response:
    started = api.post("/platform-ads/connect", headers=auth(member))
    assert started.status_code == 200, started.text
    return consent(
        started.json()["authorizationUrl"], str(api.base_url).rstrip("/"), member["Authorization"], decision
    )


def test_connect_through_the_oauth_page_selects_the_business_account(
    api: httpx.Client, member: dict[str, str], scenario: Any
) -> None:
    # Given: the user has a personal and a business-owned ad account
    scenario("several_accounts")
    # When: the user approves on the platform's page and is sent back to the service
    done = connect(api, member)
    # Then
    assert done.status_code == 200, done.text
    assert done.json()["connected"] is True
    status = api.get("/platform-ads/status", headers=auth(member)).json()
    assert status["status"] == "active"
    assert status["tokenHealth"] == "valid"
    assert status["adAccountId"].startswith("act_")
    assert status["businessName"]
    assert status["lastValidatedAt"]
    assert status["tokenExpiresAt"]
    assert "usage" in status


def test_the_authorization_url_asks_for_the_three_scopes(
    api: httpx.Client, member: dict[str, str], stack: LocalStack
) -> None:
    url = api.post("/platform-ads/connect", headers=auth(member)).json()["authorizationUrl"]
    query = httpx.URL(url).params
    assert query["scope"].split(",") == ["ads_management", "ads_read", "business_management"]
    assert query["state"]
    # The platform sends the browser back to the dashboard's page, not to the API
    assert query["redirect_uri"] == f"{stack.dashboard_url}/connect-callback.html"


def redirect_of(api: httpx.Client, member: dict[str, str]) -> str:
    """The platform's redirect after ``member`` started connecting and someone approved the link."""
    started = api.post("/platform-ads/connect", headers=auth(member)).json()
    answered = decide(started["authorizationUrl"], "approve")
    assert answered.status_code == 302, answered.text
    return answered.headers["location"]


def test_a_state_works_only_once(api: httpx.Client, member: dict[str, str]) -> None:
    # Given: a completed connection
    location = redirect_of(api, member)
    base = str(api.base_url).rstrip("/")
    assert post_callback(location, base, member["Authorization"]).status_code == 200
    # When: the same callback is posted again
    replay = post_callback(location, base, member["Authorization"])
    # Then
    assert replay.status_code == 400
    assert replay.json()["error"]["field"] == "state"


def test_a_forged_state_is_refused(api: httpx.Client, member: dict[str, str]) -> None:
    response = api.post(
        "/platform-ads/connect/callback",
        json={"state": "abc.9999999999.forged", "code": "x"},
        headers=auth(member),
    )
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "forbidden"


def test_the_victims_code_with_the_attackers_state_is_refused(api: httpx.Client, stack: LocalStack) -> None:
    # Given: an attacker starts connecting in their organization and sends the link to a victim,
    # who approves it on the platform's page while signed in to the dashboard as themselves
    attacker, victim = new_member(stack), new_member(stack)
    location = redirect_of(api, attacker)
    # When: the victim's browser lands on the callback page, which posts with the victim's JWT
    response = post_callback(location, str(api.base_url).rstrip("/"), victim["Authorization"])
    # Then: refused, clearly, and neither organization is connected
    assert response.status_code == 403, response.text
    assert (
        response.json()["message"] == "This connection request was not started by you in this organization."
    )
    assert "sign in as yourself" in response.json()["error"]["remedy"]
    for someone in (attacker, victim):
        assert api.get("/platform-ads/status", headers=auth(someone)).json()["status"] == "not_connected"


def test_the_callback_needs_the_users_jwt(api: httpx.Client, member: dict[str, str]) -> None:
    # Given: a genuine redirect, posted without signing in
    location = redirect_of(api, member)
    query = dict(httpx.URL(location).params)
    # When
    response = api.post("/platform-ads/connect/callback", json=query)
    # Then
    assert response.status_code == 401


def test_disconnect_makes_the_connection_inactive_and_destroys_the_token(
    api: httpx.Client, member: dict[str, str], stack: LocalStack
) -> None:
    # Given
    assert connect(api, member).status_code == 200
    # When
    response = api.post("/platform-ads/disconnect", headers=auth(member))
    # Then
    assert response.status_code == 200
    assert response.json() == {**response.json(), "connected": False, "status": "inactive"}
    stored = wiring.connection_store().get(member["org_id"])
    assert stored is not None
    assert stored.token is None


def test_status_without_a_connection_says_so(api: httpx.Client, member: dict[str, str]) -> None:
    body = api.get("/platform-ads/status", headers=auth(member)).json()
    assert body["connected"] is False
    assert body["status"] == "not_connected"


def test_status_needs_a_jwt(api: httpx.Client, demo: DemoCredentials) -> None:
    # The API key is not a dashboard credential
    response = api.get("/platform-ads/status", headers={"Authorization": f"Bearer {demo.api_key}"})
    assert response.status_code == 401


@pytest.mark.parametrize(
    ("name", "status", "code", "text", "remedy"),
    [
        # The account is not in a state that allows customer lists: 422, fixed by the user's settings.
        (
            "personal_account_only",
            422,
            "platform_business_account_required",
            "Business account needed",
            "business",
        ),
        ("no_ad_accounts", 422, "platform_no_ad_accounts", "No ad accounts found", "5-10 minutes"),
        # The user may not use the application at all while it is in development mode: 403.
        ("user_not_tester", 403, "platform_permissions", "development mode", "Tester"),
    ],
)
def test_connecting_problems_reach_the_user_with_the_spec_text_and_remedy(
    api: httpx.Client,
    member: dict[str, str],
    scenario: Any,
    name: str,
    status: int,
    code: str,
    text: str,
    remedy: str,
) -> None:
    # Given
    scenario(name)
    # When
    done = connect(api, member)
    # Then
    body = done.json()
    assert done.status_code == status, done.text
    assert body["error"]["code"] == code
    assert text in body["message"]
    assert remedy in body["error"]["remedy"]


def test_declining_on_the_platform_page_explains_what_to_do(
    api: httpx.Client, member: dict[str, str]
) -> None:
    done = connect(api, member, decision="deny")
    assert done.status_code == 403
    assert "not approved" in done.json()["message"]


def test_an_app_domain_problem_is_caught_before_sending_the_user_away(
    api: httpx.Client, member: dict[str, str], scenario: Any
) -> None:
    # Given: the service's redirect URI is not in the application's domains
    scenario("app_domain_missing")
    # When
    response = api.post("/platform-ads/connect", headers=auth(member))
    # Then
    assert response.status_code == 502
    assert "domain isn't included in the app's domains" in response.json()["message"]
    assert "operator" in response.json()["error"]["remedy"]


def test_plaintext_tokens_never_reach_dynamodb_or_logs(
    api: httpx.Client, member: dict[str, str], stack: LocalStack, capfd: pytest.CaptureFixture[str]
) -> None:
    # Given: a connection made through the real flow
    assert connect(api, member).status_code == 200
    api.get("/platform-ads/status", headers=auth(member))
    # When: everything the platform ever issued is compared with what the service stored and printed
    issued = [token.value for token in stack.sandbox.state.world.tokens.values()]
    table = stack.client("dynamodb").scan(TableName=stack.physical["MainTable"].ref)["Items"]
    stored = json.dumps(table)
    printed = "".join(capfd.readouterr())
    # Then
    assert issued
    for token in issued:
        assert token not in stored
        assert token not in printed
    connection = wiring.connection_store().get(member["org_id"])
    assert connection is not None
    assert connection.token is not None
    assert wiring.envelope_cipher().decrypt(connection.token, connection.token_context()) in issued


def test_a_token_bound_to_one_organization_cannot_be_decrypted_for_another(
    api: httpx.Client, member: dict[str, str]
) -> None:
    # Given
    assert connect(api, member).status_code == 200
    connection = wiring.connection_store().get(member["org_id"])
    assert connection is not None
    assert connection.token is not None
    # Then: KMS refuses the data key under another organization's context
    with pytest.raises(Exception, match="InvalidCiphertext"):
        wiring.envelope_cipher().decrypt(
            connection.token, {"org_id": "someone-else", "connection": "platform"}
        )
