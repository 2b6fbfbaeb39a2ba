"""What a training run is given and what it gives back: its settings (``TrainingConfig``), the model
(``TrainedModel``: metadata, metrics, drift reference) and its files (``Artifact``: the scikit-learn
pipeline, the scoring bundle and its serving shards).
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

import joblib
import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from shared.ml.features import FEATURE_NAMES, FeatureState
from shared.ml.freshness import FeatureDistribution
from shared.ml.scoring import SHARD_ROLE_PREFIX, shard_bundle
from shared.ml.shop_arrays import SplitShop, from_day

ModelType = Literal["purchase", "recommendation"]
# ``two_part``: the buyer part times the product part (see ``shared.ml.purchase_training``); ``logistic``: one
# logistic regression on the pairs, the model before the buyer part.
Algorithm = Literal["two_part", "logistic"]
Progress = Callable[[str], None]


@dataclass(frozen=True)
class TrainingConfig:
    """Knobs of a training run; the defaults suit shops of 1k-100k users.

    ``holdout_days`` is the prediction horizon H: a purchase model predicts "buys in the next H days"
    (``MIN_HORIZON_DAYS``..``MAX_HORIZON_DAYS``). None picks ``DEFAULT_HORIZON_DAYS``, or the longest
    safe horizon when the history is too short for it (see ``longest_safe_horizon``)."""

    holdout_days: int | None = None
    algorithm: Algorithm = "two_part"
    negatives_per_positive: int = 20
    # The buyer part learns from this many windows of the horizon's length, each ``buyer_window_step``
    # days (at least 7, a quarter of the horizon by default) before the next, on this many rows at most.
    buyer_windows: int = 6
    buyer_window_step: int | None = None
    max_buyer_rows: int = 1_000_000
    # Pairs the purchase model is fitted on at most (18 features: about 150 MB of float64).
    max_training_pairs: int = 1_000_000
    max_eval_pairs: int = 500_000
    # Buyers the co-occurrence of the taste factors is counted over at most (a uniform sample).
    max_taste_users: int = 200_000
    # (customer, product bought before) pairs the recommender's repeat model is fitted on at most (a
    # seeded draw of whole customers). At the design size (1M customers, 10M lines: 8.2-9.0M pairs
    # before each window) 3,000,000 keeps the training at 2,929 MB and 251 s with all three fits
    # (4,000,000: 3,310 MB, over the 3,072 MB target); The Complete Journey's windows (577,255 pairs at
    # most) are fitted whole, where 300,000 kept about half of its customers (docs/model-quality.md,
    # "A seventh round").
    max_repeat_pairs: int = 3_000_000
    # Re-purchases (and as many pairs not bought again) the repeat model needs to be fitted at all; with
    # fewer the count of the customer's own orders ranks them. On the browser tests' 300-customer shop
    # (168 re-purchases) the model, chosen on validation, lost to own history on the holdout (NDCG@10
    # 0.613 against 0.617) where the count alone beat it (0.620); the benchmark shops have 1,150-1,482.
    min_repeat_positives: int = 500
    svd_components: int = 32
    seed: int = 0


class Artifact(BaseModel):
    """A file produced by training; ``data`` is not part of the metadata (see ``model_dump``)."""

    model_config = ConfigDict(frozen=True)

    file_name: str
    sha256: str
    size_bytes: int
    data: bytes = Field(exclude=True, repr=False)

    @classmethod
    def of(cls, file_name: str, data: bytes) -> Artifact:
        """An artifact with its checksum computed from ``data``."""
        return cls(
            file_name=file_name, sha256=hashlib.sha256(data).hexdigest(), size_bytes=len(data), data=data
        )


class TrainedModel(BaseModel):
    """A trained model: its metadata, metrics, drift reference, and artifacts (``pipeline``, ``bundle``)."""

    model_config = ConfigDict(frozen=True)

    name: str
    model_type: ModelType
    version: str
    algorithm: str
    trained_at: datetime
    training_cutoff: datetime
    data_end: datetime
    holdout_days: int
    feature_names: list[str]
    training_user_ids: list[str]
    metrics: dict[str, float]
    feature_distributions: dict[str, FeatureDistribution]
    artifacts: dict[str, Artifact]


RECOMMENDATION_ALGORITHM = "repeat_taste_blend"


def id_arrays(shop: SplitShop) -> dict[str, np.ndarray]:
    """A scoring bundle's ids: the shop's sorted user and product ids (rows and columns of its arrays)."""
    return {"user_ids": shop.user_ids, "product_ids": shop.product_ids}


def bundle_header(
    shop: SplitShop,
    name: str,
    model_type: ModelType,
    algorithm: str,
    trained_at: datetime,
    state: FeatureState | None,
) -> dict[str, Any]:
    """A scoring bundle's header: which model it is and its version, the shop's categories, the purchase
    features' names, and with ``state`` the day its features are as of and the catalogue's median price."""
    header: dict[str, Any] = {
        "model_name": name,
        "model_type": model_type,
        "algorithm": algorithm,
        "version": _version(trained_at),
        "categories": shop.categories,
        "feature_names": list(FEATURE_NAMES) if model_type == "purchase" else [],
    }
    if state is not None:
        header |= {"as_of_day": state.as_of_day, "price_median": state.price_median}
    return header


def _version(trained_at: datetime) -> str:
    return trained_at.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")


def trained_model(
    shop: SplitShop,
    name: str,
    model_type: ModelType,
    config: TrainingConfig,
    trained_at: datetime,
    metrics: dict[str, float],
    distributions: dict[str, FeatureDistribution],
    pipeline: Any,
    bundle: bytes,
    feature_names: Sequence[str],
    *,
    shards: list[bytes] | None = None,
) -> TrainedModel:
    """The :class:`TrainedModel` of a training; ``shards`` (the serving layout of ``bundle``) are cut
    from it here unless the caller already has them."""
    shards = shard_bundle(bundle) if shards is None else shards
    buffer = io.BytesIO()
    joblib.dump(pipeline, buffer, compress=3)
    return TrainedModel(
        name=name,
        model_type=model_type,
        version=_version(trained_at),
        algorithm=config.algorithm if model_type == "purchase" else RECOMMENDATION_ALGORITHM,
        trained_at=trained_at,
        training_cutoff=from_day(shop.cutoff_day),
        data_end=from_day(shop.end_day),
        holdout_days=shop.horizon_days,
        feature_names=list(feature_names),
        training_user_ids=shop.user_ids.tolist(),
        metrics=metrics,
        feature_distributions=distributions,
        artifacts={
            "pipeline": Artifact.of("pipeline.joblib", buffer.getvalue()),
            "bundle": Artifact.of("bundle.npz", bundle),
            # The serving layout: compact shards by user, the predict function reads one.
            **{
                f"{SHARD_ROLE_PREFIX}{index:04d}": Artifact.of(f"shards/{index:04d}.npz", shard)
                for index, shard in enumerate(shards)
            },
        },
    )
