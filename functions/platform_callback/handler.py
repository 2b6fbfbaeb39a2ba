"""GET /platform-ads/connect/callback: where the platform sends the browser back after approval.

The browser arrives without the dashboard's JWT (it is a redirect), so the request is authenticated
by the signed, single-use ``state`` issued to the signed-in user at connect.
"""

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Query
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from shared import wiring
from shared.api import create_app
from shared.connections.lifecycle import StatusView
from shared.observability import logger, metrics, tracer

app = create_app()


@app.get("/platform-ads/connect/callback", security=[{}], tags=["Platform connection"])
@tracer.capture_method
def callback(
    state: Annotated[str, Query(min_length=1, description="The state issued at connect.")],
    code: Annotated[str | None, Query(description="Authorization code from the platform.")] = None,
    error: Annotated[str | None, Query()] = None,
    error_reason: Annotated[str | None, Query()] = None,
) -> StatusView:
    """Complete the connection: exchange the code, select the business ad account, store the
    encrypted long-lived token. Returns the connection status."""
    service = wiring.connection_service()
    connection = service.complete(state=state, code=code, error=error, error_reason=error_reason)
    return service.status(connection.org_id)


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
@tracer.capture_lambda_handler
@metrics.log_metrics(capture_cold_start_metric=True)
def lambda_handler(event: dict, context: LambdaContext) -> dict:
    return app.resolve(event, context)
