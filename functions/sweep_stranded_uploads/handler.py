"""Scheduled (EventBridge Scheduler): resume or fail audiences a worker left mid-upload."""

from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from shared import deadline, wiring
from shared.observability import logger, metrics, tracer


@logger.inject_lambda_context(clear_state=True)  # no keys from the previous invocation
@tracer.capture_lambda_handler
@metrics.log_metrics(capture_cold_start_metric=True)
@deadline.bounded  # every outbound call fits the time left
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    summary = wiring.stranded_upload_sweeper().sweep()
    metrics.add_metric(name="StrandedUploadsResumed", unit=MetricUnit.Count, value=summary.resumed)
    metrics.add_metric(name="StrandedUploadsFailed", unit=MetricUnit.Count, value=summary.failed)
    return summary.model_dump()
