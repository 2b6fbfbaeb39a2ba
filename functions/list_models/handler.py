"""GET /client/models: the caller's models, with the users available in each (API key)."""

from shared import wiring
from shared.api import API_KEY_AUTH, create_app, http_entry_point
from shared.middleware import api_key_principal, require_api_key
from shared.observability import tracer
from shared.predictions.catalog import ModelList, list_models

app = create_app()


@app.get("/client/models", middlewares=[require_api_key], security=API_KEY_AUTH, tags=["Prediction"])
@tracer.capture_method
def get_models() -> ModelList:
    """List the organization's models and how many training users each has."""
    return list_models(api_key_principal(app).org_id, wiring.model_store())


lambda_handler = http_entry_point(app)
