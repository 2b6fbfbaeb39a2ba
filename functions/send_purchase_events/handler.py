"""The data source state machine's purchases step (invoked by Step Functions, not over HTTP): send a
dataset version's new orders to the ad account's pixel as purchases (``"action": "send"``), for as
long as the invocation has time, or record a step that failed without recording it (``"fail"``)."""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from shared import deadline, wiring
from shared.observability import logger, metrics, tracer


@logger.inject_lambda_context(clear_state=True)  # no keys from the previous invocation
@tracer.capture_lambda_handler
@metrics.log_metrics(capture_cold_start_metric=True)
@deadline.bounded  # every outbound call fits the time left
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    org_id, version = event["org_id"], event["dataset_version"]
    logger.append_keys(org_id=org_id, dataset_version=version)
    purchases = wiring.purchase_events()
    if event.get("action") == "fail":
        purchases.record_failure(org_id, version, event.get("error", "Error"), event.get("cause", ""))
        return {"status": "failed"}
    return purchases.step(org_id, version, lambda: context.get_remaining_time_in_millis() / 1000).model_dump()
