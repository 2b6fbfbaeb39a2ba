"""API keys: random, shown once, stored only as a hash with a display prefix and a label.

A key looks like ``svc_<key_id>_<secret>``. ``key_id`` (10 base32 characters) addresses the stored
record, so verification is one DynamoDB read and no scan; ``svc_<key_id>`` is the display prefix.
The secret part has 256 bits of entropy, so a single SHA-256 is a sound hash (password-style
stretching protects low-entropy secrets; it would only add latency here).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from shared.errors import Unauthorized
from shared.records.api_keys import StoredApiKey
from shared.records.principals import ApiKeyPrincipal

KEY_SCHEME = "svc"
MISSING_KEY_MESSAGE = (
    "API key is missing. Send it in the X-Service-Api-Key header or as 'Authorization: Bearer <API_KEY>'."
)
INVALID_KEY_MESSAGE = "API key is missing or not valid: the key was not recognised."
REVOKED_KEY_MESSAGE = "API key is missing or not valid: this key has been revoked."


@dataclass(frozen=True)
class NewApiKey:
    """A freshly issued key: ``key`` is shown to the user once and never stored."""

    key: str
    stored: StoredApiKey


class ApiKeyStore(Protocol):
    def get(self, key_id: str) -> StoredApiKey | None: ...


def hash_key(key: str) -> str:
    """Hex SHA-256 of the whole key."""
    return hashlib.sha256(key.encode()).hexdigest()


def issue_key(org_id: str, label: str, now: datetime, daily_quota: int | None = None) -> NewApiKey:
    """Create a new random key for ``org_id`` (``daily_quota`` predictions per UTC day, None for
    unlimited); store ``.stored``, show ``.key`` once."""
    key_id = base64.b32encode(secrets.token_bytes(10)).decode().lower().rstrip("=")[:10]
    secret = secrets.token_urlsafe(32)
    key = f"{KEY_SCHEME}_{key_id}_{secret}"
    stored = StoredApiKey(
        org_id=org_id,
        key_id=key_id,
        prefix=f"{KEY_SCHEME}_{key_id}",
        label=label,
        secret_hash=hash_key(key),
        created_at=now,
        daily_quota=daily_quota,
    )
    return NewApiKey(key=key, stored=stored)


def key_id_of(key: str) -> str | None:
    """The record id inside a well-formed key, or None."""
    parts = key.split("_", 2)
    if len(parts) != 3 or parts[0] != KEY_SCHEME or not parts[1] or not parts[2]:
        return None
    return parts[1]


def extract_key(headers: dict[str, str]) -> str | None:
    """The API key from ``X-Service-Api-Key`` or ``Authorization: Bearer`` (header names any case)."""
    lowered = {k.lower(): v for k, v in headers.items()}
    direct = lowered.get("x-service-api-key", "").strip()
    if direct:
        return direct
    scheme, _, value = lowered.get("authorization", "").strip().partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    return None


def present_key(key: str | None) -> tuple[str, str]:
    """The presented, well-formed key and its record id; ``Unauthorized`` when it is missing or
    malformed (checked without storage)."""
    if not key:
        raise Unauthorized(MISSING_KEY_MESSAGE, remedy="Create a key in the dashboard and send it.")
    key_id = key_id_of(key)
    if key_id is None:
        raise Unauthorized(INVALID_KEY_MESSAGE, remedy="Check the key, or create a new one in the dashboard.")
    return key, key_id


def verify_key(key: str | None, store: ApiKeyStore) -> ApiKeyPrincipal:
    """The principal for a presented key; ``Unauthorized`` when it is missing, unknown or revoked."""
    key, key_id = present_key(key)
    stored = store.get(key_id)
    if stored is None or not hmac.compare_digest(stored.secret_hash, hash_key(key)):
        raise Unauthorized(INVALID_KEY_MESSAGE, remedy="Check the key, or create a new one in the dashboard.")
    if stored.revoked_at is not None:
        raise Unauthorized(REVOKED_KEY_MESSAGE, remedy="Use an active key, or create a new one.")
    return ApiKeyPrincipal(
        org_id=stored.org_id,
        key_id=stored.key_id,
        prefix=stored.prefix,
        label=stored.label,
        daily_quota=stored.daily_quota,
    )
