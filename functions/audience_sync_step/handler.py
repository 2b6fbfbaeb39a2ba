"""A step of the audience sync state machine (invoked by Step Functions, not over HTTP)."""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from shared import deadline, wiring
from shared.observability import logger, metrics, tracer


@logger.inject_lambda_context(clear_state=True)  # no keys from the previous invocation
@tracer.capture_lambda_handler
@metrics.log_metrics(capture_cold_start_metric=True)
@deadline.bounded  # every outbound call fits the time left
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    syncs = wiring.audience_sync_steps()
    org_id, audience_id, run_id = event["org_id"], event["audience_id"], event["run_id"]
    logger.append_keys(org_id=org_id, audience_id=audience_id, run_id=run_id)
    if event["action"] == "fail":
        syncs.record_failure(org_id, audience_id, run_id, event.get("error", "Error"), event.get("cause", ""))
        return {"status": "failed"}
    return syncs.step(org_id, audience_id, run_id).model_dump()
