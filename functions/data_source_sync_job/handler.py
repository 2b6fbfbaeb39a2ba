"""The data source state machine's steps (invoked by Step Functions, not over HTTP): validate a
sync's files and store the dataset version (``"action": "sync"``), and record a step that failed
without recording it: the sync (``"fail"``) or a model's training (``"training_failed"``)."""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from shared import deadline, wiring
from shared.observability import logger, metrics, tracer


@logger.inject_lambda_context(clear_state=True)  # no keys from the previous invocation
@tracer.capture_lambda_handler
@metrics.log_metrics(capture_cold_start_metric=True)
@deadline.bounded  # every outbound call fits the time left
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    org_id, action = event["org_id"], event.get("action", "sync")
    if action == "training_failed":
        version, model_type = event["dataset_version"], event["type"]
        logger.append_keys(org_id=org_id, dataset_version=version, model_type=model_type)
        wiring.data_source_step_failures().training_failed(
            org_id, version, model_type, event.get("error", "Error")
        )
        return {"state": "failed"}
    sync_id = event["sync_id"]
    logger.append_keys(org_id=org_id, sync_id=sync_id)
    if action == "fail":
        failed = wiring.data_source_step_failures().sync_failed(org_id, sync_id, event.get("error", "Error"))
        return {"state": failed.state if failed else "failed"}
    sync = wiring.data_source_sync().run_sync(org_id, sync_id)
    keys = wiring.dataset_store().get(org_id, sync.dataset_version) if sync.dataset_version else None
    return {
        "state": sync.state,
        "dataset_version": sync.dataset_version,
        # The training steps pass it on as the job's horizon_days (null: the training default).
        "horizon_days": sync.horizon_days,
        # What the training jobs are given: training.npz, which they read, and the version's tables
        # (read only by a job without training arrays; a sync always writes them).
        "keys": (
            {
                **{kind: keys.keys[kind] for kind in ("customers", "products", "orders")},
                "training": keys.keys.get("training"),
            }
            if keys
            else None
        ),
    }
