"""GET /platform-ads/status: the connection status and ad account (JWT)."""

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from shared import wiring
from shared.api import USER_AUTH, create_app
from shared.auth.middleware import require_user, user_principal
from shared.connections.lifecycle import StatusView
from shared.observability import logger, metrics, tracer

app = create_app()


@app.get("/platform-ads/status", middlewares=[require_user], security=USER_AUTH, tags=["Platform connection"])
@tracer.capture_method
def status() -> StatusView:
    """Whether an ad account is connected, which one, when the token was last validated, when it
    expires, and the latest usage headers the platform returned."""
    return wiring.connection_service().status(user_principal(app).org_id)


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
@tracer.capture_lambda_handler
@metrics.log_metrics(capture_cold_start_metric=True)
def lambda_handler(event: dict, context: LambdaContext) -> dict:
    return app.resolve(event, context)
