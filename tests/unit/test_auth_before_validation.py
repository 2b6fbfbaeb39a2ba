"""Authentication comes before validation: a caller without credentials learns nothing about a
route (not even which fields it expects) but 401."""

from __future__ import annotations

import importlib
import json
from typing import Any

import pytest

from shared import wiring
from tests.http_events import http_event
from tests.unit.deployment import ENVIRONMENT


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
