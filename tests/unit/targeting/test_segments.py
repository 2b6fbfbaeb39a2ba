"""Predictive segments: each rule keeps exactly the users it names, best first, and the histogram
counts every scored user and the segment in the same bins."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError

from shared.targeting.models import SegmentRule
from shared.targeting.segments import histogram, select

SCORES = np.array([0.10, 0.90, 0.40, 0.90, 0.05, 0.70, 0.30, 0.55, 0.20, 0.65])


def rule(kind: str, value: float) -> SegmentRule:
    return SegmentRule.model_validate({"rule": kind, "value": value})


def test_top_n_keeps_the_n_best_ties_in_user_order() -> None:
    cut = select(SCORES, rule("top_n", 3))
    assert cut.indices.tolist() == [1, 3, 5]
    assert cut.cut_score == 0.70


def test_top_percent_rounds_up_to_whole_users() -> None:
    # 25 % of 10 users is 2.5: three users are kept
    cut = select(SCORES, rule("top_percent", 25))
    assert cut.indices.tolist() == [1, 3, 5]


def test_a_threshold_keeps_everyone_at_or_above_it() -> None:
    cut = select(SCORES, rule("threshold", 0.55))
    assert cut.indices.tolist() == [1, 3, 5, 9, 7]
    assert cut.cut_score == 0.55


def test_a_threshold_above_every_score_is_an_empty_segment() -> None:
    cut = select(SCORES, rule("threshold", 0.95))
    assert cut.indices.size == 0
    assert cut.cut_score is None


def test_top_n_beyond_the_users_keeps_them_all() -> None:
    assert select(SCORES, rule("top_n", 50)).indices.size == SCORES.size


def test_probability_histograms_bin_zero_to_one() -> None:
    cut = select(SCORES, rule("top_n", 2))
    bins = histogram(SCORES, cut.indices, probabilities=True)
    assert bins.edges[0] == 0.0
    assert bins.edges[-1] == 1.0
    assert sum(bins.all_users) == SCORES.size
    assert sum(bins.segment) == 2
    assert bins.segment[-2] == 2  # both 0.90 scores fall in [0.90, 0.95)


@pytest.mark.parametrize(
    ("kind", "value"),
    [
        ("top_n", 0),
        ("top_n", 2.5),
        ("top_percent", 0),
        ("top_percent", 101),
        ("threshold", float("nan")),
        # past what DynamoDB stores (the fuzzer's -1.44e135 was a 500 storing the audience)
        ("threshold", -1.4398162230593062e135),
        ("threshold", 1e10),
    ],
)
def test_a_value_that_does_not_fit_the_rule_is_refused(kind: str, value: float) -> None:
    with pytest.raises(ValidationError, match="value"):
        rule(kind, value)
