"""What ``GET /client/models`` shows a client about each model."""

from __future__ import annotations

import base64
import binascii
import json
from datetime import datetime
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from shared.errors import NotFound, ValidationFailed
from shared.records.models import ModelRecord, UsageStats


class ModelSummary(BaseModel):
    # The contract's own names: snake_case, except usageStats (so not a CamelModel).
    model_config = ConfigDict(validate_by_name=True, validate_by_alias=True, serialize_by_alias=True)

    name: str
    type: str
    version: str
    algorithm: str
    trained_at: datetime
    training_cutoff: datetime
    feature_order: list[str]
    available_users: int = Field(
        description="How many users the model was trained on (valid user_id values)."
    )
    metrics: dict[str, float]
    usage_stats: UsageStats = Field(alias="usageStats")
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
                algorithm=r.algorithm,
                trained_at=r.trained_at,
                training_cutoff=r.training_cutoff,
                feature_order=r.feature_order,
                available_users=r.training_user_count,
                metrics=r.metrics,
                usage_stats=r.usageStats,
                last_prediction_date=r.last_prediction_date,
            )
            for r in records
        ]
    )


class TrainingUsers(BaseModel):
    """One page of a model's training users (the valid ``user_id`` values)."""

    model_name: str
    total: int
    user_ids: list[str]
    next_cursor: str | None = Field(description="Pass as ?cursor= for the next page; absent on the last.")


class ModelGetter(Protocol):
    def get(self, org_id: str, name: str) -> ModelRecord | None: ...


class BlobReader(Protocol):
    def get(self, key: str) -> bytes: ...


def list_training_users(
    org_id: str, model_name: str, *, cursor: str | None, limit: int, models: ModelGetter, blobs: BlobReader
) -> TrainingUsers:
    """Page through the user ids a model was trained on. The cursor is an opaque offset."""
    record = models.get(org_id, model_name)
    if record is None or record.users_key is None:
        raise NotFound(
            f"Model '{model_name}' was not found.", remedy="List your models with GET /client/models."
        )
    start = _decode_cursor(cursor)
    users: list[str] = json.loads(blobs.get(record.users_key))
    page = users[start : start + limit]
    after = start + len(page)
    return TrainingUsers(
        model_name=model_name,
        total=len(users),
        user_ids=page,
        next_cursor=_encode_cursor(after) if after < len(users) else None,
    )


def _encode_cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(f"o:{offset}".encode()).decode().rstrip("=")


def _decode_cursor(cursor: str | None) -> int:
    if not cursor:
        return 0
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        prefix, _, value = text.partition(":")
        offset = int(value)
        if prefix != "o" or offset < 0:
            raise ValueError(cursor)
    except (ValueError, binascii.Error) as exc:
        raise ValidationFailed(
            "cursor is not a cursor this service issued.",
            field="cursor",
            remedy="Start again without a cursor.",
        ) from exc
    return offset
