"""DELETE /dashboard/api-keys/{keyId}: revoke one of the organization's API keys (dashboard JWT)."""

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Path

from shared import wiring
from shared.api import USER_AUTH, create_app, http_entry_point
from shared.clock import utc_now
from shared.middleware import require_user, user_principal
from shared.observability import logger, tracer
from shared.predictions.key_management import RevokedApiKey, revoke_api_key

app = create_app()


@app.delete("/dashboard/api-keys/<keyId>", middlewares=[require_user], security=USER_AUTH, tags=["API keys"])
@tracer.capture_method
def delete_api_key(
    keyId: Annotated[str, Path(description="The key's id, from the key list.")],  # noqa: N803 - route name
) -> RevokedApiKey:
    """Revoke a key: it stops working at once. Revoking an already revoked key changes nothing."""
    revoked = revoke_api_key(
        user_principal(app).org_id, keyId, utc_now(), keys=wiring.api_key_store(), days=wiring.key_day_meter()
    )
    logger.info("api key revoked", extra={"api_key_prefix": revoked.prefix})
    return revoked


lambda_handler = http_entry_point(app)
