"""GET /platform-ads/connect/callback: where the platform sends the browser back after approval.

The browser arrives without the dashboard's JWT (it is a redirect), so the request is authenticated
by the signed, single-use ``state`` issued to the signed-in user at connect.
"""

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Query

from shared import wiring
from shared.api import create_app, http_entry_point
from shared.connections.lifecycle import StatusView
from shared.observability import tracer

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


lambda_handler = http_entry_point(app)
