"""Predictive segments on scored users: the rule, the cut, and the score histogram (numpy only).

A segment is the users a rule keeps from every training user's score for one product: the ``top_n``
users, the ``top_percent`` best, or everyone at or above a ``threshold``. Users are ranked by score,
best first, ties in user-id order (``np.argsort`` is stable on the id-sorted scores), so the same
scores always give the same segment.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from shared.ml.scoring import top_k
from shared.targeting.models import SegmentRule

HISTOGRAM_BINS = 20


@dataclass(frozen=True)
class Cut:
    """The kept users (indices into the scores, best first) and the score at the cut."""

    indices: NDArray[np.int64]
    cut_score: float | None


def select(scores: NDArray[np.float64], rule: SegmentRule) -> Cut:
    """The users ``rule`` keeps, best first. O(n) selection, then a sort of only the kept users."""
    n = scores.size
    if rule.rule == "top_n":
        kept = top_k(scores, min(int(rule.value), n))
    elif rule.rule == "top_percent":
        kept = top_k(scores, min(n, math.ceil(n * rule.value / 100)))
    else:
        above = np.flatnonzero(scores >= rule.value)
        kept = above[np.argsort(-scores[above], kind="stable")].astype(np.int64)
    return Cut(indices=kept, cut_score=float(scores[kept[-1]]) if kept.size else None)


@dataclass(frozen=True)
class Histogram:
    """Score bins (``edges`` has one more item than the counts) over all users and the segment."""

    edges: list[float]
    all_users: list[int]
    segment: list[int]


def histogram(scores: NDArray[np.float64], kept: NDArray[np.int64], probabilities: bool) -> Histogram:
    """Equal-width bins over [0, 1] for probabilities, else over the scores' range."""
    if probabilities or scores.size == 0:
        low, high = 0.0, 1.0
    else:
        low, high = float(scores.min()), float(scores.max())
        high = high if high > low else low + 1.0
    edges = np.linspace(low, high, HISTOGRAM_BINS + 1)
    all_counts, _ = np.histogram(scores, bins=edges)
    segment_counts, _ = np.histogram(scores[kept], bins=edges)
    return Histogram(
        edges=[round(float(e), 6) for e in edges],
        all_users=all_counts.astype(int).tolist(),
        segment=segment_counts.astype(int).tolist(),
    )
