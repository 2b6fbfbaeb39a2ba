"""POST /client/predict/{modelName}: score a user with a trained model (API key)."""

from collections.abc import Callable
from typing import Annotated

from aws_lambda_powertools.event_handler import Response, content_types
from aws_lambda_powertools.event_handler.openapi.params import Path
from aws_lambda_powertools.metrics import MetricUnit

from shared import wiring
from shared.api import API_KEY_AUTH, create_app, http_entry_point
from shared.auth.api_keys import extract_key
from shared.clock import utc_now
from shared.middleware import require_key_presented
from shared.observability import logger, metrics, tracer
from shared.predictions.predict import PredictRequest, PredictResponse, warm_models

# docs/service-contract.md §4.1: every failure body also carries an empty predictions list.
app = create_app(error_extra={"predictions": []})


# The key is checked by the predictor itself, on the same write that counts the call (no
# require_api_key middleware: that would be a third AWS call per prediction); the middleware only
# refuses a missing or malformed key, before the request is validated.
@app.post(
    "/client/predict/<modelName>",
    middlewares=[require_key_presented],
    security=API_KEY_AUTH,
    tags=["Prediction"],
)
@tracer.capture_method
def predict(
    modelName: Annotated[str, Path(min_length=1, max_length=128)],  # noqa: N803 - spec path parameter
    body: PredictRequest,
) -> Response[PredictResponse]:
    """Purchase likelihood of (user, product), or ranked recommended products for the user.
    Counts towards the key's usage and the model's usageStats."""
    presented = extract_key(dict(app.current_event.headers))
    outcome = wiring.predictor().predict(presented, modelName, body, utc_now())
    logger.append_keys(org_id=outcome.principal.org_id, api_key_prefix=outcome.principal.prefix)
    metrics.add_metric(name="Predictions", unit=MetricUnit.Count, value=1)
    return Response(
        status_code=200,
        content_type=content_types.APPLICATION_JSON,
        body=outcome.response,
        headers=outcome.headers,
    )


lambda_handler = http_entry_point(app)


# Lambda SnapStart (template.yaml: SnapStart on published versions). The runtime provides
# snapshot_restore_py; elsewhere (tests, the local stack) the hooks are plain functions.
try:
    from snapshot_restore_py import register_after_restore, register_before_snapshot
except ImportError:  # not in the Lambda runtime

    def register_before_snapshot(hook: Callable[[], None]) -> Callable[[], None]:
        return hook

    register_after_restore = register_before_snapshot


@register_before_snapshot
def before_snapshot() -> None:
    """Imports are done; build the predictor and load the configured models' bundles."""
    loaded = wiring.predictor().warm_up(warm_models(wiring.settings().predict_warm_models))
    logger.info("warmed up before snapshot", extra={"bundles_loaded": loaded})


@register_after_restore
def after_restore() -> None:
    """A restored snapshot may run for many containers, long after it was taken: renew everything
    holding credentials or connections (session, clients, stores, caches of records), keep the
    loaded bundles (immutable, checked by checksum)."""
    wiring.reset(keep=[wiring.bundle_cache])
