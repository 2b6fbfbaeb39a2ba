"""What the fuzzer (tests/integration/test_fuzz.py) found wrong, pinned one by one: a body that is not
UTF-8, path parameters Powertools' router did not take, and daily budgets DynamoDB cannot store."""

from __future__ import annotations

import base64
import importlib
import json
from typing import Any
from urllib.parse import quote

import pytest
from pydantic import BaseModel, ValidationError

from shared import wiring
from shared.api import create_app
from shared.audiences.models import CreateAudienceRequest
from tests.http_events import http_event
from tests.unit.deployment import ENVIRONMENT


@pytest.fixture(autouse=True)
def deployed(monkeypatch: pytest.MonkeyPatch) -> Any:
    for name, value in ENVIRONMENT.items():
        monkeypatch.setenv(name, value)
    wiring.reset()
    yield
    wiring.reset()


def answer(function: str, event: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    app = importlib.import_module(f"functions.{function}.handler").app
    result = app.resolve(event, None)
    return result["statusCode"], json.loads(result["body"])


class Thing(BaseModel):
    name: str


def test_a_body_that_is_not_utf8_is_a_400_on_body() -> None:
    # Given a route that reads a JSON body
    app = create_app()

    @app.post("/things")
    def create(thing: Thing) -> dict[str, str]:
        return {"name": thing.name}

    # And a request whose body is not UTF-8 (API Gateway passes such bytes base64-encoded)
    event = http_event("POST", "/things", body=b"I\xd6\x91\xff\x1b")
    assert event["isBase64Encoded"] is True
    # When the resolver answers it
    result = app.resolve(event, None)
    # Then it is the service's 400 naming the body, not a 500
    body = json.loads(result["body"])
    assert result["statusCode"] == 400, body
    assert body["error"]["field"] == "body"
    assert "UTF-8" in body["message"]


def test_a_utf8_body_sent_base64_encoded_is_read() -> None:
    # Given the same route and a UTF-8 JSON body that arrived base64-encoded
    app = create_app()

    @app.post("/things")
    def create(thing: Thing) -> dict[str, str]:
        return {"name": thing.name}

    event = http_event("POST", "/things", body='{"name": "caf\u00e9"}')
    event["body"] = base64.b64encode(event["body"].encode()).decode()
    event["isBase64Encoded"] = True
    # When the resolver answers it
    result = app.resolve(event, None)
    # Then the body is read as usual
    assert (result["statusCode"], json.loads(result["body"])) == (200, {"name": "café"})


@pytest.mark.parametrize("value", ["#", "\x1f", "a b", "é"], ids=["hash", "control", "space", "accent"])
def test_a_path_parameter_of_any_characters_reaches_authentication(value: str) -> None:
    # Given a request API Gateway routed to DELETE /dashboard/api-keys/{keyId}, without credentials
    event = http_event(
        "DELETE",
        f"/dashboard/api-keys/{quote(value)}",
        "/dashboard/api-keys/{keyId}",
        path_params={"keyId": value},
    )
    # When the function resolves it
    status, body = answer("revoke_api_key", event)
    # Then the route is found and the caller is told 401, not a 404 before authentication
    assert status == 401, body
    assert body["error"]["code"] == "unauthorized"


@pytest.mark.parametrize("budget", [5e-324, 0.001, 1e200], ids=["subnormal", "below-a-cent", "astronomical"])
def test_a_daily_budget_outside_a_budgets_range_names_the_field(budget: float) -> None:
    # When an audience is asked for with a positive daily budget no shop has (5e-324 reached DynamoDB,
    # which stores numbers from 1e-130 to 1e126 only: a 500)
    with pytest.raises(ValidationError) as refused:
        CreateAudienceRequest.model_validate(
            {"name": "Buyers", "users": [{"user_id": "u1"}], "dailyBudget": budget}
        )
    # Then it is refused as a validation error of dailyBudget
    assert [error["loc"] for error in refused.value.errors()] == [("dailyBudget",)]


@pytest.mark.parametrize("budget", [0.01, 20, 1_000_000_000])
def test_a_daily_budget_inside_the_range_is_taken(budget: float) -> None:
    request = CreateAudienceRequest.model_validate(
        {"name": "Buyers", "users": [{"user_id": "u1"}], "dailyBudget": budget}
    )
    assert request.daily_budget == budget
