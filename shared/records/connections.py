"""The stored connection: who connected which ad account, the encrypted token, its health."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field


class EncryptedSecret(BaseModel, frozen=True):
    """A secret encrypted under a KMS data key (``shared.repositories.envelope``): ciphertext, the
    KMS-encrypted data key and the nonce (all base64)."""

    ciphertext: str
    encrypted_key: str
    nonce: str
    algorithm: str = "AES-256-GCM"


ConnectionStatus = Literal["active", "inactive"]
TokenHealth = Literal["valid", "expiring", "invalid", "unknown"]


class Connection(BaseModel):
    """One organization's platform connection. The token is only ever stored encrypted."""

    org_id: str
    status: ConnectionStatus
    ad_account_id: str | None = None
    ad_account_name: str | None = None
    business_id: str | None = None
    business_name: str | None = None
    currency: str | None = Field(
        default=None, description="The ad account's currency (ISO 4217) when connected."
    )
    platform_user_id: str | None = None
    connected_by: str | None = None
    connected_at: datetime | None = None
    disconnected_at: datetime | None = None
    token: EncryptedSecret | None = Field(default=None, repr=False)
    token_expires_at: datetime | None = None
    scopes: list[str] = Field(default_factory=list)
    last_validated_at: datetime | None = None
    token_health: TokenHealth = "unknown"
    validation_error: str | None = None
    usage: dict[str, Any] | None = Field(default=None, description="Latest platform usage-header snapshot.")
    usage_captured_at: datetime | None = None

    def token_context(self) -> dict[str, str]:
        """The encryption context the token is bound to."""
        return {"org_id": self.org_id, "connection": "platform"}
