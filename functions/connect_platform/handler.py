"""POST /platform-ads/connect: start connecting the ad account (dashboard, JWT)."""

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from shared import wiring
from shared.api import USER_AUTH, create_app
from shared.auth.middleware import require_user, user_principal
from shared.connections.lifecycle import ConnectStart
from shared.observability import logger, metrics, tracer

app = create_app()


@app.post(
    "/platform-ads/connect", middlewares=[require_user], security=USER_AUTH, tags=["Platform connection"]
)
@tracer.capture_method
def connect() -> ConnectStart:
    """The platform's authorization URL (scopes ads_management, ads_read, business_management) with a
    signed, single-use state that expires in 10 minutes. Open it in the browser to approve."""
    principal = user_principal(app)
    return wiring.connection_service().start(principal.org_id, principal.user_id)


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
@tracer.capture_lambda_handler
@metrics.log_metrics(capture_cold_start_metric=True)
def lambda_handler(event: dict, context: LambdaContext) -> dict:
    return app.resolve(event, context)
