"""DELETE /platform-ads/audiences/{audienceId}: delete an audience everywhere (dashboard, JWT)."""

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Path, Query

from shared import wiring
from shared.api import USER_AUTH, create_app, http_entry_point
from shared.middleware import require_user, user_principal
from shared.observability import tracer

app = create_app()


@app.delete(
    "/platform-ads/audiences/<audienceId>",
    middlewares=[require_user],
    security=USER_AUTH,
    tags=["Audiences"],
    responses={204: {"description": "Deleted from the platform and the service"}},
)
@tracer.capture_method
def delete_audience(
    audienceId: Annotated[str, Path(description="The service's audience id.")],  # noqa: N803
    confirm: Annotated[bool, Query(description="Must be true: deletion cannot be undone.")] = False,
) -> Response[None]:
    """Remove the audience (and its lookalike) from the platform and the service. Irreversible."""
    wiring.audience_service().delete(user_principal(app).org_id, audienceId, confirm=confirm)
    return Response(status_code=204)


lambda_handler = http_entry_point(app)
