"""``POST /client/predict/{modelName}`` (docs/service-contract.md §2.2, §2.3, §4.1, §7.1).

Scoring runs on the numpy bundle only, so the predict function never imports scikit-learn. A call
is metered (and checked against the key's quota) only once the model and the user are known, then
the model's own counters are incremented atomically.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime
from threading import Lock
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field, field_validator

from shared.errors import NotFound, ValidationFailed
from shared.ml.freshness import FreshnessRules, freshness
from shared.ml.scoring import Prediction, ScoringBundle, load_bundle
from shared.predictions.usage import (
    ModelCounter,
    UsageCounter,
    record_model_prediction,
    record_prediction_usage,
)
from shared.records.models import ModelRecord
from shared.records.principals import ApiKeyPrincipal

RECOMMENDATIONS = 10
BUNDLE_CACHE_SIZE = 8


class PredictInput(BaseModel):
    """The ``input`` object: ``user_id``, optional ``product_id``, and any extra numeric features."""

    model_config = ConfigDict(extra="allow")

    user_id: str = Field(min_length=1, max_length=256)
    product_id: str | None = Field(default=None, max_length=256)

    @field_validator("user_id", "product_id", mode="before")
    @classmethod
    def _ids_as_text(cls, value: object) -> object:
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value

    def extra_features(self) -> dict[str, float]:
        """Extra keys as numbers; a non-numeric value is an error naming its field."""
        features: dict[str, float] = {}
        for name, value in (self.model_extra or {}).items():
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                raise ValidationFailed(
                    f"input.{name}: additional features must be finite numbers.",
                    field=f"input.{name}",
                    remedy="Send a number, or leave the feature out to use its default.",
                )
            features[name] = float(value)
        return features


class PredictRequest(BaseModel):
    input: PredictInput


class PredictionItem(BaseModel):
    product_id: str
    score: float
    reason: str


class FreshnessView(BaseModel):
    is_stale: bool
    recommended_retrain: bool


class ModelInfo(BaseModel):
    model_name: str
    freshness_status: FreshnessView
    api_key_prefix: str


class PredictResponse(BaseModel):
    success: bool = True
    predictions: list[PredictionItem]
    model_info: ModelInfo


@dataclass(frozen=True)
class PredictOutcome:
    response: PredictResponse
    headers: dict[str, str]


class ModelLookup(ModelCounter, Protocol):
    def get(self, org_id: str, name: str) -> ModelRecord | None: ...


class BlobReader(Protocol):
    def get(self, key: str) -> bytes: ...


class BundleCache:
    """Scoring bundles kept in memory across invocations, keyed by S3 key and checksum, so a warm
    function reads S3 once per model version."""

    def __init__(self, blobs: BlobReader, size: int = BUNDLE_CACHE_SIZE) -> None:
        self._blobs = blobs
        self._size = size
        self._bundles: OrderedDict[tuple[str, str], ScoringBundle] = OrderedDict()
        self._lock = Lock()

    def bundle_for(self, record: ModelRecord) -> ScoringBundle:
        key = (record.bundle_key, record.bundle_sha256)
        with self._lock:
            if key in self._bundles:
                self._bundles.move_to_end(key)
                return self._bundles[key]
        bundle = load_bundle(self._blobs.get(record.bundle_key), record.bundle_sha256)
        with self._lock:
            self._bundles[key] = bundle
            while len(self._bundles) > self._size:
                self._bundles.popitem(last=False)
        return bundle


@dataclass
class Predictor:
    models: ModelLookup
    usage: UsageCounter
    bundles: BundleCache
    rules: FreshnessRules

    def predict(
        self, principal: ApiKeyPrincipal, model_name: str, request: PredictRequest, now: datetime
    ) -> PredictOutcome:
        """Score ``request`` with the organization's model ``model_name``.

        Raises ``NotFound`` for an unknown model or user (the user message names the user and how
        many users the model knows), ``ValidationFailed`` for bad input, ``QuotaExceeded`` when the
        key's daily quota is spent.
        """
        record = self.models.get(principal.org_id, model_name)
        if record is None:
            raise NotFound(
                f"Model '{model_name}' was not found.", remedy="List your models with GET /client/models."
            )
        bundle = self.bundles.bundle_for(record)
        user_id = request.input.user_id
        if not bundle.has_user(user_id):
            raise NotFound(
                f"User '{user_id}' was not in the training dataset of model '{model_name}' "
                f"({bundle.user_count} users available).",
                field="input.user_id",
                remedy="Use a user_id from the model's training users (GET /client/models).",
            )
        features = request.input.extra_features()
        if record.type == "purchase" and not request.input.product_id:
            raise ValidationFailed(
                "input.product_id is required by purchase-likelihood models.",
                field="input.product_id",
                remedy="Send the product to score, or use a recommendation model for ranked products.",
            )
        usage = record_prediction_usage(principal, model_name, now, usage=self.usage)
        predictions = self._score(bundle, record, request.input, features)
        record_model_prediction(principal, model_name, now, models=self.models)
        return PredictOutcome(
            response=PredictResponse(
                predictions=[
                    PredictionItem(product_id=p.product_id, score=p.score, reason=p.reason)
                    for p in predictions
                ],
                model_info=ModelInfo(
                    model_name=model_name,
                    freshness_status=self._freshness(record, now),
                    api_key_prefix=principal.prefix,
                ),
            ),
            headers=usage.headers(),
        )

    def _score(
        self, bundle: ScoringBundle, record: ModelRecord, given: PredictInput, features: dict[str, float]
    ) -> list[Prediction]:
        if record.type == "purchase":
            assert given.product_id is not None
            return [bundle.predict_purchase(given.user_id, given.product_id, features)]
        # Recommendation models rank items themselves and ignore product_id (docs/service-contract.md §2.2).
        return bundle.predict_recommendations(given.user_id, RECOMMENDATIONS)

    def _freshness(self, record: ModelRecord, now: datetime) -> FreshnessView:
        status = freshness(record.trained_at, now, {}, None, self.rules)
        drifted = record.max_feature_psi is not None and record.max_feature_psi > self.rules.psi_threshold
        return FreshnessView(
            is_stale=status.is_stale, recommended_retrain=status.recommended_retrain or drifted
        )
