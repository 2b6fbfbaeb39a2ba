"""The local gateway builds payload-2.0 events as API Gateway does, matches routes like it, and holds
each route to its throttle as API Gateway does."""

from __future__ import annotations

import base64
import json

from werkzeug.test import Client, EnvironBuilder
from werkzeug.wrappers import Request

from local.gateway import LocalGateway, RouteTable, RouteThrottles, build_event, to_response
from local.runner import Invocation, throttled_payload
from local.template import Route, Throttle


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


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_route_past_its_throttle_is_refused_until_its_bucket_refills() -> None:
    # Given a route throttled to a burst of 2 and 1 request a second, another on the stage's default
    clock = FakeClock()
    throttles = RouteThrottles(
        {"HttpApi": {"$default": Throttle(100, 200), "POST /preview": Throttle(rate=1, burst=2)}}, clock
    )
    preview = Route("POST", "/preview", "PreviewFunction")
    predict = Route("POST", "/client/predict/{modelName}", "PredictFunction")
    # When three previews arrive at once
    answers = [throttles.admit(preview) for _ in range(3)]
    # Then the burst passes and the third is refused; another route is not touched by it
    assert answers == [True, True, False]
    assert all(throttles.admit(predict) for _ in range(150))
    # And a second later one token is back
    clock.now += 1
    assert [throttles.admit(preview) for _ in range(2)] == [True, False]


def test_each_route_on_the_default_throttle_has_a_bucket_of_its_own() -> None:
    # Given the stage's default throttle only (what the dashboard's reads get)
    throttles = RouteThrottles({"HttpApi": {"$default": Throttle(rate=0.001, burst=1)}}, FakeClock())
    # Then one read spending its bucket leaves the other's
    assert throttles.admit(Route("GET", "/a", "A"))
    assert not throttles.admit(Route("GET", "/a", "A"))
    assert throttles.admit(Route("GET", "/b", "B"))


class Runner:
    """A runner whose invocations all end as ``outcome``."""

    def __init__(self, outcome: Invocation) -> None:
        self.outcome = outcome
        self.specs = {"F": None}
        self.calls = 0

    def invoke(self, function: str, event: object, *, timeout: float | None = None) -> Invocation:
        self.calls += 1
        return self.outcome


def call(gateway: LocalGateway, path: str = "/x") -> tuple[int, dict[str, object]]:
    client = Client(gateway.wsgi)
    response = client.post(path)
    return response.status_code, json.loads(response.get_data())


def test_a_throttled_route_answers_api_gateways_429_and_runs_nothing() -> None:
    # Given a route with no tokens left
    runner = Runner(Invocation("F", "r", False, 1.0, None, result={"statusCode": 200, "body": "{}"}))
    gateway = LocalGateway(
        [Route("POST", "/x", "F")],
        runner,  # type: ignore[arg-type]
        throttles=RouteThrottles({"HttpApi": {"POST /x": Throttle(rate=0.001, burst=1)}}, FakeClock()),
    )
    assert call(gateway)[0] == 200
    # When another request arrives
    status, body = call(gateway)
    # Then API Gateway's own 429 answers and the function is not invoked
    assert (status, body) == (429, {"message": "Too Many Requests"})
    assert runner.calls == 1


def test_a_function_throttled_at_its_reserved_concurrency_is_a_500_as_api_gateway_answers_it() -> None:
    # Given a function whose invocation Lambda refuses (TooManyRequestsException: reserved concurrency)
    throttled = Invocation("F", "r", False, 0.1, None, error=throttled_payload(), throttled=True)
    gateway = LocalGateway([Route("POST", "/x", "F")], Runner(throttled))  # type: ignore[arg-type]
    # Then the caller gets what API Gateway answers for an invocation the Lambda API rejected
    assert call(gateway) == (500, {"message": "Internal Server Error"})


def test_lifted_throttles_admit_everything_and_start_full_after() -> None:
    # Given a route with one token
    throttles = RouteThrottles({"HttpApi": {"$default": Throttle(rate=0.001, burst=1)}}, FakeClock())
    route = Route("GET", "/a", "A")
    # When its throttles are lifted, then put back
    with throttles.lifted():
        assert all(throttles.admit(route) for _ in range(10))
    # Then its bucket is full again, and holds again
    assert [throttles.admit(route) for _ in range(2)] == [True, False]
