"""Each organization may start at most N of an expensive action (targeting preview, retrain,
activation) per window; past it the action is refused with when to try again, in words a marketer
understands, and nothing is counted (issue 25, item 4)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from shared.limits.actions import ActionLimit, ActionLimited, LimitedAction, OrgActionLimits
from shared.repositories.action_counts import DynamoActionCounts
from tests.unit.moto_aws import offline_aws, table

# 10:00:00 UTC: a window of an hour starts here, a window of a minute too.
TEN = datetime(2026, 11, 28, 10, 0, 0, tzinfo=UTC)
LIMITS: dict[LimitedAction, ActionLimit] = {
    "targeting_preview": ActionLimit(per_window=3, window_seconds=60),
    "retrain": ActionLimit(per_window=1, window_seconds=3600),
    "activation": ActionLimit(per_window=2, window_seconds=3600),
}


class Clock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def counts(monkeypatch: pytest.MonkeyPatch) -> Iterator[DynamoActionCounts]:
    with offline_aws(monkeypatch):
        yield DynamoActionCounts(table())


def limits_at(counts: DynamoActionCounts, now: datetime) -> tuple[OrgActionLimits, Clock]:
    clock = Clock(now)
    return OrgActionLimits(counts=counts, limits=LIMITS, clock=clock), clock


def test_an_organization_starts_up_to_its_limit_then_is_told_when_it_can_start_another(
    counts: DynamoActionCounts,
) -> None:
    # Given an organization limited to 3 previews a minute, 15 seconds into the minute
    limits, _ = limits_at(counts, TEN + timedelta(seconds=15))
    for _ in range(3):
        limits.spend("org-b", "targeting_preview")
    # When it asks for a fourth
    with pytest.raises(ActionLimited) as refused:
        limits.spend("org-b", "targeting_preview")
    # Then it is a 429 that says what was limited and when to retry: the 45 s left in the minute
    assert refused.value.status == 429
    assert refused.value.retry_after_seconds == 45
    assert refused.value.message == (
        "Your organization has started 3 targeting previews in the last minute, the most allowed. "
        "You can start another targeting preview in 45 seconds."
    )
    assert refused.value.remedy is not None
    assert "Wait 45 seconds" in refused.value.remedy
    assert refused.value.details == {"action": "targeting_preview", "limit": 3, "windowSeconds": 60}


def test_the_next_window_starts_with_a_full_allowance(counts: DynamoActionCounts) -> None:
    # Given an organization that used its one retrain of the hour
    limits, clock = limits_at(counts, TEN + timedelta(minutes=59))
    limits.spend("org-b", "retrain")
    with pytest.raises(ActionLimited) as refused:
        limits.spend("org-b", "retrain")
    assert refused.value.retry_after_seconds == 60
    assert "in 60 seconds" in refused.value.message
    # When the next hour starts
    clock.now = TEN + timedelta(hours=1)
    # Then it may retrain again
    limits.spend("org-b", "retrain")


def test_a_wait_of_minutes_is_told_in_minutes(counts: DynamoActionCounts) -> None:
    # Given an organization that used its activations 10 minutes into the hour
    limits, _ = limits_at(counts, TEN + timedelta(minutes=10))
    limits.spend("org-b", "activation")
    limits.spend("org-b", "activation")
    # When it starts another
    with pytest.raises(ActionLimited) as refused:
        limits.spend("org-b", "activation")
    # Then it is told the 50 minutes left, and Retry-After has the seconds
    assert refused.value.retry_after_seconds == 3000
    assert refused.value.message.endswith("You can start another audience activation in 50 minutes.")
    assert "2 audience activations in the last hour" in refused.value.message


def test_one_organizations_burst_leaves_another_organizations_allowance_whole(
    counts: DynamoActionCounts,
) -> None:
    # Given organization B spent its previews
    limits, _ = limits_at(counts, TEN)
    for _ in range(3):
        limits.spend("org-b", "targeting_preview")
    with pytest.raises(ActionLimited):
        limits.spend("org-b", "targeting_preview")
    # Then organization A still has all of its own, and B's other actions are untouched
    for _ in range(3):
        limits.spend("org-a", "targeting_preview")
    limits.spend("org-b", "retrain")


def test_a_refused_request_is_not_counted(counts: DynamoActionCounts) -> None:
    # Given an organization refused many times after its limit
    limits, _ = limits_at(counts, TEN)
    for _ in range(3):
        limits.spend("org-b", "targeting_preview")
    for _ in range(5):
        with pytest.raises(ActionLimited):
            limits.spend("org-b", "targeting_preview")
    # Then the window holds exactly the limit, and the item says when it may be forgotten (TTL)
    item = counts._table.get_item(
        Key={"pk": "ORG#org-b", "sk": f"LIMIT#targeting_preview#{int(TEN.timestamp()) // 60}"}
    )["Item"]
    assert item["used"] == 3
    assert item["expires_at"] == int(TEN.timestamp()) + 120


class CountedCalls:
    """The DynamoDB counts, with the calls made to them counted."""

    def __init__(self, counts: DynamoActionCounts) -> None:
        self.counts = counts
        self.calls = 0

    def spend(self, org_id: str, action: str, window: int, limit: int, expires_at: int) -> bool:
        self.calls += 1
        return self.counts.spend(org_id, action, window, limit, expires_at)


def test_a_flood_of_refused_requests_costs_no_write_until_the_window_ends(counts: DynamoActionCounts) -> None:
    # Given an organization refused its fourth preview of the minute
    calls = CountedCalls(counts)
    clock = Clock(TEN)
    limits = OrgActionLimits(counts=calls, limits=LIMITS, clock=clock)
    for _ in range(3):
        limits.spend("org-b", "targeting_preview")
    with pytest.raises(ActionLimited):
        limits.spend("org-b", "targeting_preview")
    assert calls.calls == 4
    # When it sends a hundred more in the same minute
    for _ in range(100):
        with pytest.raises(ActionLimited) as refused:
            limits.spend("org-b", "targeting_preview")
    # Then each is refused with the same wait, and none reached the table
    assert refused.value.retry_after_seconds == 60
    assert calls.calls == 4
    # And another organization, and the next minute, are asked for again
    limits.spend("org-a", "targeting_preview")
    clock.now = TEN + timedelta(minutes=1)
    limits.spend("org-b", "targeting_preview")
    assert calls.calls == 6
