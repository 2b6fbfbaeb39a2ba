"""Every outbound call is bounded by the time the invocation has left (issue 24, item 3).

A Lambda behind the HTTP API has 29 s, and API Gateway gives up at 30 s with a bodiless 503. The
platform client's own settings (a 30 s timeout, five retries, a 60 s pause on high usage) must never
outlast that: each layer reads the time left from the Lambda context (``shared.deadline``) and
answers in time. These tests drive each layer with a fake Lambda context whose clock moves only
when the code waits: the fake platform's latency and the client's sleeps spend it, so the budget is
measured exactly, without real waiting.
"""

from __future__ import annotations

import ast
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import boto3
import botocore.session
import httpx
import jwt
import pytest
from aws_lambda_powertools.event_handler import Response

from local.template import ROOT, functions, load_template, routes
from shared import aws, deadline, wiring
from shared.api import create_app, http_entry_point
from shared.auth.jwt import BoundedJwkClient
from shared.errors import OutOfTime
from shared.platform.client import MIN_ATTEMPT_SECONDS, GraphClient
from shared.platform.errors import PlatformError, PlatformOutOfTime, PlatformThrottled, PlatformUnavailable
from shared.platform.retry import may_have_executed
from tests.unit.deployment import deployed_settings
from tests.unit.moto_aws import offline_aws, table
from tests.unit.platform.fake_graph import ACCESS_TOKEN, APP_ID, APP_SECRET, GRAPH_URL, VERSION, buc_header

NOW = datetime(2026, 9, 1, 12, 0, tzinfo=UTC)
HTTP_API_LIMIT_SECONDS = 30


@dataclass
class FakeContext:
    """A Lambda context whose remaining time moves only when the code spends it."""

    remaining: float
    aws_request_id: str = "request-1"
    function_name: str = "Function"
    memory_limit_in_mb: int = 512
    invoked_function_arn: str = "arn:aws:lambda:eu-west-1:123456789012:function:Function"

    def get_remaining_time_in_millis(self) -> int:
        return int(self.remaining * 1000)

    def spend(self, seconds: float) -> None:
        self.remaining -= seconds


class SlowPlatform:
    """A Graph API that takes ``latency`` seconds of the context's time per call and answers
    ``reply`` (status, body, headers); a call whose timeout is shorter than the latency spends the
    timeout and fails with a read timeout, as httpx does."""

    def __init__(self, context: FakeContext, latency: float, reply: tuple[int, Any, dict[str, str]]) -> None:
        self.context = context
        self.latency = latency
        self.reply = reply
        self.timeouts: list[float] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        timeout = float(request.extensions["timeout"]["read"])
        self.timeouts.append(timeout)
        if self.latency > timeout:
            self.context.spend(timeout)
            raise httpx.ReadTimeout("timed out", request=request)
        self.context.spend(self.latency)
        status, body, headers = self.reply
        return httpx.Response(status, json=body, headers=headers)


def graph(platform: SlowPlatform, *, max_retries: int = 5) -> GraphClient:
    """The client as deployed (30 s timeout, 5 retries, 60 s usage pause); its sleeps spend the
    context's time."""
    return GraphClient(
        base_url=GRAPH_URL,
        version=VERSION,
        app_id=APP_ID,
        app_secret=APP_SECRET,
        access_token=ACCESS_TOKEN,
        timeout_seconds=30.0,
        max_retries=max_retries,
        backoff_base_seconds=1.0,
        usage_pause_seconds=60.0,
        transport=httpx.MockTransport(platform),
        sleep=platform.context.spend,
        jitter=lambda: 0.5,
        clock=lambda: NOW,
    )


TRANSIENT = (500, {"error": {"message": "temporary", "code": 2, "is_transient": True}}, {})
OK = (200, {"id": "42"}, {})


# --- shared.deadline ------------------------------------------------------------------------------


def test_outside_an_invocation_nothing_is_bounded() -> None:
    # Given: no Lambda invocation (a tool, a benchmark)
    # When / Then: a call may take its own ceiling
    assert deadline.seconds_left() is None
    assert deadline.call_timeout(30.0) == 30.0


def test_inside_an_invocation_a_call_gets_the_time_left_less_the_reserve() -> None:
    # Given: an invocation with 10 s left
    context = FakeContext(remaining=10.0)

    # When / Then: a call may take what is left after the reserve, never more than its ceiling
    with deadline.invocation(context):
        assert deadline.call_timeout(30.0) == pytest.approx(10.0 - deadline.RESERVE_SECONDS)
        assert deadline.call_timeout(3.0) == 3.0
        context.spend(9.5)
        assert deadline.call_timeout(30.0) == 0.0
    assert deadline.seconds_left() is None


def test_a_thread_the_request_starts_carries_its_budget() -> None:
    # Given: an invocation with 8 s left
    seen: list[float | None] = []

    # When: a thread runs a function carried from it, and another one not carried
    with deadline.invocation(FakeContext(remaining=8.0)):
        carried = threading.Thread(target=deadline.carry(lambda: seen.append(deadline.seconds_left())))
        plain = threading.Thread(target=lambda: seen.append(deadline.seconds_left()))
        carried.start(), carried.join()
        plain.start(), plain.join()

    # Then: only the carried one knows the time left
    assert seen == [8.0, None]


def test_a_bounded_handler_sees_its_context() -> None:
    # Given: a handler bounded by its context
    @deadline.bounded
    def handler(event: dict[str, Any], context: FakeContext) -> float | None:
        return deadline.seconds_left()

    # When / Then: inside, the context's time left; afterwards, nothing
    assert handler({}, FakeContext(remaining=4.5)) == 4.5
    assert deadline.seconds_left() is None


# --- the platform client --------------------------------------------------------------------------


def test_an_attempt_waits_no_longer_than_the_time_left() -> None:
    # Given: 20 s left and a platform that answers in 0.1 s
    context = FakeContext(remaining=20.0)
    platform = SlowPlatform(context, latency=0.1, reply=OK)

    # When: the client (30 s timeout) calls it
    with deadline.invocation(context):
        graph(platform).get("42")

    # Then: the attempt was allowed what is left after the platform reserve, not 30 s
    assert platform.timeouts == [pytest.approx(20.0 - deadline.PLATFORM_RESERVE_SECONDS)]


def test_a_slow_platform_is_given_up_in_time_with_retry_after() -> None:
    # Given: 29 s left (a function behind the HTTP API) and a platform that takes 40 s
    context = FakeContext(remaining=29.0)
    platform = SlowPlatform(context, latency=40.0, reply=OK)

    # When: the client calls it
    with deadline.invocation(context), pytest.raises(PlatformOutOfTime) as raised:
        graph(platform).get("42")

    # Then: one attempt, cut at the time left, and the reserve is still there to answer 503
    assert len(platform.timeouts) == 1
    assert context.remaining == pytest.approx(deadline.PLATFORM_RESERVE_SECONDS)
    assert raised.value.status == 503
    assert raised.value.retry_after_seconds is not None
    assert raised.value.retry_after_seconds >= 1
    assert isinstance(raised.value, PlatformUnavailable)
    assert may_have_executed(raised.value)


def test_the_retry_loop_stops_when_the_next_retry_would_not_fit() -> None:
    # Given: 12 s left and a platform that fails transiently after 1 s, every time
    context = FakeContext(remaining=12.0)
    platform = SlowPlatform(context, latency=1.0, reply=TRANSIENT)

    # When: the client calls it (5 retries, backing off 0.75, 1.5, 3, 6 s with this jitter)
    with deadline.invocation(context), pytest.raises(PlatformOutOfTime) as raised:
        graph(platform).get("42")

    # Then: after the third attempt (6.75 s left), a 3 s wait and a 1 s attempt no longer fitted
    # before the reserve: it stopped there, and says when to come back (at least 5 s)
    assert platform.timeouts == [pytest.approx(9.0), pytest.approx(7.25), pytest.approx(4.75)]
    assert context.remaining == pytest.approx(6.75)
    assert raised.value.retry_after_seconds == pytest.approx(5.0)


def test_outside_an_invocation_the_retry_loop_runs_its_course() -> None:
    # Given: the same failing platform, no invocation (a tool)
    context = FakeContext(remaining=1000.0)
    platform = SlowPlatform(context, latency=1.0, reply=TRANSIENT)

    # When: the client calls it
    with pytest.raises(PlatformError) as raised:
        graph(platform).get("42")

    # Then: every retry was made (the control for the test above), each with the full 30 s
    assert platform.timeouts == [30.0] * 6
    assert not isinstance(raised.value, PlatformOutOfTime)


def test_a_usage_pause_longer_than_the_time_left_is_refused_not_slept() -> None:
    # Given: 25 s left and a platform that reports 99 % usage (a 60 s pause before the next call)
    context = FakeContext(remaining=25.0)
    platform = SlowPlatform(context, latency=0.2, reply=(200, {"id": "42"}, buc_header(99)))
    client = graph(platform)

    # When: two calls are made
    with deadline.invocation(context):
        client.get("42")
        with pytest.raises(PlatformThrottled) as raised:
            client.get("42")

    # Then: the second is refused at once (nothing sent, no sleep), saying to come back in 60 s
    assert len(platform.timeouts) == 1
    assert context.remaining == pytest.approx(24.8)
    assert raised.value.retry_after_seconds == 60.0


def test_a_usage_pause_that_fits_is_slept() -> None:
    # Given: a long-running step (280 s left) and the same 99 % usage
    context = FakeContext(remaining=280.0)
    platform = SlowPlatform(context, latency=0.2, reply=(200, {"id": "42"}, buc_header(99)))
    client = graph(platform)

    # When: two calls are made
    with deadline.invocation(context):
        client.get("42")
        client.get("42")

    # Then: the client paused 60 s between them
    assert len(platform.timeouts) == 2
    assert context.remaining == pytest.approx(280.0 - 0.2 - 60.0 - 0.2)


def test_no_attempt_is_sent_with_less_than_a_second_left() -> None:
    # Given: just over the reserve left
    context = FakeContext(remaining=deadline.PLATFORM_RESERVE_SECONDS + MIN_ATTEMPT_SECONDS / 2)
    platform = SlowPlatform(context, latency=0.1, reply=OK)

    # When / Then: the call is refused before anything is sent
    with deadline.invocation(context), pytest.raises(PlatformOutOfTime):
        graph(platform).post("act_42/customaudiences", {"name": "x"})
    assert platform.timeouts == []


# --- the AWS clients (botocore) -------------------------------------------------------------------


@pytest.fixture
def dynamodb(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    with offline_aws(monkeypatch):
        table("main")
        settings = deployed_settings()
        yield aws.client("dynamodb", settings, botocore.session.get_session())


def read_timeouts(client: Any) -> list[float | None]:
    """The read timeout each attempt of ``client`` was sent with (seen after the deadline's hook)."""
    seen: list[float | None] = []
    client.meta.events.register(
        "before-send", lambda request, **_: seen.append(request.context.get("read_timeout"))
    )
    return seen


def test_an_aws_call_waits_no_longer_than_the_time_left(dynamodb: Any) -> None:
    # Given: a DynamoDB client (10 s read timeout) in an invocation with 4 s left
    seen = read_timeouts(dynamodb)

    # When: it is called
    with deadline.invocation(FakeContext(remaining=4.0)):
        dynamodb.put_item(TableName="main", Item={"pk": {"S": "a"}, "sk": {"S": "b"}})

    # Then: the attempt's read timeout was the time left less the reserve
    assert seen == [pytest.approx(4.0 - deadline.RESERVE_SECONDS)]


def test_an_aws_call_keeps_its_own_timeout_when_time_is_plentiful(dynamodb: Any) -> None:
    # Given: a long step (300 s left)
    seen = read_timeouts(dynamodb)

    # When: it is called
    with deadline.invocation(FakeContext(remaining=300.0)):
        dynamodb.get_item(TableName="main", Key={"pk": {"S": "a"}, "sk": {"S": "b"}})

    # Then: the client's own 10 s applies
    assert seen == [10.0]


def test_an_aws_call_without_time_left_is_not_sent(dynamodb: Any) -> None:
    # Given: an invocation whose time is all but spent
    context = FakeContext(remaining=deadline.RESERVE_SECONDS + 0.1)

    # When: a write is attempted
    with deadline.invocation(context), pytest.raises(OutOfTime) as raised:
        dynamodb.put_item(TableName="main", Item={"pk": {"S": "a"}, "sk": {"S": "b"}})

    # Then: it was refused as out of time (503, Retry-After) and nothing was written
    assert raised.value.status == 503
    item = boto3.client("dynamodb", region_name="eu-west-1").get_item(
        TableName="main", Key={"pk": {"S": "a"}, "sk": {"S": "b"}}
    )
    assert "Item" not in item


# --- the payments provider ----------------------------------------------------------------------


def test_a_payments_call_waits_no_longer_than_the_time_left(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given: the payments provider's settings (a 20 s timeout) in an invocation with 12 s left
    monkeypatch.setenv("PAYMENTS_SECRETS_ARN", "payments")
    wiring.reset()
    try:
        # When: the provider's client asks how long its next attempt may take (it asks before each)
        with deadline.invocation(FakeContext(remaining=12.0)):
            inside = wiring.payments_attempt_timeout()
        outside = wiring.payments_attempt_timeout()
    finally:
        wiring.reset()

    # Then: the time left less the platform reserve; outside an invocation, its own 20 s
    assert inside == pytest.approx(12.0 - deadline.PLATFORM_RESERVE_SECONDS)
    assert outside == 20.0


# --- the user pool's keys (JWKS) ------------------------------------------------------------------

CLOSED_PORT_JWKS = "http://127.0.0.1:9/.well-known/jwks.json"  # refused at once: nothing listens on 9


def test_the_jwks_fetch_waits_no_longer_than_the_time_left() -> None:
    # Given: the JWKS client (5 s timeout) in an invocation with 3 s left
    client = BoundedJwkClient(CLOSED_PORT_JWKS)

    # When: it fetches the keys (the connection is refused)
    with deadline.invocation(FakeContext(remaining=3.0)), pytest.raises(jwt.PyJWKClientConnectionError):
        client.fetch_data()

    # Then: the fetch was given the time left less the reserve
    assert client.timeout == pytest.approx(3.0 - deadline.RESERVE_SECONDS)


def test_the_jwks_fetch_without_time_left_is_not_made() -> None:
    # Given: an invocation whose time is all but spent
    client = BoundedJwkClient(CLOSED_PORT_JWKS)

    # When / Then: the fetch is refused as out of time, not attempted (which would fail to connect)
    with deadline.invocation(FakeContext(remaining=deadline.RESERVE_SECONDS + 0.1)), pytest.raises(OutOfTime):
        client.fetch_data()


# --- the HTTP answer ------------------------------------------------------------------------------


def http_event(path: str) -> dict[str, Any]:
    return {
        "version": "2.0",
        "routeKey": f"GET {path}",
        "rawPath": path,
        "rawQueryString": "",
        "headers": {},
        "requestContext": {
            "http": {"method": "GET", "path": path, "protocol": "HTTP/1.1", "sourceIp": "127.0.0.1"},
            "requestId": "r1",
            "routeKey": f"GET {path}",
            "stage": "$default",
        },
        "isBase64Encoded": False,
    }


def test_a_function_behind_the_api_answers_503_with_a_body_and_retry_after_before_the_limit() -> None:
    # Given: an HTTP API function (29 s) whose route calls a platform that takes 40 s
    context = FakeContext(remaining=29.0)
    platform = SlowPlatform(context, latency=40.0, reply=OK)
    app = create_app()

    @app.get("/slow")
    def slow() -> Response[str]:
        graph(platform).get("42")
        return Response(200, "application/json", "{}")

    # When: it is invoked through the entry point every HTTP function uses
    answer = http_entry_point(app)(http_event("/slow"), context)  # type: ignore[arg-type]

    # Then: 503 with the error body and Retry-After, answered with time to spare
    assert answer["statusCode"] == 503
    assert int(answer["headers"]["Retry-After"]) >= 1
    body = json.loads(answer["body"])
    assert body["error"]["code"] == "platform_unavailable"
    assert body["error"]["remedy"]
    assert context.remaining >= deadline.PLATFORM_RESERVE_SECONDS - 0.5


def test_a_throttled_answer_says_when_to_retry() -> None:
    # Given: a route the platform throttles for 60 s
    app = create_app()

    @app.get("/throttled")
    def throttled() -> Response[str]:
        raise PlatformThrottled("throttled", remedy="wait", retry_after_seconds=59.2)

    # When: it is called
    answer = http_entry_point(app)(http_event("/throttled"), FakeContext(remaining=29.0))  # type: ignore[arg-type]

    # Then: 429 with Retry-After in whole seconds
    assert answer["statusCode"] == 429
    assert answer["headers"]["Retry-After"] == "60"


# --- every function -------------------------------------------------------------------------------


def handler_tree(name: str) -> ast.Module:
    spec = functions(load_template())[name]
    return ast.parse((spec.code_dir / "handler.py").read_text())


def is_bounded(tree: ast.Module) -> bool:
    """Whether the module's ``lambda_handler`` is ``http_entry_point(...)`` or ``@deadline.bounded``."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "lambda_handler" for t in node.targets
        ):
            return (
                isinstance(node.value, ast.Call) and getattr(node.value.func, "id", "") == "http_entry_point"
            )
        if isinstance(node, ast.FunctionDef) and node.name == "lambda_handler":
            return any(ast.unparse(d) == "deadline.bounded" for d in node.decorator_list)
    return False


@pytest.mark.parametrize("name", sorted(functions(load_template())))
def test_every_function_bounds_its_outbound_calls_by_its_context(name: str) -> None:
    # Given / When: the function's entry point
    # Then: it opens the invocation's budget from its Lambda context
    assert is_bounded(handler_tree(name)), f"{name}'s lambda_handler is neither http_entry_point nor bounded"


def submitted_without_budget() -> list[str]:
    """``file:line`` of every ``executor.submit(fn, ...)`` in ``shared/`` whose ``fn`` is not
    ``deadline.carry(...)``: work on another thread that would run unbounded."""
    found = []
    for path in sorted((ROOT / "shared").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "submit"
            ):
                first = node.args[0] if node.args else None
                carried = isinstance(first, ast.Call) and ast.unparse(first.func) == "deadline.carry"
                if not carried:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_work_handed_to_another_thread_carries_the_invocations_budget() -> None:
    # Given / When: every submission to a thread pool in the library
    # Then: each carries the budget (a pool's threads do not inherit the invocation's context)
    assert submitted_without_budget() == []


def test_every_function_behind_the_api_stops_before_api_gateway_gives_up() -> None:
    # Given: the functions the HTTP API routes to
    specs = functions(load_template())
    behind_api = {route.function for route in routes(load_template())}

    # Then: each one's Timeout is under the HTTP API's 30 s, so its own answer reaches the caller
    too_long = {
        name: specs[name].timeout for name in behind_api if specs[name].timeout >= HTTP_API_LIMIT_SECONDS
    }
    assert too_long == {}
