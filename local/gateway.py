"""A local API Gateway HTTP API: routes read from ``template.yaml``, payload-2.0 events built as
API Gateway builds them, each function invoked in its own workers (``local.runner``).

As the HTTP API does, the gateway waits at most 30 s for an integration (then answers 503
``{"message":"Service Unavailable"}`` while the function may go on) and answers a failed invocation
(an unhandled error, the function's own timeout, an oversized response) with 500
``{"message":"Internal Server Error"}``.

It holds every route to its throttle from the template (the stage's ``DefaultRouteSettings`` and
``RouteSettings``, a token bucket per route): a request past it gets 429 ``{"message":"Too Many
Requests"}`` and no function runs. A function throttled at its reserved concurrency (Lambda's Invoke
answers 429 ``TooManyRequestsException``) is an invocation Lambda rejected, which API Gateway answers
with 500 ``{"message":"Internal Server Error"}`` (AWS Lambda Developer Guide, "Handling Lambda errors
with an API Gateway API": "If the Lambda API rejects the invocation request, API Gateway returns a
500 error code"); it does not pass Lambda's 429 on.
"""

from __future__ import annotations

import base64
import json
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qsl

from werkzeug.serving import BaseWSGIServer, make_server
from werkzeug.wrappers import Request, Response

from local.runner import FunctionRunner
from local.template import Route, Throttle

# Not an API route: the local equivalent of `sam local invoke` (scheduled jobs, sample events).
INVOKE_PREFIX = "/_local/invoke/"
TEXT_TYPES = ("text/", "application/json", "application/xml", "application/javascript")
# How long an HTTP API waits for its integration (API Gateway quotas: 30 s, not adjustable).
INTEGRATION_TIMEOUT_SECONDS = 30.0


@dataclass(frozen=True)
class Cors:
    """An HTTP API's CorsConfiguration: API Gateway answers preflights itself and adds the
    Access-Control-Allow-Origin header to responses for an allowed origin only."""

    origins: list[str]
    methods: list[str]
    headers: list[str]
    max_age: int = 300

    def preflight(self, request: Request) -> Response | None:
        origin = request.headers.get("origin")
        if (
            request.method != "OPTIONS"
            or not origin
            or "access-control-request-method" not in request.headers
        ):
            return None
        response = Response(status=204)
        if origin in self.origins:
            response.headers.update(
                {
                    "Access-Control-Allow-Origin": origin,
                    "Access-Control-Allow-Methods": ",".join(self.methods),
                    "Access-Control-Allow-Headers": ",".join(self.headers),
                    "Access-Control-Max-Age": str(self.max_age),
                    "Vary": "Origin",
                }
            )
        return response

    def decorate(self, request: Request, response: Response) -> None:
        origin = request.headers.get("origin")
        if origin and origin in self.origins:
            response.headers["Access-Control-Allow-Origin"] = origin
            response.headers["Vary"] = "Origin"


@dataclass
class TokenBucket:
    """API Gateway's throttling algorithm: ``burst`` tokens, refilled at ``rate`` a second; each
    request takes one, and a request that finds none is refused."""

    throttle: Throttle
    clock: Callable[[], float] = time.monotonic
    _tokens: float = field(init=False)
    _at: float = field(init=False)
    _lock: threading.Lock = field(init=False, default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self._tokens = float(self.throttle.burst)
        self._at = self.clock()

    def take(self) -> bool:
        with self._lock:
            now = self.clock()
            self._tokens = min(
                float(self.throttle.burst), self._tokens + (now - self._at) * self.throttle.rate
            )
            self._at = now
            if self._tokens < 1:
                return False
            self._tokens -= 1
            return True


class RouteThrottles:
    """Each route's token bucket: its own ``RouteSettings`` throttle, or the stage's default one
    (``"$default"``), per API. Every route has a bucket of its own, as API Gateway keeps them."""

    def __init__(
        self, throttles: dict[str, dict[str, Throttle]], clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._throttles = throttles
        self._clock = clock
        self._buckets: dict[tuple[str, str], TokenBucket] = {}
        self._lock = threading.Lock()
        self._lifted = False

    def admit(self, route: Route) -> bool:
        """Take a token of ``route``'s bucket; False when it has none (answer 429)."""
        key = (route.api, f"{route.method} {route.path}")
        with self._lock:
            if self._lifted:
                return True
            bucket = self._buckets.get(key)
            if bucket is None:
                settings = self._throttles.get(route.api, {})
                throttle = settings.get(key[1], settings.get("$default"))
                if throttle is None:
                    return True
                bucket = self._buckets[key] = TokenBucket(throttle, self._clock)
        return bucket.take()

    @contextmanager
    def lifted(self) -> Iterator[None]:
        """No route throttled inside the block (a test that sends far faster than any client, the
        fuzzer); the buckets start full again after it."""
        with self._lock:
            self._lifted = True
        try:
            yield
        finally:
            with self._lock:
                self._lifted = False
                self._buckets.clear()

    @contextmanager
    def replaced(self, api: str, route_key: str, throttle: Throttle) -> Iterator[None]:
        """``route_key`` of ``api`` held to ``throttle`` (a fresh, full bucket) inside the block, as
        after a stage update; its template throttle (a fresh bucket) after it."""
        with self._lock:
            self._buckets[(api, route_key)] = TokenBucket(throttle, self._clock)
        try:
            yield
        finally:
            with self._lock:
                self._buckets.pop((api, route_key), None)


def _route_regex(path: str) -> re.Pattern[str]:
    pattern = re.sub(r"\{(\w+)\+\}", r"(?P<\1>.+)", path)
    pattern = re.sub(r"\{(\w+)\}", r"(?P<\1>[^/]+)", pattern)
    return re.compile(f"^{pattern}$")


def _specificity(route: Route) -> tuple[int, int, int]:
    # API Gateway prefers literal paths, then fewer greedy variables, then longer paths.
    return (route.path.count("+}"), route.path.count("{"), -len(route.path))


class RouteTable:
    def __init__(self, routes: Iterable[Route]) -> None:
        self._routes = [(r, _route_regex(r.path)) for r in sorted(routes, key=_specificity)]

    def match(self, method: str, path: str) -> tuple[Route, dict[str, str]] | None:
        for route, regex in self._routes:
            found = regex.match(path)
            if found and route.method in (method, "ANY"):
                return route, found.groupdict()
        return None


def build_event(request: Request, route: Route, path_params: dict[str, str], api_id: str) -> dict[str, Any]:
    """The payload-2.0 event API Gateway sends for ``request`` matched to ``route``."""
    headers: dict[str, str] = {}
    for key, value in request.headers.items():
        lower = key.lower()
        if lower == "cookie":
            continue
        headers[lower] = f"{headers[lower]},{value}" if lower in headers else value
    query: dict[str, str] = {}
    raw_query = request.query_string.decode()
    for key, value in parse_qsl(raw_query, keep_blank_values=True):
        query[key] = f"{query[key]},{value}" if key in query else value
    body_bytes = request.get_data()
    content_type = request.headers.get("content-type", "")
    is_text = not body_bytes or content_type.startswith(TEXT_TYPES) or "x-www-form-urlencoded" in content_type
    if is_text and not _is_utf8(body_bytes):
        # A Lambda event is JSON text: bytes that are not UTF-8 travel base64-encoded whatever the
        # Content-Type claims, so the function (not the gateway) decides what to answer.
        is_text = False
    now = datetime.now(UTC)
    route_key = f"{route.method} {route.path}"
    event: dict[str, Any] = {
        "version": "2.0",
        "routeKey": route_key,
        "rawPath": request.path,
        "rawQueryString": raw_query,
        "headers": headers,
        "requestContext": {
            "accountId": "123456789012",
            "apiId": api_id,
            "domainName": request.host,
            "domainPrefix": request.host.split(".")[0],
            "http": {
                "method": request.method,
                "path": request.path,
                "protocol": request.environ.get("SERVER_PROTOCOL", "HTTP/1.1"),
                "sourceIp": request.remote_addr or "127.0.0.1",
                "userAgent": request.headers.get("user-agent", ""),
            },
            "requestId": str(uuid.uuid4()),
            "routeKey": route_key,
            "stage": "$default",
            "time": now.strftime("%d/%b/%Y:%H:%M:%S +0000"),
            "timeEpoch": int(now.timestamp() * 1000),
        },
        "isBase64Encoded": not is_text,
    }
    if request.cookies:
        event["cookies"] = [f"{k}={v}" for k, v in request.cookies.items()]
    if query:
        event["queryStringParameters"] = query
    if path_params:
        event["pathParameters"] = path_params
    if body_bytes:
        event["body"] = body_bytes.decode() if is_text else base64.b64encode(body_bytes).decode()
    return event


def _message(status: int, message: str) -> Response:
    """A response API Gateway itself writes."""
    return Response(json.dumps({"message": message}), status=status, content_type="application/json")


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def to_response(result: Any) -> Response:
    """Map a handler's return value to HTTP as API Gateway does for payload 2.0."""
    if not (isinstance(result, dict) and "statusCode" in result):
        # Payload 2.0 infers a 200 JSON response from any other value.
        return Response(json.dumps(result), status=200, content_type="application/json")
    body = result.get("body") or ""
    data = base64.b64decode(body) if result.get("isBase64Encoded") else body.encode()
    response = Response(data, status=int(result["statusCode"]))
    for key, value in (result.get("headers") or {}).items():
        response.headers[key] = str(value)
    for key, values in (result.get("multiValueHeaders") or {}).items():
        for value in values:
            response.headers.add(key, str(value))
    for cookie in result.get("cookies") or []:
        response.headers.add("Set-Cookie", cookie)
    return response


class LocalGateway:
    """Routes HTTP requests to the functions' workers; ``start``/``stop`` run it on a port."""

    def __init__(
        self,
        routes: Iterable[Route],
        runner: FunctionRunner,
        api_id: str = "localapi",
        cors: Cors | None = None,
        integration_timeout: float = INTEGRATION_TIMEOUT_SECONDS,
        throttles: RouteThrottles | None = None,
    ):
        self._cors = cors
        self.throttles = throttles or RouteThrottles({})
        self._table = RouteTable(routes)
        self.runner = runner
        self._api_id = api_id
        self._integration_timeout = integration_timeout
        self._server: BaseWSGIServer | None = None
        self._thread: threading.Thread | None = None

    def invoke(self, function: str, event: dict[str, Any]) -> Any:
        """Invoke ``function`` directly with ``event`` (as ``sam local invoke`` or a scheduler does):
        its result, or ``FunctionFailed`` carrying the error payload Lambda returns."""
        return self.runner.invoke(function, event).result_or_raise()

    def _integrate(self, function: str, event: dict[str, Any]) -> Response:
        invocation = self.runner.invoke(function, event, timeout=self._integration_timeout)
        if invocation.throttled:
            return _message(500, "Internal Server Error")
        if invocation.succeeded:
            return to_response(invocation.result)
        gave_up = invocation.error is not None and invocation.error.get("errorType") == "Sandbox.Timedout"
        if gave_up and invocation.duration_ms >= self._integration_timeout * 1000:
            return _message(503, "Service Unavailable")
        return _message(500, "Internal Server Error")

    def wsgi(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        request = Request(environ)
        if request.path.startswith(INVOKE_PREFIX) and request.method == "POST":
            return self._direct_invoke(request)(environ, start_response)
        matched = self._table.match(request.method, request.path)
        # The CorsConfiguration is HttpApi's: a route of another API (SiteEventsApi) answers its own.
        cors = self._cors if matched is None or matched[0].api == "HttpApi" else None
        preflight = cors.preflight(request) if cors else None
        if preflight is not None:
            return preflight(environ, start_response)
        if matched is None:
            # What API Gateway itself answers for a route it does not have.
            response = Response(
                json.dumps({"message": "Not Found"}), status=404, content_type="application/json"
            )
        elif not self.throttles.admit(matched[0]):
            response = _message(429, "Too Many Requests")
        else:
            route, params = matched
            response = self._integrate(route.function, build_event(request, route, params, self._api_id))
        if cors:
            cors.decorate(request, response)
        return response(environ, start_response)

    def _direct_invoke(self, request: Request) -> Response:
        """Local only, like ``sam local invoke -e``: run a function with the posted event as is."""
        function = request.path.removeprefix(INVOKE_PREFIX)
        if function not in self.runner.specs:
            return Response(json.dumps({"message": f"no function {function}"}), status=404)
        invocation = self.runner.invoke(function, json.loads(request.get_data() or b"{}"))
        body = invocation.result if invocation.succeeded else invocation.error
        headers = {} if invocation.succeeded else {"X-Amz-Function-Error": "Unhandled"}
        return Response(json.dumps(body), status=200, headers=headers, content_type="application/json")

    def start(self, host: str = "127.0.0.1", port: int = 0) -> str:
        """Serve in a background thread; returns the base URL."""
        self._server = make_server(host, port, self.wsgi, threaded=True)
        self._thread = threading.Thread(target=self._server.serve_forever, name="local-gateway", daemon=True)
        self._thread.start()
        return f"http://{host}:{self._server.server_port}"

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
