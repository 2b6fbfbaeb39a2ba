"""GET /platform-ads/audiences: the organization's audiences (dashboard, JWT)."""

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from shared import wiring
from shared.api import USER_AUTH, create_app
from shared.audiences.export import AudienceList
from shared.auth.middleware import require_user, user_principal
from shared.observability import logger, metrics, tracer

app = create_app()


@app.get("/platform-ads/audiences", middlewares=[require_user], security=USER_AUTH, tags=["Audiences"])
@tracer.capture_method
def list_audiences() -> AudienceList:
    """Name, status, user count, objective, creation time, platform id, lookalike and upload progress
    of every audience, newest first."""
    return wiring.audience_exporter().list(user_principal(app).org_id)


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
@tracer.capture_lambda_handler
@metrics.log_metrics(capture_cold_start_metric=True)
def lambda_handler(event: dict, context: LambdaContext) -> dict:
    return app.resolve(event, context)
