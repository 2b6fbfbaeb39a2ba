"""Tokens are validated server-side: by the scheduled job for every active connection, and before use."""

from __future__ import annotations

import uuid
from collections import Counter
from typing import Any

import httpx
import pytest

from local.platform_browser import consent
from local.seed import create_user, sign_in
from local.stack import LocalStack
from shared import wiring
from shared.platform.errors import ReconnectRequired

SCHEDULED_EVENT = {"source": "aws.scheduler", "detail-type": "Scheduled Event", "detail": {}}


def connected_org(stack: LocalStack, api: httpx.Client) -> str:
    org_id = f"org-{uuid.uuid4().hex[:8]}"
    _, password = create_user(stack, org_id, f"{org_id}@example.com")
    headers = {"Authorization": f"Bearer {sign_in(stack, f'{org_id}@example.com', password)}"}
    url = api.post("/platform-ads/connect", headers=headers).json()["authorizationUrl"]
    assert consent(url, stack.api_url, headers["Authorization"]).status_code == 200
    return org_id


def platform_token(org_id: str) -> str:
    connection = wiring.connection_store().get(org_id)
    assert connection is not None
    assert connection.token is not None
    return wiring.envelope_cipher().decrypt(connection.token, connection.token_context())


def run_job(stack: LocalStack) -> dict[str, Any]:
    assert stack.gateway is not None
    result: dict[str, Any] = stack.gateway.invoke("ValidateTokensFunction", SCHEDULED_EVENT)
    return result


def test_the_job_marks_a_revoked_token_invalid_and_keeps_the_others(
    stack: LocalStack, api: httpx.Client
) -> None:
    # Given: two connected organizations, one whose user removed the app on the platform
    healthy, revoked = connected_org(stack, api), connected_org(stack, api)
    stack.sandbox.state.world.tokens[platform_token(revoked)].revoked_subcode = 458
    active = [c.org_id for c in wiring.connection_store().active()]
    # When
    summary = run_job(stack)
    # Then: the summary counts exactly the health the job recorded for each active connection
    # (the stack is shared, so other tests' connections are among them)
    recorded = [wiring.connection_store().get(org_id) for org_id in active]
    health = Counter(c.token_health for c in recorded if c is not None)
    assert {key: value for key, value in summary.items() if key != "drift"} == {
        "checked": len(active),
        "valid": health["valid"],
        "expiring": health["expiring"],
        "invalid": health["invalid"],
        "failed": 0,
    }
    assert {healthy, revoked} <= set(active)
    bad, good = wiring.connection_store().get(revoked), wiring.connection_store().get(healthy)
    assert bad is not None
    assert good is not None
    assert bad.token_health == "invalid"
    assert bad.validation_error
    assert good.token_health == "valid"


def test_the_job_flags_a_token_close_to_expiry(stack: LocalStack, api: httpx.Client) -> None:
    # Given: a token that expires in three days
    org_id = connected_org(stack, api)
    token = stack.sandbox.state.world.tokens[platform_token(org_id)]
    token.expires_at = stack.sandbox.state.clock.now() + 3 * 24 * 3600
    # When
    run_job(stack)
    # Then
    connection = wiring.connection_store().get(org_id)
    assert connection is not None
    assert connection.token_health == "expiring"


def test_a_disconnected_connection_is_not_checked(stack: LocalStack, api: httpx.Client) -> None:
    # Given
    org_id = connected_org(stack, api)
    wiring.connection_service().disconnect(org_id)
    # Then
    assert org_id not in {c.org_id for c in wiring.connection_store().active()}


def test_an_invalid_token_is_refused_before_use(stack: LocalStack, api: httpx.Client) -> None:
    # Given: a connection whose token the platform no longer accepts
    org_id = connected_org(stack, api)
    stack.sandbox.state.world.tokens[platform_token(org_id)].revoked_subcode = 460
    connection = wiring.connection_store().get(org_id)
    assert connection is not None
    wiring.connection_store().put(connection.model_copy(update={"last_validated_at": None}))
    # Then
    with pytest.raises(ReconnectRequired):
        wiring.connection_service().client_for(org_id)
