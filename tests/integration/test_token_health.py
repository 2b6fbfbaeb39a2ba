"""Token health follows what the platform says: when the platform sandbox revokes the token during a
call the service makes with it (an upload, a readiness check), ``GET /platform-ads/status`` shows the
rejection at once, not ``valid`` until the next scheduled validation (every 6 hours)."""

from __future__ import annotations

from typing import Any

import httpx

from local.connected import ConnectedOrg


def status(api: httpx.Client, org: ConnectedOrg) -> dict[str, Any]:
    response = api.get("/platform-ads/status", headers=org.headers)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def test_a_token_revoked_during_an_upload_shows_invalid_at_once(
    api: httpx.Client, org: ConnectedOrg, sandbox: httpx.Client
) -> None:
    # Given: a connection validated a moment ago, whose session the platform invalidates while the
    # members are uploaded (190/460)
    before = status(api, org)
    assert before["tokenHealth"] == "valid"
    revoke = {"kind": "revoke_token", "method": "POST", "path": "/users$", "subcode": 460}
    assert sandbox.post("/faults", json=revoke).is_success
    users = [{"user_id": f"u{i}", "email": f"buyer{i}@example.com"} for i in range(20)]
    # When
    created = api.post(
        "/platform-ads/audiences", json={"name": "Buyers", "users": users}, headers=org.headers
    )
    # Then: the upload fails asking for a reconnection, and the status already says why
    assert created.status_code == 422, created.text
    assert created.json()["error"]["code"] == "platform_reconnect_required"
    after = status(api, org)
    assert after["tokenHealth"] == "invalid"
    assert "190/460" in after["validationError"]
    assert after["lastValidatedAt"] >= before["lastValidatedAt"]


def test_a_token_revoked_during_the_readiness_check_shows_invalid_at_once(
    api: httpx.Client, org: ConnectedOrg, sandbox: httpx.Client
) -> None:
    # Given: the token passes its debug_token check, then is revoked when the ad account is read
    revoke = {"kind": "revoke_token", "method": "GET", "path": "^/act_", "subcode": 460}
    assert sandbox.post("/faults", json=revoke).is_success
    # When
    readiness = api.get("/platform-ads/readiness", headers=org.headers)
    # Then
    assert readiness.status_code in {200, 422}, readiness.text
    after = status(api, org)
    assert after["tokenHealth"] == "invalid"
    assert "190/460" in after["validationError"]
