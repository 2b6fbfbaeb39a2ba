"""Scheduled (EventBridge Scheduler): validate every active platform connection's token, then look
for what was deleted on the platform's side (audiences, adverts) since the last run."""

from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from shared import deadline, wiring
from shared.audiences.drift import check_connected_drift
from shared.clock import utc_now
from shared.connections.validation import validate_active_connections
from shared.observability import logger, metrics, tracer


@logger.inject_lambda_context(clear_state=True)  # no keys from the previous invocation
@tracer.capture_lambda_handler
@metrics.log_metrics(capture_cold_start_metric=True)
@deadline.bounded  # every outbound call fits the time left
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    summary = validate_active_connections(wiring.connection_service(), wiring.connection_store())
    metrics.add_metric(name="TokensInvalid", unit=MetricUnit.Count, value=summary.invalid)
    metrics.add_metric(name="TokensExpiring", unit=MetricUnit.Count, value=summary.expiring)
    drift = check_connected_drift(
        wiring.connection_store(), wiring.audience_store(), wiring.connection_service(), utc_now
    )
    metrics.add_metric(
        name="AudiencesDeletedOnPlatform", unit=MetricUnit.Count, value=drift.audiences_deleted
    )
    metrics.add_metric(name="AdvertsDeletedOnPlatform", unit=MetricUnit.Count, value=drift.adverts_deleted)
    return {**summary.model_dump(), "drift": drift.model_dump()}
