"""GET /platform-ads/activations/{audienceId}: where an audience's activation stands (dashboard, JWT)."""

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Path

from shared import wiring
from shared.api import USER_AUTH, create_app, http_entry_point
from shared.audiences.models import ActivationStatus
from shared.middleware import require_user, user_principal
from shared.observability import tracer

app = create_app()


@app.get(
    "/platform-ads/activations/<audienceId>",
    middlewares=[require_user],
    security=USER_AUTH,
    tags=["Audiences"],
)
@tracer.capture_method
def get_activation(
    audienceId: Annotated[str, Path(description="The service's audience id.")],  # noqa: N803
) -> ActivationStatus:
    """The current step, progress (users uploaded out of total, batches), the platform objects made
    so far, and the error with its remedy: what the dashboard's progress bar reads."""
    return wiring.audience_service().activation_status(user_principal(app).org_id, audienceId)


lambda_handler = http_entry_point(app)
