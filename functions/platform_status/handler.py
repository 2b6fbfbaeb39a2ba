"""GET /platform-ads/status: the connection status and ad account (JWT)."""

from shared import wiring
from shared.api import USER_AUTH, create_app, http_entry_point
from shared.connections.lifecycle import StatusView
from shared.middleware import require_user, user_principal
from shared.observability import tracer

app = create_app()


@app.get("/platform-ads/status", middlewares=[require_user], security=USER_AUTH, tags=["Platform connection"])
@tracer.capture_method
def status() -> StatusView:
    """Whether an ad account is connected, which one, when the token was last validated, when it
    expires, and the latest usage headers the platform returned."""
    return wiring.connection_service().status(user_principal(app).org_id)


lambda_handler = http_entry_point(app)
