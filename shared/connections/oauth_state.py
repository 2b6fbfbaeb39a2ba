"""OAuth ``state`` values: signed, single-use and expiring.

``state = <nonce>.<expiry>.<signature>``; the signature is HMAC-SHA256 over the nonce, expiry,
organization and user with the state key from Secrets Manager. The nonce is stored until the
callback consumes it, so a state works once; the signature and expiry are checked before any
storage is touched, so forged or stale values cost nothing.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol

from shared.errors import ValidationFailed

INVALID_STATE = "The connection request is invalid or has expired."
STATE_REMEDY = "Start connecting again from the dashboard."


class StateStore(Protocol):
    def create(self, nonce: str, org_id: str, user_id: str, expires_at: datetime) -> None: ...
    def consume(self, nonce: str) -> dict[str, Any] | None: ...


@dataclass(frozen=True)
class StateOwner:
    org_id: str
    user_id: str


def _sign(key: str, nonce: str, expiry: int, org_id: str, user_id: str) -> str:
    message = f"{nonce}.{expiry}.{org_id}.{user_id}".encode()
    digest = hmac.new(key.encode(), message, hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def issue_state(store: StateStore, key: str, owner: StateOwner, now: datetime, ttl: timedelta) -> str:
    """A new state for ``owner`` valid until ``now + ttl``."""
    nonce = secrets.token_urlsafe(24)
    expires_at = now + ttl
    expiry = int(expires_at.timestamp())
    store.create(nonce, owner.org_id, owner.user_id, expires_at)
    return f"{nonce}.{expiry}.{_sign(key, nonce, expiry, owner.org_id, owner.user_id)}"


def consume_state(store: StateStore, key: str, state: str, now: datetime) -> StateOwner:
    """The owner of a valid, unexpired, unused ``state``; ``ValidationFailed`` otherwise."""
    try:
        nonce, expiry_text, signature = state.split(".")
        expiry = int(expiry_text)
    except ValueError as exc:
        raise ValidationFailed(INVALID_STATE, field="state", remedy=STATE_REMEDY) from exc
    if expiry < now.timestamp():
        raise ValidationFailed(INVALID_STATE, field="state", remedy=STATE_REMEDY)
    stored = store.consume(nonce)
    if stored is None:
        raise ValidationFailed(INVALID_STATE, field="state", remedy=STATE_REMEDY)
    expected = _sign(key, nonce, expiry, stored["org_id"], stored["user_id"])
    if not hmac.compare_digest(expected, signature):
        raise ValidationFailed(INVALID_STATE, field="state", remedy=STATE_REMEDY)
    return StateOwner(org_id=stored["org_id"], user_id=stored["user_id"])
