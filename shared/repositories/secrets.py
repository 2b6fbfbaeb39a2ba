"""The platform application's secrets, read from Secrets Manager and kept for a few minutes.

The secret (``PLATFORM_SECRETS_ARN``) holds ``{"app_secret", "oauth_state_key"}``. Each container
re-reads it once its copy is older than ``SECRET_MAX_AGE``, so a rotated secret is in use everywhere
within that window, without a deploy. The window runs on an injected clock: Powertools' parameters
cache would do the same, but it reads the wall clock and keeps its providers in module globals, so
neither the window nor a reset could be tested without sleeping or patching.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from shared.clock import Clock

if TYPE_CHECKING:
    from mypy_boto3_secretsmanager import SecretsManagerClient

SECRET_MAX_AGE = timedelta(minutes=5)


class PlatformSecrets(BaseModel, frozen=True):
    app_secret: str = Field(repr=False)
    oauth_state_key: str = Field(repr=False)


class PlatformSecretsSource:
    """The current platform secrets: a copy read from Secrets Manager, re-read when older than
    ``max_age``."""

    def __init__(
        self,
        client: SecretsManagerClient,
        secret_id: str,
        clock: Clock,
        max_age: timedelta = SECRET_MAX_AGE,
    ) -> None:
        self._client = client
        self._secret_id = secret_id
        self._clock = clock
        self._max_age = max_age
        self._copy: tuple[PlatformSecrets, datetime] | None = None

    def current(self) -> PlatformSecrets:
        """The secrets as of at most ``max_age`` ago."""
        now = self._clock()
        if self._copy is None or now - self._copy[1] >= self._max_age:
            self._copy = (self._read(), now)
        return self._copy[0]

    def _read(self) -> PlatformSecrets:
        value = json.loads(self._client.get_secret_value(SecretId=self._secret_id)["SecretString"])
        return PlatformSecrets(app_secret=value["app_secret"], oauth_state_key=value["oauth_state_key"])
