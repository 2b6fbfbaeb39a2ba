"""POST /platform-ads/audiences/{audienceId}/sync: a segment audience's sync schedule (JWT)."""

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Path

from shared import wiring
from shared.api import USER_AUTH, create_app, http_entry_point
from shared.audiences.models import AudienceSyncRequest, AudienceView
from shared.middleware import require_user, user_principal
from shared.observability import tracer

app = create_app()


@app.post(
    "/platform-ads/audiences/<audienceId>/sync",
    middlewares=[require_user],
    security=USER_AUTH,
    tags=["Audiences"],
)
@tracer.capture_method
def configure_sync(
    audienceId: Annotated[str, Path()],  # noqa: N803
    body: AudienceSyncRequest,
) -> AudienceView:
    """Set how often a segment audience is re-scored with the current model and its members replaced
    (daily by default, weekly, or off) and whether a stale model may be used; the audience's `sync`
    shows the settings, the next run and the last run's sizes and model version."""
    return wiring.audience_sync_steps().configure(user_principal(app).org_id, audienceId, body)


lambda_handler = http_entry_point(app)
