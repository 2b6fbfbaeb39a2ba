"""Is a served model still fresh? Age and feature-drift rules, reported with every prediction.

Rules (thresholds come from :class:`FreshnessRules`, by default from ``shared.settings``):

* **Stale** when the model is older than ``model_stale_after_days`` (default 30): its view of who buys
  what is out of date, and callers are told so in ``model_info.freshness_status.is_stale``.
* **Retrain recommended** when the model is older than ``model_retrain_after_days`` (default 60), or
  when the population stability index (PSI) of any feature between the training-time reference and a
  recent sample exceeds ``drift_psi_threshold`` (default 0.2, the conventional "significant shift").

PSI is computed on the reference's stored quantile bins:
``PSI = sum((p_recent - p_ref) * ln(p_recent / p_ref))`` over bins, with proportions floored at
``1e-4`` so an empty bin does not make it infinite. Age uses whole elapsed time, not calendar days.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

import numpy as np
from numpy.typing import ArrayLike
from pydantic import BaseModel, ConfigDict, Field

from shared.settings import Settings

_MIN_PROPORTION = 1e-4
_DAY_SECONDS = 86_400.0


class FeatureDistribution(BaseModel):
    """A feature's training-time distribution: interior bin edges and the share of values per bin.

    Bin ``k`` holds values in ``(edges[k-1], edges[k]]``; the first and last bins are open-ended, so
    ``len(proportions) == len(edges) + 1``.
    """

    model_config = ConfigDict(frozen=True)

    edges: list[float]
    proportions: list[float]


class FreshnessRules(BaseModel):
    """Thresholds for :func:`freshness`."""

    model_config = ConfigDict(frozen=True)

    stale_after_days: float = Field(default=30, gt=0)
    retrain_after_days: float = Field(default=60, gt=0)
    psi_threshold: float = Field(default=0.2, gt=0)

    @classmethod
    def from_settings(cls, settings: Settings) -> FreshnessRules:
        """The rules configured for this deployment."""
        return cls(
            stale_after_days=settings.model_stale_after_days,
            retrain_after_days=settings.model_retrain_after_days,
            psi_threshold=settings.drift_psi_threshold,
        )


class FreshnessStatus(BaseModel):
    """The verdict, with one human-readable reason per rule that fired."""

    model_config = ConfigDict(frozen=True)

    is_stale: bool
    recommended_retrain: bool
    reasons: list[str]


def reference_distribution(values: ArrayLike, bins: int = 10) -> FeatureDistribution:
    """Quantile bins of ``values`` (a 1-D sample of one feature) and their proportions.

    Ties (e.g. a feature that is mostly 0) collapse duplicate edges, so there may be fewer bins.
    """
    sample = _finite(values)
    if sample.size == 0:
        return FeatureDistribution(edges=[], proportions=[1.0])
    quantiles = np.quantile(sample, np.linspace(0, 1, bins + 1)[1:-1])
    edges = np.unique(quantiles)
    return FeatureDistribution(edges=edges.tolist(), proportions=_proportions(sample, edges).tolist())


def population_stability_index(reference: FeatureDistribution, recent: ArrayLike) -> float:
    """PSI of a recent 1-D sample against ``reference`` (0 means identical; > 0.2 is a real shift)."""
    sample = _finite(recent)
    if sample.size == 0:
        return 0.0
    expected = np.maximum(np.asarray(reference.proportions), _MIN_PROPORTION)
    actual = np.maximum(_proportions(sample, np.asarray(reference.edges)), _MIN_PROPORTION)
    return float(np.sum((actual - expected) * np.log(actual / expected)))


def freshness(
    trained_at: datetime,
    now: datetime,
    reference_distributions: Mapping[str, FeatureDistribution],
    recent_feature_sample: Mapping[str, ArrayLike] | None,
    rules: FreshnessRules,
) -> FreshnessStatus:
    """Apply the module's rules to a model trained at ``trained_at``, as seen at ``now``.

    ``recent_feature_sample`` maps feature names to recent values (e.g. features of recent requests);
    features absent from either side are skipped. Both datetimes must be timezone-aware.
    """
    age_days = (now - trained_at).total_seconds() / _DAY_SECONDS
    reasons: list[str] = []
    is_stale = age_days > rules.stale_after_days
    if is_stale:
        reasons.append(f"model is {age_days:.0f} days old (stale after {rules.stale_after_days:g})")
    retrain = age_days > rules.retrain_after_days
    if retrain:
        reasons.append(f"model is older than {rules.retrain_after_days:g} days: retrain")
    for name, values in (recent_feature_sample or {}).items():
        reference = reference_distributions.get(name)
        if reference is None:
            continue
        psi = population_stability_index(reference, values)
        if psi > rules.psi_threshold:
            retrain = True
            reasons.append(f"feature {name} drifted (PSI {psi:.2f} > {rules.psi_threshold:g}): retrain")
    return FreshnessStatus(is_stale=is_stale, recommended_retrain=retrain, reasons=reasons)


def _finite(values: ArrayLike) -> np.ndarray:
    sample = np.asarray(values, dtype=np.float64).ravel()
    return sample[np.isfinite(sample)]


def _proportions(sample: np.ndarray, edges: np.ndarray) -> np.ndarray:
    # searchsorted(side="left") puts a value equal to an edge in the bin that edge closes: (e_{k-1}, e_k].
    counts = np.bincount(np.searchsorted(edges, sample, side="left"), minlength=edges.size + 1)
    return counts / sample.size
