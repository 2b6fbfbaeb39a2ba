"""Train a model from a merchant's files in the data bucket, or check a trained model's feature drift
on newer files (``"action": "check_drift"``). Invoked directly, not over HTTP."""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from shared import deadline, wiring
from shared.clock import utc_now
from shared.observability import logger, metrics, tracer
from shared.predictions.training_job import DriftCheckRequest, check_drift, parse_job, run_training


@logger.inject_lambda_context(clear_state=True)  # no keys from the previous invocation
@tracer.capture_lambda_handler
@metrics.log_metrics(capture_cold_start_metric=True)
@deadline.bounded  # every outbound call fits the time left
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    request = parse_job(event)
    if isinstance(request, DriftCheckRequest):
        result = check_drift(
            request,
            data=wiring.data_blobs(),
            artifacts=wiring.artifact_blobs(),
            models=wiring.model_store(),
            psi_threshold=wiring.settings().drift_psi_threshold,
            now=utc_now(),
        )
        return result.model_dump(mode="json")
    record = run_training(
        request,
        data=wiring.data_blobs(),
        artifacts=wiring.artifact_blobs(),
        models=wiring.model_store(),
        progress=wiring.dataset_store(),
    )
    return record.model_dump(
        mode="json", include={"name", "type", "version", "metrics", "training_user_count"}
    )
