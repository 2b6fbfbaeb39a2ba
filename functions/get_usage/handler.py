"""GET /dashboard/usage: predictions per day, API key and model over a period (dashboard JWT)."""

from datetime import date
from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Query

from shared import wiring
from shared.api import USER_AUTH, create_app, http_entry_point
from shared.clock import utc_now
from shared.middleware import require_user, user_principal
from shared.observability import tracer
from shared.predictions.usage import UsageReport, usage_report, utc_day

app = create_app()


@app.get("/dashboard/usage", middlewares=[require_user], security=USER_AUTH, tags=["Usage"])
@tracer.capture_method
def get_usage(
    start: Annotated[
        date | None,
        Query(alias="from", description="First UTC day, YYYY-MM-DD (default: 29 days before 'to')."),
    ] = None,
    end: Annotated[
        date | None, Query(alias="to", description="Last UTC day, YYYY-MM-DD (default: today).")
    ] = None,
    model: Annotated[str | None, Query(min_length=1, max_length=128, description="Only this model.")] = None,
) -> UsageReport:
    """Usage report for billing: at most 92 days, revoked keys included."""
    return usage_report(
        user_principal(app).org_id,
        start=start,
        end=end,
        model=model,
        today=utc_day(utc_now()),
        keys=wiring.api_key_store(),
        usage=wiring.usage_store(),
    )


lambda_handler = http_entry_point(app)
