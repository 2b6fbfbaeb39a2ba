"""``POST /client/predict/{modelName}`` (docs/service-contract.md §2.2, §2.3, §4.1, §7.1).

Scoring runs on the numpy bundle only, so the predict function never imports scikit-learn. A call
is metered (and checked against the key's quota) only once the model and the user are known; a call
refused before that reads the key's day item, so a revoked key still gets 401 and a spent quota 429,
not the 404 of the lookup.

AWS calls: a warm container makes two per prediction, issued together so the request waits on one
round trip (``shared.repositories.prediction_path`` describes both writes). A cold container first
reads the key and model records and the bundle; the key's first prediction of a UTC day reads the key
record again to seed the day. Revoking a key marks its day item, so the next prediction is refused
whatever any container has cached.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Iterator
from concurrent.futures import Executor, Future
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from threading import Lock
from typing import Protocol

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator

from shared import deadline
from shared.auth.api_keys import REVOKED_KEY_MESSAGE, key_id_of, verify_key
from shared.errors import Conflict, NotFound, ServiceError, Unauthorized, ValidationFailed
from shared.ml.freshness import FreshnessRules, freshness
from shared.ml.scoring import Prediction, ScoringBundle, load_bundle, shard_of
from shared.predictions.usage import UsageOutcome, next_reset, quota_exceeded, utc_day
from shared.records.api_keys import StoredApiKey
from shared.records.models import ModelRecord
from shared.records.principals import ApiKeyPrincipal
from shared.records.usage import DayCount, DayStanding

RECOMMENDATIONS = 10
BUNDLE_CACHE_SIZE = 32  # shards of a few MB in memory: several models, or one big model's busiest shards
KEY_CACHE_SIZE = 1024
MODEL_CACHE_SIZE = 64


class PredictInput(BaseModel):
    """The ``input`` object: ``user_id``, optional ``product_id``, ``exclude_purchased`` (rank only
    products the user never bought), and any extra numeric features."""

    model_config = ConfigDict(extra="allow")

    user_id: str = Field(min_length=1, max_length=256)
    product_id: str | None = Field(default=None, max_length=256)
    exclude_purchased: bool = False

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
    principal: ApiKeyPrincipal


def warm_models(setting: str) -> list[tuple[str, str]]:
    """The ``PREDICT_WARM_MODELS`` setting ("org_id/model_name,...") as ``(org_id, model_name)``
    pairs; malformed items are skipped."""
    pairs = (item.strip().partition("/") for item in setting.split(","))
    return [(org, name) for org, _, name in pairs if org and name]


class KeyReader(Protocol):
    def get(self, key_id: str) -> StoredApiKey | None: ...


class DayMeter(Protocol):
    def count(self, key: ApiKeyPrincipal, model_name: str, day: date, now: datetime) -> DayCount: ...

    def seed_and_count(self, key: ApiKeyPrincipal, model_name: str, day: date, now: datetime) -> DayCount: ...

    def standing(self, key: ApiKeyPrincipal, day: date) -> DayStanding: ...


class ModelCounter(Protocol):
    def get(self, org_id: str, name: str) -> ModelRecord | None: ...

    def count(self, cached: ModelRecord, now: datetime, *, add: int = 1) -> ModelRecord | None: ...


class BlobReader(Protocol):
    def get(self, key: str) -> bytes: ...


class _Lru[K, V]:
    """A small thread-safe LRU map (records cached per container)."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._items: OrderedDict[K, V] = OrderedDict()
        self._lock = Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            if key not in self._items:
                return None
            self._items.move_to_end(key)
            return self._items[key]

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self._size:
                self._items.popitem(last=False)

    def pop(self, key: K) -> None:
        with self._lock:
            self._items.pop(key, None)


class BundleCache:
    """Scoring bundles kept in memory across invocations, keyed by S3 key and checksum, so a warm
    function reads S3 once per shard of a model version. Holds no AWS client, so it survives a
    SnapStart restore (``functions/predict/handler.py``) with what was loaded before the snapshot."""

    def __init__(self, size: int = BUNDLE_CACHE_SIZE) -> None:
        self._bundles: _Lru[tuple[str, str], ScoringBundle] = _Lru(size)

    def bundle_for(self, record: ModelRecord, user_id: str, blobs: BlobReader) -> ScoringBundle:
        """The bundle that scores ``user_id``: its shard of the serving layout (a model trained
        before shards existed: the whole bundle)."""
        if record.bundle_shards and record.bundle_shards_prefix:
            return self._shard(record, shard_of(user_id, len(record.bundle_shards)), blobs)
        return self._load((record.bundle_key, record.bundle_sha256), blobs)

    def whole(self, record: ModelRecord, blobs: BlobReader) -> ScoringBundle:
        """The whole bundle of ``record`` (every user, in one file)."""
        return self._load((record.bundle_key, record.bundle_sha256), blobs)

    def load_all(self, record: ModelRecord, blobs: BlobReader) -> int:
        """Load every shard of ``record`` (warm-up); returns how many bundles were loaded."""
        if not (record.bundle_shards and record.bundle_shards_prefix):
            self._load((record.bundle_key, record.bundle_sha256), blobs)
            return 1
        for shard in range(len(record.bundle_shards)):
            self._shard(record, shard, blobs)
        return len(record.bundle_shards)

    def _shard(self, record: ModelRecord, shard: int, blobs: BlobReader) -> ScoringBundle:
        return self._load(
            (f"{record.bundle_shards_prefix}{shard:04d}.npz", record.bundle_shards[shard]), blobs
        )

    def _load(self, key: tuple[str, str], blobs: BlobReader) -> ScoringBundle:
        bundle = self._bundles.get(key)
        if bundle is None:
            # A whole bundle at its shards' precision: it scores as the serving shards do.
            bundle = load_bundle(blobs.get(key[0]), key[1], at_shard_precision=True)
            self._bundles.put(key, bundle)
        return bundle


class WholeBundles:
    """The whole bundle of a model version, for scoring every user (targeting), cached per
    container, its state at the serving shards' precision (so a preview scores as the launch's shards
    do). Whole bundles are large (every user); keep few."""

    def __init__(self, blobs: BlobReader, size: int = 2) -> None:
        self._blobs = blobs
        self._cache = BundleCache(size)

    def bundle_for(self, record: ModelRecord) -> ScoringBundle:
        return self._cache.whole(record, self._blobs)

    def shards_of(self, record: ModelRecord) -> Iterator[ScoringBundle]:
        """Each serving shard of ``record`` (``record.bundle_shards``), read, checked against its
        SHA-256 and loaded in turn, none kept: a segment of millions of users scored shard by shard."""
        for shard, sha256 in enumerate(record.bundle_shards):
            yield load_bundle(self._blobs.get(f"{record.bundle_shards_prefix}{shard:04d}.npz"), sha256)


class CachedKeys:
    """API key records kept per container. A key's id, organization, hash, label and quota never
    change, so a cached record is as good as a fresh one for all of them; revocation, the one change,
    is checked on every prediction's write (``DayMeter``) and recorded here once seen."""

    def __init__(self, reader: KeyReader, size: int = KEY_CACHE_SIZE) -> None:
        self._reader = reader
        self._keys: _Lru[str, StoredApiKey] = _Lru(size)

    def get(self, key_id: str) -> StoredApiKey | None:
        stored = self._keys.get(key_id)
        if stored is None:
            stored = self._reader.get(key_id)
            if stored is not None:
                self._keys.put(key_id, stored)
        return stored

    def is_cached(self, key_id: str) -> bool:
        return self._keys.get(key_id) is not None

    def fresh(self, key_id: str) -> StoredApiKey | None:
        """The record read again (strongly consistent), replacing the cached one."""
        stored = self._reader.get(key_id)
        if stored is None:
            self._keys.pop(key_id)
        else:
            self._keys.put(key_id, stored)
        return stored

    def seen_revoked(self, key_id: str, now: datetime) -> None:
        stored = self._keys.get(key_id)
        if stored is not None and stored.revoked_at is None:
            self._keys.put(key_id, replace(stored, revoked_at=now))


@dataclass
class Predictor:
    """Scores a request and meters it with two DynamoDB writes issued together (warm containers):
    the key's day item (revocation, quota, the key's count) and the model record (its counters, on
    the cached version). The key and model records are read once per container."""

    keys: CachedKeys
    meter: DayMeter
    models: ModelCounter
    blobs: BlobReader
    bundles: BundleCache
    rules: FreshnessRules
    background: Executor
    _records: _Lru[tuple[str, str], ModelRecord] = field(default_factory=lambda: _Lru(MODEL_CACHE_SIZE))

    def predict(
        self, presented_key: str | None, model_name: str, request: PredictRequest, now: datetime
    ) -> PredictOutcome:
        """Authenticate ``presented_key``, score ``request`` with the organization's model
        ``model_name`` and count the call.

        Raises ``Unauthorized`` for a missing, unknown or revoked key, ``NotFound`` for an unknown
        model or user (the user message names the user and how many users the model knows),
        ``ValidationFailed`` for bad input, ``QuotaExceeded`` when the key's daily quota is spent
        (also for an unknown model or user: a spent quota refuses whatever is asked). A refused call
        is counted nowhere.
        """
        key_id = key_id_of(presented_key) if presented_key else None
        just_read = key_id is not None and not self.keys.is_cached(key_id)
        principal = verify_key(presented_key, self.keys)
        try:
            record = self._record(principal.org_id, model_name)
            predictions = self._score(record, request.input)
        except (NotFound, ValidationFailed) as failed:
            # Refused before it could be counted: a revoked key learns 401 and a spent quota 429
            # first (a revoked key learns nothing of the models and users; a request past the
            # quota is refused whatever it asks for); a bad feature is told before the quota.
            barred = self._barred(principal, now, just_read=just_read)
            if barred is not None and (isinstance(barred, Unauthorized) or isinstance(failed, NotFound)):
                raise barred from None
            raise
        # The model's count goes out beside the key's: the request waits on one round trip.
        model_write = self.background.submit(deadline.carry(self.models.count), record, now)
        try:
            usage = self._count_use(principal, model_name, now, just_read=just_read)
        except ServiceError:
            self._take_back(model_write, record, now)
            raise
        newer = self._model_write_result(model_write, principal.org_id, model_name)
        if newer is not None:
            # Retrained or drift-checked since this container cached it: answer with the record as
            # it is now (rescored when the version changed), counted on it.
            self._records.put((principal.org_id, model_name), newer)
            if newer.version != record.version:
                predictions = self._score(newer, request.input)
            record = newer
            if self.models.count(record, now) is not None:
                raise Conflict(
                    f"Model '{model_name}' is being replaced by a new version right now.",
                    remedy="Retry in a moment.",
                )
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
            principal=principal,
        )

    def warm_up(self, models: list[tuple[str, str]]) -> int:
        """Before a SnapStart snapshot: read each ``(org_id, model_name)``'s record, load all its
        shards and answer one prediction from them, so restored containers answer without S3 or a
        first-call cost. Unknown models are skipped. Returns how many bundles were loaded."""
        loaded = 0
        for org_id, model_name in models:
            record = self.models.get(org_id, model_name)
            if record is None:
                continue
            self._records.put((org_id, model_name), record)
            loaded += self.bundles.load_all(record, self.blobs)
            bundle = self.bundles.bundle_for(record, "", self.blobs)
            if bundle.user_count:
                [user] = bundle.user_ids_at(np.zeros(1, dtype=np.int64))
                self._score(record, PredictInput(user_id=user))
        return loaded

    def _record(self, org_id: str, model_name: str) -> ModelRecord:
        record = self._records.get((org_id, model_name))
        if record is None:
            record = self.models.get(org_id, model_name)
            if record is None:
                raise _model_not_found(model_name)
            self._records.put((org_id, model_name), record)
        return record

    def _count_use(
        self, principal: ApiKeyPrincipal, model_name: str, now: datetime, *, just_read: bool
    ) -> UsageOutcome:
        """Count the call on the key's day item. A key record read (strongly consistent) for this
        very call is fresh enough to seed the day with, which saves a refused write."""
        day = utc_day(now)
        if just_read:
            counted = self.meter.seed_and_count(principal, model_name, day, now)
        else:
            counted = self.meter.count(principal, model_name, day, now)
        if counted.unseeded:
            # The key's first prediction of the day: read the key again, seed the day with it.
            fresh = self.keys.fresh(principal.key_id)
            if fresh is None or fresh.revoked_at is not None:
                raise _revoked()
            counted = self.meter.seed_and_count(principal, model_name, day, now)
        if counted.revoked:
            self.keys.seen_revoked(principal.key_id, now)
            raise _revoked()
        if counted.counted is None:
            assert principal.daily_quota is not None  # only a limited count can be refused
            raise quota_exceeded(principal, now)
        quota = principal.daily_quota
        return UsageOutcome(
            predictions_today=counted.counted,
            remaining=None if quota is None else max(quota - counted.counted, 0),
            resets_at=next_reset(now),
        )

    def _barred(self, principal: ApiKeyPrincipal, now: datetime, *, just_read: bool) -> ServiceError | None:
        """Why the key may not predict now, for a request that failed before it was counted: revoked
        (401) or its day's quota spent (429); None when it may. One read of the key's day item, and
        of the key record when the day has no item yet and the cached record was read earlier (a
        revocation of an earlier day is on the record only). Counts nothing."""
        day = self.meter.standing(principal, utc_day(now))
        if day.revoked:
            self.keys.seen_revoked(principal.key_id, now)
            return _revoked()
        quota = day.daily_quota if day.seeded else principal.daily_quota
        if not day.seeded and not just_read:
            fresh = self.keys.fresh(principal.key_id)
            if fresh is None or fresh.revoked_at is not None:
                return _revoked()
        if quota is not None and day.predictions >= quota:
            return quota_exceeded(principal.model_copy(update={"daily_quota": quota}), now)
        return None

    def _model_write_result(
        self, write: Future[ModelRecord | None], org_id: str, model_name: str
    ) -> ModelRecord | None:
        try:
            return write.result()
        except LookupError:
            self._records.pop((org_id, model_name))
            raise _model_not_found(model_name) from None

    def _take_back(self, write: Future[ModelRecord | None], record: ModelRecord, now: datetime) -> None:
        """Undo the model count of a call the key's write refused (only if it was made)."""
        try:
            counted = write.result() is None
        except LookupError:
            return
        if counted:
            self.models.count(record, now, add=-1)

    def _score(self, record: ModelRecord, given: PredictInput) -> list[Prediction]:
        """The answer for ``given``; ``NotFound`` for a user the model was not trained on and
        ``ValidationFailed`` for bad extra features, both before anything is counted."""
        bundle = self.bundles.bundle_for(record, given.user_id, self.blobs)
        if not bundle.has_user(given.user_id):
            raise NotFound(
                f"User '{given.user_id}' was not in the training dataset of model '{record.name}' "
                f"({record.training_user_count} users available).",
                field="input.user_id",
                remedy="Use a user_id from the model's training users (GET /client/models).",
            )
        features = given.extra_features()
        if record.type == "purchase":
            if given.product_id:
                return [bundle.predict_purchase(given.user_id, given.product_id, features)]
            # No product: the user's most likely purchases (docs/service-contract.md §2.2).
            return bundle.predict_top_products(
                given.user_id, RECOMMENDATIONS, features, exclude_purchased=given.exclude_purchased
            )
        # Recommendation models rank items themselves and ignore product_id (docs/service-contract.md §2.2).
        return bundle.predict_recommendations(
            given.user_id, RECOMMENDATIONS, exclude_purchased=given.exclude_purchased
        )

    def _freshness(self, record: ModelRecord, now: datetime) -> FreshnessView:
        status = freshness(record.trained_at, now, {}, None, self.rules)
        drifted = record.max_feature_psi is not None and record.max_feature_psi > self.rules.psi_threshold
        return FreshnessView(
            is_stale=status.is_stale, recommended_retrain=status.recommended_retrain or drifted
        )


def _model_not_found(model_name: str) -> NotFound:
    return NotFound(
        f"Model '{model_name}' was not found.", remedy="List your models with GET /client/models."
    )


def _revoked() -> Unauthorized:
    return Unauthorized(REVOKED_KEY_MESSAGE, remedy="Use an active key, or create a new one.")
