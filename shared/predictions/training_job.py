"""The training job: a merchant's files from the data bucket in, a registered model out."""

from __future__ import annotations

import tempfile
from pathlib import Path, PurePosixPath
from typing import Literal, Protocol

from pydantic import BaseModel, Field

from shared.ml.datasets import load_shop_data
from shared.ml.training import TrainingConfig, train_model
from shared.observability import logger
from shared.predictions.records import ModelRecord
from shared.predictions.registry import ArtifactBlobs, ModelRecords, register_trained_model


class TrainingRequest(BaseModel):
    """What to train: S3 keys (data bucket) of CSV or JSON Lines files, and the model to produce."""

    org_id: str = Field(min_length=1)
    name: str = Field(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9_.-]+$")
    type: Literal["purchase", "recommendation"] = "purchase"
    algorithm: Literal["logistic", "gradient_boosting"] = "logistic"
    orders_key: str
    customers_key: str | None = None
    products_key: str | None = None


class DataBlobs(Protocol):
    def get(self, key: str) -> bytes: ...


def run_training(
    request: TrainingRequest, *, data: DataBlobs, artifacts: ArtifactBlobs, models: ModelRecords
) -> ModelRecord:
    """Download the files (validated whole: one bad row rejects the file, naming file, row and field),
    train with a time split, store artifacts with checksums and register the model."""
    with tempfile.TemporaryDirectory() as workdir:

        def fetch(key: str | None) -> Path | None:
            if key is None:
                return None
            # Keep the extension: it tells CSV from JSON Lines.
            path = Path(workdir) / PurePosixPath(key).name
            path.write_bytes(data.get(key))
            return path

        orders = fetch(request.orders_key)
        assert orders is not None
        shop = load_shop_data(
            orders=orders, customers=fetch(request.customers_key), products=fetch(request.products_key)
        )
    model = train_model(
        shop,
        name=request.name,
        model_type=request.type,
        config=TrainingConfig(algorithm=request.algorithm),
        progress=lambda stage: logger.info("training", extra={"stage": stage, "model": request.name}),
    )
    record = register_trained_model(request.org_id, model, artifacts=artifacts, models=models)
    logger.info(
        "model registered", extra={"model": record.name, "version": record.version, "metrics": record.metrics}
    )
    return record
