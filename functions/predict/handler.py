"""POST /client/predict/{modelName}: score a user with a trained model (API key)."""

from typing import Annotated

from aws_lambda_powertools.event_handler import Response, content_types
from aws_lambda_powertools.event_handler.openapi.params import Path
from aws_lambda_powertools.metrics import MetricUnit

from shared import wiring
from shared.api import API_KEY_AUTH, create_app, http_entry_point
from shared.clock import utc_now
from shared.middleware import api_key_principal, require_api_key
from shared.observability import metrics, tracer
from shared.predictions.predict import PredictRequest, PredictResponse

# docs/service-contract.md §4.1: every failure body also carries an empty predictions list.
app = create_app(error_extra={"predictions": []})


@app.post(
    "/client/predict/<modelName>", middlewares=[require_api_key], security=API_KEY_AUTH, tags=["Prediction"]
)
@tracer.capture_method
def predict(
    modelName: Annotated[str, Path(min_length=1, max_length=128)],  # noqa: N803 - spec path parameter
    body: PredictRequest,
) -> Response[PredictResponse]:
    """Purchase likelihood of (user, product), or ranked recommended products for the user.
    Counts towards the key's usage and the model's usageStats."""
    outcome = wiring.predictor().predict(api_key_principal(app), modelName, body, utc_now())
    metrics.add_metric(name="Predictions", unit=MetricUnit.Count, value=1)
    return Response(
        status_code=200,
        content_type=content_types.APPLICATION_JSON,
        body=outcome.response,
        headers=outcome.headers,
    )


lambda_handler = http_entry_point(app)
