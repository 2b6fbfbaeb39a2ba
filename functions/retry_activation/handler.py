"""POST /platform-ads/activations/{audienceId}/retry: a new attempt of a failed activation (JWT)."""

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Path

from shared import wiring
from shared.api import USER_AUTH, create_app, http_entry_point
from shared.audiences.models import AudienceView
from shared.middleware import require_user, user_principal
from shared.observability import tracer

app = create_app()


@app.post(
    "/platform-ads/activations/<audienceId>/retry",
    middlewares=[require_user],
    security=USER_AUTH,
    tags=["Audiences"],
    status_code=202,
    response_description="Accepted: a new attempt runs; GET activationUrl for its progress",
)
@tracer.capture_method
def retry_activation(
    audienceId: Annotated[str, Path(description="The service's audience id.")],  # noqa: N803
) -> AudienceView:
    """Once the cause of a failed activation is fixed (reconnected, terms accepted), start a new
    attempt in a new execution: it resumes after the last batch the platform acknowledged. Only a
    failed activation can be retried (409 otherwise)."""
    return wiring.audience_service().retry_activation(
        user_principal(app).org_id, audienceId, wiring.activation_starter()
    )


lambda_handler = http_entry_point(app)
