"""The holdout of a segment audience: its size, its stratification by score, its reproducibility."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest

from shared.audiences.holdout import block_size, split_holdout
from shared.audiences.identifiers import AudienceUser
from shared.audiences.snapshot import SNAPSHOT_COLUMNS, iter_snapshot_csv


def _segment(n: int, seed: int = 3) -> tuple[list[str], np.ndarray]:
    rng = np.random.default_rng(seed)
    return [f"u{i:05d}" for i in range(n)], rng.beta(1.2, 6.0, size=n)


@pytest.mark.parametrize(
    ("n", "percent", "held"), [(1000, 10, 100), (1003, 10, 100), (999, 25, 249), (7, 10, 0)]
)
def test_the_holdout_is_the_share_of_the_users_rounded_down(n: int, percent: float, held: int) -> None:
    # Given a segment of n users
    ids, scores = _segment(n)

    # When percent of it is held out
    split = split_holdout(ids, scores.tolist(), percent, seed=42)

    # Then exactly floor(n * percent / 100) are held out, the rest uploaded
    assert split.holdout_count == held
    assert split.uploaded_count == n - held
    assert len(split.held_out) == n


def test_zero_percent_holds_out_nobody() -> None:
    ids, scores = _segment(500)
    split = split_holdout(ids, scores.tolist(), 0, seed=1)
    assert split.holdout_count == 0
    assert split.uploaded_count == 500


def test_every_block_of_ten_by_score_gives_one_user_to_a_ten_percent_holdout() -> None:
    # Given 1000 users, and their order by score (best first)
    ids, scores = _segment(1000)
    order = np.argsort(-scores, kind="stable")

    # When 10 % is held out
    split = split_holdout(ids, scores.tolist(), 10, seed=7)

    # Then each run of ten users in score order holds exactly one held-out user
    per_block = np.array(split.held_out)[order].reshape(100, 10).sum(axis=1)
    assert block_size(10) == 10
    assert per_block.tolist() == [1] * 100


def test_both_groups_score_distributions_are_alike() -> None:
    # Given a skewed score distribution
    ids, scores = _segment(20_000, seed=5)

    # When 10 % is held out
    split = split_holdout(ids, scores.tolist(), 10, seed=11)
    mask = np.array(split.held_out)
    held, uploaded = scores[mask], scores[~mask]

    # Then the groups' deciles differ by at most one block's width of score, and their means by
    # far less than a simple random split would (its standard error is about std / sqrt(2000))
    deciles = np.linspace(0.1, 0.9, 9)
    gaps = np.abs(np.quantile(held, deciles) - np.quantile(uploaded, deciles))
    assert gaps.max() < 0.01
    assert abs(held.mean() - uploaded.mean()) < 0.2 * scores.std() / np.sqrt(held.size)


def test_the_same_seed_gives_the_same_split_whatever_the_order_of_the_users() -> None:
    # Given a segment, and the same segment listed in another order
    ids, scores = _segment(3000)
    shuffled = np.random.default_rng(0).permutation(3000)

    # When both are split with the same seed, and once with another seed
    first = split_holdout(ids, scores.tolist(), 10, seed=2026)
    again = split_holdout([ids[i] for i in shuffled], scores[shuffled].tolist(), 10, seed=2026)
    other = split_holdout(ids, scores.tolist(), 10, seed=2027)

    # Then the seed reproduces the same held-out users; another seed picks others
    held_first = {ids[i] for i in np.flatnonzero(first.held_out)}
    held_again = {ids[shuffled[i]] for i in np.flatnonzero(again.held_out)}
    held_other = {ids[i] for i in np.flatnonzero(other.held_out)}
    assert held_first == held_again
    assert held_first != held_other
    assert first.seed == 2026


@pytest.mark.parametrize("percent", [-1, 50.5, float("nan")])
def test_a_share_outside_zero_to_fifty_percent_is_refused(percent: float) -> None:
    ids, scores = _segment(10)
    with pytest.raises(ValueError, match="holdout percent"):
        split_holdout(ids, scores.tolist(), percent, seed=1)


def test_the_snapshot_marks_each_users_group() -> None:
    # Given two users, one held out
    users = [
        AudienceUser(user_id="u1", email="a@example.com", score=0.9),
        AudienceUser(user_id="u2", score=0.1),
    ]

    # When the snapshot is written with their groups
    data = b"".join(iter_snapshot_csv(users, groups=["uploaded", "holdout"]))

    # Then the group column says which is which
    rows = list(csv.reader(io.StringIO(data.decode("utf-8-sig"))))
    assert rows[0] == [*SNAPSHOT_COLUMNS, "group"]
    assert [row[0] for row in rows[1:]] == ["u1", "u2"]
    assert [row[-1] for row in rows[1:]] == ["uploaded", "holdout"]
