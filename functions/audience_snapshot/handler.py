"""GET /platform-ads/audiences/{audienceId}/snapshot: a short-lived CSV download link (JWT)."""

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Path

from shared import wiring
from shared.api import USER_AUTH, create_app, http_entry_point
from shared.audiences.models import SnapshotLink
from shared.middleware import require_user, user_principal
from shared.observability import tracer

app = create_app()


@app.get(
    "/platform-ads/audiences/<audienceId>/snapshot",
    middlewares=[require_user],
    security=USER_AUTH,
    tags=["Audiences"],
)
@tracer.capture_method
def snapshot(audienceId: Annotated[str, Path()]) -> SnapshotLink:  # noqa: N803
    """A presigned link (5 minutes) to the CSV taken at creation: user_id, email, firstName, lastName,
    phone, score, with spreadsheet formulas neutralised."""
    return wiring.audience_service().snapshot_link(user_principal(app).org_id, audienceId)


lambda_handler = http_entry_point(app)
