"""Recording a data source step that failed without recording it itself.

The data source state machine (``statemachine/data_source.asl.json``) catches every error of its
Sync and Train tasks. A step that fails the usual way has already said so on its record (a file
refused, a model rejected); one that crashed, ran past its ``Timeout`` or was killed has not, and
would leave the sync ``validating`` or the training ``running`` for good: the dashboard would show
it under way forever and a retrain would be refused as already under way. The Record tasks call
these functions with the caught error's name (Lambda's ``errorType`` or Step Functions' own
``States.Timeout``). Only the name is told: an error's message may quote a row's value.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from shared.clock import Clock
from shared.observability import logger
from shared.records.datasources import PUBLISHED_BY, DatasetVersion, ModelTraining, SyncRecord

SYNC_AGAIN = "Sync the files again; if it fails again, report the sync id to support."
TRAIN_AGAIN = (
    "Retrain the models (the Models page); if it fails again, report the dataset version to support."
)
# What the caught error names mean; any other is an unexpected error of the step.
_STEP_ERRORS = {
    "Sandbox.Timedout": "ran past its time limit",
    "States.Timeout": "ran past its time limit",
    "Runtime.ExitError": "stopped: its process ran out of memory or was killed",
}


def step_failure_message(what: str, error: str) -> str:
    """``what`` failed, in words, from the caught error's name (never its message)."""
    reason = _STEP_ERRORS.get(error)
    return f"{what} {reason}." if reason else f"{what} failed unexpectedly ({error[:100]})."


class FailureStore(Protocol):
    """The dataset store's slice these need (``shared.repositories.datasources``)."""

    def get(self, org_id: str, version: str) -> DatasetVersion | None: ...
    def get_sync(self, org_id: str, sync_id: str) -> SyncRecord | None: ...
    def put_sync(self, record: SyncRecord) -> None: ...
    def record_training(
        self, org_id: str, version: str, model_type: str, training: ModelTraining, *, publish: bool = False
    ) -> None: ...


@dataclass
class StepFailures:
    """The data source state machine's Record tasks."""

    datasets: FailureStore
    clock: Clock

    def sync_failed(self, org_id: str, sync_id: str, error: str) -> SyncRecord | None:
        """``RecordSyncFailure``: a sync still ``validating`` ends ``failed`` with what happened and
        what to do; one that already has an outcome keeps it. Returns the sync as it is now (None if
        it does not exist)."""
        record = self.datasets.get_sync(org_id, sync_id)
        if record is None or record.state != "validating":
            return record
        failure = {"message": step_failure_message("The sync", error), "field": "", "remedy": SYNC_AGAIN}
        failed = SyncRecord.model_validate(
            {**record.model_dump(), "state": "failed", "error": failure, "updated_at": self.clock()}
        )
        self.datasets.put_sync(failed)
        logger.warning("sync step failed", extra={"sync_id": sync_id, "error_type": error})
        return failed

    def training_failed(self, org_id: str, version: str, model_type: str, error: str) -> None:
        """``Record…Failure`` of a training branch: a model's training still ``pending`` or
        ``running`` on ``version`` is marked ``failed`` with what happened and what to do; a job that
        recorded its own outcome (a model rejected, say) keeps it."""
        dataset = self.datasets.get(org_id, version)
        training = dataset.training.get(model_type) if dataset else None
        if training is None or training.state not in ("pending", "running"):
            return
        failed = ModelTraining(
            model_name=training.model_name,
            state="failed",
            error=f"{step_failure_message('The training', error)} {TRAIN_AGAIN}",
            updated_at=self.clock(),
        )
        # A killed or timed-out step is the service's fault, not the data's (which the training did not
        # refuse): the purchase model's puts the version in force, as a crash inside the job does.
        self.datasets.record_training(org_id, version, model_type, failed, publish=model_type == PUBLISHED_BY)
        logger.warning("training step failed", extra={"version": version, "error_type": error})
