"""Usage metering against DynamoDB (moto) and the usage endpoints through the local stack.

Concurrency tests give every thread its own client and store, as separate Lambda execution
environments would have.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, date, datetime
from typing import Any

import boto3
import httpx
import pytest

from local.seed import create_user, sign_in
from local.stack import REGION, LocalStack
from shared import wiring
from shared.auth.api_keys import issue_key, verify_key
from shared.errors import QuotaExceeded
from shared.predictions.usage import UsageOutcome, record_prediction_usage
from shared.records.principals import ApiKeyPrincipal
from shared.repositories.usage import DynamoUsageStore

# A fixed past day, so reports do not depend on when the suite runs.
DAY = date(2026, 11, 3)
NOON = datetime(2026, 11, 3, 12, tzinfo=UTC)


@pytest.fixture(scope="module")
def token(stack: LocalStack) -> str:
    """A dashboard user of an organization of its own, so its usage totals are exact."""
    email = "metering@example.com"
    _, password = create_user(stack, "metering-shop", email)
    return sign_in(stack, email, password)


def as_user(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def new_principal(api: httpx.Client, token: str, **body: Any) -> ApiKeyPrincipal:
    """A key created through the dashboard, authenticated as the prediction surface would."""
    response = api.post("/dashboard/api-keys", json={"label": "metered", **body}, headers=as_user(token))
    assert response.status_code == 201, response.text
    return verify_key(response.json()["key"], wiring.api_key_store())


def own_stores(stack: LocalStack, count: int) -> list[DynamoUsageStore]:
    """``count`` stores, each with its own client (built here: building clients is not thread-safe)."""
    session = boto3.session.Session()
    name = stack.physical["UsageTable"].ref
    return [
        DynamoUsageStore(
            session.resource("dynamodb", region_name=REGION, endpoint_url=stack.moto_url).Table(name)
        )
        for _ in range(count)
    ]


def run_concurrently(calls: int, call: Callable[[], UsageOutcome]) -> list[UsageOutcome | QuotaExceeded]:
    """Run ``call`` once in each of ``calls`` threads released together; each result or QuotaExceeded."""
    start = threading.Barrier(calls, timeout=60)  # a guard against a hang, not an assertion

    def attempt() -> UsageOutcome | QuotaExceeded:
        start.wait()
        try:
            return call()
        except QuotaExceeded as exc:
            return exc

    with ThreadPoolExecutor(max_workers=calls) as pool:
        return list(pool.map(lambda _: attempt(), range(calls)))


def test_concurrent_predictions_are_all_counted(stack: LocalStack, api: httpx.Client, token: str) -> None:
    # Given
    caller = new_principal(api, token)
    stores = own_stores(stack, 40)

    def count_one() -> UsageOutcome:
        return record_prediction_usage(caller, "purchase", NOON, usage=stores.pop())

    # When
    outcomes = run_concurrently(40, count_one)
    # Then
    (day,) = wiring.usage_store().days_for_key(caller.org_id, caller.key_id)
    assert (day.predictions, day.by_model) == (40, {"purchase": 40})
    assert sorted(o.predictions_today for o in outcomes if isinstance(o, UsageOutcome)) == list(range(1, 41))


def test_concurrent_predictions_never_overshoot_the_daily_quota(
    stack: LocalStack, api: httpx.Client, token: str
) -> None:
    # Given: a quota of 7 and 20 simultaneous predictions
    caller = new_principal(api, token, dailyQuota=7)
    stores = own_stores(stack, 20)

    def count_one() -> UsageOutcome:
        return record_prediction_usage(caller, "purchase", NOON, usage=stores.pop())

    # When
    outcomes = run_concurrently(20, count_one)
    # Then
    counted = [o for o in outcomes if isinstance(o, UsageOutcome)]
    assert len(counted) == 7
    assert sorted(o.remaining or 0 for o in counted) == list(range(7))
    assert sum(isinstance(o, QuotaExceeded) for o in outcomes) == 13
    (day,) = wiring.usage_store().days_for_key(caller.org_id, caller.key_id)
    assert day.predictions == 7


def test_the_quota_is_exhausted_after_its_number_of_predictions(api: httpx.Client, token: str) -> None:
    # Given
    caller = new_principal(api, token, dailyQuota=3)
    store = wiring.usage_store()
    remaining = [record_prediction_usage(caller, "purchase", NOON, usage=store).remaining for _ in range(3)]
    # When
    with pytest.raises(QuotaExceeded) as raised:
        record_prediction_usage(caller, "purchase", NOON, usage=store)
    # Then
    assert remaining == [2, 1, 0]
    assert "resets at 2026-11-04T00:00:00Z" in raised.value.message
    assert store.days_for_key(caller.org_id, caller.key_id)[0].predictions == 3


def test_the_usage_report_shows_recorded_predictions_per_day_key_and_model(
    api: httpx.Client, token: str
) -> None:
    # Given: predictions with one key for two models, and with another key of the organization
    backend = new_principal(api, token, label="backend")
    batch = new_principal(api, token, label="batch")
    store = wiring.usage_store()
    for caller, model in [
        (backend, "purchase"),
        (backend, "purchase"),
        (backend, "recommend"),
        (batch, "purchase"),
    ]:
        record_prediction_usage(caller, model, datetime(2026, 10, 20, 9, tzinfo=UTC), usage=store)
    # When
    response = api.get(
        "/dashboard/usage", params={"from": "2026-10-20", "to": "2026-10-20"}, headers=as_user(token)
    )
    # Then
    assert response.status_code == 200
    body = response.json()
    assert body["rows"] == [
        {
            "date": "2026-10-20",
            "keyId": backend.key_id,
            "prefix": backend.prefix,
            "label": "backend",
            "model": "purchase",
            "predictions": 2,
        },
        {
            "date": "2026-10-20",
            "keyId": backend.key_id,
            "prefix": backend.prefix,
            "label": "backend",
            "model": "recommend",
            "predictions": 1,
        },
        {
            "date": "2026-10-20",
            "keyId": batch.key_id,
            "prefix": batch.prefix,
            "label": "batch",
            "model": "purchase",
            "predictions": 1,
        },
    ]
    assert body["totals"] == {
        "predictions": 4,
        "byKey": {backend.key_id: 3, batch.key_id: 1},
        "byModel": {"purchase": 3, "recommend": 1},
    }


def test_the_usage_report_can_be_limited_to_one_model(api: httpx.Client, token: str) -> None:
    # Given
    caller = new_principal(api, token)
    store = wiring.usage_store()
    for model in ("purchase", "recommend", "recommend"):
        record_prediction_usage(caller, model, datetime(2026, 10, 10, 9, tzinfo=UTC), usage=store)
    # When
    response = api.get(
        "/dashboard/usage",
        params={"from": "2026-10-10", "to": "2026-10-10", "model": "recommend"},
        headers=as_user(token),
    )
    # Then
    body = response.json()
    assert body["model"] == "recommend"
    assert [(r["model"], r["predictions"]) for r in body["rows"]] == [("recommend", 2)]


def test_the_key_list_shows_usage_and_last_use_after_predictions(api: httpx.Client, token: str) -> None:
    # Given: one prediction on a past day and two now
    caller = new_principal(api, token)
    store = wiring.usage_store()
    record_prediction_usage(caller, "purchase", NOON, usage=store)
    for _ in range(2):
        record_prediction_usage(caller, "purchase", datetime.now(UTC), usage=store)
    # When
    response = api.get("/dashboard/api-keys", headers=as_user(token))
    # Then
    (entry,) = [k for k in response.json()["keys"] if k["keyId"] == caller.key_id]
    assert entry["usage"] == {"total": 3, "today": 2}
    assert entry["lastUsedAt"] is not None


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"from": "2026-13-01", "to": "2026-11-01"}, "from"),
        ({"from": "2026-11-01", "to": "yesterday"}, "to"),
        ({"from": "2026-11-02", "to": "2026-11-01"}, "to"),
        ({"from": "2026-01-01", "to": "2026-04-03"}, "to"),
    ],
)
def test_an_invalid_period_is_400_naming_the_field(
    api: httpx.Client, token: str, params: dict[str, str], field: str
) -> None:
    # When
    response = api.get("/dashboard/usage", params=params, headers=as_user(token))
    # Then
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["field"] == field
    assert field in error["message"]


def test_the_usage_report_without_a_jwt_is_401(api: httpx.Client) -> None:
    assert api.get("/dashboard/usage").status_code == 401


def test_the_usage_report_covers_only_the_callers_organization(
    api: httpx.Client, stack: LocalStack, token: str
) -> None:
    # Given: usage by a key of another organization on the same day
    foreign = issue_key("foreign-shop", "theirs", NOON)
    wiring.api_key_store().put(foreign.stored)
    record_prediction_usage(
        verify_key(foreign.key, wiring.api_key_store()), "purchase", NOON, usage=wiring.usage_store()
    )
    # When
    response = api.get("/dashboard/usage", params={"from": str(DAY), "to": str(DAY)}, headers=as_user(token))
    # Then
    assert foreign.stored.key_id not in {r["keyId"] for r in response.json()["rows"]}
