"""Registering a trained model: artifacts to S3 (with checksums), training users for paging, and
the model record in DynamoDB. Used by the training function and the local demo seed."""

from __future__ import annotations

import json
from typing import Protocol

from shared.ml.artifacts import model_prefix, save_trained_model
from shared.ml.scoring import SHARD_ROLE_PREFIX
from shared.ml.trained import TrainedModel
from shared.records.models import ModelRecord


class ArtifactBlobs(Protocol):
    def put(self, key: str, data: bytes, content_type: str = ...) -> None: ...


class ModelRecords(Protocol):
    def put(self, record: ModelRecord) -> None: ...


class _OrgPrefixed:
    """Every organization's artifacts live under its own prefix."""

    def __init__(self, blobs: ArtifactBlobs, prefix: str) -> None:
        self._blobs = blobs
        self._prefix = prefix

    def put(self, key: str, data: bytes) -> None:
        self._blobs.put(self._prefix + key, data)


def register_trained_model(
    org_id: str,
    model: TrainedModel,
    *,
    artifacts: ArtifactBlobs,
    models: ModelRecords,
    dataset_version: str | None = None,
) -> ModelRecord:
    """Store ``model``'s artifacts and training users, then (last) its record, so a model becomes
    visible only once everything it needs is in place. Returns the record."""
    prefix = f"orgs/{org_id}/"
    keys = save_trained_model(model, _OrgPrefixed(artifacts, prefix))
    users_key = f"{prefix}models/{model.name}/{model.version}/users.json"
    artifacts.put(users_key, json.dumps(model.training_user_ids).encode(), "application/json")
    bundle = model.artifacts["bundle"]
    shards = sorted((role, a) for role, a in model.artifacts.items() if role.startswith(SHARD_ROLE_PREFIX))
    pipeline = model.artifacts.get("pipeline")
    record = ModelRecord(
        org_id=org_id,
        name=model.name,
        type=model.model_type,
        version=model.version,
        algorithm=model.algorithm,
        trained_at=model.trained_at,
        training_cutoff=model.training_cutoff,
        horizon_days=model.holdout_days,
        feature_order=model.feature_names,
        training_user_count=len(model.training_user_ids),
        metrics=model.metrics,
        bundle_key=prefix + keys["bundle"],
        bundle_sha256=bundle.sha256,
        bundle_shards=[shard.sha256 for _, shard in shards],
        bundle_shards_prefix=prefix + model_prefix(model.name, model.version) + "shards/" if shards else None,
        pipeline_key=prefix + keys["pipeline"] if pipeline else None,
        pipeline_sha256=pipeline.sha256 if pipeline else None,
        users_key=users_key,
        metadata_key=prefix + keys["metadata"],
        dataset_version=dataset_version,
    )
    models.put(record)
    return record
