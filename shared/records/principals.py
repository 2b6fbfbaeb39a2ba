"""Who is calling. Every record belongs to one organization; principals carry it."""

from __future__ import annotations

from pydantic import BaseModel


class ApiKeyPrincipal(BaseModel, frozen=True):
    """A shop backend calling the prediction surface with an API key."""

    org_id: str
    key_id: str
    prefix: str
    label: str
    # Carried from the key record so metering needs no second read of it.
    daily_quota: int | None = None


class UserPrincipal(BaseModel, frozen=True):
    """A dashboard user, identified by the JWT's ``sub``."""

    org_id: str
    user_id: str
    email: str | None = None


class SignedInUser(BaseModel, frozen=True):
    """A dashboard user whose JWT is valid, who may no longer belong to an organization (one whose
    closure removed their membership): only account closure serves them."""

    user_id: str
    org_id: str | None
    email: str | None = None
