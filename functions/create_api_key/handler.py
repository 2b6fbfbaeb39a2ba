"""POST /dashboard/api-keys: issue a new API key for the caller's organization (dashboard JWT)."""

from shared import wiring
from shared.api import USER_AUTH, create_app, http_entry_point
from shared.clock import utc_now
from shared.middleware import require_user, user_principal
from shared.observability import logger, tracer
from shared.predictions.key_management import CreateApiKeyRequest, CreatedApiKey, create_api_key

app = create_app()


@app.post(
    "/dashboard/api-keys",
    status_code=201,
    middlewares=[require_user],
    security=USER_AUTH,
    tags=["API keys"],
    response_description="The new key; the key itself is shown only in this response.",
)
@tracer.capture_method
def post_api_key(request: CreateApiKeyRequest) -> CreatedApiKey:
    """Create an API key with a label and an optional daily prediction quota."""
    created = create_api_key(user_principal(app).org_id, request, utc_now(), keys=wiring.api_key_store())
    logger.info("api key created", extra={"api_key_prefix": created.prefix})
    return created


lambda_handler = http_entry_point(app)
