"""Usage metering: counting per key, model and UTC day, daily quotas, and the usage report."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from shared.auth.api_keys import issue_key
from shared.errors import QuotaExceeded, ValidationFailed
from shared.predictions.usage import (
    USAGE_REMAINING_HEADER,
    record_model_prediction,
    record_prediction_usage,
    report_period,
    usage_report,
)
from shared.records.api_keys import StoredApiKey
from shared.records.principals import ApiKeyPrincipal
from tests.unit.memory_usage import MemoryUsage

NOW = datetime(2026, 11, 20, 15, 30, tzinfo=UTC)
TODAY = date(2026, 11, 20)


class MemoryKeys:
    def __init__(self, *keys: StoredApiKey) -> None:
        self.keys = list(keys)

    def list_for_org(self, org_id: str) -> list[StoredApiKey]:
        return [k for k in self.keys if k.org_id == org_id]


class ModelCounts:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str, datetime]] = []

    def record_prediction(self, org_id: str, name: str, now: datetime) -> int:
        self.calls.append((org_id, name, now))
        return len(self.calls)


def principal_of(key: StoredApiKey) -> ApiKeyPrincipal:
    return ApiKeyPrincipal(
        org_id=key.org_id, key_id=key.key_id, prefix=key.prefix, label=key.label, daily_quota=key.daily_quota
    )


def key(org_id: str = "org-1", label: str = "backend", daily_quota: int | None = None) -> StoredApiKey:
    return issue_key(org_id, label, NOW, daily_quota=daily_quota).stored


def test_a_key_without_quota_is_counted_and_reports_no_remaining() -> None:
    # Given
    usage = MemoryUsage()
    caller = principal_of(key())
    # When
    outcome = record_prediction_usage(caller, "purchase", NOW, usage=usage)
    # Then
    assert outcome.predictions_today == 1
    assert outcome.remaining is None
    assert outcome.headers() == {}


def test_a_key_with_quota_reports_what_is_left_in_the_header() -> None:
    # Given
    usage = MemoryUsage()
    caller = principal_of(key(daily_quota=3))
    # When
    record_prediction_usage(caller, "purchase", NOW, usage=usage)
    outcome = record_prediction_usage(caller, "purchase", NOW, usage=usage)
    # Then
    assert outcome.remaining == 1
    assert outcome.headers() == {USAGE_REMAINING_HEADER: "1"}


def test_a_spent_quota_raises_quota_exceeded_saying_when_it_resets_and_counts_nothing() -> None:
    # Given: a quota of 2, both used
    usage = MemoryUsage()
    caller = principal_of(key(daily_quota=2))
    for _ in range(2):
        record_prediction_usage(caller, "purchase", NOW, usage=usage)
    # When
    with pytest.raises(QuotaExceeded) as raised:
        record_prediction_usage(caller, "purchase", NOW, usage=usage)
    # Then
    error = raised.value
    assert error.status == 429
    assert "daily quota of 2 predictions" in error.message
    assert caller.prefix in error.message
    assert "2026-11-21T00:00:00Z" in error.message
    assert error.remedy
    assert usage.days_for_key(caller.org_id, caller.key_id)[0].predictions == 2
    # And: the 429 says when to retry, as every other 429 of the service does (Retry-After): the
    # 8 h 30 min from 15:30 to the reset at midnight UTC (there was no Retry-After)
    assert error.retry_after_seconds == 8.5 * 3600
    # And: the usage header every answer to a key with a quota carries (the 429 had none)
    assert error.headers == {USAGE_REMAINING_HEADER: "0"}


def test_the_quota_starts_again_on_the_next_utc_day() -> None:
    # Given: yesterday's quota spent just before midnight UTC
    usage = MemoryUsage()
    caller = principal_of(key(daily_quota=1))
    record_prediction_usage(caller, "purchase", datetime(2026, 11, 19, 23, 59, 59, tzinfo=UTC), usage=usage)
    # When
    outcome = record_prediction_usage(
        caller, "purchase", datetime(2026, 11, 20, 0, 0, tzinfo=UTC), usage=usage
    )
    # Then
    assert (outcome.predictions_today, outcome.remaining) == (1, 0)


def test_the_day_is_the_utc_day_whatever_the_callers_time_zone() -> None:
    # Given: 01:00 on the 21st in UTC+2 is still the 20th in UTC
    from datetime import timedelta, timezone

    usage = MemoryUsage()
    caller = principal_of(key())
    local_time = datetime(2026, 11, 21, 1, 0, tzinfo=timezone(timedelta(hours=2)))
    # When
    outcome = record_prediction_usage(caller, "purchase", local_time, usage=usage)
    # Then
    assert usage.days_for_key(caller.org_id, caller.key_id)[0].day == date(2026, 11, 20)
    assert outcome.resets_at == datetime(2026, 11, 21, tzinfo=UTC)


def test_the_model_counter_is_updated_for_the_callers_organization() -> None:
    # Given
    models = ModelCounts()
    caller = principal_of(key(org_id="org-7"))
    # When
    total = record_model_prediction(caller, "purchase", NOW, models=models)
    # Then
    assert total == 1
    assert models.calls == [("org-7", "purchase", NOW)]


def test_the_report_period_defaults_to_the_30_days_ending_today() -> None:
    assert report_period(None, None, TODAY) == (date(2026, 10, 22), TODAY)


def test_a_report_ending_before_it_starts_names_the_to_field() -> None:
    with pytest.raises(ValidationFailed) as raised:
        report_period(date(2026, 11, 2), date(2026, 11, 1), TODAY)
    assert raised.value.field == "to"
    assert "before" in raised.value.message


def test_a_report_of_92_days_is_allowed_and_93_is_refused() -> None:
    # Then
    assert report_period(date(2026, 1, 1), date(2026, 4, 2), TODAY) == (date(2026, 1, 1), date(2026, 4, 2))
    with pytest.raises(ValidationFailed, match="at most 92 days") as raised:
        report_period(date(2026, 1, 1), date(2026, 4, 3), TODAY)
    assert raised.value.field == "to"


def test_a_too_long_report_given_only_from_names_the_from_field() -> None:
    with pytest.raises(ValidationFailed) as raised:
        report_period(date(2026, 1, 1), None, TODAY)
    assert raised.value.field == "from"


def test_the_report_has_a_row_per_day_key_and_model_with_totals() -> None:
    # Given: two keys of org-1 used on two days, and another organization's key
    backend, batch, foreign = key(label="backend"), key(label="batch"), key(org_id="org-2")
    usage = MemoryUsage()
    for when, caller, model in [
        (datetime(2026, 11, 18, 9, tzinfo=UTC), backend, "purchase"),
        (datetime(2026, 11, 18, 10, tzinfo=UTC), backend, "purchase"),
        (datetime(2026, 11, 18, 11, tzinfo=UTC), backend, "recommend"),
        (datetime(2026, 11, 19, 9, tzinfo=UTC), batch, "purchase"),
        (datetime(2026, 11, 19, 9, tzinfo=UTC), foreign, "purchase"),
    ]:
        record_prediction_usage(principal_of(caller), model, when, usage=usage)
    # When
    report = usage_report(
        "org-1",
        start=date(2026, 11, 1),
        end=TODAY,
        model=None,
        today=TODAY,
        keys=MemoryKeys(backend, batch, foreign),
        usage=usage,
    )
    # Then
    assert [(r.day.day, r.label, r.model, r.predictions) for r in report.rows] == [
        (18, "backend", "purchase", 2),
        (18, "backend", "recommend", 1),
        (19, "batch", "purchase", 1),
    ]
    assert report.totals.predictions == 4
    assert report.totals.by_key == {backend.key_id: 3, batch.key_id: 1}
    assert report.totals.by_model == {"purchase": 3, "recommend": 1}


def test_the_report_can_be_limited_to_one_model_and_to_the_period() -> None:
    # Given
    backend = key()
    usage = MemoryUsage()
    for when, model in [
        (datetime(2026, 11, 10, tzinfo=UTC), "purchase"),
        (datetime(2026, 11, 18, tzinfo=UTC), "purchase"),
        (datetime(2026, 11, 18, tzinfo=UTC), "recommend"),
    ]:
        record_prediction_usage(principal_of(backend), model, when, usage=usage)
    # When
    report = usage_report(
        "org-1",
        start=date(2026, 11, 15),
        end=TODAY,
        model="purchase",
        today=TODAY,
        keys=MemoryKeys(backend),
        usage=usage,
    )
    # Then
    assert [(r.day, r.model, r.predictions) for r in report.rows] == [(date(2026, 11, 18), "purchase", 1)]
    assert report.totals.by_model == {"purchase": 1}


def test_the_report_serializes_with_the_dashboards_field_names() -> None:
    # Given
    backend = key()
    usage = MemoryUsage()
    record_prediction_usage(principal_of(backend), "purchase", NOW, usage=usage)
    # When
    body = usage_report(
        "org-1", start=TODAY, end=TODAY, model=None, today=TODAY, keys=MemoryKeys(backend), usage=usage
    ).model_dump(mode="json", by_alias=True)
    # Then
    assert body["from"] == body["to"] == "2026-11-20"
    assert set(body["rows"][0]) == {"date", "keyId", "prefix", "label", "model", "predictions"}
    assert set(body["totals"]) == {"predictions", "byKey", "byModel"}
