"""One error shape for every failure: domain errors, validation errors, unknown routes, crashes."""

from __future__ import annotations

import json
import sys
from typing import Any

from pydantic import BaseModel

from shared.api import create_app
from shared.errors import NotFound, PreconditionFailed, QuotaExceeded, ServiceError
from tests.http_events import http_event


class Busy(ServiceError):
    """A 503 whose class says when to come back, as the payments provider's does."""

    status = 503
    code = "busy"
    retry_after_seconds = 5.0


class Payload(BaseModel):
    name: str
    count: int


def make_app() -> Any:
    app = create_app()

    @app.get("/things/<thing_id>")
    def get_thing(thing_id: str) -> dict[str, str]:
        if thing_id == "missing":
            raise NotFound("Thing 'missing' was not found.", remedy="List things to see valid ids.")
        if thing_id == "locked":
            raise PreconditionFailed("Thing is locked.", field="thing_id")
        if thing_id == "boom":
            raise RuntimeError("secret internal detail")
        return {"id": thing_id}

    @app.post("/things")
    def create_thing(payload: Payload) -> dict[str, str]:
        return {"name": payload.name}

    return app


def call(app: Any, event: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    result = app.resolve(event, None)
    return result["statusCode"], json.loads(result["body"])


def test_a_domain_error_becomes_its_status_with_message_and_remedy() -> None:
    # When
    status, body = call(make_app(), http_event("GET", "/things/missing"))
    # Then
    assert status == 404
    assert body["success"] is False
    assert body["message"] == "Thing 'missing' was not found."
    assert body["error"] == {
        "code": "not_found",
        "message": "Thing 'missing' was not found.",
        "remedy": "List things to see valid ids.",
    }


def test_a_precondition_error_names_the_field() -> None:
    status, body = call(make_app(), http_event("GET", "/things/locked"))
    assert status == 422
    assert body["error"]["field"] == "thing_id"


def test_a_body_validation_error_is_400_naming_the_field_and_reason() -> None:
    # When
    status, body = call(make_app(), http_event("POST", "/things", body={"name": "x", "count": "many"}))
    # Then
    assert status == 400
    assert body["error"]["field"] == "count"
    assert "count" in body["message"]
    assert body["error"]["remedy"]


def test_malformed_json_is_400_saying_so() -> None:
    status, body = call(make_app(), http_event("POST", "/things", body="{not json"))
    assert status == 400
    assert "not valid JSON" in body["message"]


def test_an_unknown_route_is_404_in_the_same_shape() -> None:
    status, body = call(make_app(), http_event("GET", "/nowhere"))
    assert status == 404
    assert body["error"]["code"] == "route_not_found"


def test_an_unexpected_crash_is_500_without_internal_details() -> None:
    status, body = call(make_app(), http_event("GET", "/things/boom"))
    assert status == 500
    assert "secret internal detail" not in json.dumps(body)


def test_error_extra_fields_are_added_to_every_error_body() -> None:
    # Given: the prediction endpoint's failures carry an empty predictions list
    # (docs/service-contract.md §4.1)
    app = create_app(error_extra={"predictions": []})

    @app.get("/x")
    def x() -> dict[str, str]:
        raise NotFound("nope")

    # When
    _, body = call(app, http_event("GET", "/x"))
    # Then
    assert body["predictions"] == []
    assert body["success"] is False


def test_an_errors_retry_after_and_headers_given_when_it_is_built_reach_the_response() -> None:
    # Given a 429 built with its wait and a header, and a 503 that keeps its class's 5 s
    app = create_app()

    @app.get("/spent")
    def spent() -> dict[str, str]:
        raise QuotaExceeded("Spent.", retry_after_seconds=30.2, headers={"X-Service-Usage-Remaining": "0"})

    @app.get("/busy")
    def busy() -> dict[str, str]:
        raise Busy("Busy.")

    # When each is answered
    quota = app.resolve(http_event("GET", "/spent"), None)
    unavailable = app.resolve(http_event("GET", "/busy"), None)

    # Then the 429 waits the whole seconds given and carries the header; the 503 its default wait
    assert quota["statusCode"] == 429
    assert quota["headers"]["Retry-After"] == "31"
    assert quota["headers"]["X-Service-Usage-Remaining"] == "0"
    assert unavailable["statusCode"] == 503
    assert unavailable["headers"]["Retry-After"] == "5"
    assert "X-Service-Usage-Remaining" not in unavailable["headers"]


def test_a_body_sent_as_another_content_type_is_415_naming_the_header() -> None:
    for content_type in ("text/plain", "application/octet-stream", "multipart/form-data"):
        # Given: a JSON body labelled as something else
        event = http_event("POST", "/things", body={"name": "x", "count": 1})
        event["headers"]["content-type"] = content_type
        # When
        status, body = call(make_app(), event)
        # Then
        assert status == 415, content_type
        assert body["error"]["code"] == "unsupported_media_type"
        assert body["error"]["field"] == "Content-Type"
        assert "application/json" in body["error"]["remedy"]


def test_json_with_parameters_or_without_a_content_type_is_read() -> None:
    for content_type in ("application/json; charset=utf-8", "Application/JSON", None):
        event = http_event("POST", "/things", body={"name": "x", "count": 1})
        if content_type is None:
            del event["headers"]["content-type"]
        else:
            event["headers"]["content-type"] = content_type
        assert call(make_app(), event) == (200, {"name": "x"}), content_type


def test_json_nested_too_deep_is_400_on_the_body() -> None:
    for depth in (33, 5_000, 100_000):
        # Given: a body nested beyond the limit (Python's parser alone fails past ~1,000 levels)
        text = '{"name": ' + "[" * depth + "]" * depth + ', "count": 1}'
        # When
        status, body = call(make_app(), http_event("POST", "/things", body=text))
        # Then
        assert status == 400, depth
        assert body["error"]["field"] == "body"
        assert "nested more than 32 levels" in body["message"]


def test_a_number_that_is_not_a_finite_float_is_400_naming_its_field() -> None:
    for number in ("NaN", "Infinity", "-Infinity", "1e400", "-1e400", "9" * 400, "9" * 5_000):
        # When
        text = '{"name": "x", "count": 1, "extra": {"list": [1, NUMBER]}}'.replace("NUMBER", number)
        status, body = call(make_app(), http_event("POST", "/things", body=text))
        # Then
        assert status == 400, number
        assert body["error"]["field"] == "extra.list.1", number
        assert "finite number" in body["message"]


def test_the_largest_finite_numbers_are_read() -> None:
    largest = str(int(sys.float_info.max))
    text = '{"name": "x", "count": 1, "big": N, "small": -N, "float": 1.7e308}'.replace("N", largest)
    status, _ = call(make_app(), http_event("POST", "/things", body=text))
    assert status == 200
