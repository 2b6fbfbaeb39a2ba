"""DELETE /platform-ads/audiences/{audienceId}: delete an audience everywhere (dashboard, JWT)."""

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Path, Query
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from shared import wiring
from shared.api import USER_AUTH, create_app
from shared.auth.middleware import require_user, user_principal
from shared.observability import logger, metrics, tracer

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
    wiring.audience_exporter().delete(user_principal(app).org_id, audienceId, confirm=confirm)
    return Response(status_code=204)


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
@tracer.capture_lambda_handler
@metrics.log_metrics(capture_cold_start_metric=True)
def lambda_handler(event: dict, context: LambdaContext) -> dict:
    return app.resolve(event, context)
