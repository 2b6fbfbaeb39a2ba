"""A step of the account closure state machine (invoked by Step Functions, not over HTTP)."""

from datetime import timedelta
from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from shared import deadline, wiring
from shared.observability import logger, metrics, tracer

# Work per invocation, well inside the function's timeout; the record is saved after every piece.
STEP_BUDGET = timedelta(seconds=60)


@logger.inject_lambda_context(clear_state=True)  # no keys from the previous invocation
@tracer.capture_lambda_handler
@metrics.log_metrics(capture_cold_start_metric=True)
@deadline.bounded  # every outbound call fits the time left
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    closures = wiring.closure_worker()
    user_id, closure_id = event["user_id"], event["closure_id"]
    logger.append_keys(closure_id=closure_id)
    if event["action"] == "fail":
        closures.record_failure(user_id, closure_id, event.get("error", "Error"), event.get("cause", ""))
        return {"state": "failed"}
    record = closures.advance(user_id, closure_id, budget=STEP_BUDGET)
    return {"state": record.state, "phase": record.phase}
