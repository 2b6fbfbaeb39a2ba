"""A step of the audience activation state machine (invoked by Step Functions, not over HTTP)."""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from shared import wiring
from shared.observability import logger, metrics, tracer

# Batches per invocation: ~10,000 rows each, well inside the function's timeout.
MAX_BATCHES_PER_STEP = 20


@logger.inject_lambda_context(clear_state=True)  # no keys from the previous invocation
@tracer.capture_lambda_handler
@metrics.log_metrics(capture_cold_start_metric=True)
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    audiences = wiring.audience_service()
    org_id, audience_id = event["org_id"], event["audience_id"]
    logger.append_keys(org_id=org_id, audience_id=audience_id)
    if event["action"] == "fail":
        audiences.record_failure(org_id, audience_id, event.get("error", "Error"), event.get("cause", ""))
        return {"status": "failed"}
    return audiences.advance(org_id, audience_id, max_batches=MAX_BATCHES_PER_STEP).model_dump()
