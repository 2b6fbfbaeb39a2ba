"""The model record kept in DynamoDB for each trained model (docs/service-contract.md §2.1)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field


class UsageStats(BaseModel):
    total_predictions: int = 0


class ModelRecord(BaseModel):
    """A trained model of one organization. Artifacts live in S3; this is the metadata."""

    org_id: str
    name: str = Field(description="Identifier used as the modelName path parameter.")
    type: Literal["purchase", "recommendation"]
    version: str
    algorithm: str = ""
    trained_at: datetime
    training_cutoff: datetime
    horizon_days: int | None = Field(
        default=None, description="Prediction horizon: a purchase model predicts buying in this many days."
    )
    feature_order: list[str] = Field(default_factory=list)
    training_user_count: int
    metrics: dict[str, float] = Field(default_factory=dict)
    bundle_key: str = Field(description="S3 key of the numpy scoring bundle.")
    bundle_sha256: str
    bundle_shards: list[str] = Field(
        default_factory=list,
        description="SHA-256 of each serving shard (shard_of(user_id) picks one); empty: serve the bundle.",
    )
    bundle_shards_prefix: str | None = Field(default=None, description="S3 key prefix of the serving shards.")
    pipeline_key: str | None = Field(default=None, description="S3 key of the joblib scikit-learn pipeline.")
    pipeline_sha256: str | None = None
    users_key: str | None = Field(default=None, description="S3 key of the training user ids (JSON list).")
    metadata_key: str | None = Field(default=None, description="S3 key of the full training metadata.")
    dataset_version: str | None = Field(
        default=None, description="The synced dataset version it was trained on (None: trained from files)."
    )
    # Largest feature PSI measured on data synced after training (None: not measured yet), each
    # feature's PSI, and when; set by the drift check, reset when a new version is registered.
    max_feature_psi: float | None = None
    feature_psi: dict[str, float] | None = None
    drift_checked_at: datetime | None = None
    # Incremented by every change of the record (a new version, a drift check): what a cached copy is
    # revalidated against (``shared.repositories.prediction_path``).
    revision: int = 0
    usageStats: UsageStats = Field(default_factory=UsageStats)  # noqa: N815 - spec field name
    last_prediction_date: datetime | None = None
