"""Access tokens: minting, validation, appsecret_proof, ``debug_token`` views (docs/platform-notes.md §1)."""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from typing import Any

from platform_sandbox import errors
from platform_sandbox.world import Token, TokenKind, World

GRANTABLE_SCOPES = ("ads_management", "ads_read", "business_management", "pages_show_list", "public_profile")


def mint_user_token(
    world: World, user_id: str, scopes: list[str], now: float, lifetime_seconds: int
) -> Token:
    """Store and return a new user token; ``lifetime_seconds`` 0 makes it never expire."""
    token = Token(
        value="EAAS" + secrets.token_urlsafe(32),
        kind=TokenKind.USER,
        app_id=world.app.app_id,
        user_id=user_id,
        scopes=list(scopes),
        issued_at=now,
        expires_at=now + lifetime_seconds if lifetime_seconds else 0,
    )
    world.tokens[token.value] = token
    return token


def mint_app_token(world: World, now: float) -> Token:
    """Store and return an app access token (``{app_id}|{random}``), as client_credentials returns."""
    token = Token(
        value=f"{world.app.app_id}|{secrets.token_urlsafe(20)}",
        kind=TokenKind.APP,
        app_id=world.app.app_id,
        user_id=None,
        scopes=[],
        issued_at=now,
        expires_at=0,
    )
    world.tokens[token.value] = token
    return token


def find_token(world: World, value: str) -> Token | None:
    """The stored token, or the literal ``{app_id}|{app_secret}`` app token (docs/platform-notes.md §1.5)."""
    stored = world.tokens.get(value)
    if stored is not None:
        return stored
    if hmac.compare_digest(value, f"{world.app.app_id}|{world.app.secret}"):
        return Token(value, TokenKind.APP, world.app.app_id, None, [], 0, 0)
    return None


def token_error(world: World, token: Token, now: float) -> errors.GraphError | None:
    """Why ``token`` is unusable right now (revoked 190/458|460|467, expired 190/463), or None."""
    if token.revoked_subcode is not None:
        return errors.token_revoked(token.revoked_subcode, world.app.app_id)
    if token.expires_at and now >= token.expires_at:
        return errors.token_expired(_http_date(token.expires_at), _http_date(now))
    return None


def validate_token(world: World, value: str | None, now: float) -> Token:
    """The usable token behind ``value``; raises the platform's 104/190 errors otherwise."""
    if not value:
        raise errors.GraphError("An access token is required to request this resource.", 104)
    token = find_token(world, value)
    if token is None:
        raise errors.token_unparseable()
    problem = token_error(world, token, now)
    if problem is not None:
        raise problem
    return token


def check_appsecret_proof(app_secret: str, token: str, proof: str | None, proof_time: str | None) -> None:
    """Raise unless ``proof`` is HMAC-SHA256(app_secret, token), or of ``token|time``.

    See docs/platform-notes.md §1.6.
    """
    if not proof:
        raise errors.missing_appsecret_proof()
    message = f"{token}|{proof_time}" if proof_time else token
    if not hmac.compare_digest(proof, appsecret_proof(app_secret, message)):
        raise errors.invalid_appsecret_proof()


def appsecret_proof(app_secret: str, message: str) -> str:
    """Hex HMAC-SHA256 of ``message`` keyed with the app secret."""
    return hmac.new(app_secret.encode(), message.encode(), hashlib.sha256).hexdigest()


def debug_view(world: World, token: Token | None, now: float, data_access_seconds: int) -> dict[str, Any]:
    """The ``data`` object ``/debug_token`` returns for an input token (docs/platform-notes.md §1.5)."""
    if token is None:
        error = errors.token_unparseable()
        return {"is_valid": False, "scopes": [], "error": {"code": error.code, "message": error.message}}
    view: dict[str, Any] = {
        "app_id": token.app_id,
        "type": token.kind.value,
        "application": world.app.name,
        "expires_at": int(token.expires_at),
        "is_valid": True,
        "issued_at": int(token.issued_at),
        "scopes": list(token.scopes),
    }
    if token.kind is TokenKind.USER and token.user_id is not None:
        view["user_id"] = token.user_id
        view["data_access_expires_at"] = int(token.issued_at + data_access_seconds)
        view["granular_scopes"] = _granular_scopes(world, token)
    problem = token_error(world, token, now)
    if problem is not None:
        view["is_valid"] = False
        view["error"] = {"code": problem.code, "message": problem.message, "subcode": problem.subcode}
    return view


def _granular_scopes(world: World, token: Token) -> list[dict[str, Any]]:
    assert token.user_id is not None
    account_ids = [account.account_id for account in world.accounts_of(token.user_id)]
    business_ids = sorted(
        {account.business.business_id for account in world.accounts_of(token.user_id) if account.business}
    )
    targets = {"ads_management": account_ids, "ads_read": account_ids, "business_management": business_ids}
    return [
        {"scope": scope, "target_ids": targets[scope]} if scope in targets else {"scope": scope}
        for scope in token.scopes
    ]


def _http_date(timestamp: float) -> str:
    return time.strftime("%A, %d-%b-%y %H:%M:%S UTC", time.gmtime(timestamp))
