"""GET /platform-ads/audiences: the organization's audiences (dashboard, JWT)."""

from shared import wiring
from shared.api import USER_AUTH, create_app, http_entry_point
from shared.audiences.models import AudienceList
from shared.middleware import require_user, user_principal
from shared.observability import tracer

app = create_app()


@app.get("/platform-ads/audiences", middlewares=[require_user], security=USER_AUTH, tags=["Audiences"])
@tracer.capture_method
def list_audiences() -> AudienceList:
    """Name, status, user count, objective, creation time, platform id, lookalike and upload progress
    of every audience, newest first."""
    return wiring.audience_service().list(user_principal(app).org_id)


lambda_handler = http_entry_point(app)
