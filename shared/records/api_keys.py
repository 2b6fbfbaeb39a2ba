"""What the service keeps of an API key: never the key itself (see ``shared.auth.api_keys``)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class StoredApiKey:
    """An API key as stored: its id, display prefix, label and the hash of the whole key."""

    org_id: str
    key_id: str
    prefix: str
    label: str
    secret_hash: str
    created_at: datetime
    revoked_at: datetime | None = None
    # Predictions allowed per UTC day; None means unlimited.
    daily_quota: int | None = None
