"""Bad input is the caller's error, never the service's: each of these answered 500 ``internal_error``
before, and now answers 4xx with the one error body naming the field at fault.

Every request goes through the local gateway with valid credentials, so each answer is the route's
own. The JSON routes are read from ``openapi.json`` (every operation with a request body), so a new
JSON route is covered the moment it exists.
"""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
import pytest

from local.connected import ConnectedOrg
from local.seed import DemoCredentials
from local.template import ROOT

OPENAPI = json.loads((ROOT / "openapi.json").read_text())
JSON_ROUTES = [
    (method.upper(), path)
    for path, operations in OPENAPI["paths"].items()
    for method, operation in operations.items()
    if "application/json" in operation.get("requestBody", {}).get("content", {})
    # a route documented to take text/plain as well (the site events endpoint: a browser sends it
    # without a preflight) has no other content type to refuse
    and "text/plain" not in operation.get("requestBody", {}).get("content", {})
    # the provider's webhook verifies the signature over the delivery's bytes before reading them, so
    # an unsigned one is 401 whatever its type (tests/integration/test_payments_webhooks.py)
    and not any("paymentsSignature" in scheme for scheme in operation.get("security", []))
]


def auth_headers(path: str, demo: DemoCredentials) -> dict[str, str]:
    if path.startswith("/client/"):
        return {"X-Service-Api-Key": demo.api_key}
    return {"Authorization": f"Bearer {demo.id_token}"}


def concrete(path: str, demo: DemoCredentials) -> str:
    """The path with its parameters filled (a real model for predict; any id elsewhere, since the body
    is refused before the resource is looked up)."""
    return re.sub(r"\{(\w+)\}", lambda m: demo.models[0] if m.group(1) == "modelName" else "x", path)


def assert_refused(response: httpx.Response, status: int, code: str, field: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body: dict[str, Any] = response.json()
    assert body["success"] is False
    assert body["error"]["code"] == code
    assert body["error"]["field"] == field
    assert body["message"] == body["error"]["message"]
    assert body["error"]["remedy"]
    return body


def test_the_json_routes_are_found() -> None:
    assert ("POST", "/platform-ads/audiences") in JSON_ROUTES
    assert ("POST", "/client/predict/{modelName}") in JSON_ROUTES
    assert len(JSON_ROUTES) >= 10


# --- Content-Type ------------------------------------------------------------------------------------


@pytest.mark.parametrize("content_type", ["text/plain", "application/octet-stream"])
@pytest.mark.parametrize(("method", "path"), JSON_ROUTES, ids=[f"{m} {p}" for m, p in JSON_ROUTES])
def test_a_json_route_refuses_another_content_type_with_415(
    api: httpx.Client, demo: DemoCredentials, method: str, path: str, content_type: str
) -> None:
    # When: a JSON body sent as something else
    response = api.request(
        method,
        concrete(path, demo),
        content=b'{"name": "x"}',
        headers={**auth_headers(path, demo), "Content-Type": content_type},
    )
    # Then
    body = assert_refused(response, 415, "unsupported_media_type", "Content-Type")
    assert content_type in body["message"]
    assert "application/json" in body["error"]["remedy"]


def test_json_with_a_charset_is_accepted(api: httpx.Client, demo: DemoCredentials) -> None:
    response = api.post(
        f"/client/predict/{demo.models[0]}",
        content=json.dumps({"input": {"user_id": demo.sample_user_id}}).encode(),
        headers={**auth_headers("/client/", demo), "Content-Type": "application/json; charset=utf-8"},
    )
    assert response.status_code == 200, response.text


# --- JSON nested too deep ---------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/platform-ads/audiences", "/client/predict/{modelName}"])
def test_json_nested_5000_deep_is_refused_as_invalid_json(
    api: httpx.Client, demo: DemoCredentials, path: str
) -> None:
    # Given: {"name": [[[[...]]]]} 5,000 deep (Python's json raises RecursionError past ~1,000)
    deep = b'{"name": ' + b"[" * 5000 + b"]" * 5000 + b"}"
    # When
    response = api.post(
        concrete(path, demo),
        content=deep,
        headers={**auth_headers(path, demo), "Content-Type": "application/json"},
    )
    # Then
    body = assert_refused(response, 400, "validation_error", "body")
    assert "nested" in body["message"]


# --- numbers that do not fit ------------------------------------------------------------------------


def test_an_extra_prediction_feature_of_400_digits_is_refused_naming_it(
    api: httpx.Client, demo: DemoCredentials
) -> None:
    # Given: an extra numeric feature too large for a float
    text = json.dumps({"input": {"user_id": demo.sample_user_id, "orders_90d": 0}})
    text = text.replace('"orders_90d": 0', '"orders_90d": ' + "9" * 400)
    # When
    response = api.post(
        f"/client/predict/{demo.models[0]}",
        content=text.encode(),
        headers={**auth_headers("/client/", demo), "Content-Type": "application/json"},
    )
    # Then
    body = assert_refused(response, 400, "validation_error", "input.orders_90d")
    assert body["predictions"] == []


@pytest.mark.parametrize("budget", ["Infinity", "-Infinity", "NaN", "1e400"])
def test_a_daily_budget_that_is_not_a_finite_number_is_refused_naming_it(
    api: httpx.Client, org: ConnectedOrg, budget: str
) -> None:
    # Given: a retargeting audience whose daily budget is not a finite amount
    users = [{"user_id": f"u{i}", "email": f"b{i}@example.com"} for i in range(3)]
    text = json.dumps({"name": "Budget", "users": users, "dailyBudget": 0}).replace(
        '"dailyBudget": 0', f'"dailyBudget": {budget}'
    )
    # When
    response = api.post(
        "/platform-ads/audiences",
        content=text.encode(),
        headers={**org.headers, "Content-Type": "application/json"},
    )
    # Then
    assert_refused(response, 400, "validation_error", "dailyBudget")
