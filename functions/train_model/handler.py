"""Train a model from a merchant's files in the data bucket (invoked directly, not over HTTP)."""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from shared import wiring
from shared.observability import logger, metrics, tracer
from shared.predictions.training_job import TrainingRequest, run_training


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics(capture_cold_start_metric=True)
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    record = run_training(
        TrainingRequest.model_validate(event),
        data=wiring.data_blobs(),
        artifacts=wiring.artifact_blobs(),
        models=wiring.model_store(),
    )
    return record.model_dump(
        mode="json", include={"name", "type", "version", "metrics", "training_user_count"}
    )
