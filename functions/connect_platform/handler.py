"""POST /platform-ads/connect: start connecting the ad account (dashboard, JWT)."""

from shared import wiring
from shared.api import USER_AUTH, create_app, http_entry_point
from shared.connections.lifecycle import ConnectStart
from shared.middleware import require_user, user_principal
from shared.observability import tracer

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


lambda_handler = http_entry_point(app)
