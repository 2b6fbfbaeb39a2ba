from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np

from shared.ml.freshness import (
    FreshnessRules,
    freshness,
    population_stability_index,
    reference_distribution,
)
from tests.unit.deployment import deployed_settings

TRAINED = datetime(2025, 1, 1, tzinfo=UTC)
RULES = FreshnessRules(stale_after_days=30, retrain_after_days=60, psi_threshold=0.2)
REFERENCE = {"spend": reference_distribution(np.random.default_rng(0).normal(50, 10, 5000))}


def test_a_recent_model_without_drift_is_fresh() -> None:
    # When a 10-day-old model is checked against a sample like its training data
    sample = {"spend": np.random.default_rng(1).normal(50, 10, 2000)}
    status = freshness(TRAINED, TRAINED + timedelta(days=10), REFERENCE, sample, RULES)

    # Then nothing is flagged
    assert (status.is_stale, status.recommended_retrain, status.reasons) == (False, False, [])


def test_a_model_older_than_the_stale_limit_is_stale_but_not_yet_due() -> None:
    # When checked after 31 days
    status = freshness(TRAINED, TRAINED + timedelta(days=31), REFERENCE, None, RULES)

    # Then it is stale without a retrain recommendation
    assert status.is_stale
    assert not status.recommended_retrain


def test_a_model_older_than_the_retrain_limit_should_be_retrained() -> None:
    # When checked after 61 days
    status = freshness(TRAINED, TRAINED + timedelta(days=61), REFERENCE, None, RULES)

    # Then both flags are set
    assert status.is_stale
    assert status.recommended_retrain


def test_feature_drift_recommends_a_retrain() -> None:
    # Given recent values shifted by one standard deviation
    sample = {"spend": np.random.default_rng(2).normal(60, 10, 2000)}

    # When a young model is checked
    status = freshness(TRAINED, TRAINED + timedelta(days=1), REFERENCE, sample, RULES)

    # Then drift alone asks for a retrain and names the feature
    assert status.recommended_retrain
    assert not status.is_stale
    assert "spend" in status.reasons[0]


def test_psi_is_near_zero_for_the_same_distribution_and_large_for_a_shift() -> None:
    # Given a reference of a mostly-zero count feature
    values = np.random.default_rng(3).poisson(0.5, 10_000)
    reference = reference_distribution(values)

    # Then the same distribution scores ~0 and a shifted one well above 0.2
    assert population_stability_index(reference, np.random.default_rng(4).poisson(0.5, 10_000)) < 0.01
    assert population_stability_index(reference, np.random.default_rng(5).poisson(2.0, 10_000)) > 0.2


def test_rules_come_from_settings() -> None:
    # Given settings with custom thresholds
    settings = deployed_settings(
        model_stale_after_days=7, model_retrain_after_days=14, drift_psi_threshold=0.1
    )

    # Then the rules follow them
    assert FreshnessRules.from_settings(settings) == FreshnessRules(
        stale_after_days=7, retrain_after_days=14, psi_threshold=0.1
    )
