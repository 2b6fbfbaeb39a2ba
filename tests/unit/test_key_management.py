"""Dashboard key management: a key is shown once, listed with its usage and never its hash, and
revoked only by its own organization."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime, timedelta

import pytest
from pydantic import ValidationError

from shared.auth.api_keys import hash_key, issue_key, verify_key
from shared.errors import NotFound
from shared.predictions.key_management import (
    CreateApiKeyRequest,
    create_api_key,
    list_api_keys,
    revoke_api_key,
)
from shared.predictions.usage import record_prediction_usage
from shared.records.api_keys import StoredApiKey
from shared.records.principals import ApiKeyPrincipal
from tests.unit.memory_usage import MemoryUsage

NOW = datetime(2026, 11, 20, 15, 30, tzinfo=UTC)


class MemoryKeys:
    def __init__(self, *keys: StoredApiKey) -> None:
        self.keys = {k.key_id: k for k in keys}

    def put(self, key: StoredApiKey) -> None:
        self.keys[key.key_id] = key

    def get(self, key_id: str) -> StoredApiKey | None:
        return self.keys.get(key_id)

    def list_for_org(self, org_id: str) -> list[StoredApiKey]:
        return [k for k in self.keys.values() if k.org_id == org_id]

    def revoke(self, org_id: str, key_id: str, now: datetime) -> StoredApiKey | None:
        key = self.keys.get(key_id)
        if key is None or key.org_id != org_id:
            return None
        self.keys[key_id] = replace(key, revoked_at=key.revoked_at or now)
        return self.keys[key_id]


class MemoryRevocations:
    def __init__(self) -> None:
        self.marked: list[tuple[str, date]] = []

    def mark_revoked(self, key: StoredApiKey, days: list[date], revoked_at: datetime) -> None:
        self.marked.extend((key.key_id, day) for day in days)


def test_revoking_marks_the_keys_usage_days_of_today_and_tomorrow() -> None:
    # Given
    key = issue_key("org-1", "backend", NOW).stored
    marker = MemoryRevocations()
    # When
    revoke_api_key("org-1", key.key_id, NOW, keys=MemoryKeys(key), days=marker)
    # Then: a prediction checks these items on the write that counts it
    assert marker.marked == [(key.key_id, date(2026, 11, 20)), (key.key_id, date(2026, 11, 21))]


def test_a_created_key_is_returned_once_and_stored_only_as_its_hash() -> None:
    # Given
    keys = MemoryKeys()
    # When
    created = create_api_key("org-1", CreateApiKeyRequest(label="shop backend"), NOW, keys=keys)
    # Then
    stored = keys.keys[created.key_id]
    assert created.key.startswith(created.prefix + "_")
    assert stored.secret_hash == hash_key(created.key)
    assert (stored.org_id, stored.label, stored.daily_quota) == ("org-1", "shop backend", None)


def test_a_created_key_carries_its_daily_quota_into_the_principal() -> None:
    # Given
    keys = MemoryKeys()
    created = create_api_key("org-1", CreateApiKeyRequest(label="batch", daily_quota=500), NOW, keys=keys)
    # When
    principal = verify_key(created.key, keys)
    # Then
    assert principal.daily_quota == 500


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"label": ""}, "label"),
        ({"label": "   "}, "label"),
        ({"label": "x" * 65}, "label"),
        ({"label": "ok", "dailyQuota": 0}, "dailyQuota"),
        ({"label": "ok", "dailyQuota": "lots"}, "dailyQuota"),
    ],
)
def test_an_invalid_request_names_the_field_as_the_dashboard_sends_it(
    body: dict[str, object], field: str
) -> None:
    with pytest.raises(ValidationError) as raised:
        CreateApiKeyRequest.model_validate(body)
    assert raised.value.errors()[0]["loc"] == (field,)


def test_the_list_shows_usage_and_last_use_but_never_the_hash() -> None:
    # Given: a key used twice today and once yesterday
    key = issue_key("org-1", "backend", NOW - timedelta(days=3)).stored
    usage = MemoryUsage()
    caller = ApiKeyPrincipal(org_id="org-1", key_id=key.key_id, prefix=key.prefix, label=key.label)
    record_prediction_usage(caller, "purchase", NOW - timedelta(days=1), usage=usage)
    record_prediction_usage(caller, "purchase", NOW - timedelta(hours=2), usage=usage)
    record_prediction_usage(caller, "recommend", NOW - timedelta(hours=1), usage=usage)
    # When
    listed = list_api_keys("org-1", NOW, keys=MemoryKeys(key), usage=usage)
    # Then
    (summary,) = listed.keys
    assert (summary.usage.total, summary.usage.today) == (3, 2)
    assert summary.last_used_at == NOW - timedelta(hours=1)
    body = listed.model_dump(mode="json", by_alias=True)
    assert key.secret_hash not in repr(body)
    assert set(body["keys"][0]) == {
        "keyId",
        "prefix",
        "label",
        "createdAt",
        "lastUsedAt",
        "revokedAt",
        "dailyQuota",
        "usage",
    }


def test_the_list_is_newest_first_and_only_the_organizations_own_keys() -> None:
    # Given
    older = issue_key("org-1", "older", NOW - timedelta(days=2)).stored
    newer = issue_key("org-1", "newer", NOW - timedelta(days=1)).stored
    foreign = issue_key("org-2", "foreign", NOW).stored
    # When
    listed = list_api_keys("org-1", NOW, keys=MemoryKeys(older, foreign, newer), usage=MemoryUsage())
    # Then
    assert [k.label for k in listed.keys] == ["newer", "older"]


def test_revoking_twice_keeps_the_first_revocation_time() -> None:
    # Given
    key = issue_key("org-1", "backend", NOW).stored
    keys = MemoryKeys(key)
    first = revoke_api_key("org-1", key.key_id, NOW, keys=keys, days=MemoryRevocations())
    # When
    again = revoke_api_key("org-1", key.key_id, NOW + timedelta(hours=1), keys=keys, days=MemoryRevocations())
    # Then
    assert first.revoked_at == again.revoked_at == NOW


def test_another_organizations_key_is_not_found_and_stays_active() -> None:
    # Given
    key = issue_key("org-2", "theirs", NOW).stored
    keys = MemoryKeys(key)
    # When
    with pytest.raises(NotFound, match="not found"):
        revoke_api_key("org-1", key.key_id, NOW, keys=keys, days=MemoryRevocations())
    # Then
    assert keys.keys[key.key_id].revoked_at is None
