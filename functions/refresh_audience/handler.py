"""POST /platform-ads/audiences/{audienceId}/refresh: replace an audience's members (JWT)."""

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Path

from shared import wiring
from shared.api import USER_AUTH, create_app, http_entry_point
from shared.audiences.models import AudienceCreated, RefreshAudienceRequest
from shared.middleware import require_user, user_principal
from shared.observability import tracer

app = create_app()


@app.post(
    "/platform-ads/audiences/<audienceId>/refresh",
    middlewares=[require_user],
    security=USER_AUTH,
    tags=["Audiences"],
)
@tracer.capture_method
def refresh(
    audienceId: Annotated[str, Path()],  # noqa: N803
    body: RefreshAudienceRequest,
) -> AudienceCreated:
    """Replace the audience's members with the given users through the platform's usersreplace, in
    batches of at most 10,000 within one replace session; the CSV snapshot is replaced too."""
    return wiring.audience_service().refresh(user_principal(app).org_id, audienceId, body)


lambda_handler = http_entry_point(app)
