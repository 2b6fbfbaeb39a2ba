"""OAuth ``state`` values: signed, single-use and expiring.

``state = <nonce>.<expiry>.<signature>``; the signature is HMAC-SHA256 over the nonce, expiry,
organization and user with the state key from Secrets Manager. The nonce is stored until the
callback consumes it, so a state works once.

The callback is made by the signed-in user (the dashboard posts ``code`` and ``state`` with the
user's JWT), and the signature is checked against *that* user and organization before any storage
is touched: a state issued to someone else, a forged signature or a stale value is refused without
consuming the nonce, so it cannot destroy the genuine user's pending connection either.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol

from shared.errors import Forbidden, ValidationFailed

INVALID_STATE = "The connection request is invalid or has expired."
STATE_REMEDY = "Start connecting again from the dashboard."
NOT_YOUR_STATE = "This connection request was not started by you in this organization."
NOT_YOUR_STATE_REMEDY = (
    "Only the person who pressed Connect can finish connecting; sign in as yourself and start "
    "connecting again from the dashboard."
)


class StateStore(Protocol):
    def create(self, nonce: str, org_id: str, user_id: str, expires_at: datetime) -> None: ...
    def consume(self, nonce: str, org_id: str, user_id: str) -> dict[str, Any] | None: ...


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


def consume_state(store: StateStore, key: str, state: str, caller: StateOwner, now: datetime) -> None:
    """Consume ``state`` for ``caller``, the signed-in user finishing the connection.

    ``ValidationFailed`` for a malformed, expired or already used state; ``Forbidden`` when the
    signature does not match the caller (issued to another user or organization, or forged). Only a
    state whose signature matches the caller reaches storage, and it is deleted only if it is still
    stored for that same user and organization.
    """
    try:
        nonce, expiry_text, signature = state.split(".")
        expiry = int(expiry_text)
    except ValueError as exc:
        raise ValidationFailed(INVALID_STATE, field="state", remedy=STATE_REMEDY) from exc
    if expiry < now.timestamp():
        raise ValidationFailed(INVALID_STATE, field="state", remedy=STATE_REMEDY)
    expected = _sign(key, nonce, expiry, caller.org_id, caller.user_id)
    if not hmac.compare_digest(expected, signature):
        raise Forbidden(NOT_YOUR_STATE, remedy=NOT_YOUR_STATE_REMEDY)
    if store.consume(nonce, caller.org_id, caller.user_id) is None:
        raise ValidationFailed(INVALID_STATE, field="state", remedy=STATE_REMEDY)
