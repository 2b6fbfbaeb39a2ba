"""Usage headers parsed into a UsageSnapshot."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx

from shared.platform.usage import AdAccountUsage, AppUsage, BusinessUseCaseUsage, parse_usage

NOW = datetime(2026, 9, 1, tzinfo=UTC)


def test_all_three_headers_are_parsed() -> None:
    # Given
    headers = httpx.Headers(
        {
            "X-App-Usage": '{"call_count":28,"total_time":25,"total_cputime":25}',
            "X-Ad-Account-Usage": (
                '{"acc_id_util_pct":9.67,"reset_time_duration":100,"ads_api_access_tier":"x"}'
            ),
            "X-Business-Use-Case-Usage": (
                '{"42":[{"type":"custom_audience","call_count":97,"total_cputime":20,"total_time":20,'
                '"estimated_time_to_regain_access":3,"ads_api_access_tier":"development_access"}]}'
            ),
        }
    )
    # When
    usage = parse_usage(headers, NOW)
    # Then
    assert usage.captured_at == NOW
    assert usage.app == AppUsage(call_count=28, total_time=25, total_cputime=25)
    assert usage.ad_account == AdAccountUsage(
        acc_id_util_pct=9.67, reset_time_duration=100, ads_api_access_tier="x"
    )
    assert usage.business_use_cases == (
        BusinessUseCaseUsage(
            business_object_id="42",
            type="custom_audience",
            call_count=97,
            total_cputime=20,
            total_time=20,
            estimated_time_to_regain_access=3,
            ads_api_access_tier="development_access",
        ),
    )
    assert usage.max_utilisation_pct == 97
    assert usage.regain_access_minutes == 3


def test_no_headers_give_an_empty_snapshot() -> None:
    # Given / When
    usage = parse_usage(httpx.Headers(), NOW)
    # Then
    assert (usage.app, usage.ad_account, usage.business_use_cases) == (None, None, ())
    assert usage.max_utilisation_pct == 0
    assert usage.regain_access_minutes == 0


def test_a_malformed_header_is_ignored_not_fatal() -> None:
    # Given
    headers = httpx.Headers({"X-App-Usage": "not json", "X-Ad-Account-Usage": '{"acc_id_util_pct":12}'})
    # When
    usage = parse_usage(headers, NOW)
    # Then
    assert usage.app is None
    assert usage.max_utilisation_pct == 12


def test_the_snapshot_serialises_with_its_summary_figures_for_storage() -> None:
    # Given
    usage = parse_usage(httpx.Headers({"X-App-Usage": '{"call_count":50}'}), NOW)
    # When
    stored = usage.model_dump(mode="json")
    # Then
    assert stored["max_utilisation_pct"] == 50
    assert stored["regain_access_minutes"] == 0
    assert stored["captured_at"] == "2026-09-01T00:00:00Z"
