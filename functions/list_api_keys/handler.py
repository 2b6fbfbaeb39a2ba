"""GET /dashboard/api-keys: the organization's API keys with their usage, never the keys themselves
(dashboard JWT)."""

from shared import wiring
from shared.api import USER_AUTH, create_app, http_entry_point
from shared.clock import utc_now
from shared.middleware import require_user, user_principal
from shared.observability import tracer
from shared.predictions.key_management import ApiKeyList, list_api_keys

app = create_app()


@app.get("/dashboard/api-keys", middlewares=[require_user], security=USER_AUTH, tags=["API keys"])
@tracer.capture_method
def get_api_keys() -> ApiKeyList:
    """List the organization's keys, newest first, with predictions made in total and today."""
    return list_api_keys(
        user_principal(app).org_id, utc_now(), keys=wiring.api_key_store(), usage=wiring.usage_store()
    )


lambda_handler = http_entry_point(app)
