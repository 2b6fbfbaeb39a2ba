"""A seed of new buyers only: a segment that leaves out the users who already bought the product
(issue 26, item 2)."""

from __future__ import annotations

import math

import numpy as np

from shared.ml.scoring import ScoringBundle
from tests.unit.targeting.test_preview_holdout import preview


def test_new_buyers_only_counts_the_users_who_never_bought_the_product(
    bundle: ScoringBundle,
) -> None:
    # Given a product some of the model's users bought
    never = int(np.count_nonzero(~bundle.bought_by("p00001")))
    assert 0 < never < bundle.user_count

    # When every user at or above the lowest score is previewed, with and without new buyers only
    everyone = preview(bundle, [True] * bundle.user_count, rule="threshold", value=-1.0, holdoutPercent=0)
    new_only = preview(
        bundle,
        [True] * bundle.user_count,
        rule="threshold",
        value=-1.0,
        holdoutPercent=0,
        excludePurchased=True,
    )

    # Then the segment of new buyers is the users who never bought it
    assert everyone.size == bundle.user_count
    assert new_only.size == never


def test_a_top_percentage_of_new_buyers_is_a_share_of_the_users_who_never_bought(
    bundle: ScoringBundle,
) -> None:
    # Given the users who never bought the product
    never = ~bundle.bought_by("p00001")
    scores = bundle.score_all_users("p00001").astype(np.float32)  # as segments compare them

    # When the best half of the new buyers is previewed
    shown = preview(bundle, [True] * bundle.user_count, rule="top_percent", value=50, excludePurchased=True)

    # Then it is half of them, cut at the score of the last one kept among them
    kept = math.ceil(int(never.sum()) * 0.5)
    assert shown.size == kept
    assert shown.cut_score == float(np.sort(scores[never])[::-1][kept - 1])
