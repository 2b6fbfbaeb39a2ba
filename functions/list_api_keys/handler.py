"""GET /dashboard/api-keys: the organization's API keys with their usage, never the keys themselves
(dashboard JWT)."""

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from shared import wiring
from shared.api import USER_AUTH, create_app
from shared.auth.middleware import require_user, user_principal
from shared.clock import utc_now
from shared.observability import logger, metrics, tracer
from shared.predictions.key_management import ApiKeyList, list_api_keys

app = create_app()


@app.get("/dashboard/api-keys", middlewares=[require_user], security=USER_AUTH, tags=["API keys"])
@tracer.capture_method
def get_api_keys() -> ApiKeyList:
    """List the organization's keys, newest first, with predictions made in total and today."""
    return list_api_keys(
        user_principal(app).org_id, utc_now(), keys=wiring.api_key_store(), usage=wiring.usage_store()
    )


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
@tracer.capture_lambda_handler
@metrics.log_metrics(capture_cold_start_metric=True)
def lambda_handler(event: dict, context: LambdaContext) -> dict:
    return app.resolve(event, context)
