"""What is checked on each event before its batch leaves (docs/platform-notes.md §11.2-§11.6)."""

from __future__ import annotations

from typing import Any

import pytest

from shared.audiences.identifiers import sha256_hex
from shared.events.checks import DAY_SECONDS, Problem, Verdict, check_event

NOW = 1_790_000_000.0


def event(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "event_name": "Purchase",
        "event_time": int(NOW),
        "event_id": "order-1",
        "action_source": "website",
        "event_source_url": "https://shop.example.com/thanks",
        "user_data": {
            "em": [sha256_hex("mary@example.com")],
            "external_id": ["c-1"],
            "client_user_agent": "Mozilla/5.0",
            "client_ip_address": "2001:db8::1",
        },
        "custom_data": {"value": 10.0, "currency": "GBP"},
    }
    for key, value in changes.items():
        if value is None:
            base.pop(key)
        else:
            base[key] = value
    return base


def test_a_valid_event_passes() -> None:
    assert check_event(event(), NOW) is None


def test_an_event_older_than_seven_days_is_too_old_not_malformed() -> None:
    problem = check_event(event(event_time=int(NOW - 7 * DAY_SECONDS - 1)), NOW)
    assert problem == Problem(Verdict.TOO_OLD, "event_time", "is more than 7 days ago")


def test_an_event_at_the_windows_edge_is_kept_back_before_it_crosses_it() -> None:
    # 7 days less 10 minutes: it could cross the edge while its batch waits out a throttle
    problem = check_event(event(event_time=int(NOW - 7 * DAY_SECONDS + 600)), NOW)
    assert problem is not None
    assert problem.verdict is Verdict.TOO_OLD


def test_an_in_store_purchase_may_be_sixty_days_old() -> None:
    in_store = event(action_source="physical_store", event_time=int(NOW - 60 * DAY_SECONDS))
    assert check_event(in_store, NOW) is None
    older = event(action_source="physical_store", event_time=int(NOW - 62 * DAY_SECONDS))
    assert check_event(older, NOW) == Problem(Verdict.TOO_OLD, "event_time", "is more than 62 days ago")


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"event_time": int(NOW * 1000)}, "event_time"),
        ({"event_time": "1790000000"}, "event_time"),
        ({"event_name": None}, "event_name"),
        ({"event_name": "x" * 51}, "event_name"),
        ({"event_id": None}, "event_id"),
        ({"action_source": "web"}, "action_source"),
        ({"event_source_url": None}, "event_source_url"),
        ({"user_data": {"em": [sha256_hex("a@b.co")]}}, "user_data.client_user_agent"),
        ({"user_data": {"em": ["mary@example.com"], "client_user_agent": "M"}}, "user_data.em"),
        (
            {"user_data": {"external_id": ["c"], "client_user_agent": sha256_hex("M")}},
            "user_data.client_user_agent",
        ),
        (
            {"user_data": {"external_id": ["c"], "client_user_agent": "M", "client_ip_address": "1.2.3"}},
            "user_data.client_ip_address",
        ),
        ({"user_data": {"external_id": ["c"], "client_user_agent": "M", "email": "x"}}, "user_data.email"),
        ({"user_data": {"client_user_agent": "M"}}, "user_data"),
        ({"custom_data": {"value": "10", "currency": "GBP"}}, "custom_data.value"),
        ({"custom_data": {"value": float("nan"), "currency": "GBP"}}, "custom_data.value"),
        ({"custom_data": {"value": 1.0, "currency": "gbp"}}, "custom_data.currency"),
        ({"custom_data": {"value": 1.0}}, "custom_data"),
        ({"custom_data": {"value": 1.0, "currency": "GBP", "content_ids": [1]}}, "custom_data.content_ids"),
        (
            {"custom_data": {"value": 1.0, "currency": "GBP", "contents": [{"quantity": 1}]}},
            "custom_data.contents",
        ),
        ({"custom_data": {"value": 1.0, "currency": "GBP", "num_items": 1.5}}, "custom_data.num_items"),
        (
            {"custom_data": {"value": 1.0, "currency": "GBP", "predicted_ltv": True}},
            "custom_data.predicted_ltv",
        ),
    ],
)
def test_what_the_platform_would_refuse_is_malformed_and_named(changes: dict[str, Any], field: str) -> None:
    problem = check_event(event(**changes), NOW)
    assert problem is not None
    assert (problem.verdict, problem.field) == (Verdict.MALFORMED, field)


def test_an_event_outside_the_website_needs_no_url_or_user_agent() -> None:
    offline = event(action_source="other", event_source_url=None, user_data={"external_id": ["c-1"]})
    assert check_event(offline, NOW) is None


def test_a_problem_never_quotes_the_value() -> None:
    problem = check_event(event(user_data={"em": ["mary@example.com"], "client_user_agent": "M"}), NOW)
    assert problem is not None
    assert "mary" not in problem.reason
    assert "mary" not in problem.field
