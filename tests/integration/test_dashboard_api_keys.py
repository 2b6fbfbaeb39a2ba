"""Dashboard API-key endpoints through the local stack over real HTTP, with real Cognito JWTs."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from local.seed import DemoCredentials, create_user, sign_in
from local.stack import LocalStack


@pytest.fixture(scope="module")
def other_org_token(stack: LocalStack) -> str:
    """A dashboard user of a second organization."""
    email = "other@example.com"
    _, password = create_user(stack, "other-shop", email)
    return sign_in(stack, email, password)


def as_user(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def create_key(api: httpx.Client, token: str, **body: Any) -> dict[str, Any]:
    response = api.post("/dashboard/api-keys", json={"label": "test key", **body}, headers=as_user(token))
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


def test_creating_a_key_returns_it_once_with_its_metadata(api: httpx.Client, demo: DemoCredentials) -> None:
    # When
    response = api.post(
        "/dashboard/api-keys",
        json={"label": "shop backend", "dailyQuota": 1000},
        headers=as_user(demo.id_token),
    )
    # Then
    assert response.status_code == 201
    body = response.json()
    assert set(body) == {"key", "keyId", "prefix", "label", "createdAt", "dailyQuota"}
    assert body["key"].startswith(body["prefix"] + "_")
    assert (body["label"], body["dailyQuota"]) == ("shop backend", 1000)


def test_a_created_key_works_on_the_prediction_surface(api: httpx.Client, demo: DemoCredentials) -> None:
    # Given
    created = create_key(api, demo.id_token)
    # When
    response = api.get("/client/models", headers={"X-Service-Api-Key": created["key"]})
    # Then
    assert response.status_code == 200


def test_creating_a_key_without_a_jwt_is_401(api: httpx.Client) -> None:
    # When
    response = api.post("/dashboard/api-keys", json={"label": "x"})
    # Then
    assert response.status_code == 401
    assert "Authorization token is missing" in response.json()["message"]


def test_an_api_key_is_not_accepted_as_a_dashboard_jwt(api: httpx.Client, demo: DemoCredentials) -> None:
    response = api.get("/dashboard/api-keys", headers={"Authorization": f"Bearer {demo.api_key}"})
    assert response.status_code == 401


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"label": ""}, "label"),
        ({"label": "x" * 65}, "label"),
        ({}, "label"),
        ({"label": "ok", "dailyQuota": 0}, "dailyQuota"),
        ({"label": "ok", "dailyQuota": "many"}, "dailyQuota"),
    ],
)
def test_an_invalid_body_is_400_naming_the_field(
    api: httpx.Client, demo: DemoCredentials, body: dict[str, Any], field: str
) -> None:
    # When
    response = api.post("/dashboard/api-keys", json=body, headers=as_user(demo.id_token))
    # Then
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["field"] == field
    assert error["message"].startswith(field)


def test_the_list_shows_the_organizations_keys_with_usage_and_never_the_secret(
    api: httpx.Client, demo: DemoCredentials
) -> None:
    # Given
    created = create_key(api, demo.id_token, label="listed", dailyQuota=50)
    # When
    response = api.get("/dashboard/api-keys", headers=as_user(demo.id_token))
    # Then
    assert response.status_code == 200
    listed = {k["keyId"]: k for k in response.json()["keys"]}
    entry = listed[created["keyId"]]
    assert entry["prefix"] == created["prefix"]
    assert (entry["label"], entry["dailyQuota"], entry["revokedAt"]) == ("listed", 50, None)
    assert entry["usage"] == {"total": 0, "today": 0}
    assert demo.api_key_prefix in {k["prefix"] for k in listed.values()}
    assert created["key"] not in response.text
    assert "hash" not in response.text.lower()


def test_the_list_does_not_show_another_organizations_keys(
    api: httpx.Client, demo: DemoCredentials, other_org_token: str
) -> None:
    # Given
    theirs = create_key(api, other_org_token, label="theirs")
    # When
    response = api.get("/dashboard/api-keys", headers=as_user(demo.id_token))
    # Then
    assert theirs["keyId"] not in {k["keyId"] for k in response.json()["keys"]}


def test_listing_keys_without_a_jwt_is_401(api: httpx.Client) -> None:
    assert api.get("/dashboard/api-keys").status_code == 401


def test_a_revoked_key_stops_working_on_the_prediction_surface(
    api: httpx.Client, demo: DemoCredentials
) -> None:
    # Given
    created = create_key(api, demo.id_token, label="to revoke")
    # When
    response = api.delete(f"/dashboard/api-keys/{created['keyId']}", headers=as_user(demo.id_token))
    # Then
    assert response.status_code == 200
    assert response.json()["revokedAt"]
    refused = api.get("/client/models", headers={"X-Service-Api-Key": created["key"]})
    assert refused.status_code == 401
    assert "revoked" in refused.json()["message"]


def test_revoking_twice_succeeds_and_keeps_the_first_revocation_time(
    api: httpx.Client, demo: DemoCredentials
) -> None:
    # Given
    created = create_key(api, demo.id_token)
    path = f"/dashboard/api-keys/{created['keyId']}"
    first = api.delete(path, headers=as_user(demo.id_token)).json()
    # When
    again = api.delete(path, headers=as_user(demo.id_token))
    # Then
    assert again.status_code == 200
    assert again.json()["revokedAt"] == first["revokedAt"]


def test_revoking_another_organizations_key_is_404_and_leaves_it_working(
    api: httpx.Client, demo: DemoCredentials, other_org_token: str
) -> None:
    # Given
    theirs = create_key(api, other_org_token, label="theirs")
    # When
    response = api.delete(f"/dashboard/api-keys/{theirs['keyId']}", headers=as_user(demo.id_token))
    # Then
    assert response.status_code == 404
    assert "not found" in response.json()["message"]
    assert api.get("/client/models", headers={"X-Service-Api-Key": theirs["key"]}).status_code == 200


def test_revoking_an_unknown_key_is_404(api: httpx.Client, demo: DemoCredentials) -> None:
    response = api.delete("/dashboard/api-keys/nosuchkey0", headers=as_user(demo.id_token))
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_revoking_without_a_jwt_is_401(api: httpx.Client, demo: DemoCredentials) -> None:
    assert api.delete("/dashboard/api-keys/whatever00").status_code == 401
