"""Feature drift of a trained model: its training-time feature distributions against newer data.

The reference is what training stored in ``feature_distributions`` (see ``shared.ml.training``):

* purchase models: quantile bins of every feature in ``FEATURE_NAMES`` over the evaluation pairs (all
  user x product pairs, or a uniform sample), as of the training cutoff;
* recommendation models: ``user_history_items`` (distinct products bought per user) at the data end.

:func:`measure_drift` computes the same sample with the same code on a newer upload, as of just after
its last order, and the PSI of each feature against its reference (``shared.ml.freshness``). The upload
is the shop's data as synced now, history included, like a training upload: features such as
``user_orders_total`` count the whole history, so an upload of only the new orders reads as drift.
It must hold orders after the model's ``data_end``; otherwise nothing new has been seen.
"""

from __future__ import annotations

from datetime import datetime

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict

from shared.errors import ValidationFailed
from shared.ml.datasets import ShopData
from shared.ml.features import FEATURE_NAMES, GROWS_WITH_TIME, MODEL_DEPENDENT
from shared.ml.freshness import FeatureDistribution, population_stability_index
from shared.ml.purchase_training import purchase_feature_sample
from shared.ml.recommendation_training import recommendation_features
from shared.ml.shop_arrays import EncodedShop, encode_shop, from_day, to_day
from shared.ml.trained import ModelType, TrainedModel

# As many pairs as training evaluates by default (TrainingConfig.max_eval_pairs).
DEFAULT_MAX_PAIRS = 500_000


class DriftReference(BaseModel):
    """What a drift check needs from a trained model; reads a model's ``metadata.json`` as is."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    model_type: ModelType
    data_end: datetime
    feature_distributions: dict[str, FeatureDistribution]

    @classmethod
    def of(cls, model: TrainedModel) -> DriftReference:
        """The reference of a model in memory (the training function reads the stored metadata)."""
        return cls(
            model_type=model.model_type,
            data_end=model.data_end,
            feature_distributions=model.feature_distributions,
        )


class DriftReport(BaseModel):
    """PSI of each feature with a stored reference, the largest, and what they were measured on."""

    model_config = ConfigDict(frozen=True)

    psi_by_feature: dict[str, float]
    max_psi: float
    sample_size: int  # pairs (purchase) or users (recommendation) in the recent sample
    new_order_lines: int  # order lines after the model's data end
    as_of: datetime  # the instant the recent features describe: just after the last order


def measure_drift(
    reference: DriftReference,
    recent: ShopData | EncodedShop,
    *,
    max_pairs: int = DEFAULT_MAX_PAIRS,
    seed: int = 0,
) -> DriftReport:
    """PSI of each of the model's features between ``reference`` and ``recent`` (see the module docstring).

    Purchase features are sampled from at most ``max_pairs`` user x product pairs (drawn with ``seed``).
    Raises ``ValidationFailed`` when ``recent`` has no order after the model's data end.
    """
    shop = recent if isinstance(recent, EncodedShop) else encode_shop(recent)
    data_end_day = to_day(reference.data_end)
    new_order_lines = int(np.count_nonzero(shop.history.day >= data_end_day))
    if new_order_lines == 0:
        raise ValidationFailed(
            f"The orders hold nothing after the model's data end ({reference.data_end:%Y-%m-%d %H:%M} UTC), "
            "so there is no new data to measure drift on.",
            field="orders",
            remedy="Upload the order history including the orders synced since the model was trained.",
        )
    as_of_day = shop.end_day
    sample: dict[str, NDArray[np.float64]]
    if reference.model_type == "purchase":
        rng = np.random.default_rng(seed)
        _, _, features = purchase_feature_sample(shop, as_of_day, rng, max_pairs)
        sample = {
            name: features[:, column]
            for column, name in enumerate(FEATURE_NAMES)
            if name not in GROWS_WITH_TIME | MODEL_DEPENDENT
        }
    else:
        sample = recommendation_features(shop, as_of_day)
    psi = {
        name: population_stability_index(reference.feature_distributions[name], values)
        for name, values in sample.items()
        if name in reference.feature_distributions
    }
    return DriftReport(
        psi_by_feature=psi,
        max_psi=max(psi.values(), default=0.0),
        sample_size=len(next(iter(sample.values()))),
        new_order_lines=new_order_lines,
        as_of=from_day(as_of_day),
    )
