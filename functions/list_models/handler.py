"""GET /client/models: the caller's models, with the users available in each (API key)."""

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from shared import wiring
from shared.api import API_KEY_AUTH, create_app
from shared.auth.middleware import api_key_principal, require_api_key
from shared.observability import logger, metrics, tracer
from shared.predictions.catalog import ModelList, list_models

app = create_app()


@app.get("/client/models", middlewares=[require_api_key], security=API_KEY_AUTH, tags=["Prediction"])
@tracer.capture_method
def get_models() -> ModelList:
    """List the organization's models and how many training users each has."""
    return list_models(api_key_principal(app).org_id, wiring.model_store())


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
@tracer.capture_lambda_handler
@metrics.log_metrics(capture_cold_start_metric=True)
def lambda_handler(event: dict, context: LambdaContext) -> dict:
    return app.resolve(event, context)
