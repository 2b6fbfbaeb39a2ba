"""The holdout of a segment audience: a random share of its users kept out of the upload.

A lift report compares the uploaded users with the held-out ones, so the two groups must look alike
before the ads run. The split is therefore **stratified by score**: users are ordered by score (best
first, ties by user id, so the order never depends on how the list was read), cut into consecutive
blocks of ``ceil(100 / percent)`` users, and within each block the holdout takes its share at random.
Each block gives ``floor(percent * end / 100) - floor(percent * start / 100)`` users (the cumulative
share, so the total is ``floor(n * percent / 100)`` exactly, whatever the block sizes). With 10 % that
is one user in every ten, so each score decile holds a tenth of the holdout.

The randomness is Python's ``random.Random`` (Mersenne Twister) seeded with the recorded ``seed``: the
same users, scores, share and seed give the same split, so anyone can check the split afterwards.
Plain Python, not numpy: every audience function imports this module, and only some ship numpy.
"""

from __future__ import annotations

import math
import random
import secrets
from array import array
from collections.abc import Sequence
from dataclasses import dataclass

DEFAULT_HOLDOUT_PERCENT = 10.0
MAX_HOLDOUT_PERCENT = 50.0
GROUP_UPLOADED = "uploaded"
GROUP_HOLDOUT = "holdout"


def new_seed() -> int:
    """A fresh seed (63 bits: it fits a signed 64-bit integer and JSON numbers read by any client)."""
    return secrets.randbits(63)


@dataclass(frozen=True)
class HoldoutSplit:
    """Which users are held out (``held_out[i]`` for ``user_ids[i]``, in the order given)."""

    held_out: list[bool]
    percent: float
    seed: int

    @property
    def holdout_count(self) -> int:
        return sum(self.held_out)

    @property
    def uploaded_count(self) -> int:
        return len(self.held_out) - self.holdout_count


def block_size(percent: float) -> int:
    """Users per score block: the fewest that hold at least one held-out user (10 % -> 10)."""
    return max(2, math.ceil(100.0 / percent - 1e-9))


def split_holdout(
    user_ids: Sequence[str], scores: Sequence[float], percent: float, seed: int
) -> HoldoutSplit:
    """Hold out ``percent`` % of the users (0 holds out nobody), stratified by score, from ``seed``.

    ``user_ids`` and ``scores`` are parallel; the result is in their order. Raises ``ValueError`` for a
    share outside [0, ``MAX_HOLDOUT_PERCENT``] or lists of different lengths."""
    if not math.isfinite(percent) or not 0.0 <= percent <= MAX_HOLDOUT_PERCENT:
        raise ValueError(f"holdout percent must be between 0 and {MAX_HOLDOUT_PERCENT:g}")
    n = len(user_ids)
    if len(scores) != n:
        raise ValueError("user_ids and scores must have the same length")
    held_out = [False] * n
    if n == 0 or percent == 0.0:
        return HoldoutSplit(held_out=held_out, percent=percent, seed=seed)
    # Best first, ties by user id; a missing (NaN) score counts as the lowest.
    order = sorted(range(n), key=lambda i: (-_score(scores[i]), user_ids[i]))
    for rank in held_ranks(n, percent, seed):
        held_out[order[rank]] = True
    return HoldoutSplit(held_out=held_out, percent=percent, seed=seed)


def held_ranks(n: int, percent: float, seed: int) -> array[int]:
    """The ranks (0 = best score, in the order ``split_holdout`` sorts by) of the ``n`` users that
    ``percent`` % held out from ``seed`` keeps out, block by block, as 64-bit integers: the same
    draws ``split_holdout`` makes, for a caller that holds its users sorted as columns (an engine
    table) rather than as a list. One draw per block of users, never one object per user. Raises
    ``ValueError`` for a share outside [0, ``MAX_HOLDOUT_PERCENT``]."""
    if not math.isfinite(percent) or not 0.0 <= percent <= MAX_HOLDOUT_PERCENT:
        raise ValueError(f"holdout percent must be between 0 and {MAX_HOLDOUT_PERCENT:g}")
    ranks: array[int] = array("q")
    if n == 0 or percent == 0.0:
        return ranks
    rng = random.Random(seed)
    size = block_size(percent)
    share = percent / 100.0
    for start in range(0, n, size):
        end = min(n, start + size)
        take = math.floor(share * end + 1e-9) - math.floor(share * start + 1e-9)
        ranks.extend(start + offset for offset in rng.sample(range(end - start), take))
    return ranks


def _score(value: float) -> float:
    return float(value) if math.isfinite(float(value)) else -math.inf
