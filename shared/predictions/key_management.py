"""The dashboard's management of an organization's API keys: create (shown once), list with usage,
revoke. Keys themselves (format, hashing, verification) live in ``shared.auth.api_keys``."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Annotated, Protocol

from pydantic import Field, StringConstraints

from shared.auth.api_keys import issue_key
from shared.errors import NotFound
from shared.predictions.usage import KeyLister, UsageReader, utc_day
from shared.records.api_keys import StoredApiKey
from shared.wire_models import CamelModel

MAX_DAILY_QUOTA = 100_000_000

# Surrounding spaces are dropped, so a label must hold something else (the pattern says so in openapi.json).
Label = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=64, pattern=r"\S")]


class KeyWriter(Protocol):
    def put(self, key: StoredApiKey) -> None: ...


class KeyRevoker(Protocol):
    def revoke(self, org_id: str, key_id: str, now: datetime) -> StoredApiKey | None: ...


class RevocationMarker(Protocol):
    def mark_revoked(self, key: StoredApiKey, days: list[date], revoked_at: datetime) -> None: ...


class CreateApiKeyRequest(CamelModel):
    label: Label = Field(description="What the key is for, e.g. 'shop backend' (1-64 characters).")
    daily_quota: int | None = Field(
        default=None,
        ge=1,
        le=MAX_DAILY_QUOTA,
        description="Predictions allowed per UTC day; null or absent for no limit.",
    )


class CreatedApiKey(CamelModel):
    key: str = Field(description="The API key. Shown only in this response: store it now.")
    key_id: str
    prefix: str = Field(description="The key's display prefix, shown in lists and usage reports.")
    label: str
    created_at: datetime
    daily_quota: int | None


class KeyUsage(CamelModel):
    total: int = Field(description="Predictions made with the key since it was created.")
    today: int = Field(description="Predictions made with the key this UTC day.")


class ApiKeySummary(CamelModel):
    key_id: str
    prefix: str
    label: str
    created_at: datetime
    last_used_at: datetime | None
    revoked_at: datetime | None
    daily_quota: int | None
    usage: KeyUsage


class ApiKeyList(CamelModel):
    keys: list[ApiKeySummary] = Field(
        description="The organization's keys, newest first, revoked ones included."
    )


class RevokedApiKey(CamelModel):
    key_id: str
    prefix: str
    label: str
    revoked_at: datetime = Field(description="When the key was first revoked; revoking again keeps it.")


def create_api_key(
    org_id: str, request: CreateApiKeyRequest, now: datetime, *, keys: KeyWriter
) -> CreatedApiKey:
    """Issue and store a new key for the organization. Out: the key itself, which is never shown
    again (only its hash is stored), with its id, prefix, label and quota."""
    new = issue_key(org_id, request.label, now, daily_quota=request.daily_quota)
    keys.put(new.stored)
    stored = new.stored
    return CreatedApiKey(
        key=new.key,
        key_id=stored.key_id,
        prefix=stored.prefix,
        label=stored.label,
        created_at=stored.created_at,
        daily_quota=stored.daily_quota,
    )


def list_api_keys(org_id: str, now: datetime, *, keys: KeyLister, usage: UsageReader) -> ApiKeyList:
    """The organization's keys, newest first, each with its prediction counts (lifetime and this
    UTC day) and when it was last used. Never the key or its hash."""
    today = utc_day(now)
    summaries = []
    for key in sorted(keys.list_for_org(org_id), key=lambda k: (k.created_at, k.key_id), reverse=True):
        days = usage.days_for_key(org_id, key.key_id)
        # The one write on the predict path (the day's usage row) stamps the last use; the key record
        # is never written on that path.
        used = [d.last_used_at for d in days if d.last_used_at is not None]
        summaries.append(
            ApiKeySummary(
                key_id=key.key_id,
                prefix=key.prefix,
                label=key.label,
                created_at=key.created_at,
                last_used_at=max(used, default=None),
                revoked_at=key.revoked_at,
                daily_quota=key.daily_quota,
                usage=KeyUsage(
                    total=sum(d.predictions for d in days),
                    today=sum(d.predictions for d in days if d.day == today),
                ),
            )
        )
    return ApiKeyList(keys=summaries)


def revoke_api_key(
    org_id: str, key_id: str, now: datetime, *, keys: KeyRevoker, days: RevocationMarker
) -> RevokedApiKey:
    """Revoke one of the organization's keys; it stops working at once. Revoking again is harmless
    and reports the first revocation. ``NotFound`` when the organization has no such key (another
    organization's key included: its existence is not revealed).

    The key record is marked first, then the key's usage items of today and tomorrow (UTC), which a
    prediction checks on the write that counts it: no container's cached key can outlive the
    revocation (tomorrow's item covers a container whose clock is already past midnight)."""
    stored = keys.revoke(org_id, key_id, now)
    if stored is None or stored.revoked_at is None:
        raise NotFound(
            f"API key '{key_id}' was not found.",
            field="keyId",
            remedy="List your organization's keys to see their ids.",
        )
    today = utc_day(now)
    days.mark_revoked(stored, [today, today + timedelta(days=1)], stored.revoked_at)
    return RevokedApiKey(
        key_id=stored.key_id, prefix=stored.prefix, label=stored.label, revoked_at=stored.revoked_at
    )
