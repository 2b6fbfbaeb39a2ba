"""The HTTP surface shared by every function: resolver factory, error bodies, principals.

Domain errors (``shared.errors``) are mapped to HTTP here and only here. Every error body has the
same shape: ``{"success": false, "message": ..., "error": {"code", "message", "field", "remedy"}}``,
so a client can show ``message`` and act on ``field`` and ``remedy``.
"""

from __future__ import annotations

import base64
import json
import math
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from http import HTTPStatus
from typing import TYPE_CHECKING, Any, Literal, cast

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response, content_types
from aws_lambda_powertools.event_handler.middlewares import NextMiddleware
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import BaseModel, Field

from shared import deadline
from shared.errors import ServiceError, UnsupportedMediaType
from shared.observability import logger, metrics, tracer

if TYPE_CHECKING:
    from aws_lambda_powertools.event_handler.openapi.models import SecurityScheme

API_TITLE = "Prediction and Audience Export Service"
API_VERSION = "0.1.0"
# The two surfaces: shop backends with API keys, dashboard users with Cognito JWTs. Written in
# OpenAPI's own form: Powertools validates them into its OpenAPI models only when a schema is
# generated, so importing those models (~60 ms) stays off every function's cold start.
SECURITY_SCHEMES = cast(
    "dict[str, SecurityScheme]",
    {
        "apiKey": {"type": "apiKey", "name": "X-Service-Api-Key", "in": "header"},
        "bearerJwt": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"},
        # The card-payment provider's webhook deliveries, signed with the endpoint's secret.
        "paymentsSignature": {"type": "apiKey", "name": "Stripe-Signature", "in": "header"},
    },
)
API_KEY_AUTH: list[dict[str, list[str]]] = [{"apiKey": []}]
USER_AUTH: list[dict[str, list[str]]] = [{"bearerJwt": []}]
PAYMENTS_SIGNATURE: list[dict[str, list[str]]] = [{"paymentsSignature": []}]


class ErrorDetail(BaseModel):
    code: str = Field(description="Stable machine-readable error code.")
    message: str = Field(description="What went wrong, in words a person can act on.")
    field: str | None = Field(default=None, description="The request field at fault, if any.")
    remedy: str | None = Field(default=None, description="What to do next.")
    action: Literal["delete_advert"] | None = Field(
        default=None,
        description="The remedy as an action the client can offer as one button: delete_advert (delete "
        "the audience's advert, then repeat the request).",
    )


class ErrorBody(BaseModel):
    success: bool = False
    message: str
    error: ErrorDetail


def error_response(
    status: int,
    code: str,
    message: str,
    *,
    field: str | None = None,
    remedy: str | None = None,
    extra: dict[str, Any] | None = None,
    action: str | None = None,
    retry_after_seconds: float | None = None,
    headers: Mapping[str, str] | None = None,
) -> Response[str]:
    """A JSON error response in the service's one error shape (``extra`` adds top-level fields), with
    a ``Retry-After`` header (whole seconds, at least 1) when ``retry_after_seconds`` is given, and
    ``headers`` besides."""
    detail = ErrorDetail.model_validate(
        {"code": code, "message": message, "field": field, "remedy": remedy, "action": action}
    )
    body = ErrorBody(message=message, error=detail).model_dump(exclude_none=True)
    if extra:
        body = {**extra, **body}
    retry = (
        {} if retry_after_seconds is None else {"Retry-After": str(max(1, math.ceil(retry_after_seconds)))}
    )
    return Response(
        status_code=status,
        content_type=content_types.APPLICATION_JSON,
        body=json.dumps(body),
        headers={**(headers or {}), **retry},
    )


def _field_of(loc: Sequence[Any]) -> str:
    # Powertools reports ("body", "input", "user_id"); clients know the field as "input.user_id".
    parts = [str(p) for p in loc]
    if parts and parts[0] in {"body", "query", "path", "header"}:
        parts = parts[1:] or parts
    return ".".join(parts)


# What a value of each pydantic type error should be instead, in words (JSON's names in brackets).
_EXPECTED_KINDS = {
    "string_type": "text (a JSON string)",
    "int_type": "a whole number",
    "int_parsing": "a whole number",
    "int_from_float": "a whole number",
    "float_type": "a number",
    "float_parsing": "a number",
    "decimal_type": "a number",
    "decimal_parsing": "a number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "list_type": "a list (a JSON array)",
    "dict_type": "an object (a JSON object)",
    "model_type": "an object (a JSON object)",
    "model_attributes_type": "an object (a JSON object)",
    "date_type": "a date (2026-11-29)",
    "date_parsing": "a date (2026-11-29)",
    "date_from_datetime_parsing": "a date (2026-11-29)",
    "datetime_type": "a date and time (2026-11-29T12:00:00Z)",
    "datetime_parsing": "a date and time (2026-11-29T12:00:00Z)",
    "datetime_from_date_parsing": "a date and time (2026-11-29T12:00:00Z)",
}


def validation_remedy(error: Mapping[str, Any], field: str) -> str:
    """What to send instead, naming ``field``, for one pydantic error (its ``type`` and ``ctx``):
    a missing field, a wrong type, a number out of range, a text or list too long or too short, a
    value not among the allowed ones, a pattern, an unknown field; any other kind asks to correct
    the field by name."""
    kind = str(error.get("type", ""))
    ctx: Mapping[str, Any] = error.get("ctx") or {}
    name = "the body" if field in {"", "body"} else field
    if kind == "missing":
        return "Send a JSON body." if name == "the body" else f"Add {name} to the request and send it again."
    if kind in _EXPECTED_KINDS:
        return f"Send {name} as {_EXPECTED_KINDS[kind]}."
    bounds = {
        "greater_than_equal": ("ge", "of {} or more"),
        "less_than_equal": ("le", "of {} or less"),
        "greater_than": ("gt", "greater than {}"),
        "less_than": ("lt", "less than {}"),
        "string_too_short": ("min_length", "of at least {} character{}"),
        "string_too_long": ("max_length", "of at most {} character{}"),
    }
    if kind in bounds and bounds[kind][0] in ctx:
        key, words = bounds[kind]
        value = ctx[key]
        # A float bound that is whole reads as a whole number (gt=0 on a float field is 0.0).
        shown = int(value) if isinstance(value, float) and value.is_integer() else value
        return f"Send {name} {words.format(shown, '' if value == 1 else 's')}."
    if kind in {"too_short", "too_long"}:
        key, least = ("min_length", "at least") if kind == "too_short" else ("max_length", "at most")
        if key in ctx:
            count = ctx[key]
            return f"Send {least} {count} item{'' if count == 1 else 's'} in {name}."
    if kind in {"literal_error", "enum"} and "expected" in ctx:
        return f"Send {name} as {ctx['expected']}."
    if kind == "string_pattern_mismatch" and "pattern" in ctx:
        return f"Send {name} matching the pattern {ctx['pattern']}."
    if kind == "extra_forbidden":
        return f"Leave {name} out: the request has no such field."
    if kind == "json_invalid":
        return "Send the body as valid JSON."
    return f"Correct {name} and send the request again."


class HttpApiResolver(APIGatewayHttpResolver):
    """Powertools' HTTP API resolver whose path parameters take what API Gateway routes to them.

    API Gateway gives a route's ``{name}`` any characters but ``/``; Powertools' own pattern takes
    only word characters and some punctuation, so a value such as ``#`` or a control character
    reached the function and matched no route: a 404 told before authentication (the fuzzer found
    it, tests/integration/test_fuzz.py). The value is the handler's to judge, after the route's
    middlewares have authenticated the caller. Powertools overrides this method the same way for
    its REST resolver.
    """

    @staticmethod
    def _compile_regex(rule: str, base_regex: str = "^{}$") -> re.Pattern[str]:
        return re.compile(base_regex.format(re.sub(r"<(\w+)>", r"(?P<\1>[^/]+)", rule)))


def create_app(*, error_extra: dict[str, Any] | None = None) -> APIGatewayHttpResolver:
    """An HTTP API (payload 2.0) resolver with validation and the service's error mapping.

    ``error_extra`` adds fixed fields to every error body of this function (the prediction
    endpoint's failures also carry ``"predictions": []`` per the spec).
    """
    app = HttpApiResolver(enable_validation=True, json_body_deserializer=parse_json_body)
    app.configure_openapi(title=API_TITLE, version=API_VERSION, security_schemes=SECURITY_SCHEMES)
    _validate_after_route_middlewares(app)

    @app.exception_handler(ServiceError)
    def _service_error(exc: ServiceError) -> Response[str]:
        if exc.status >= 500:
            logger.warning("request failed", extra={"error_code": exc.code, "status": exc.status})
        return error_response(
            exc.status,
            exc.code,
            exc.message,
            field=exc.field,
            remedy=exc.remedy,
            extra=error_extra,
            action=exc.action,
            retry_after_seconds=exc.retry_after_seconds,
            headers=exc.headers,
        )

    @app.exception_handler(RequestValidationError)
    def _validation_error(exc: RequestValidationError) -> Response[str]:
        errors = exc.errors()
        first = errors[0] if errors else {"loc": (), "msg": "invalid request"}
        field = _field_of(first.get("loc", ()))
        reason = str(first.get("msg", "is invalid"))
        if first.get("type") == "json_invalid":
            field, reason = "body", "is not valid JSON"
        message = f"{field}: {reason}" if field else reason
        more = f" (and {len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
        return error_response(
            HTTPStatus.BAD_REQUEST,
            "validation_error",
            message + more,
            field=field or None,
            remedy=validation_remedy(first, field),
            extra=error_extra,
        )

    @app.not_found
    def _not_found(_: Exception) -> Response[str]:
        event = app.current_event
        return error_response(
            HTTPStatus.NOT_FOUND,
            "route_not_found",
            f"No route for {event.http_method} {event.path}.",
            remedy="Check the method and path against the API reference (openapi.json).",
        )

    @app.exception_handler(Exception)
    def _unexpected(exc: Exception) -> Response[str]:
        idempotency = _idempotency_response(exc, error_extra)
        if idempotency is not None:
            return idempotency
        logger.exception("unhandled error")
        return error_response(
            HTTPStatus.INTERNAL_SERVER_ERROR,
            "internal_error",
            "The service failed to handle the request.",
            remedy="Retry; if it keeps failing, report the request id to support.",
            extra=error_extra,
        )

    return app


def _validate_after_route_middlewares(app: APIGatewayHttpResolver) -> None:
    """Authenticate before validating: request validation runs after the route's middlewares.

    Powertools puts its request validation first, before any middleware, so a caller without
    credentials would learn a route's fields from a 400 before being told 401. The resolver keeps
    its two validation middlewares in these two slots and wraps every route with
    ``[request validation] + router and route middlewares + [response validation]``; moving request
    validation into the second slot keeps Powertools' own validation (same errors, same OpenAPI)
    and puts the route's authentication middlewares (``shared.middleware``) in front of it. Pinned
    by ``tests/unit/test_auth_before_validation.py``.
    """
    request_validation = app._request_validation_middleware
    response_validation = app._response_validation_middleware

    def pass_through(app: APIGatewayHttpResolver, next_middleware: NextMiddleware) -> Response[Any]:
        return next_middleware(app)

    def validate(app: APIGatewayHttpResolver, next_middleware: NextMiddleware) -> Response[Any]:
        def then_response(app: APIGatewayHttpResolver) -> Response[Any]:
            return response_validation(app, next_middleware)

        if app.context["_route"].dependant.body_params:
            _require_json(app.current_event.raw_event.get("headers") or {})
            _require_utf8(app.current_event.raw_event)
        return request_validation(app, cast("NextMiddleware", then_response))

    # Powertools types the slots as its own classes; any middleware callable is what it calls.
    app._request_validation_middleware = pass_through  # type: ignore[assignment]
    app._response_validation_middleware = validate  # type: ignore[assignment]


def _require_json(headers: dict[str, str]) -> None:
    """Refuse a body sent as anything but JSON (415, naming the header).

    Powertools reads JSON, form and multipart bodies, and raises an error the resolver cannot map
    (a 500) for any other type; every body of this API is JSON. A missing Content-Type is read as
    JSON, as Powertools does. Media types are case-insensitive, Powertools' test is not: a JSON type
    in capitals is written in lower case in the event (API Gateway already lower-cases the names).
    """
    content_type = headers.get("content-type")
    if content_type is None or not content_type.strip():
        return
    media_type, _, parameters = content_type.partition(";")
    if media_type.strip().lower() == "application/json":
        headers["content-type"] = "application/json" + (f";{parameters}" if parameters else "")
    else:
        raise UnsupportedMediaType(
            f"Content-Type {content_type.strip()[:100]} is not accepted: the body must be JSON.",
            field="Content-Type",
            remedy="Send the body as JSON with the header Content-Type: application/json.",
        )


def _require_utf8(event: dict[str, Any]) -> None:
    """Refuse a body whose bytes are not UTF-8 (400 on body), as JSON must be (RFC 8259 §8.1).

    API Gateway passes such bytes base64-encoded, and Powertools' decoding of them raised
    ``UnicodeDecodeError``, a 500 (the fuzzer found it, tests/integration/test_fuzz.py).
    """
    body = event.get("body")
    if not body or not event.get("isBase64Encoded"):
        return
    try:
        base64.b64decode(body).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        raise _body_error((), "body_not_utf8", "is not valid JSON: it must be UTF-8 text") from None


# The deepest a request body may nest (the API's bodies nest 4 levels at most). Python's json parser
# itself fails with RecursionError past about 1,000 levels.
MAX_JSON_DEPTH = 32
_LARGEST_DIGITS = len(str(int(sys.float_info.max)))


def _parse_int(text: str) -> int | float:
    # Past the largest float's digit count the value cannot be a number this API takes; stop before
    # int() does the work (and before Python's own limit of 4,300 digits raises ValueError).
    digits = len(text.lstrip("-"))
    return math.inf if digits > _LARGEST_DIGITS else int(text)


def parse_json_body(text: str) -> Any:
    """A request body parsed as JSON, refusing what the service could only fail on later.

    Every problem is a ``RequestValidationError`` (400 naming the field): invalid JSON, nesting
    deeper than ``MAX_JSON_DEPTH`` (Python's parser raises ``RecursionError`` on deep input), and a
    number that is not finite: ``NaN`` and ``Infinity`` (which Python's parser accepts though JSON
    has neither) and numbers beyond a 64-bit float (``1e400``, a 400-digit integer), which would
    surface as ``inf`` or an ``OverflowError`` in the code, or be refused by DynamoDB.
    """
    try:
        value = json.loads(text, parse_int=_parse_int)
    except RecursionError:
        raise _body_error(
            (), "nested_too_deep", f"is nested more than {MAX_JSON_DEPTH} levels deep"
        ) from None
    # Walked without recursion: the parser's own limit is far above MAX_JSON_DEPTH.
    pending: list[tuple[tuple[str | int, ...], Any]] = [((), value)]
    while pending:
        path, node = pending.pop()
        if len(path) > MAX_JSON_DEPTH:
            raise _body_error((), "nested_too_deep", f"is nested more than {MAX_JSON_DEPTH} levels deep")
        if isinstance(node, dict):
            pending.extend(((*path, str(key)), child) for key, child in node.items())
        elif isinstance(node, list):
            pending.extend(((*path, index), child) for index, child in enumerate(node))
        elif isinstance(node, int | float) and not isinstance(node, bool) and not _fits_a_float(node):
            raise _body_error(path, "number_not_finite", "must be a finite number that fits a 64-bit float")
    return value


def _fits_a_float(number: float) -> bool:
    return math.isfinite(number) if isinstance(number, float) else abs(number) <= sys.float_info.max


def _body_error(path: tuple[str | int, ...], kind: str, reason: str) -> RequestValidationError:
    return RequestValidationError([{"type": kind, "loc": ("body", *path), "msg": reason, "input": None}])


_IDEMPOTENCY_ERRORS = "aws_lambda_powertools.utilities.idempotency.exceptions"


def _idempotency_response(exc: Exception, error_extra: dict[str, Any] | None) -> Response[str] | None:
    """The answer to an Idempotency-Key error, or None for any other exception.

    Recognised by module rather than registered by class: importing the idempotency utility's
    exceptions imports the utility and boto3 (tens of ms), which functions without Idempotency-Key
    (predict above all) must not pay at cold start. A function that raises these has imported them.
    """
    if type(exc).__module__ != _IDEMPOTENCY_ERRORS:
        return None
    from aws_lambda_powertools.utilities.idempotency.exceptions import (
        IdempotencyAlreadyInProgressError,
        IdempotencyValidationError,
    )

    if isinstance(exc, IdempotencyValidationError):
        return error_response(
            HTTPStatus.UNPROCESSABLE_ENTITY,
            "idempotency_key_reused",
            "This Idempotency-Key was already used with a different request body.",
            field="Idempotency-Key",
            remedy="Use a new key for a new request; repeat a request only with its original body.",
            extra=error_extra,
        )
    if isinstance(exc, IdempotencyAlreadyInProgressError):
        return error_response(
            HTTPStatus.CONFLICT,
            "request_in_progress",
            "A request with this Idempotency-Key is still being processed.",
            field="Idempotency-Key",
            remedy="Wait a moment and repeat the request to get its result.",
            extra=error_extra,
        )
    return None


def raw_body(app: APIGatewayHttpResolver) -> bytes:
    """The request body's bytes as the caller sent them: API Gateway base64-encodes a body that is
    not text, and Powertools' ``decoded_body`` decodes that as UTF-8 (a ``UnicodeDecodeError``, a
    500, for other bytes)."""
    event = app.current_event
    body = event.body or ""
    return base64.b64decode(body) if event.is_base64_encoded else body.encode("utf-8")


def service_url(app: APIGatewayHttpResolver) -> str:
    """The address the current request came to, without a path: API Gateway's own domain, or the
    custom domain mapped to the API (``https``; ``http`` for a loopback host, the local stack).
    The service cannot be told its own address by the template: a function naming the HTTP API
    that routes to it would be a circular dependency."""
    event = app.current_event
    host = event.request_context.domain_name
    scheme = event.headers.get("x-forwarded-proto") or (
        "http" if host.split(":")[0] in {"127.0.0.1", "localhost"} else "https"
    )
    return f"{scheme}://{host}"


def http_entry_point(
    app: APIGatewayHttpResolver, *, on_start: Callable[[LambdaContext], None] | None = None
) -> Callable[[dict[str, Any], LambdaContext], dict[str, Any]]:
    """The Lambda entry point of an HTTP API function: the request id as correlation id in every log
    line, a trace, metrics flushed with a cold-start metric, then the resolver.

    The logger's appended keys are cleared first (``clear_state``): a warm container serves one
    caller after another, and a line must never carry the previous caller's organization or key.

    ``on_start`` runs first with the context (the idempotency utility needs the remaining time).
    """

    @logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP, clear_state=True)
    @tracer.capture_lambda_handler
    @metrics.log_metrics(capture_cold_start_metric=True)
    def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
        if on_start is not None:
            on_start(context)
        with deadline.invocation(context):  # every outbound call fits the time left
            return app.resolve(event, context)

    return lambda_handler
