"""Which trained model serves (issue 26, item 4): a retrained model replaces the version in service
only when it beats the strongest simple method on its holdout; the organization's first model serves
even below that method (the Models page says so), so a shop where own history wins is never left with
no model at all; a purchase model no better than chance never serves.

Training is real (a small synthetic shop from its three files); the gate's verdict is set by the test,
since which side of the bar a model lands on a given shop is the benchmark's business, not this rule's.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from shared.ml.datasets import dump_records
from shared.ml.quality_gate import QualityGate
from shared.predictions import training_job
from shared.predictions.training_job import ModelRejected, TrainingRequest, run_training
from shared.records.models import ModelRecord
from tools.synthetic import SyntheticConfig, generate_shop

ORG = "org-1"


class Blobs:
    def __init__(self) -> None:
        self.objects: dict[str, bytes] = {}

    def get(self, key: str) -> bytes:
        return self.objects[key]

    def put(self, key: str, data: bytes, content_type: str = "application/octet-stream") -> None:
        self.objects[key] = data


class Models:
    def __init__(self) -> None:
        self.records: dict[tuple[str, str], ModelRecord] = {}

    def put(self, record: ModelRecord) -> None:
        self.records[(record.org_id, record.name)] = record

    def get(self, org_id: str, name: str) -> ModelRecord | None:
        return self.records.get((org_id, name))


@pytest.fixture(scope="module")
def files() -> dict[str, bytes]:
    shop = generate_shop(SyntheticConfig(n_users=300, n_products=30, seed=3))
    return {
        "customers.csv": dump_records(shop.data.customers, "csv"),
        "products.csv": dump_records(shop.data.products, "csv"),
        "orders.csv": dump_records(shop.data.orders, "csv"),
    }


@pytest.fixture
def data(files: dict[str, bytes]) -> Blobs:
    blobs = Blobs()
    blobs.objects.update(files)
    return blobs


@contextmanager
def verdict(passed: bool, strongest: str = "own_history") -> Iterator[None]:
    """Every gate this test meets says ``passed`` against ``strongest``."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(
            training_job,
            "quality_gate",
            lambda model_type, metrics: QualityGate(
                passed,
                "ROC-AUC",
                0.70,
                "a simple method",
                strongest,
                0.5 if strongest == "coin_flip" else 0.75,
            ),
        )
        yield


def train(data: Blobs, models: Models) -> ModelRecord:
    request = TrainingRequest(
        org_id=ORG,
        name="shop-purchase",
        type="purchase",
        orders_key="orders.csv",
        customers_key="customers.csv",
        products_key="products.csv",
    )
    return run_training(request, data=data, artifacts=Blobs(), models=models)


def test_the_first_model_serves_even_below_the_simple_method(data: Blobs) -> None:
    # Given an organization with no model, and a training that does not beat own history
    models = Models()
    with verdict(passed=False):
        # When
        record = train(data, models)
    # Then it is made current: the wizard has a model, and the Models page says what it lost to
    assert models.get(ORG, "shop-purchase") == record


def test_a_retrained_model_below_the_simple_method_leaves_the_version_in_service(data: Blobs) -> None:
    # Given a model in service
    models = Models()
    with verdict(passed=True):
        serving = train(data, models)
    # When a retrain does not beat the strongest simple method
    with verdict(passed=False), pytest.raises(ModelRejected) as rejected:
        train(data, models)
    # Then it is refused, saying so, and the version in service stays
    assert f"The version in service ({serving.version}) stays." in rejected.value.message
    assert models.get(ORG, "shop-purchase") == serving


def test_a_retrained_model_that_beats_the_simple_method_replaces_the_version_in_service(data: Blobs) -> None:
    models = Models()
    with verdict(passed=False):
        first = train(data, models)
    with verdict(passed=True):
        second = train(data, models)
    assert models.get(ORG, "shop-purchase") == second != first


def test_a_first_purchase_model_no_better_than_chance_never_serves(data: Blobs) -> None:
    models = Models()
    refused = "No version serves until a retrain does better than chance"
    with verdict(passed=False, strongest="coin_flip"), pytest.raises(ModelRejected, match=refused):
        train(data, models)
    assert models.get(ORG, "shop-purchase") is None
