"""A data source step that fails without recording it (a crash, a timeout, a killed process) is
recorded by the state machine's Record tasks: the sync ends failed, a training ends failed, each
with what happened and what to do, and never by the error's message (it may quote a row)."""

from __future__ import annotations

from shared.datasources.failures import StepFailures
from shared.datasources.models import SyncRequest
from shared.records.datasources import ModelTraining
from tests.unit.datasources.conftest import NOW, ORG, DataSourceWorld
from tests.unit.datasources.test_sync import CUSTOMERS, ORDERS, PRODUCTS


def failures(world: DataSourceWorld) -> StepFailures:
    return StepFailures(datasets=world.datasets, clock=lambda: NOW)


def started_sync(world: DataSourceWorld) -> str:
    keys = world.put_files(CUSTOMERS, PRODUCTS, ORDERS)
    return world.service.start_sync(ORG, SyncRequest.model_validate({"files": keys}), world.start).sync_id


def test_a_sync_whose_step_timed_out_ends_failed_with_the_reason_and_remedy(world: DataSourceWorld) -> None:
    # Given: a sync still validating (its step was stopped at the function's timeout)
    sync_id = started_sync(world)

    # When: the state machine records the caught error
    failures(world).sync_failed(ORG, sync_id, "Sandbox.Timedout")

    # Then: the data source shows it failed, saying why and what to do
    [sync] = world.service.view(ORG).syncs
    assert sync.state == "failed"
    assert sync.error is not None
    assert sync.error["message"] == "The sync ran past its time limit."
    assert sync.error["remedy"].startswith("Sync the files again")


def test_a_sync_that_crashed_is_described_by_its_error_name_only(world: DataSourceWorld) -> None:
    # Given: a sync whose step raised an unexpected error
    sync_id = started_sync(world)

    # When: it is recorded
    failures(world).sync_failed(ORG, sync_id, "KeyError")

    # Then: the message names the error type, nothing of its message
    [sync] = world.service.view(ORG).syncs
    assert sync.error is not None
    assert sync.error["message"] == "The sync failed unexpectedly (KeyError)."


def test_a_sync_with_an_outcome_keeps_it_when_a_late_failure_is_recorded(world: DataSourceWorld) -> None:
    # Given: a sync that finished (synced) before its task was reported failed
    sync_id = started_sync(world)
    world.service.run_sync(ORG, sync_id)

    # When: a failure is recorded for it
    failures(world).sync_failed(ORG, sync_id, "States.Timeout")

    # Then: it stays synced
    [sync] = world.service.view(ORG).syncs
    assert sync.state == "synced"


def test_a_training_left_running_by_a_killed_job_ends_failed(world: DataSourceWorld) -> None:
    # Given: a synced version whose purchase training was running when its process was killed
    sync_id = started_sync(world)
    world.service.run_sync(ORG, sync_id)
    running = ModelTraining(model_name="shop-purchase", state="running", stage="fitting", updated_at=NOW)
    world.datasets.record_training(ORG, sync_id, "purchase", running)

    # When: the state machine records the caught error
    failures(world).training_failed(ORG, sync_id, "purchase", "Runtime.ExitError")

    # Then: that training is failed with the reason; the other model's is untouched
    version = world.datasets.get(ORG, sync_id)
    assert version is not None
    assert version.training["purchase"].state == "failed"
    assert version.training["purchase"].error is not None
    assert version.training["purchase"].error.startswith(
        "The training stopped: its process ran out of memory or was killed. Retrain the models"
    )
    assert version.training["recommendation"].state == "pending"


def test_a_training_that_recorded_its_own_failure_keeps_its_reason(world: DataSourceWorld) -> None:
    # Given: a training the job itself recorded as failed (a model no better than its baseline)
    sync_id = started_sync(world)
    world.service.run_sync(ORG, sync_id)
    rejected = ModelTraining(
        model_name="shop-purchase",
        state="failed",
        error="Model 'shop-purchase' was not made current.",
        updated_at=NOW,
    )
    world.datasets.record_training(ORG, sync_id, "purchase", rejected)

    # When: the state machine records the error it caught from that job
    failures(world).training_failed(ORG, sync_id, "purchase", "model_rejected")

    # Then: the job's own reason stays
    version = world.datasets.get(ORG, sync_id)
    assert version is not None
    assert version.training["purchase"].error == "Model 'shop-purchase' was not made current."
