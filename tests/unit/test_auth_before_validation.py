"""Authentication comes before validation: a caller without credentials learns nothing about a
route (not even which fields it expects) but 401."""

from __future__ import annotations

import importlib
import json
from datetime import UTC, datetime
from typing import Any

import pytest

from shared import wiring
from shared.auth.api_keys import issue_key
from shared.repositories.api_keys import DynamoApiKeyStore
from tests.http_events import http_event
from tests.unit.deployment import ENVIRONMENT
from tests.unit.moto_aws import offline_aws, table


@pytest.fixture(autouse=True)
def deployed(monkeypatch: pytest.MonkeyPatch) -> Any:
    for name, value in ENVIRONMENT.items():
        monkeypatch.setenv(name, value)
    wiring.reset()
    yield
    wiring.reset()


def answer(
    function: str, method: str, path: str, route_path: str, **kwargs: Any
) -> tuple[int, dict[str, Any]]:
    app = importlib.import_module(f"functions.{function}.handler").app
    result = app.resolve(http_event(method, path, route_path, **kwargs), None)
    return result["statusCode"], json.loads(result["body"])


@pytest.mark.parametrize(
    "body",
    [{}, {"input": "not an object"}, "{not json"],
    ids=["empty", "wrong-type", "not-json"],
)
def test_a_prediction_without_an_api_key_is_unauthorized_whatever_the_body(body: Any) -> None:
    # When an invalid prediction request comes without a key
    status, answered = answer(
        "predict",
        "POST",
        "/client/predict/x",
        "/client/predict/{modelName}",
        body=body,
        path_params={"modelName": "x"},
    )

    # Then it is 401 "API key is missing", not the validation error
    assert status == 401
    assert answered["error"]["code"] == "unauthorized"
    assert "field" not in answered["error"]


def test_a_prediction_with_a_malformed_api_key_is_unauthorized_before_validation() -> None:
    status, _ = answer(
        "predict",
        "POST",
        "/client/predict/x",
        "/client/predict/{modelName}",
        body={},
        headers={"X-Service-Api-Key": "not-a-key"},
        path_params={"modelName": "x"},
    )
    assert status == 401


@pytest.fixture
def wrong_keys(monkeypatch: pytest.MonkeyPatch) -> Any:
    """An organization's active key; a well-formed key nobody issued, a real key with a wrong
    secret, and a revoked key."""
    with offline_aws(monkeypatch):
        store = DynamoApiKeyStore(table(ENVIRONMENT["MAIN_TABLE"]))
        known = issue_key("org-1", "backend", datetime(2026, 11, 1, tzinfo=UTC))
        revoked = issue_key("org-1", "old backend", datetime(2026, 11, 1, tzinfo=UTC))
        store.put(known.stored)
        store.put(revoked.stored)
        store.revoke("org-1", revoked.stored.key_id, datetime(2026, 11, 2, tzinfo=UTC))
        yield {
            "active": known.key,
            "unknown": "svc_aaaaaaaaaa_" + "s" * 43,
            "wrong-secret": known.key[: known.key.rindex("_") + 1] + "not-the-secret",
            "revoked": revoked.key,
        }


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("text/plain", "user_id=u1"),
        ("application/x-www-form-urlencoded", "input=u1"),
        ("application/json", "{not json"),
        ("application/json", {"input": "not an object"}),
        ("application/json", {}),
        ("application/json", b'{"input": "\xff"}'),
        ("application/json", {"input": {"user_id": "u1", "basket": "full"}}),
    ],
    ids=["text", "form", "not-json", "wrong-type", "empty", "not-utf8", "bad-feature"],
)
@pytest.mark.parametrize("which", ["unknown", "wrong-secret", "revoked"])
def test_a_prediction_with_a_wrong_or_revoked_key_is_unauthorized_whatever_the_body(
    wrong_keys: dict[str, str], which: str, content_type: str, body: Any
) -> None:
    # Given a key that is not an active key of any organization
    # When it comes with a body of the wrong type, or one that does not validate
    status, answered = answer(
        "predict",
        "POST",
        "/client/predict/x",
        "/client/predict/{modelName}",
        body=body,
        headers={"X-Service-Api-Key": wrong_keys[which]},
        path_params={"modelName": "x"},
        content_type=content_type,
    )

    # Then it is 401, whatever the body (a wrong key got 415 for a body not sent as JSON)
    assert (status, answered["error"]["code"]) == (401, "unauthorized")
    assert "field" not in answered["error"]
    assert answered["predictions"] == []


def test_an_active_key_with_a_body_not_sent_as_json_is_told_415(wrong_keys: dict[str, str]) -> None:
    # A control: the same request with the organization's active key learns what is wrong with it
    status, answered = answer(
        "predict",
        "POST",
        "/client/predict/x",
        "/client/predict/{modelName}",
        body="user_id=u1",
        headers={"X-Service-Api-Key": wrong_keys["active"]},
        path_params={"modelName": "x"},
        content_type="text/plain",
    )
    assert (status, answered["error"]["field"]) == (415, "Content-Type")


def test_a_dashboard_request_without_a_jwt_is_unauthorized_whatever_the_body() -> None:
    # When an invalid API-key creation comes without a JWT
    status, answered = answer(
        "create_api_key", "POST", "/dashboard/api-keys", "/dashboard/api-keys", body={"dailyQuota": "many"}
    )

    # Then
    assert status == 401
    assert "field" not in answered["error"]


def test_a_dashboard_query_without_a_jwt_is_unauthorized_whatever_the_query() -> None:
    status, _ = answer("get_usage", "GET", "/dashboard/usage?from=yesterday", "/dashboard/usage")
    assert status == 401
