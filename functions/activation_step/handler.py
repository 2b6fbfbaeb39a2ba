"""A step of the audience activation state machine (invoked by Step Functions, not over HTTP).

The event names the step (``action``), the audience and the execution (the lease's owner). A step's
failure is recorded on the audience by the step itself, then raised as an exception named after the
error code, which Lambda reports as ``errorType`` for the state machine's Retry and Catch.
"""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from shared import deadline, wiring
from shared.activation.steps import Worker
from shared.observability import logger, metrics, tracer


@logger.inject_lambda_context(clear_state=True)  # no keys from the previous invocation
@tracer.capture_lambda_handler
@metrics.log_metrics(capture_cold_start_metric=True)
@deadline.bounded  # every outbound call fits the time left
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    org_id, audience_id, action = event["org_id"], event["audience_id"], event["action"]
    logger.append_keys(org_id=org_id, audience_id=audience_id, step=action)
    worker = Worker(
        owner=event["execution"], seconds_left=lambda: context.get_remaining_time_in_millis() / 1000
    )
    pipeline = wiring.audience_service().pipeline
    if action == "fail":
        pipeline.record_failure(
            org_id, audience_id, worker, event.get("error", "Error"), event.get("cause", "")
        )
        return {"outcome": "done"}
    return pipeline.run(action, org_id, audience_id, worker).model_dump()
