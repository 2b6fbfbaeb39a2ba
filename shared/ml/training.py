"""Train purchase-likelihood and recommendation models with scikit-learn, on a time split.

Time split. With ``end`` the last order and ``H`` the holdout window (``holdout_days``):

* ``cutoff = end - H``. The **holdout** is what happened in ``[cutoff, end)``, predicted from the history
  before ``cutoff``. Metrics are computed there only, so they measure the future, as in production.
* The purchase model learns from features as of ``cutoff - H`` and labels in ``[cutoff - H, cutoff)``:
  the same question ("who buys what in the next H days?") one window earlier.
* The artifact served is the evaluated model; only the per-user and per-product state in the scoring
  bundle is refreshed to ``end``, so predictions use all the data and the metrics describe the model
  that is actually served. One exception, the usual refit after validation: the recommender's repeat
  model, once evaluated (and judged by the quality gate) as fitted at ``cutoff``, is fitted again as of
  ``end`` on the holdout's re-purchases and that fit is served (``_served_repeat_model``); the metrics
  describe the fit at ``cutoff``, which the ``pipeline.joblib`` artifact does not keep (its
  ``repeat_model_refitted`` says which fit they describe).

Training reads arrays (:class:`EncodedShop`, a dataset version's ``training.npz``), never one object
per order line; order lines are kept in time order so that every time window is a view.

The purchase model is trained in ``shared.ml.purchase_training``, the recommender in
``shared.ml.recommendation_training``; both read ``shared.ml.shop_arrays`` and give back
``shared.ml.trained``'s ``TrainedModel``.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from shared.ml import purchase_training
from shared.ml.datasets import ShopData
from shared.ml.purchase_training import PurchaseOracle, _train_purchase
from shared.ml.quality_gate import quality_gate
from shared.ml.recommendation_training import _train_recommendation
from shared.ml.shop_arrays import EncodedShop, split_shop
from shared.ml.trained import ModelType, Progress, TrainedModel, TrainingConfig


def baseline_shortfall(model_type: ModelType, metrics: dict[str, float]) -> str | None:
    """Why a model may not be made current, in words (what it lost to and by how much), or None when it
    beats the strongest simple method on its holdout (``shared.ml.quality_gate``)."""
    gate = quality_gate(model_type, metrics)
    return None if gate is None or gate.passed else gate.sentence()


def train_model(
    data: ShopData | EncodedShop,
    *,
    name: str,
    model_type: ModelType,
    config: TrainingConfig | None = None,
    oracle: PurchaseOracle | None = None,
    now: datetime | None = None,
    progress: Progress | None = None,
) -> TrainedModel:
    """Train a ``purchase`` or ``recommendation`` model on ``data``, records or arrays (see the module
    docstring).

    ``oracle`` (synthetic data only) adds ``oracle_roc_auc`` to the purchase metrics; ``now`` stamps
    ``trained_at`` and the version; ``progress`` is called with a short label as each stage starts.
    Raises ``ValidationFailed`` when the data is too small to split in time.
    """
    config = config or TrainingConfig()
    report = progress or (lambda _stage: None)
    trained_at = now or datetime.now(UTC)
    report("encode")
    shop = split_shop(data, config.holdout_days, trained_at.date())
    config = replace(config, holdout_days=shop.horizon_days)
    if model_type == "purchase":
        return _train_purchase(shop, name, config, oracle, trained_at, report)
    return _train_recommendation(shop, name, config, trained_at, report)


# The pipeline.joblib artifacts written before the purchase model moved to its own module
# name these classes here: unpickling an older one finds them.
ConstantProbability = purchase_training.ConstantProbability
TwoPartModel = purchase_training.TwoPartModel
