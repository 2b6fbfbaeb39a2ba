"""A dataset version is put in force by its purchase model's training, in the write that records the
success (``shared.records.datasources.PUBLISHED_BY``): audiences, segments and targeting score with
that model, so the data they read is data it was trained on. The recommendation model's success does
not put a version in force. A purchase model trained but not made current (the quality gate kept the
version in service) was trained on good data, so its version goes in force too; a training that refused
the data asks the store to put it in force only where nothing better is (no data in force: a young
shop's first sync; ``tests/unit/datasources/test_data_in_force.py``); a crash, or orders with a gap
where the models learn (usable data, an untrainable timeline), is no verdict on the data and does."""

from __future__ import annotations

import pytest

from shared.errors import ValidationFailed
from shared.ml.datasets import dump_records
from shared.ml.shop_arrays import OrdersGap
from shared.predictions import training_job
from shared.predictions.training_job import ModelRejected, TrainingRequest, run_training
from shared.records.datasources import ModelTraining
from tests.unit.ml.test_serving_gate import Blobs, Models, verdict
from tests.unit.ml.test_training_failure_remedy import three_orders
from tools.synthetic import SyntheticConfig, generate_shop

ORG = "org-1"


class Progress:
    """The dataset store's training records: each state, whether its write published the version, and
    whether only as data the training refused."""

    def __init__(self) -> None:
        self.writes: list[tuple[str, bool, bool]] = []
        self.trainings: list[ModelTraining] = []

    def record_training(
        self,
        org_id: str,
        version: str,
        model_type: str,
        training: ModelTraining,
        *,
        publish: bool = False,
        refused: bool = False,
    ) -> None:
        self.writes.append((training.state, publish, refused))
        self.trainings.append(training)


def shop_files() -> Blobs:
    shop = generate_shop(SyntheticConfig(n_users=300, n_products=30, seed=3))
    data = Blobs()
    data.objects.update(
        {
            "customers.csv": dump_records(shop.data.customers, "csv"),
            "products.csv": dump_records(shop.data.products, "csv"),
            "orders.csv": dump_records(shop.data.orders, "csv"),
        }
    )
    return data


def job(model_type: str, name: str) -> TrainingRequest:
    return TrainingRequest(
        org_id=ORG,
        name=name,
        type=model_type,  # type: ignore[arg-type]
        orders_key="orders.csv",
        customers_key="customers.csv",
        products_key="products.csv",
        dataset_version="v1",
    )


@pytest.mark.parametrize(
    ("model_type", "name", "publishes"),
    [("purchase", "shop-purchase", True), ("recommendation", "shop-recommendations", False)],
)
def test_only_the_purchase_models_success_puts_its_version_in_force(
    model_type: str, name: str, publishes: bool
) -> None:
    # Given a shop's files and a model to train from the dataset version they are
    data = shop_files()
    request = job(model_type, name)
    progress = Progress()

    # When it trains
    run_training(request, data=data, artifacts=Blobs(), models=Models(), progress=progress)

    # Then only the success is written publishing, and only by the purchase model
    assert progress.writes[-1] == ("succeeded", publishes, False)
    assert not any(published for _, published, _ in progress.writes[:-1])


def test_a_purchase_model_kept_out_of_service_by_the_quality_gate_still_puts_its_data_in_force() -> None:
    # Given a purchase model in service
    data, models = shop_files(), Models()
    with verdict(passed=True):
        run_training(job("purchase", "shop-purchase"), data=data, artifacts=Blobs(), models=models)
    progress = Progress()

    # When a newer version's model does not beat the strongest simple method
    with verdict(passed=False), pytest.raises(ModelRejected):
        run_training(
            job("purchase", "shop-purchase"), data=data, artifacts=Blobs(), models=models, progress=progress
        )

    # Then its failure is recorded publishing the version: the data trained a model, the model in
    # service stays
    assert progress.writes[-1] == ("failed", True, False)


@pytest.mark.parametrize(
    "failure",
    [
        # a crash on the service's side (a bug, not the data's fault)
        ZeroDivisionError("division by zero"),
        # orders with none in the window the models learn from (a seasonal shop's files: usable data,
        # a timeline no model can be trained on now)
        OrdersGap("The orders have a gap: none from 2026-09-30 to 2026-10-30 ...", field="orders"),
    ],
    ids=["crash", "orders-gap"],
)
def test_a_purchase_training_that_fails_for_no_fault_of_the_data_still_puts_it_in_force(
    monkeypatch: pytest.MonkeyPatch, failure: Exception
) -> None:
    # Given a training that fails so
    def fail(*args: object, **kwargs: object) -> None:
        raise failure

    monkeypatch.setattr(training_job, "train_model", fail)
    progress = Progress()

    # When it runs
    with pytest.raises(type(failure)):
        run_training(
            job("purchase", "shop-purchase"),
            data=shop_files(),
            artifacts=Blobs(),
            models=Models(),
            progress=progress,
        )

    # Then its failure is recorded publishing the version: the catalog, lift and syncs read its data
    assert progress.writes[-1] == ("failed", True, False)
    # And not as data refused: a retrain may mend what was not the data's fault
    assert not progress.trainings[-1].refused


def test_a_purchase_training_that_refuses_the_data_publishes_it_only_as_refused_data() -> None:
    # Given a shop of three order lines, too few to train on
    data = three_orders()
    progress = Progress()

    # When its purchase model trains
    with pytest.raises(ValidationFailed, match="Training needs at least 20 order lines"):
        run_training(
            job("purchase", "shop-purchase"), data=data, artifacts=Blobs(), models=Models(), progress=progress
        )

    # Then the refusal is recorded asking the store to publish the version as refused data: in force
    # where nothing better is (a young shop's first sync), never over data a model was trained on
    assert progress.writes[-1] == ("failed", True, True)
    # And the training record says the data itself was refused, so a retrain of it is refused up front
    assert progress.trainings[-1].refused
