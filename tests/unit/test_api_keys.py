"""API keys: random, shown once, stored as a hash, verified by id lookup, revocable."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from shared.auth.api_keys import extract_key, hash_key, issue_key, verify_key
from shared.errors import Unauthorized
from shared.records.api_keys import StoredApiKey

NOW = datetime(2026, 11, 1, tzinfo=UTC)


class MemoryKeys:
    def __init__(self, *keys: StoredApiKey) -> None:
        self.keys = {k.key_id: k for k in keys}

    def get(self, key_id: str) -> StoredApiKey | None:
        return self.keys.get(key_id)


def test_an_issued_key_is_stored_only_as_its_hash_with_a_display_prefix() -> None:
    # When
    new = issue_key("org-1", "shop backend", NOW)
    # Then
    assert new.key.startswith(new.stored.prefix + "_")
    assert new.stored.secret_hash == hash_key(new.key)
    assert new.key not in repr(new.stored)
    assert new.stored.label == "shop backend"


def test_two_issued_keys_differ() -> None:
    assert issue_key("org-1", "a", NOW).key != issue_key("org-1", "a", NOW).key


def test_a_valid_key_yields_its_organization_prefix_and_label() -> None:
    # Given
    new = issue_key("org-1", "backend", NOW)
    # When
    principal = verify_key(new.key, MemoryKeys(new.stored))
    # Then
    assert (principal.org_id, principal.prefix, principal.label) == ("org-1", new.stored.prefix, "backend")


def test_a_missing_key_is_rejected_with_text_saying_it_is_missing() -> None:
    with pytest.raises(Unauthorized, match="API key is missing"):
        verify_key(None, MemoryKeys())


def test_a_key_with_the_right_id_but_wrong_secret_is_rejected() -> None:
    # Given
    new = issue_key("org-1", "backend", NOW)
    forged = new.stored.prefix + "_" + "x" * 43
    # Then
    with pytest.raises(Unauthorized, match="not recognised"):
        verify_key(forged, MemoryKeys(new.stored))


def test_a_revoked_key_is_not_accepted() -> None:
    # Given
    new = issue_key("org-1", "backend", NOW)
    revoked = replace(new.stored, revoked_at=NOW)
    # Then
    with pytest.raises(Unauthorized, match="revoked"):
        verify_key(new.key, MemoryKeys(revoked))


@pytest.mark.parametrize("garbage", ["", "svc_", "svc__x", "other_abc_def", "no-underscores"])
def test_malformed_keys_are_rejected(garbage: str) -> None:
    with pytest.raises(Unauthorized):
        verify_key(garbage, MemoryKeys())


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"X-Service-Api-Key": "svc_a_b"}, "svc_a_b"),
        ({"x-service-api-key": " svc_a_b "}, "svc_a_b"),
        ({"Authorization": "Bearer svc_a_b"}, "svc_a_b"),
        ({"authorization": "bearer svc_a_b"}, "svc_a_b"),
        ({"Authorization": "Basic abc"}, None),
        ({}, None),
    ],
)
def test_the_key_is_read_from_either_header_form(headers: dict[str, str], expected: str | None) -> None:
    assert extract_key(headers) == expected
