"""The training function's jobs: a merchant's files from the data bucket in, and either a registered
model out (``train``, the default) or a drift measurement stored on an existing model (``check_drift``)."""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import Any, ClassVar, Literal, Protocol, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from shared.clock import Clock, utc_now
from shared.errors import NotFound, PreconditionFailed, ServiceError, ValidationFailed
from shared.ml.datasets import ShopData, load_shop_data
from shared.ml.drift import DriftReference, measure_drift
from shared.ml.horizon import MAX_HORIZON_DAYS, MIN_HORIZON_DAYS
from shared.ml.quality_gate import quality_gate
from shared.ml.shop_arrays import EncodedShop, OrdersGap, encode_shop, read_training_arrays
from shared.ml.trained import TrainingConfig
from shared.ml.training import train_model
from shared.observability import logger
from shared.predictions.registry import ArtifactBlobs, ModelRecords, register_trained_model
from shared.records.datasources import PUBLISHED_BY, ModelTraining, TrainingState
from shared.records.models import ModelRecord

_MODEL_NAME = r"^[A-Za-z0-9_.-]+$"


class TrainingRequest(BaseModel):
    """What to train: S3 keys (data bucket) of CSV or JSON Lines files, and the model to produce.

    The job as the training function receives it (the data source sync's state machine, the CLI's
    equivalent ``python -m tools.train``). Unknown fields are refused, so a misspelt option is an
    error rather than silently ignored.
    """

    model_config = ConfigDict(extra="forbid")

    action: Literal["train"] = "train"
    org_id: str = Field(min_length=1)
    name: str = Field(min_length=1, max_length=128, pattern=_MODEL_NAME)
    type: Literal["purchase", "recommendation"] = "purchase"
    algorithm: Literal["two_part", "logistic"] = Field(
        default="two_part",
        description=(
            "Purchase models: two_part (the chance the customer orders at all in the horizon, gradient "
            "boosting or logistic regression chosen on the holdout, times the chance of the product given "
            "an order) or logistic (one logistic regression on the pairs, the earlier model)."
        ),
    )
    horizon_days: int | None = Field(
        default=None,
        ge=MIN_HORIZON_DAYS,
        le=MAX_HORIZON_DAYS,
        description=(
            "Prediction horizon in days: a purchase model predicts who buys in the next horizon_days "
            "(the holdout it is evaluated on has the same length). Default 30, or the longest the "
            "history allows when it is shorter; a horizon the history cannot support is refused "
            "naming the longest that it can."
        ),
    )
    training_key: str | None = Field(
        default=None,
        description="The dataset version's training arrays (training.npz, docs/data-plane.md); "
        "training reads them and no file.",
    )
    orders_key: str | None = Field(
        default=None, description="The orders file, read only when there is no training_key."
    )
    customers_key: str | None = None
    products_key: str | None = None
    dataset_version: str | None = Field(
        default=None, description="The synced dataset version the files are; progress is recorded on it."
    )

    @model_validator(mode="after")
    def _some_data(self) -> Self:
        if self.training_key is None and self.orders_key is None:
            raise ValueError("give training_key (or orders_key)")
        return self


class DriftCheckRequest(BaseModel):
    """Which model to check, and the S3 keys (data bucket) of the shop's files as synced now."""

    action: Literal["check_drift"]
    org_id: str = Field(min_length=1)
    name: str = Field(min_length=1, max_length=128, pattern=_MODEL_NAME)
    training_key: str | None = None
    orders_key: str | None = None
    customers_key: str | None = None
    products_key: str | None = None

    @model_validator(mode="after")
    def _some_data(self) -> Self:
        if self.training_key is None and self.orders_key is None:
            raise ValueError("give training_key (or orders_key)")
        return self


class DriftCheckResult(BaseModel):
    """What the drift check stored on the model, and whether it calls for retraining."""

    name: str
    version: str
    max_feature_psi: float
    feature_psi: dict[str, float]
    drift_checked_at: datetime
    recommended_retrain: bool
    sample_size: int
    new_order_lines: int


class ModelRejected(ValidationFailed):
    """A trained model no better than a trivial baseline: not registered, the reason said."""

    code: ClassVar[str] = "model_rejected"


def parse_job(event: Mapping[str, Any]) -> TrainingRequest | DriftCheckRequest:
    """The job an event asks for: ``check_drift`` when ``action`` says so, otherwise training."""
    job: type[TrainingRequest | DriftCheckRequest] = (
        DriftCheckRequest if event.get("action") == "check_drift" else TrainingRequest
    )
    try:
        return job.model_validate(event)
    except ValidationError as invalid:
        first = invalid.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "job"
        reason = "is not a field of the job" if first["type"] == "extra_forbidden" else first["msg"]
        raise ValidationFailed(
            f"{field}: {reason}.",
            field=field,
            remedy=f"Send only the job's fields: {', '.join(job.model_fields)} "
            "(the prediction horizon is horizon_days).",
        ) from None


class DataBlobs(Protocol):
    def get(self, key: str) -> bytes: ...


class DriftRecords(Protocol):
    def get(self, org_id: str, name: str) -> ModelRecord | None: ...

    def record_drift(
        self,
        org_id: str,
        name: str,
        version: str,
        *,
        max_feature_psi: float,
        feature_psi: dict[str, float],
        checked_at: datetime,
    ) -> None: ...


class ServedModels(ModelRecords, Protocol):
    """The organization's models (``shared.repositories.models.DynamoModelStore``): the version in
    service, which a retrained model must beat the simple methods to replace."""

    def get(self, org_id: str, name: str) -> ModelRecord | None: ...


class TrainingProgress(Protocol):
    """Where a dataset version's training states are kept (``shared.repositories.datasources``);
    ``publish`` also puts the version in force, in the same write; with ``refused`` (the training
    refused the data) only in place of nothing, or of refused data with no more customers."""

    def record_training(
        self,
        org_id: str,
        version: str,
        model_type: str,
        training: ModelTraining,
        *,
        publish: bool = False,
        refused: bool = False,
    ) -> None: ...


def run_training(
    request: TrainingRequest,
    *,
    data: DataBlobs,
    artifacts: ArtifactBlobs,
    models: ServedModels,
    progress: TrainingProgress | None = None,
    clock: Clock = utc_now,
) -> ModelRecord:
    """Download the files (validated whole: one bad row rejects the file, naming file, row and field),
    train with a time split, store artifacts with checksums and register the model.

    The quality gate (``shared.ml.quality_gate``): a model that does not beat the strongest simple
    method on its holdout is not made current when a version already serves (``ModelRejected``, that
    version stays), nor when it does no better than chance; the organization's first model is made
    current either way, its verdict kept in its metrics for the Models page.

    With a ``dataset_version`` each stage, the outcome and any failure are recorded on that version
    through ``progress`` (the data source's GET shows them); a failure is re-raised after recording.
    A purchase model's training puts the version in force (``PUBLISHED_BY``) when it ends. If it
    refused the data (``ValidationFailed``: too few orders, say), the version goes in force only where
    nothing better is: no data in force (a young shop's first sync), or data refused too with no more
    customers; otherwise the data in force stays as it was, so a sync of too little data never replaces
    the shop's. A model rejected by the quality gate, orders with a gap where the models learn
    (``OrdersGap``), or a crash, still put it in force: the data trained a model, is usable but
    untrainable now, or the fault is not the data's.
    """

    def report(
        state: TrainingState, publish: bool = False, refused: bool = False, **fields: str | None
    ) -> None:
        if progress is not None and request.dataset_version is not None:
            training = ModelTraining(
                model_name=request.name, state=state, refused=refused, updated_at=clock(), **fields
            )
            progress.record_training(
                request.org_id,
                request.dataset_version,
                request.type,
                training,
                publish=publish,
                refused=refused,
            )

    def stage(name: str) -> None:
        logger.info("training", extra={"stage": name, "model": request.name})
        report("running", stage=name)

    try:
        stage("loading data")
        shop = _load_shop(data, request)
        model = train_model(
            shop,
            name=request.name,
            model_type=request.type,
            config=TrainingConfig(algorithm=request.algorithm, holdout_days=request.horizon_days),
            progress=stage,
        )
        gate = quality_gate(request.type, model.metrics)
        if gate is not None and not gate.passed:
            serving = models.get(request.org_id, request.name)
            if serving is not None or gate.strongest_metric == "coin_flip":
                raise ModelRejected(
                    f"Model '{request.name}' was trained but not made current. {gate.sentence()} "
                    + (
                        f"The version in service ({serving.version}) stays."
                        if serving is not None
                        else "No version serves until a retrain does better than chance."
                    ),
                    remedy=(
                        "Check that the orders file covers the customers and products it should, upload a "
                        "longer history, or try another horizon_days."
                    ),
                    details={"metrics": model.metrics},
                )
            # The shop's first model: it serves, below the simple method (the Models page says so), rather
            # than leaving the wizard with none; a later version replaces it only if it beats the method.
            logger.warning("first model below a simple method made current", extra={"model": request.name})
        stage("registering")
        record = register_trained_model(
            request.org_id, model, artifacts=artifacts, models=models, dataset_version=request.dataset_version
        )
    except Exception as exc:
        # Only data the training refuses (too few orders, say) may be kept out of force: it cannot train
        # the model audiences depend on, so it must not replace the shop's data; but with nothing in
        # force (or only refused data with no more customers) it is the best the shop has, and the
        # store puts it in force then (``refused``). A model trained but kept out of service
        # (ModelRejected) was trained on it, and a crash is the service's fault, not the data's: both
        # put the version in force beside the model in service, so the lift report, audience syncs and
        # the checkout's catalog read the newest data.
        # Orders with a gap where the models learn are usable data on a timeline no model can be trained
        # on now (OrdersGap): kept out of force, a seasonal shop's catalog and lift would stop moving.
        refused = isinstance(exc, ValidationFailed) and not isinstance(exc, (ModelRejected, OrdersGap))
        publish = request.type == PUBLISHED_BY
        if isinstance(exc, ServiceError):
            report("failed", publish=publish, refused=refused, error=exc.message, remedy=exc.remedy or None)
        else:
            report("failed", publish=publish, error="training failed unexpectedly")
        raise
    report("succeeded", publish=request.type == PUBLISHED_BY, model_version=record.version)
    logger.info(
        "model registered", extra={"model": record.name, "version": record.version, "metrics": record.metrics}
    )
    return record


def check_drift(
    request: DriftCheckRequest,
    *,
    data: DataBlobs,
    artifacts: DataBlobs,
    models: DriftRecords,
    psi_threshold: float,
    now: datetime,
) -> DriftCheckResult:
    """Measure the feature drift of the current version of a model on the uploaded files (see
    ``shared.ml.drift``) and store it on the model record, where predictions turn a PSI above
    ``psi_threshold`` into ``recommended_retrain``.

    Raises ``NotFound`` for an unknown model, ``PreconditionFailed`` for a model registered without
    training metadata, ``ValidationFailed`` for bad files or no orders after the model's data end, and
    ``Conflict`` when the model was retrained meanwhile.
    """
    record = models.get(request.org_id, request.name)
    if record is None:
        raise NotFound(f"Model '{request.name}' was not found.", field="name")
    if record.metadata_key is None:
        raise PreconditionFailed(
            f"Model '{request.name}' has no stored training metadata to compare against.",
            remedy="Retrain the model, then check its drift.",
        )
    reference = DriftReference.model_validate_json(artifacts.get(record.metadata_key))
    report = measure_drift(reference, _load_shop(data, request))
    models.record_drift(
        request.org_id,
        record.name,
        record.version,
        max_feature_psi=report.max_psi,
        feature_psi=report.psi_by_feature,
        checked_at=now,
    )
    result = DriftCheckResult(
        name=record.name,
        version=record.version,
        max_feature_psi=report.max_psi,
        feature_psi=report.psi_by_feature,
        drift_checked_at=now,
        recommended_retrain=report.max_psi > psi_threshold,
        sample_size=report.sample_size,
        new_order_lines=report.new_order_lines,
    )
    logger.info(
        "drift measured",
        extra={"model": record.name, "version": record.version, "max_feature_psi": report.max_psi},
    )
    return result


def _load_shop(data: DataBlobs, request: TrainingRequest | DriftCheckRequest) -> EncodedShop:
    """The shop a job names: its dataset version's training arrays (``training_key``), or, for a job
    that names only files, the files read and encoded."""
    if request.training_key is not None:
        return read_training_arrays(data.get(request.training_key))
    assert request.orders_key is not None  # the request's validator asks for one or the other
    return encode_shop(_load_upload(data, request.orders_key, request.customers_key, request.products_key))


def _load_upload(
    data: DataBlobs, orders_key: str, customers_key: str | None, products_key: str | None
) -> ShopData:
    """Download and validate a shop's files (one bad row rejects the file, naming file, row and field).

    One object per order line: only for jobs that name files rather than a dataset version's arrays.
    """
    with tempfile.TemporaryDirectory() as workdir:

        def fetch(key: str | None) -> Path | None:
            if key is None:
                return None
            # Keep the extension: it tells CSV from JSON Lines.
            path = Path(workdir) / PurePosixPath(key).name
            path.write_bytes(data.get(key))
            return path

        orders = fetch(orders_key)
        assert orders is not None
        return load_shop_data(orders=orders, customers=fetch(customers_key), products=fetch(products_key))
