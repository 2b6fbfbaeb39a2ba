"""One error shape for every failure: domain errors, validation errors, unknown routes, crashes."""

from __future__ import annotations

import json
import sys
from typing import Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field

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


class Settings(BaseModel):
    """A body with the constraints the API's bodies use."""

    model_config = ConfigDict(extra="forbid")

    label: str = Field(default="x", min_length=1, max_length=5)
    quota: int = Field(default=1, ge=1, le=1000)
    share: float = Field(default=0.5, gt=0, lt=1)
    frequency: Literal["daily", "weekly", "off"] = "daily"
    active: bool = True
    tags: list[str] = Field(default_factory=list, max_length=2)
    options: dict[str, int] = Field(default_factory=dict)
    country: str = Field(default="GB", pattern="^[A-Z]{2}$")
    required_name: str


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

    @app.post("/settings")
    def change_settings(settings: Settings) -> dict[str, str]:
        return {"label": settings.label}

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


@pytest.mark.parametrize(
    ("change", "field", "remedy"),
    [
        ({"required_name": None}, "required_name", "Add required_name to the request and send it again."),
        ({"label": 7}, "label", "Send label as text (a JSON string)."),
        ({"quota": "many"}, "quota", "Send quota as a whole number."),
        ({"quota": 2.5}, "quota", "Send quota as a whole number."),
        ({"share": "half"}, "share", "Send share as a number."),
        ({"active": "maybe"}, "active", "Send active as true or false."),
        ({"tags": "a,b"}, "tags", "Send tags as a list (a JSON array)."),
        ({"options": [1]}, "options", "Send options as an object (a JSON object)."),
        ({"quota": 0}, "quota", "Send quota of 1 or more."),
        ({"quota": 1001}, "quota", "Send quota of 1000 or less."),
        ({"share": 0}, "share", "Send share greater than 0."),
        ({"share": 1}, "share", "Send share less than 1."),
        ({"label": ""}, "label", "Send label of at least 1 character."),
        ({"label": "toolong"}, "label", "Send label of at most 5 characters."),
        ({"tags": ["a", "b", "c"]}, "tags", "Send at most 2 items in tags."),
        ({"frequency": "hourly"}, "frequency", "Send frequency as 'daily', 'weekly' or 'off'."),
        ({"country": "gb"}, "country", "Send country matching the pattern ^[A-Z]{2}$."),
        ({"colour": "red"}, "colour", "Leave colour out: the request has no such field."),
    ],
    ids=[
        "missing",
        "string_type",
        "int_parsing",
        "int_from_float",
        "float_parsing",
        "bool_parsing",
        "list_type",
        "dict_type",
        "greater_than_equal",
        "less_than_equal",
        "greater_than",
        "less_than",
        "string_too_short",
        "string_too_long",
        "too_long",
        "literal_error",
        "string_pattern_mismatch",
        "extra_forbidden",
    ],
)
def test_a_validation_errors_remedy_says_what_to_send_naming_the_field(
    change: dict[str, Any], field: str, remedy: str
) -> None:
    # Given a body with one problem (None: the field left out)
    sent = {"required_name": "n", **change}
    sent = {name: value for name, value in sent.items() if value is not None}
    # When
    status, body = call(make_app(), http_event("POST", "/settings", body=sent))
    # Then: the one error shape, and a remedy that says what to send (it was always "Correct the
    # field and send the request again.")
    assert status == 400
    assert set(body["error"]) == {"code", "message", "field", "remedy"}
    assert (body["error"]["code"], body["error"]["field"]) == ("validation_error", field)
    assert body["error"]["remedy"] == remedy


def test_a_body_that_is_not_an_object_is_told_to_send_one() -> None:
    status, body = call(make_app(), http_event("POST", "/things", body=[1]))
    assert status == 400
    assert body["error"]["remedy"] == "Send the body as an object (a JSON object)."


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
