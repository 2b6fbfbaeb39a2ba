"""GET /platform-ads/events: the Events page's report (dashboard JWT): events sent to the pixel per
day, source and event name over the last 14 or 28 days, and the latest rejected events with what to do."""

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Query

from shared import wiring
from shared.api import USER_AUTH, create_app, http_entry_point
from shared.events.overview import EventsReport
from shared.middleware import require_user, user_principal
from shared.observability import tracer

app = create_app()


@app.get("/platform-ads/events", middlewares=[require_user], security=USER_AUTH, tags=["Events"])
@tracer.capture_method
def get_events(
    days: Annotated[int, Query(description="The period: the last 14 or 28 UTC days, today included.")] = 14,
) -> EventsReport:
    """Events sent, rejected and skipped (older than the platform's window) per UTC day, source
    (synced orders, the shop's pages, the hosted checkout) and event name, every day of the period
    listed; the latest rejected events (at most 20), each with the platform's message or the failed
    check, what it means and what to do. Reads only; 400 for another period."""
    return wiring.events_overview().report(user_principal(app).org_id, days)


lambda_handler = http_entry_point(app)
