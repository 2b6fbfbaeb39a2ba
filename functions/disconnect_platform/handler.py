"""POST /platform-ads/disconnect: stop syncing; audiences already on the platform stay (JWT)."""

from shared import wiring
from shared.api import USER_AUTH, create_app, http_entry_point
from shared.connections.lifecycle import StatusView
from shared.middleware import require_user, user_principal
from shared.observability import tracer

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


lambda_handler = http_entry_point(app)
