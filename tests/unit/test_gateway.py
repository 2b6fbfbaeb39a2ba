"""The local gateway builds payload-2.0 events as API Gateway does and matches routes like it."""

from __future__ import annotations

import base64

from werkzeug.test import EnvironBuilder
from werkzeug.wrappers import Request

from local.gateway import RouteTable, build_event, to_response
from local.template import Route


def request(**kwargs: object) -> Request:
    return Request(EnvironBuilder(**kwargs).get_environ())  # type: ignore[arg-type]


def test_an_event_carries_route_path_parameters_and_lowercase_headers() -> None:
    # Given
    route = Route("POST", "/client/predict/{modelName}", "PredictFunction")
    incoming = request(
        method="POST",
        path="/client/predict/buyers",
        query_string="a=1&a=2&b=",
        headers=[("X-Service-Api-Key", "k"), ("Cookie", "s=1; t=2")],
        data='{"input": {}}',
        content_type="application/json",
    )
    # When
    event = build_event(incoming, route, {"modelName": "buyers"}, "api1")
    # Then
    assert event["version"] == "2.0"
    assert event["routeKey"] == "POST /client/predict/{modelName}"
    assert event["rawPath"] == "/client/predict/buyers"
    assert event["pathParameters"] == {"modelName": "buyers"}
    assert event["queryStringParameters"] == {"a": "1,2", "b": ""}
    assert event["headers"]["x-service-api-key"] == "k"
    assert "cookie" not in event["headers"]
    assert sorted(event["cookies"]) == ["s=1", "t=2"]
    assert event["body"] == '{"input": {}}'
    assert event["isBase64Encoded"] is False
    assert event["requestContext"]["http"]["method"] == "POST"


def test_a_binary_body_is_base64_encoded() -> None:
    incoming = request(method="POST", path="/x", data=b"\x00\xff", content_type="application/octet-stream")
    event = build_event(incoming, Route("POST", "/x", "F"), {}, "api1")
    assert event["isBase64Encoded"] is True
    assert base64.b64decode(event["body"]) == b"\x00\xff"


def test_a_json_body_that_is_not_utf8_is_base64_encoded() -> None:
    # Given a body declared as JSON whose bytes are not UTF-8 (the fuzzer sent these)
    incoming = request(method="POST", path="/x", data=b"_e\xc3\x28\xff", content_type="application/json")
    # When the gateway builds the event
    event = build_event(incoming, Route("POST", "/x", "F"), {}, "api1")
    # Then the bytes arrive base64-encoded, unchanged, instead of failing the gateway with a 500
    assert event["isBase64Encoded"] is True
    assert base64.b64decode(event["body"]) == b"_e\xc3\x28\xff"


def test_literal_routes_win_over_parameterised_ones() -> None:
    # Given
    table = RouteTable(
        [Route("GET", "/client/models/{modelName}/users", "Users"), Route("GET", "/client/models", "Models")]
    )
    # Then
    assert table.match("GET", "/client/models") == (Route("GET", "/client/models", "Models"), {})
    matched = table.match("GET", "/client/models/m1/users")
    assert matched is not None
    assert matched[1] == {"modelName": "m1"}
    assert table.match("POST", "/client/models") is None


def test_a_plain_return_value_becomes_a_200_json_response() -> None:
    response = to_response({"ok": True})
    assert response.status_code == 200
    assert response.get_json() == {"ok": True}
