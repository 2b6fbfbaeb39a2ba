"""GET /platform-ads/audiences/{audienceId}/lift: the uploaded group against its holdout (dashboard, JWT)."""

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Path

from shared import wiring
from shared.api import USER_AUTH, create_app, http_entry_point
from shared.audiences.lift import LiftReport
from shared.middleware import require_user, user_principal
from shared.observability import tracer

app = create_app()


@app.get(
    "/platform-ads/audiences/<audienceId>/lift",
    middlewares=[require_user],
    security=USER_AUTH,
    tags=["Audiences"],
)
@tracer.capture_method
def get_audience_lift(
    audienceId: Annotated[str, Path(description="The service's audience id.")],  # noqa: N803
) -> LiftReport:
    """Purchase rate and revenue per user of the uploaded group and the holdout in the orders synced
    since the activation, their differences with 95 % intervals, the users and days they rest on, a
    plain verdict, and the model's calibration by score decile on the same window."""
    return wiring.lift_service().report(user_principal(app).org_id, audienceId)


lambda_handler = http_entry_point(app)
