"""A training that fails on the shop's data says what to do about the data, where the marketer reads it
(the wizard's sync step and the Models page read the dataset version's training): walking make dev, a
sync of three orders failed both trainings with "Training needs at least 20 order lines; got 3" and the
pages could only add a generic "upload the files again; if it fails twice, contact support" (wizard) or
"retrain; if it fails again, sync corrected files" (Models page), which sends the marketer round the
same failure: the training's own remedy was dropped on the way.
"""

from __future__ import annotations

import pytest

from shared.errors import ValidationFailed
from shared.predictions.training_job import TrainingRequest, run_training
from shared.records.datasources import ModelTraining
from tests.unit.ml.test_serving_gate import Blobs, Models

ORG = "org-1"


class Progress:
    def __init__(self) -> None:
        self.trainings: list[ModelTraining] = []

    def record_training(
        self, org_id: str, version: str, model_type: str, training: ModelTraining, **publishing: bool
    ) -> None:
        self.trainings.append(training)


def three_orders() -> Blobs:
    """A shop's files with three order lines: too few for any training."""
    data = Blobs()
    data.objects.update(
        {
            "customers.csv": b"user_id,email\nu1,a@example.com\nu2,b@example.com\nu3,c@example.com\n",
            "products.csv": b"product_id,name,category,price\np1,Thing,cat,10\np2,Other,cat,12\n",
            "orders.csv": (
                b"order_id,user_id,product_id,quantity,amount,timestamp\n"
                b"o1,u1,p1,1,10,2026-11-01T10:00:00Z\no2,u2,p1,1,10,2026-11-02T10:00:00Z\n"
                b"o3,u3,p2,1,12,2026-11-03T10:00:00Z\n"
            ),
        }
    )
    return data


def test_a_training_refused_for_too_few_orders_keeps_its_remedy_on_the_dataset_version() -> None:
    # Given a shop of three orders
    data = three_orders()
    request = TrainingRequest(
        org_id=ORG,
        name="shop-purchase",
        type="purchase",
        orders_key="orders.csv",
        customers_key="customers.csv",
        products_key="products.csv",
        dataset_version="v1",
    )
    progress = Progress()
    # When it trains
    with pytest.raises(ValidationFailed):
        run_training(request, data=data, artifacts=Blobs(), models=Models(), progress=progress)
    # Then the version's training failed with the reason and what to do about the orders file
    failed = progress.trainings[-1]
    assert failed.state == "failed"
    assert failed.error == "Training needs at least 20 order lines; got 3."
    assert failed.remedy == "Sync an orders file with at least 20 order lines (more of your shop's history)."
