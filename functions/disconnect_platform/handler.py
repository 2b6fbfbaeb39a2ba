"""POST /platform-ads/disconnect: stop syncing; audiences already on the platform stay (JWT)."""

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from shared import wiring
from shared.api import USER_AUTH, create_app
from shared.auth.middleware import require_user, user_principal
from shared.connections.lifecycle import StatusView
from shared.observability import logger, metrics, tracer

app = create_app()


@app.post(
    "/platform-ads/disconnect", middlewares=[require_user], security=USER_AUTH, tags=["Platform connection"]
)
@tracer.capture_method
def disconnect() -> StatusView:
    """Make the connection inactive and destroy the stored token. Existing audiences remain on the
    platform and are no longer updated."""
    org_id = user_principal(app).org_id
    service = wiring.connection_service()
    service.disconnect(org_id)
    return service.status(org_id)


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
@tracer.capture_lambda_handler
@metrics.log_metrics(capture_cold_start_metric=True)
def lambda_handler(event: dict, context: LambdaContext) -> dict:
    return app.resolve(event, context)
