"""POST /site-events?key=<site key>: events of the shop's own pages, relayed to the organization's pixel
(public: a site key can only send; the snippet of the dashboard's Events page calls it). OPTIONS answers
a browser's preflight for the organization's declared domains only. Served by its own HTTP API
(SiteEventsApi), whose CORS is this function's: the dashboard API's allows the dashboard only."""

from aws_lambda_powertools.event_handler import Response, content_types

from shared import wiring
from shared.api import create_app, error_response, http_entry_point
from shared.errors import ServiceError
from shared.events.site_events import cors_headers, events_in, parsed_body, unexpected_failure
from shared.observability import logger, tracer

app = create_app()


@app.post(
    "/site-events",
    tags=["Site events"],
    security=[],
    responses={
        200: {"description": "What became of each event: sent, skipped (too old) or rejected (why)"},
        401: {"description": "The site key is unknown, revoked, or replaced more than a day ago"},
        403: {"description": "The request came from no page of the organization's declared domains"},
        409: {"description": "The organization has no connected ad account or pixel to send to"},
        429: {"description": "The site sent its limit of events for now (Retry-After)"},
        503: {"description": "The events cannot be taken now: send them again (Retry-After)"},
    },
)
@tracer.capture_method
def receive() -> Response[str]:
    """Admit the request (the site key, the site's rate, the page's origin), then relay its events as
    website events with the browser's address and user agent. The body is JSON (sent as text/plain, so
    a page needs no preflight, or as application/json): ``{"events": [...]}``. Never a 500: an
    unexpected failure is a 503 the page may repeat (the events keep their ids)."""
    event = app.current_event
    origin = event.headers.get("origin")
    service = wiring.site_events()
    headers = cors_headers(origin, [])
    try:
        try:
            text = event.decoded_body or ""
        except UnicodeDecodeError:  # not UTF-8: no JSON, so the batch is refused (400) once admitted
            text = ""
        body = parsed_body(text)
        admission = service.admit(
            event.get_query_string_value("key") or "", events_in(body, service.limits.per_request), origin
        )
        headers = cors_headers(origin, admission.domains)
        received = service.receive(
            admission,
            service.batch_of(admission, text, body),
            client_ip=event.request_context.http.source_ip,
            user_agent=event.request_context.http.user_agent or event.headers.get("user-agent", ""),
            seconds_left=lambda: app.lambda_context.get_remaining_time_in_millis() / 1000,
        )
    except Exception as exc:  # the page is always answered in the service's error shape
        failure = exc if isinstance(exc, ServiceError) else unexpected_failure()
        if failure is not exc:
            logger.exception("site events failed")
        answer = error_response(
            failure.status,
            failure.code,
            failure.message,
            field=failure.field,
            remedy=failure.remedy,
            retry_after_seconds=failure.retry_after_seconds,
        )
        answer.headers.update(headers)
        return answer
    return Response(
        status_code=200,
        content_type=content_types.APPLICATION_JSON,
        body=received.model_dump_json(by_alias=True),
        headers=headers,
    )


@app.route("/site-events", method="OPTIONS", tags=["Site events"], security=[])
@tracer.capture_method
def preflight() -> Response[str]:
    """A browser's preflight: allowed (POST, the Content-Type header) for a page of one of the site
    key's organization's declared domains; no CORS header for any other page."""
    event = app.current_event
    origin = event.headers.get("origin")
    headers = cors_headers(origin, wiring.site_events().domains_of(event.get_query_string_value("key") or ""))
    if "Access-Control-Allow-Origin" in headers:
        headers.update(
            {
                "Access-Control-Allow-Methods": "POST",
                "Access-Control-Allow-Headers": "content-type",
                "Access-Control-Max-Age": "600",
            }
        )
    return Response(status_code=204, body="", headers=headers)


lambda_handler = http_entry_point(app)
