"""What ``GET /client/models`` shows a client about each model."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from pydantic import BaseModel, Field

from shared.predictions.records import ModelRecord, UsageStats


class ModelSummary(BaseModel):
    name: str
    type: str
    version: int
    trained_at: datetime
    training_cutoff: datetime
    feature_order: list[str]
    available_users: int = Field(
        description="How many users the model was trained on (valid user_id values)."
    )
    metrics: dict[str, float]
    usageStats: UsageStats  # noqa: N815 - spec field name
    last_prediction_date: datetime | None


class ModelList(BaseModel):
    models: list[ModelSummary]


class ModelLister(Protocol):
    def list_for_org(self, org_id: str) -> list[ModelRecord]: ...


def list_models(org_id: str, store: ModelLister) -> ModelList:
    """The organization's models with their metadata, sorted by name."""
    records = sorted(store.list_for_org(org_id), key=lambda r: r.name)
    return ModelList(
        models=[
            ModelSummary(
                name=r.name,
                type=r.type,
                version=r.version,
                trained_at=r.trained_at,
                training_cutoff=r.training_cutoff,
                feature_order=r.feature_order,
                available_users=r.training_user_count,
                metrics=r.metrics,
                usageStats=r.usageStats,
                last_prediction_date=r.last_prediction_date,
            )
            for r in records
        ]
    )
