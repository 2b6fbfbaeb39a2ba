"""OAuth 2.0 with the platform (docs/platform-notes.md §1): dialog URL, token exchanges, token inspection.

Pure functions over a ``GraphClient``: nothing here stores state or tokens; the caller signs and
checks ``state`` and encrypts what it keeps.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

from pydantic import BaseModel, ConfigDict, Field, field_validator

from shared.platform.client import GraphClient

DEFAULT_SCOPES: tuple[str, ...] = ("ads_management", "ads_read", "business_management")


class TokenGrant(BaseModel):
    """An access token from ``oauth/access_token``. ``expires_in`` is None when the platform omits it."""

    model_config = ConfigDict(frozen=True)

    access_token: str = Field(repr=False)
    expires_in: int | None = None
    token_type: str = "bearer"


class TokenInfo(BaseModel):
    """What ``debug_token`` says about a token. Times are None when the platform reports 0 (never)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    app_id: str | None = None
    type: str | None = None
    application: str | None = None
    is_valid: bool = False
    expires_at: datetime | None = None
    data_access_expires_at: datetime | None = None
    issued_at: datetime | None = None
    scopes: tuple[str, ...] = ()
    user_id: str | None = None
    error_code: int | None = None
    error_subcode: int | None = None

    @field_validator("expires_at", "data_access_expires_at", "issued_at", mode="before")
    @classmethod
    def _from_unix_seconds(cls, value: Any) -> datetime | None:
        if value in (None, 0, "0"):
            return None
        if isinstance(value, datetime):
            return value
        return datetime.fromtimestamp(int(value), tz=UTC)

    def missing_scopes(self, required: Sequence[str] = DEFAULT_SCOPES) -> tuple[str, ...]:
        """The required permissions the token was not granted (empty when all are present)."""
        return tuple(scope for scope in required if scope not in self.scopes)


def authorization_url(
    *,
    dialog_url: str,
    version: str,
    app_id: str,
    redirect_uri: str,
    state: str,
    scopes: Sequence[str] = DEFAULT_SCOPES,
) -> str:
    """The platform's login dialog URL to redirect the user to (``response_type=code``).

    ``redirect_uri`` must later be passed byte-identical to ``exchange_code``.
    """
    query = urlencode(
        {
            "client_id": app_id,
            "redirect_uri": redirect_uri,
            "state": state,
            "response_type": "code",
            "scope": ",".join(scopes),
        }
    )
    return f"{dialog_url.rstrip('/')}/{version.strip('/')}/dialog/oauth?{query}"


def exchange_code(client: GraphClient, code: str, redirect_uri: str) -> TokenGrant:
    """Exchange the code from the OAuth callback for a user access token (server to server).

    Codes are single use, so the call is never retried after it may have reached the platform.
    """
    params = {**client.client_credentials(), "redirect_uri": redirect_uri, "code": code}
    response = client.with_access_token(None).get("oauth/access_token", params, idempotent=False)
    return TokenGrant.model_validate(response.body)


def exchange_long_lived(client: GraphClient, short_lived_token: str) -> TokenGrant:
    """Exchange a short-lived user token for a long-lived one (about 60 days)."""
    params = {
        **client.client_credentials(),
        "grant_type": "fb_exchange_token",
        "fb_exchange_token": short_lived_token,
    }
    response = client.with_access_token(None).get("oauth/access_token", params)
    return TokenGrant.model_validate(response.body)


def debug_token(client: GraphClient, input_token: str) -> TokenInfo:
    """Inspect ``input_token`` with the app token. A bad input token is ``is_valid=False``, not an error.

    A token issued to another app is reported invalid: the service must never act with it.
    """
    response = client.with_access_token(client.app_access_token).get(
        "debug_token", {"input_token": input_token}
    )
    data = _as_dict(response.body.get("data"))
    error = _as_dict(data.get("error"))
    info = TokenInfo.model_validate(
        {**data, "error_code": error.get("code"), "error_subcode": error.get("subcode")}
    )
    if info.app_id is not None and info.app_id != client.app_id:
        return info.model_copy(update={"is_valid": False})
    return info


def _as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def app_domains(client: GraphClient) -> list[str]:
    """The domains the service's application accepts redirect URIs on (``GET /{app-id}``, app token)."""
    response = client.with_access_token(client.app_access_token).get(client.app_id, {"fields": "app_domains"})
    return [str(domain) for domain in response.body.get("app_domains") or []]
