"""POST /platform-ads/connect/callback: finish connecting, for the user who started it (dashboard, JWT).

The platform sends the browser back to the dashboard's ``connect-callback.html`` page with ``code``
and ``state``; the page posts them here with the signed-in user's JWT. The state must have been
issued to that user in that organization, so a link someone else started cannot put this user's
ad account into their organization.
"""

from pydantic import Field

from shared import wiring
from shared.api import USER_AUTH, create_app, http_entry_point
from shared.connections.lifecycle import StatusView
from shared.middleware import require_user, user_principal
from shared.observability import tracer
from shared.wire_models import CamelModel

app = create_app()


class CallbackRequest(CamelModel):
    """What the platform's redirect brought back to the dashboard page, as it came."""

    state: str = Field(min_length=1, max_length=512, description="The state issued at connect.")
    code: str | None = Field(default=None, max_length=4096, description="Authorization code.")
    error: str | None = Field(default=None, max_length=256, description="Set when the user declined.")
    error_reason: str | None = Field(default=None, max_length=256)


@app.post(
    "/platform-ads/connect/callback",
    middlewares=[require_user],
    security=USER_AUTH,
    tags=["Platform connection"],
)
@tracer.capture_method
def callback(request: CallbackRequest) -> StatusView:
    """Complete the connection started by the caller: exchange the code, select the business ad
    account, store the encrypted long-lived token. Returns the connection status. A state issued to
    another user or organization is refused with 403 and nothing is connected."""
    principal = user_principal(app)
    service = wiring.connection_service()
    connection = service.complete(
        org_id=principal.org_id,
        user_id=principal.user_id,
        state=request.state,
        code=request.code,
        error=request.error,
        error_reason=request.error_reason,
    )
    return service.status(connection.org_id)


lambda_handler = http_entry_point(app)
